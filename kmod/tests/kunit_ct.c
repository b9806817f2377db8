// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite kpx_ct: the tables of the conntrack cleanup (ct.c), whose
 * every lookup is keyed by a conntrack entry's tuple, a client's choice.
 *
 * - N_KEYS UDP frontend keys that all fall in one bucket of a fixed-seed,
 *   fixed-size table (jhash seed 0, 256 buckets: what anyone who knows the
 *   seed can aim at) are inserted in a walk's table; each of them, and
 *   N_PROBE more such keys that are not in it, is found or missed with at
 *   most RHT_ELASTICITY key comparisons, where one shared chain would take
 *   up to N_KEYS.
 * - N_SVC UDP frontends created (each queues a cleanup of its entries
 *   without DNAT) and deleted (each queues one of all its entries): the
 *   queue coalesces them (never more than N_SVC keys) and kpx_ct_sync()
 *   leaves none queued.
 */
#include <kunit/test.h>
#include <linux/jhash.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/mm.h>

#include "kpx.h"
#include "ct.h"
#include "lb.h"
#include "pernet.h"
#include "svc.h"
#include "kunit_env.h"

#define N_KEYS		1024
#define N_PROBE		256
#define FIXED_BUCKETS	256	/* the fixed table aimed at */
#define N_SVC		1000

/* UDP 10.96.0.0/12 + @i, port 53. */
static void ct_test_key(struct kpx_key *key, u32 i)
{
	__be32 a = htonl(0x0a600000 + i);

	kpx_key_init(key, AF_INET, IPPROTO_UDP, &a, htons(53));
}

static u32 fixed_bucket(const struct kpx_key *key)
{
	return jhash(key, sizeof(*key), 0) % FIXED_BUCKETS;
}

static void ct_colliding_keys_test(struct kunit *test)
{
	struct kpx_key *k, first;
	u32 i, n = 0, max_cmps, want;

	k = kvcalloc(N_KEYS + N_PROBE, sizeof(*k), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, k);
	ct_test_key(&first, 0);
	want = fixed_bucket(&first);
	for (i = 0; n < N_KEYS + N_PROBE && i < (1U << 20); i++) {
		ct_test_key(&k[n], i);
		if (fixed_bucket(&k[n]) == want)
			n++;
	}
	KUNIT_ASSERT_EQ(test, n, N_KEYS + N_PROBE);
	KUNIT_EXPECT_EQ(test, kpx_test_ct_lookup_cost(k, N_KEYS, k + N_KEYS,
						      N_PROBE, &max_cmps), 0);
	kunit_info(test, "%u keys of one fixed bucket: at most %u comparisons per lookup",
		   N_KEYS, max_cmps);
	KUNIT_EXPECT_GE(test, max_cmps, 1U);
	KUNIT_EXPECT_LE(test, max_cmps, RHT_ELASTICITY);
	kvfree(k);
}

static void ct_queue_drains_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct kpx_svc_req req;
	struct kpx_be_cfg be;
	struct kpx_key key;
	u32 i, most = 0;

	for (i = 0; i < N_SVC; i++) {
		memset(&be, 0, sizeof(be));
		be.addr.bytes[0] = 10;
		be.addr.bytes[1] = 244;
		be.addr.bytes[3] = 2;
		be.port = htons(53);
		be.weight = 1;
		ct_test_key(&key, i);
		kpx_test_req(&req, &key, &be, 1);
		KUNIT_ASSERT_EQ(test, kpx_net_svc_set(kn, &req), 0);
		most = max(most, kpx_test_ct_pending(kn));
	}
	for (i = 0; i < N_SVC; i++) {
		ct_test_key(&key, i);
		KUNIT_ASSERT_EQ(test, kpx_svc_del(kn, &key), 0);
		most = max(most, kpx_test_ct_pending(kn));
	}
	kunit_info(test, "at most %u keys queued", most);
	KUNIT_EXPECT_GE(test, most, 1U);
	KUNIT_EXPECT_LE(test, most, N_SVC);
	kpx_ct_sync(kn);
	KUNIT_EXPECT_EQ(test, kpx_test_ct_pending(kn), 0U);
	KUNIT_EXPECT_EQ(test, READ_ONCE(kn->n_svcs), 0U);
}

static struct kunit_case ct_cases[] = {
	KUNIT_CASE(ct_colliding_keys_test),
	KUNIT_CASE(ct_queue_drains_test),
	{}
};

static struct kunit_suite ct_suite = {
	.name = "kpx_ct",
	.suite_init = kpx_test_suite_init,
	.suite_exit = kpx_test_suite_exit,
	.test_cases = ct_cases,
};

kunit_test_suites(&ct_suite);
