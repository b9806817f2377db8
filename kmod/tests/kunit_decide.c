// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite kpx_decide: the NAT hook's decision (kpx_decide(), hook.c)
 * in its read-only form (KPX_CMD_EXPLAIN) against the live one, on
 * frontends of init_net.  A peek must predict the backend the next live
 * decision takes and change nothing (rr cursor, affinity table, counters);
 * the verdicts of an undefined ClusterIP port, a missing frontend, an
 * empty backend set and the eTP Local short cut must be the hook's.
 */
#include <kunit/test.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/kpx.h>

#include "kpx.h"
#include "svc.h"
#include "backend.h"
#include "pernet.h"
#include "hook.h"
#include "lb.h"
#include "sched.h"
#include "stats.h"
#include "kunit_env.h"

static void key_ip(struct kpx_key *key, u8 last, u16 port)
{
	u8 vip[4] = { 10, 96, 9, last };

	kpx_key_init(key, AF_INET, IPPROTO_TCP, vip, htons(port));
}

static void flow_to(struct kpx_flow *f, const struct kpx_key *key, u8 src)
{
	memset(f, 0, sizeof(*f));
	f->family = AF_INET;
	f->protocol = IPPROTO_TCP;
	f->dst = key->addr;
	f->src.bytes[0] = 10;
	f->src.bytes[1] = 0;
	f->src.bytes[2] = 1;
	f->src.bytes[3] = src;
}

static int set_n(struct kpx_net *kn, const struct kpx_key *key, u32 flags,
		 u32 n, u8 sched, u32 aff, const struct kpx_key *cluster)
{
	struct kpx_be_cfg cfg[4];
	struct kpx_svc_req req;
	u32 i, dup;

	kpx_test_req(&req, key, cfg, n);
	req.flags = flags;
	req.scfg.id = sched;
	req.scfg.aff_timeout = aff;
	if (cluster) {
		req.cluster = *cluster;
		req.has_cluster = true;
	}
	for (i = 0; i < n; i++) {
		memset(&cfg[i], 0, sizeof(cfg[i]));
		cfg[i].addr.bytes[0] = 10;
		cfg[i].addr.bytes[1] = 244;
		cfg[i].addr.bytes[2] = key->addr.bytes[3];
		cfg[i].addr.bytes[3] = (u8)(i + 1);
		cfg[i].port = htons(8080);
		cfg[i].weight = 1;
		cfg[i].pos = i;
	}
	if (n && kpx_be_cfg_sort(cfg, n, &dup))
		return -EINVAL;
	return kpx_net_svc_set(kn, &req);
}

/* kpx_decide() under RCU; the backend's port:last-byte, 0 for none. */
static u32 decide(struct kpx_net *kn, const struct kpx_flow *f,
		  const struct kpx_key *key, struct kpx_decision *d,
		  struct kpx_peek *peek)
{
	u32 be = 0;

	rcu_read_lock();
	kpx_decide(kn, f, key->port, d, peek);
	if (d->be)
		be = d->be->addr.bytes[2] << 8 | d->be->addr.bytes[3];
	rcu_read_unlock();
	return be;
}

static u64 conns(struct kpx_svc *svc)
{
	struct kpx_stats st;

	kpx_stats_sum(svc->stats, &st);
	return st.conns + st.rejects + st.filtered;
}

/* rr: the peek names the next live pick and moves nothing. */
static void decide_rr_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_peek peek;
	struct kpx_decision d;
	struct kpx_flow f;
	struct kpx_key key;
	struct kpx_svc *svc;
	u32 a, b, i;
	int ctr;

	key_ip(&key, 1, 80);
	KUNIT_ASSERT_EQ(test, set_n(kn, &key, 0, 3, KPX_SCHED_RR, 0, NULL), 0);
	flow_to(&f, &key, 2);
	mutex_lock(&kn->lock);
	svc = kpx_test_svc(kn, &key, NULL);
	mutex_unlock(&kn->lock);
	for (i = 0; i < 6; i++) {
		ctr = atomic_read(&svc->sched_ctr);
		a = decide(kn, &f, &key, &d, &peek);
		KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_DNAT);
		KUNIT_EXPECT_EQ(test, peek.pick, KPX_EXP_PICK_EXACT);
		KUNIT_EXPECT_EQ(test, peek.aff, KPX_EXP_AFF_OFF);
		KUNIT_EXPECT_EQ(test, decide(kn, &f, &key, &d, &peek), a);
		KUNIT_EXPECT_EQ(test, atomic_read(&svc->sched_ctr), ctr);
		b = decide(kn, &f, &key, &d, NULL);
		KUNIT_EXPECT_EQ(test, b, a);
		KUNIT_EXPECT_EQ(test, atomic_read(&svc->sched_ctr), ctr + 1);
	}
	/* kpx_decide() counts nothing, live or not: the hook does */
	KUNIT_EXPECT_EQ(test, conns(svc), 0ULL);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
}

/* Affinity: a peek misses until a live decision inserts, then hits. */
static void decide_affinity_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_peek peek;
	struct kpx_decision d;
	struct kpx_flow f;
	struct kpx_key key;
	u32 a, b, i;

	key_ip(&key, 2, 80);
	KUNIT_ASSERT_EQ(test, set_n(kn, &key, 0, 4, KPX_SCHED_RR, 60, NULL), 0);
	flow_to(&f, &key, 3);
	a = decide(kn, &f, &key, &d, &peek);
	KUNIT_EXPECT_EQ(test, peek.aff, KPX_EXP_AFF_MISS);
	decide(kn, &f, &key, &d, &peek);
	KUNIT_EXPECT_EQ(test, peek.aff, KPX_EXP_AFF_MISS);	/* no insert */
	b = decide(kn, &f, &key, &d, NULL);
	KUNIT_EXPECT_EQ(test, b, a);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, decide(kn, &f, &key, &d, &peek), b);
		KUNIT_EXPECT_EQ(test, peek.aff, KPX_EXP_AFF_HIT);
		KUNIT_EXPECT_LT(test, peek.aff_age_ms, 60000ULL);
		KUNIT_EXPECT_EQ(test, decide(kn, &f, &key, &d, NULL), b);
	}
	/* another client is not bound */
	flow_to(&f, &key, 4);
	decide(kn, &f, &key, &d, &peek);
	KUNIT_EXPECT_EQ(test, peek.aff, KPX_EXP_AFF_MISS);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
}

/* Verdicts without a backend pick, and the eTP Local short cut. */
static void decide_verdicts_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_key cip, ext, other;
	struct kpx_peek peek;
	struct kpx_decision d;
	struct kpx_flow f;

	key_ip(&cip, 3, 80);
	key_ip(&ext, 4, 30080);
	KUNIT_ASSERT_EQ(test, set_n(kn, &cip, KPX_SVC_F_CLUSTER_IP, 2,
				    KPX_SCHED_RR, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, set_n(kn, &ext, KPX_SVC_F_EXT_LOCAL |
				    KPX_SVC_F_DROP_EMPTY, 0, KPX_SCHED_RR, 0,
				    &cip), 0);

	key_ip(&other, 3, 81);		/* undefined port of the ClusterIP */
	flow_to(&f, &other, 2);
	decide(kn, &f, &other, &d, &peek);
	KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_UNDEFINED_PORT);
	decide(kn, &f, &other, &d, NULL);
	KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_UNDEFINED_PORT);
	key_ip(&other, 5, 80);		/* no frontend, not a ClusterIP */
	flow_to(&f, &other, 2);
	decide(kn, &f, &other, &d, &peek);
	KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_ACCEPT);

	/* external client of the eTP Local frontend: its (empty) set */
	flow_to(&f, &ext, 2);
	decide(kn, &f, &ext, &d, &peek);
	KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_DROP);
	KUNIT_EXPECT_FALSE(test, d.short_cut);
	KUNIT_EXPECT_EQ(test, d.source, KPX_EXP_SRC_NO_CONFIG);
	decide(kn, &f, &ext, &d, NULL);
	KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_DROP);
	/* the node itself: short cut to the ClusterIP frontend's backends */
	f.node = true;
	KUNIT_EXPECT_NE(test, decide(kn, &f, &ext, &d, &peek), 0U);
	KUNIT_EXPECT_EQ(test, d.verdict, KPX_EXP_V_DNAT);
	KUNIT_EXPECT_TRUE(test, d.short_cut);
	KUNIT_EXPECT_PTR_NE(test, d.ssvc, d.svc);
	KUNIT_EXPECT_EQ(test, decide(kn, &f, &ext, &d, NULL) >> 8, 3U);

	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &ext), 0);
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &cip), 0);
}

static struct kunit_case decide_cases[] = {
	KUNIT_CASE(decide_rr_test),
	KUNIT_CASE(decide_affinity_test),
	KUNIT_CASE(decide_verdicts_test),
	{}
};

static struct kunit_suite decide_suite = {
	.name = "kpx_decide",
	.suite_init = kpx_test_suite_init,
	.suite_exit = kpx_test_suite_exit,
	.test_cases = decide_cases,
};

kunit_test_suites(&decide_suite);
