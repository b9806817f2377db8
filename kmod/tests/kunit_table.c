// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite kpx_table: the frontend table (svc.c) of init_net under
 * writers and concurrent RCU readers.
 *
 * Reader kthreads look up every key in a loop, as the NAT hook does, and
 * walk the frontend list, as dumps do, while the test inserts, replaces
 * and deletes frontends enough to make the rhashtable grow and shrink.
 * A reader must always find a frontend with its own key and a complete
 * backend set of one version: a version that was current at some moment
 * of the lookup (the old or the new set, never a mix, never freed memory:
 * KASAN watches).  The "stable" keys are never deleted, so a reader must
 * always find them.  Counters are checked after each phase.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/jiffies.h>
#include <linux/rhashtable.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/kpx.h>

#include "kpx.h"
#include "svc.h"
#include "backend.h"
#include "pernet.h"
#include "lb.h"
#include "sched.h"
#include "maglev.h"
#include "stats.h"
#include "kunit_env.h"

#define N_STABLE	64	/* never deleted */
#define N_CHURN		1024	/* inserted, then deleted: grow, shrink */
#define N_KEYS		(N_STABLE + N_CHURN)
#define N_BE		3	/* backends of every frontend */
#define N_READERS	2
#define N_ROUNDS	8	/* replace rounds of the stable keys */
#define VER_PORT0	1000	/* backend port = VER_PORT0 + version */

struct table_ctx {
	struct kpx_net *kn;
	struct kpx_key keys[N_KEYS];
	atomic_t started;	/* stable keys: replace round begun */
	atomic_t done;		/* stable keys: replace round finished */
	atomic_t churn_in;	/* churn keys all inserted (1) */
	atomic_t bad;		/* reader saw an impossible entry */
	atomic_t missing;	/* reader missed a stable key */
	atomic_t churn_miss;	/* reader missed a churn key while all in */
	atomic_long_t lookups;
	atomic_long_t churn_hits;
	char why[96];		/* first failure, for the message */
};

static void key_of(struct kpx_key *key, u32 i)
{
	u8 vip[4] = { 10, 96, (u8)(i >> 8), (u8)i };

	kpx_key_init(key, AF_INET, IPPROTO_TCP, vip, htons(80));
}

/* Backend j of frontend i, version v: 10.(i>>8).(i).(j+1):(1000+v). */
static void be_of(struct kpx_be_cfg *c, u32 i, u32 j, u32 v)
{
	memset(c, 0, sizeof(*c));
	c->addr.bytes[0] = 10;
	c->addr.bytes[1] = (u8)(i >> 8);
	c->addr.bytes[2] = (u8)i;
	c->addr.bytes[3] = (u8)(j + 1);
	c->port = htons(VER_PORT0 + v);
	c->weight = 1;
	c->pos = j;
}

static void bad(struct table_ctx *c, atomic_t *ctr, const char *what, u32 i,
		long v)
{
	if (atomic_inc_return(ctr) == 1)
		snprintf(c->why, sizeof(c->why), "%s (key %u, value %ld)",
			 what, i, v);
}

/* Checks a frontend found for key @i; returns its version or -1. */
static long check_svc(struct table_ctx *c, const struct kpx_svc *svc, u32 i)
{
	const struct kpx_bset *set;
	u32 j, v;

	if (memcmp(&svc->key, &c->keys[i], sizeof(svc->key))) {
		bad(c, &c->bad, "wrong key", i, 0);
		return -1;
	}
	set = rcu_dereference(svc->bset);
	if (!set || set->count != N_BE) {
		bad(c, &c->bad, "backend count", i, set ? set->count : -1);
		return -1;
	}
	v = ntohs(set->be[0]->port) - VER_PORT0;
	for (j = 0; j < N_BE; j++) {
		const struct kpx_backend *be = set->be[j];

		if (ntohs(be->port) != VER_PORT0 + v ||
		    be->addr.bytes[0] != 10 ||
		    be->addr.bytes[1] != (u8)(i >> 8) ||
		    be->addr.bytes[2] != (u8)i ||
		    be->addr.bytes[3] != j + 1 ||
		    refcount_read(&be->ref) < 1) {
			bad(c, &c->bad, "mixed or corrupt backend set", i, j);
			return -1;
		}
	}
	return v;
}

static int reader_fn(void *arg)
{
	struct table_ctx *c = arg;
	struct kpx_net *kn = c->kn;

	while (!kthread_should_stop()) {
		const struct kpx_svc *svc;
		bool all_in;
		u32 i, n = 0;
		long v;
		int lo, hi;

		for (i = 0; i < N_KEYS; i++) {
			lo = atomic_read_acquire(&c->done);
			all_in = atomic_read_acquire(&c->churn_in);
			rcu_read_lock();
			svc = kpx_svc_lookup(kn, &c->keys[i]);
			v = svc ? check_svc(c, svc, i) : -1;
			rcu_read_unlock();
			smp_rmb();	/* the set's version, then started */
			hi = atomic_read_acquire(&c->started);
			if (i < N_STABLE) {
				if (!svc)
					bad(c, &c->missing, "stable key missing",
					    i, 0);
				else if (v >= 0 && (v < lo || v > hi))
					bad(c, &c->bad, "version out of range",
					    i, v);
			} else if (svc) {
				atomic_long_inc(&c->churn_hits);
			} else if (all_in && atomic_read_acquire(&c->churn_in)) {
				bad(c, &c->churn_miss, "churn key missing", i,
				    0);
			}
			if (!(i & 63))
				cond_resched();
		}
		/* The dump path: the RCU list. */
		rcu_read_lock();
		list_for_each_entry_rcu(svc, &kn->svc_list, list)
			n++;
		rcu_read_unlock();
		if (n < N_STABLE || n > N_KEYS)
			bad(c, &c->bad, "list length", 0, n);
		atomic_long_add(N_KEYS, &c->lookups);
		usleep_range(100, 200);	/* leave the writer some CPU */
	}
	return 0;
}

static int set_one(struct table_ctx *c, u32 i, u32 v)
{
	struct kpx_be_cfg cfg[N_BE];
	struct kpx_svc_req req;
	u32 j, dup;

	for (j = 0; j < N_BE; j++)
		be_of(&cfg[j], i, j, v);
	if (kpx_be_cfg_sort(cfg, N_BE, &dup))
		return -EINVAL;
	kpx_test_req(&req, &c->keys[i], cfg, N_BE);
	return kpx_net_svc_set(c->kn, &req);
}

static unsigned int tbl_size(struct kpx_net *kn)
{
	unsigned int size;

	rcu_read_lock();
	size = rcu_dereference(kn->svcs.tbl)->size;
	rcu_read_unlock();
	return size;
}

/* Waits up to @ms for the table to have more (or fewer) than @size buckets. */
static unsigned int wait_size(struct kpx_net *kn, unsigned int size,
			      bool grow, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	unsigned int s;

	do {
		s = tbl_size(kn);
		if (grow ? s > size : s < size)
			break;
		msleep(20);
	} while (time_before(jiffies, end));
	return s;
}

static u32 list_len(struct kpx_net *kn)
{
	struct kpx_svc *svc;
	u32 n = 0;

	mutex_lock(&kn->lock);
	list_for_each_entry(svc, &kn->svc_list, list)
		n++;
	mutex_unlock(&kn->lock);
	return n;
}

static void expect_counts(struct kunit *test, struct kpx_net *kn, u32 n)
{
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_svcs), n);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_backends), n * N_BE);
	KUNIT_EXPECT_EQ(test, (u32)atomic_read(&kn->svcs.nelems), n);
	KUNIT_EXPECT_EQ(test, list_len(kn), n);
}

static void table_concurrent_test(struct kunit *test)
{
	struct task_struct *rd[N_READERS];
	struct table_ctx *c;
	unsigned int size0, size_big, size_small;
	u32 i, r;
	long before;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->kn = kpx_net(&init_net);
	for (i = 0; i < N_KEYS; i++)
		key_of(&c->keys[i], i);
	for (i = 0; i < N_STABLE; i++)
		KUNIT_ASSERT_EQ(test, set_one(c, i, 0), 0);
	expect_counts(test, c->kn, N_STABLE);
	size0 = tbl_size(c->kn);

	for (r = 0; r < N_READERS; r++) {
		rd[r] = kthread_run(reader_fn, c, "kpx_kunit_rd%u", r);
		KUNIT_ASSERT_FALSE(test, IS_ERR(rd[r]));
	}

	/* Insert: the table grows under the readers. */
	for (i = N_STABLE; i < N_KEYS; i++)
		KUNIT_EXPECT_EQ(test, set_one(c, i, 0), 0);
	atomic_set_release(&c->churn_in, 1);
	size_big = wait_size(c->kn, size0, true, 5000);
	expect_counts(test, c->kn, N_KEYS);

	/* Replace the stable keys' sets, round by round, readers racing. */
	for (r = 1; r <= N_ROUNDS; r++) {
		atomic_set_release(&c->started, r);
		for (i = 0; i < N_STABLE; i++)
			KUNIT_EXPECT_EQ(test, set_one(c, i, r), 0);
		atomic_set_release(&c->done, r);
		usleep_range(5000, 6000);
	}
	/* A replace keeps the entry: same count. */
	expect_counts(test, c->kn, N_KEYS);

	/* Delete: the table shrinks (automatic_shrinking) under the readers. */
	atomic_set(&c->churn_in, 0);
	smp_mb();	/* readers see 0 before any key goes */
	for (i = N_STABLE; i < N_KEYS; i++)
		KUNIT_EXPECT_EQ(test, kpx_svc_del(c->kn, &c->keys[i]), 0);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(c->kn, &c->keys[N_STABLE]), -ENOENT);
	size_small = wait_size(c->kn, size_big, false, 10000);
	expect_counts(test, c->kn, N_STABLE);

	/* Let the readers see the final state at least once more. */
	before = atomic_long_read(&c->lookups);
	for (i = 0; i < 500 && atomic_long_read(&c->lookups) < before +
	     2 * N_KEYS * N_READERS; i++)
		usleep_range(10000, 11000);
	for (r = 0; r < N_READERS; r++)
		kthread_stop(rd[r]);

	kunit_info(test, "buckets %u -> %u -> %u; %ld lookups, %ld churn hits",
		   size0, size_big, size_small, atomic_long_read(&c->lookups),
		   atomic_long_read(&c->churn_hits));
	KUNIT_EXPECT_GT(test, size_big, size0);
	KUNIT_EXPECT_LT(test, size_small, size_big);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->bad), 0, "%s", c->why);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->missing), 0, "%s", c->why);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->churn_miss), 0, "%s",
			    c->why);
	/* The readers ran through the whole table during the changes. */
	KUNIT_EXPECT_GE(test, atomic_long_read(&c->lookups),
			(long)(4 * N_KEYS));
	KUNIT_EXPECT_GT(test, atomic_long_read(&c->churn_hits), 0L);

	/* Every stable key ends on the last version. */
	rcu_read_lock();
	for (i = 0; i < N_STABLE; i++) {
		const struct kpx_svc *svc = kpx_svc_lookup(c->kn, &c->keys[i]);

		KUNIT_EXPECT_NOT_NULL(test, svc);
		if (svc)
			KUNIT_EXPECT_EQ(test, check_svc(c, svc, i),
					(long)N_ROUNDS);
	}
	rcu_read_unlock();

	kpx_svc_flush(c->kn);
	expect_counts(test, c->kn, 0);
}

/*
 * A replace keeps the backends present in both sets (their counters: 40
 * connections counted on this CPU and 2 on the last possible one, summed).
 */
static void table_replace_keeps_backends_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	int i, cpu = cpumask_last(cpu_possible_mask);
	struct kpx_be_cfg cfg[3];
	struct kpx_backend *kept;
	const struct kpx_bset *set;
	struct kpx_svc_req req;
	struct kpx_svc *svc;
	struct kpx_key key;
	u32 dup;

	key_of(&key, 7);
	kpx_test_req(&req, &key, cfg, 2);
	be_of(&cfg[0], 7, 0, 0);
	be_of(&cfg[1], 7, 1, 0);
	KUNIT_ASSERT_EQ(test, kpx_be_cfg_sort(cfg, 2, &dup), 0);
	KUNIT_ASSERT_EQ(test, kpx_net_svc_set(kn, &req), 0);
	mutex_lock(&kn->lock);
	svc = kpx_test_svc(kn, &key, &set);
	kept = set->be[1];
	for (i = 0; i < 40; i++)
		kpx_be_stat_inc(kept->conns);
	u64_stats_add(&per_cpu_ptr(kept->conns, cpu)->conns, 2);
	mutex_unlock(&kn->lock);

	/* New set: backend 1 stays, 0 goes, 2 comes. */
	be_of(&cfg[0], 7, 1, 0);
	be_of(&cfg[1], 7, 2, 0);
	KUNIT_ASSERT_EQ(test, kpx_be_cfg_sort(cfg, 2, &dup), 0);
	KUNIT_ASSERT_EQ(test, kpx_net_svc_set(kn, &req), 0);
	mutex_lock(&kn->lock);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, kpx_svc_lookup(kn, &key), svc);
	rcu_read_unlock();
	set = rcu_dereference_protected(svc->bset, lockdep_is_held(&kn->lock));
	KUNIT_EXPECT_EQ(test, set->count, 2U);
	KUNIT_EXPECT_PTR_EQ(test, set->be[0], kept);
	KUNIT_EXPECT_EQ(test, kpx_be_stats_conns(set->be[0]->conns), 42ULL);
	KUNIT_EXPECT_EQ(test, kpx_be_stats_conns(set->be[1]->conns), 0ULL);
	mutex_unlock(&kn->lock);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_backends), 2U);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_svcs), 0U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_backends), 0U);
}

/* The backend count of frontend @i, or -1 without the frontend. */
static int be_count(struct kpx_net *kn, u32 i)
{
	const struct kpx_bset *set;
	struct kpx_key key;
	int n = -1;

	key_of(&key, i);
	mutex_lock(&kn->lock);
	if (kpx_test_svc(kn, &key, &set))
		n = set ? set->count : 0;
	mutex_unlock(&kn->lock);
	return n;
}

static int limit_set(struct kpx_net *kn, u32 i, u32 n)
{
	struct kpx_be_cfg cfg[3];
	struct kpx_svc_req req;
	struct kpx_key key;
	u32 j, dup;

	key_of(&key, i);
	for (j = 0; j < n; j++)
		be_of(&cfg[j], i, j, 0);
	if (kpx_be_cfg_sort(cfg, n, &dup))
		return -EINVAL;
	kpx_test_req(&req, &key, cfg, n);
	return kpx_net_svc_set(kn, &req);
}

/*
 * The namespace limits (uapi: KPX_SERVICES_MAX, KPX_NS_BACKENDS_MAX): a SET
 * past either answers -ENOSPC and changes nothing; one that stays at the
 * limit, or replaces a frontend's backends without growing, still works.
 * The counts are raised to the limits by hand: a million frontends would
 * take the test minutes under TCG.
 */
static void table_limits_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_key key;
	u32 svcs, bes;

	KUNIT_ASSERT_EQ(test, limit_set(kn, 9, 2), 0);
	mutex_lock(&kn->lock);
	svcs = kn->n_svcs;
	bes = kn->n_backends;
	kn->n_svcs = KPX_SERVICES_MAX;
	mutex_unlock(&kn->lock);
	KUNIT_EXPECT_EQ(test, limit_set(kn, 10, 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, be_count(kn, 10), -1);
	KUNIT_EXPECT_EQ(test, limit_set(kn, 9, 1), 0);	/* no new frontend */
	KUNIT_EXPECT_EQ(test, be_count(kn, 9), 1);

	mutex_lock(&kn->lock);
	kn->n_svcs = svcs;
	KUNIT_EXPECT_EQ(test, kn->n_backends, bes - 1);
	kn->n_backends = KPX_NS_BACKENDS_MAX - 1;	/* key 9's one included */
	mutex_unlock(&kn->lock);
	KUNIT_EXPECT_EQ(test, limit_set(kn, 9, 2), 0);	/* to the limit */
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_backends), (u32)KPX_NS_BACKENDS_MAX);
	KUNIT_EXPECT_EQ(test, limit_set(kn, 9, 3), -ENOSPC);
	KUNIT_EXPECT_EQ(test, be_count(kn, 9), 2);
	KUNIT_EXPECT_EQ(test, limit_set(kn, 10, 1), -ENOSPC);
	KUNIT_EXPECT_EQ(test, be_count(kn, 10), -1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_backends), (u32)KPX_NS_BACKENDS_MAX);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_svcs), svcs);

	mutex_lock(&kn->lock);
	kn->n_backends = bes;
	mutex_unlock(&kn->lock);
	key_of(&key, 9);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_svcs), svcs - 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_backends), bes - 2);
}

/* The Maglev table of frontend @i (kn->lock held). */
static const u16 *mh_of(struct kpx_net *kn, u32 i, u32 *size)
{
	const struct kpx_bset *set;
	struct kpx_key key;

	key_of(&key, i);
	kpx_test_svc(kn, &key, &set);
	if (!set || !set->sd)
		return NULL;
	*size = set->sd->mh_size;
	return set->sd->mh;
}

static int mh_set(struct kpx_net *kn, u32 i, u32 n, u32 w0)
{
	struct kpx_be_cfg cfg[8];
	struct kpx_svc_req req;
	struct kpx_key key;
	u32 j, dup;

	key_of(&key, i);
	kpx_test_req(&req, &key, cfg, n);
	req.scfg.id = KPX_SCHED_MH;
	for (j = 0; j < n; j++) {
		be_of(&cfg[j], 3, j, 0);	/* the same backends for all */
		if (!j)
			cfg[j].weight = w0;
	}
	if (kpx_be_cfg_sort(cfg, n, &dup))
		return -EINVAL;
	return kpx_net_svc_set(kn, &req);
}

/*
 * Maglev tables: frontends with the same backends and weights share one
 * table (of the size for 3 backends, not the largest size), a SET that
 * keeps them keeps it, a different weight gets its own, and a shared
 * table outlives the deletion of one of its frontends.
 */
static void table_mh_shared_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	const u16 *a, *b, *d, *a2;
	u32 sa = 0, sb = 0, sd = 0, i, hits[3] = {};
	struct kpx_key key;

	KUNIT_ASSERT_EQ(test, mh_set(kn, 20, 3, 1), 0);
	KUNIT_ASSERT_EQ(test, mh_set(kn, 21, 3, 1), 0);
	KUNIT_ASSERT_EQ(test, mh_set(kn, 22, 3, 2), 0);
	mutex_lock(&kn->lock);
	a = mh_of(kn, 20, &sa);
	b = mh_of(kn, 21, &sb);
	d = mh_of(kn, 22, &sd);
	mutex_unlock(&kn->lock);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_EXPECT_EQ(test, sa, kpx_mh_size_for(3, KPX_MH_SIZE_DEFAULT));
	KUNIT_EXPECT_EQ(test, sa, 509U);
	KUNIT_EXPECT_PTR_EQ(test, a, b);
	KUNIT_EXPECT_EQ(test, sb, sa);
	KUNIT_EXPECT_PTR_NE(test, a, d);
	KUNIT_EXPECT_EQ(test, sd, sa);

	KUNIT_ASSERT_EQ(test, mh_set(kn, 20, 3, 1), 0);	/* unchanged */
	mutex_lock(&kn->lock);
	a2 = mh_of(kn, 20, &sa);
	mutex_unlock(&kn->lock);
	KUNIT_EXPECT_PTR_EQ(test, a2, a);

	key_of(&key, 20);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
	synchronize_rcu();
	rcu_barrier();	/* the deleted frontend's set is freed */
	mutex_lock(&kn->lock);
	b = mh_of(kn, 21, &sb);
	KUNIT_ASSERT_NOT_NULL(test, b);
	for (i = 0; i < sb; i++)
		if (b[i] < 3)
			hits[b[i]]++;
	mutex_unlock(&kn->lock);
	KUNIT_EXPECT_EQ(test, hits[0] + hits[1] + hits[2], sb);
	KUNIT_EXPECT_GE(test, min3(hits[0], hits[1], hits[2]), sb / 3 - 1);
	kpx_svc_flush(kn);
}

static struct kunit_case table_cases[] = {
	KUNIT_CASE(table_replace_keeps_backends_test),
	KUNIT_CASE(table_limits_test),
	KUNIT_CASE(table_mh_shared_test),
	KUNIT_CASE(table_concurrent_test),
	{}
};

static struct kunit_suite table_suite = {
	.name = "kpx_table",
	.suite_init = kpx_test_suite_init,
	.suite_exit = kpx_test_suite_exit,
	.test_cases = table_cases,
};

kunit_test_suites(&table_suite);
