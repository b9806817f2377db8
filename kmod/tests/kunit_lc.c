// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite kpx_lc: the lc scheduler's shared recount (lb.c) on
 * init_net.
 *
 * - A SET that installs lc never waits for the recount's mutex: with that
 *   mutex held by the test, the kick of a listed namespace and of one not
 *   yet listed both return, from a thread of their own, within seconds.
 * - A recount pass walks the frontends in slices (the test build's budget
 *   is set to one frontend per slice) and frontends created, deleted and
 *   changed between two slices (a hook the pass calls there) leave every
 *   count right: each backend of an lc frontend that lived through the
 *   pass is marked and published (active = its connections since the
 *   pass began: there are no conntrack entries of these frontends), one
 *   created during step 3 keeps its own count, and the frontends deleted
 *   under the walk's cursor are skipped (KASAN watches their memory).
 * - A namespace whose lc frontend the walk missed (installed on a
 *   frontend the walk had passed) stays listed.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/kpx.h>

#include "kpx.h"
#include "svc.h"
#include "backend.h"
#include "pernet.h"
#include "lb.h"
#include "sched.h"
#include "kunit_env.h"

#define N_BE	2	/* backends of each frontend */
#define N_SVC	6	/* frontends set before the pass */

static void lc_key(struct kpx_key *key, u32 i)
{
	u8 vip[4] = { 10, 97, 0, (u8)i };

	kpx_key_init(key, AF_INET, IPPROTO_TCP, vip, htons(80));
}

/* Frontend @i with N_BE backends 10.1.@i.(1..N_BE):8080, scheduler @id. */
static int lc_set(u32 i, u8 id)
{
	struct kpx_be_cfg cfg[N_BE];
	struct kpx_svc_req req;
	struct kpx_key key;
	u32 j, dup;

	lc_key(&key, i);
	kpx_test_req(&req, &key, cfg, N_BE);
	req.scfg.id = id;
	for (j = 0; j < N_BE; j++) {
		memset(&cfg[j], 0, sizeof(cfg[j]));
		cfg[j].addr.bytes[0] = 10;
		cfg[j].addr.bytes[1] = 1;
		cfg[j].addr.bytes[2] = (u8)i;
		cfg[j].addr.bytes[3] = (u8)(j + 1);
		cfg[j].port = htons(8080);
		cfg[j].weight = 1;
		cfg[j].pos = j;
	}
	if (kpx_be_cfg_sort(cfg, N_BE, &dup))
		return -EINVAL;
	return kpx_net_svc_set(kpx_net(&init_net), &req);
}

static int lc_del(u32 i)
{
	struct kpx_key key;

	lc_key(&key, i);
	return kpx_svc_del(kpx_net(&init_net), &key);
}

/* Backend @j of frontend @i (kn->lock held), or NULL. */
static struct kpx_backend *lc_be(struct kpx_net *kn, u32 i, u32 j)
{
	const struct kpx_bset *set;
	struct kpx_key key;

	lc_key(&key, i);
	kpx_test_svc(kn, &key, &set);
	return set && j < set->count ? set->be[j] : NULL;
}

/* Sets every backend of frontend @i to active @active, recent 0. */
static void lc_preset(struct kpx_net *kn, u32 i, int active)
{
	struct kpx_backend *be;
	u32 j;

	mutex_lock(&kn->lock);
	for (j = 0; j < N_BE; j++) {
		be = lc_be(kn, i, j);
		if (be) {
			atomic_set(&be->active, active);
			atomic_set(&be->recent, 0);
		}
	}
	mutex_unlock(&kn->lock);
}

/* One connection sent to backend @j of frontend @i (the packet path's). */
static void lc_connect(struct kpx_net *kn, u32 i, u32 j)
{
	const struct kpx_bset *set;
	struct kpx_svc *svc;
	struct kpx_key key;

	lc_key(&key, i);
	rcu_read_lock();
	svc = kpx_svc_lookup(kn, &key);
	set = svc ? rcu_dereference(svc->bset) : NULL;
	if (set && j < set->count)
		kpx_lb_connected(set, set->be[j]);
	rcu_read_unlock();
}

static bool lc_listed(struct kpx_net *kn)
{
	return READ_ONCE(kn->lc_on) && !list_empty(&kn->lc_node);
}

/* The kick, from a thread of its own. */
struct kick_ctx {
	struct completion done;
	u8 id;
};

static int kick_fn(void *arg)
{
	struct kick_ctx *k = arg;
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_sched_cfg scfg;

	kpx_sched_cfg_default(&scfg);
	scfg.id = k->id;
	mutex_lock(&kn->lock);
	kpx_lc_scan_kick(kn, &scfg);
	mutex_unlock(&kn->lock);
	complete(&k->done);
	return 0;
}

/* Whether a kick returned within 5 s while the test holds lc_mutex. */
static bool kick_returns(struct kunit *test)
{
	struct kick_ctx k = { .id = KPX_SCHED_LC };
	struct task_struct *t;
	bool ok;

	init_completion(&k.done);
	t = kthread_run(kick_fn, &k, "kpx_lc_kick");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	ok = wait_for_completion_timeout(&k.done, 5 * HZ);
	if (!ok) {
		/* let it finish before the test unlocks and returns */
		mutex_unlock(kpx_test_lc_mutex());
		wait_for_completion(&k.done);
		mutex_lock(kpx_test_lc_mutex());
	}
	return ok;
}

/* The kick takes no lc_mutex, whether its namespace is listed or not. */
static void lc_kick_no_mutex_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);

	mutex_lock(kpx_test_lc_mutex());
	KUNIT_EXPECT_FALSE(test, lc_listed(kn));
	KUNIT_EXPECT_TRUE(test, kick_returns(test));	/* lists it */
	KUNIT_EXPECT_TRUE(test, lc_listed(kn));
	kn->lc_kicked = false;
	KUNIT_EXPECT_TRUE(test, kick_returns(test));	/* already listed */
	KUNIT_EXPECT_TRUE(test, lc_listed(kn));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(kn->lc_kicked));
	/* listed once: the list is its head and this namespace */
	KUNIT_EXPECT_PTR_EQ(test, kn->lc_node.next->next, &kn->lc_node);
	mutex_unlock(kpx_test_lc_mutex());

	/* no lc frontend: the next pass takes it off the list */
	kpx_test_lc_pass();
	KUNIT_EXPECT_FALSE(test, lc_listed(kn));
}

/* What the pass's hook does between two slices, in the test's thread. */
struct slice_ctx {
	struct kunit *test;
	struct task_struct *task;
	u32 zero_slices, pub_slices;
	int err;
};

static struct slice_ctx *slice_ctx;

static void slice_hook(struct kpx_net *kn, bool zero)
{
	struct slice_ctx *c = READ_ONCE(slice_ctx);
	u32 n;
	int err = 0;

	if (!c || current != c->task || kn != kpx_net(&init_net))
		return;
	n = zero ? ++c->zero_slices : ++c->pub_slices;
	/* each slice is one frontend: the cursor is frontend n next */
	if (zero && n == 1) {
		err = lc_del(1);		/* the cursor's frontend */
		err = err ?: lc_set(10, KPX_SCHED_LC);	/* appended */
		lc_preset(kn, 10, 77);
	} else if (zero && n == 2) {
		err = lc_set(0, KPX_SCHED_LC);	/* behind: a replace */
		err = err ?: lc_del(5);		/* ahead: skipped */
		lc_connect(kn, 3, 0);		/* before its mark */
	} else if (!zero && n == 1) {
		err = lc_del(2);		/* the cursor's frontend */
		err = err ?: lc_set(11, KPX_SCHED_LC);	/* after step 1 */
		lc_preset(kn, 11, 5);
		lc_connect(kn, 4, 1);		/* since step 1 */
		lc_connect(kn, 4, 1);
	}
	/* the deleted frontends' frees queued: KASAN sees a stale cursor */
	synchronize_rcu();
	rcu_barrier();
	if (err && !c->err)
		c->err = err;
}

static void expect_active(struct kunit *test, struct kpx_net *kn, u32 i,
			  u32 j, int want)
{
	struct kpx_backend *be;

	mutex_lock(&kn->lock);
	be = lc_be(kn, i, j);
	KUNIT_EXPECT_NOT_NULL_MSG(test, be, "frontend %u backend %u", i, j);
	if (be)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&be->active), want,
				    "frontend %u backend %u", i, j);
	mutex_unlock(&kn->lock);
}

/*
 * The pass in slices of one frontend, with frontends created, deleted and
 * changed between slices: lc frontends 0..5, every backend's active count
 * preset to 77 (what the packet path left).
 */
static void lc_slices_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct slice_ctx c = { .test = test, .task = current };
	u32 i, j;

	for (i = 0; i < N_SVC; i++)
		KUNIT_ASSERT_EQ(test, lc_set(i, KPX_SCHED_LC), 0);
	KUNIT_ASSERT_TRUE(test, lc_listed(kn));
	kpx_test_lc_pass();	/* the first kick's pass, not queued now */
	for (i = 0; i < N_SVC; i++)
		lc_preset(kn, i, 77);
	kpx_test_lc_budget = 1;
	WRITE_ONCE(slice_ctx, &c);
	kpx_test_lc_hook = slice_hook;
	kpx_test_lc_pass();
	kpx_test_lc_hook = NULL;
	WRITE_ONCE(slice_ctx, NULL);
	kpx_test_lc_budget = 1024;
	KUNIT_EXPECT_EQ(test, c.err, 0);
	/*
	 * Step 1 visited 0, 2, 3, 4 and 10 (1 and 5 deleted), so 4 slices
	 * and 4 pauses between them; step 3 visited 0, 3, 4, 10 and 11.
	 */
	KUNIT_EXPECT_EQ(test, c.zero_slices, 4U);
	KUNIT_EXPECT_EQ(test, c.pub_slices, 4U);
	/* marked and published: their connections since the mark */
	for (j = 0; j < N_BE; j++) {
		expect_active(test, kn, 0, j, 0);
		expect_active(test, kn, 3, j, 0);	/* reset by its mark */
		expect_active(test, kn, 10, j, 0);
		/* created after step 1: its own count, unpublished */
		expect_active(test, kn, 11, j, 5);
	}
	expect_active(test, kn, 4, 0, 0);
	expect_active(test, kn, 4, 1, 2);
	KUNIT_EXPECT_TRUE(test, lc_listed(kn));
	KUNIT_EXPECT_NULL(test, kn->lc_cursor);

	/* the whole namespace in one slice: 11 is marked and published */
	kpx_test_lc_pass();
	for (j = 0; j < N_BE; j++) {
		expect_active(test, kn, 11, j, 0);
		expect_active(test, kn, 4, j, 0);
	}
	kpx_svc_flush(kn);
	kpx_test_lc_pass();	/* no lc frontend left: off the list */
	KUNIT_EXPECT_FALSE(test, lc_listed(kn));
}

/*
 * A frontend behind the walk's place switched to lc while the only other
 * lc frontend is deleted: the pass sees none, but the SET kicked, so the
 * namespace stays listed, and the next pass counts the new lc frontend.
 */
static struct slice_ctx *missed_ctx;

static void missed_hook(struct kpx_net *kn, bool zero)
{
	struct slice_ctx *c = READ_ONCE(missed_ctx);
	int err;

	if (!c || current != c->task || !zero || c->zero_slices++)
		return;
	err = lc_set(0, KPX_SCHED_LC);	/* 0 was rr, and is behind */
	err = err ?: lc_del(2);		/* the one lc frontend */
	lc_preset(kn, 0, 9);
	if (err && !c->err)
		c->err = err;
}

static void lc_missed_kick_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct slice_ctx c = { .test = test, .task = current };

	KUNIT_ASSERT_EQ(test, lc_set(0, KPX_SCHED_RR), 0);
	KUNIT_ASSERT_EQ(test, lc_set(1, KPX_SCHED_RR), 0);
	KUNIT_ASSERT_EQ(test, lc_set(2, KPX_SCHED_LC), 0);
	KUNIT_ASSERT_TRUE(test, lc_listed(kn));
	kpx_test_lc_budget = 1;
	WRITE_ONCE(missed_ctx, &c);
	kpx_test_lc_hook = missed_hook;
	kpx_test_lc_pass();
	kpx_test_lc_hook = NULL;
	WRITE_ONCE(missed_ctx, NULL);
	kpx_test_lc_budget = 1024;
	KUNIT_EXPECT_EQ(test, c.err, 0);
	KUNIT_EXPECT_EQ(test, c.zero_slices, 1U);	/* after 0 only */
	KUNIT_EXPECT_TRUE(test, lc_listed(kn));
	expect_active(test, kn, 0, 0, 9);	/* not marked in that pass */
	kpx_test_lc_pass();
	KUNIT_EXPECT_TRUE(test, lc_listed(kn));
	expect_active(test, kn, 0, 0, 0);	/* counted now */
	kpx_svc_flush(kn);
	kpx_test_lc_pass();
	KUNIT_EXPECT_FALSE(test, lc_listed(kn));
}

static struct kunit_case lc_cases[] = {
	KUNIT_CASE(lc_kick_no_mutex_test),
	KUNIT_CASE(lc_slices_test),
	KUNIT_CASE(lc_missed_kick_test),
	{}
};

static struct kunit_suite lc_suite = {
	.name = "kpx_lc",
	.suite_init = kpx_test_suite_init,
	.suite_exit = kpx_test_suite_exit,
	.test_cases = lc_cases,
};

kunit_test_suites(&lc_suite);
