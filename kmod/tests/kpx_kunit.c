// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suites of kpx's pure scheduling core (maglev.c, sched.c,
 * affinity.c), compiled into this test module from the same sources as
 * kpx.ko, so that kpx.ko carries nothing test-only.
 *
 * Suites: kpx_maglev (shares within 1% at size > 100 x backends, removing
 * 1 of 1000 backends moves <= 1% of the other slots, determinism, pinned
 * values shared with the host tests, the same at the sizes chosen for 1 to
 * 655 backends), kpx_sched (rr rotation, wrr exact
 * ratios, lc under skew, sh stability and spread), kpx_affinity (expiry to
 * the millisecond, refresh, purge on backend removal, eviction count,
 * growth by moving to a bigger table, 65,536 IPv6 sources that share one
 * bucket of the former fixed-seed hash all kept with short chains, the
 * kernel's siphash() equal to the host builds' SipHash-2-4).
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>

#include "../maglev.c"
#include "../sched.c"
#include "../affinity.c"
#include "aff_collide.h"

static u64 ident_of(u32 i)
{
	u8 a[16] = { 10, (u8)(i >> 8), (u8)i, 1 };

	return kpx_be_ident(a, htons(8080));
}

static u16 *mh_build(struct kunit *test, const u64 *id, u32 n, u32 size)
{
	u16 *t = kunit_kmalloc_array(test, size, sizeof(u16), GFP_KERNEL);
	void *s = kvmalloc(kpx_mh_scratch_size(n), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, kpx_mh_build(t, size, id, NULL, n, s), 0);
	kvfree(s);
	return t;
}

static void mh_share_test(struct kunit *test)
{
	const u32 n = 1000, size = 131071;
	u64 *id = kunit_kcalloc(test, n, sizeof(u64), GFP_KERNEL);
	u32 *cnt = kunit_kcalloc(test, n, sizeof(u32), GFP_KERNEL);
	u32 i, lo = U32_MAX, hi = 0;
	u16 *t;

	KUNIT_ASSERT_NOT_NULL(test, id);
	KUNIT_ASSERT_NOT_NULL(test, cnt);
	for (i = 0; i < n; i++)
		id[i] = ident_of(i);
	t = mh_build(test, id, n, size);
	for (i = 0; i < size; i++)
		cnt[t[i]]++;
	for (i = 0; i < n; i++) {
		lo = min(lo, cnt[i]);
		hi = max(hi, cnt[i]);
	}
	/* 131.07 expected: 1% is 129.76..132.38 */
	KUNIT_EXPECT_GE(test, lo * 100, size / n * 99);
	KUNIT_EXPECT_LE(test, hi * 100, (size * 101 + n - 1) / n);
	KUNIT_EXPECT_LE(test, hi - lo, 1U);
}

static void mh_remove_one_test(struct kunit *test)
{
	const u32 n = 1000, size = 65537, gone = 499;
	u64 *id = kunit_kcalloc(test, n, sizeof(u64), GFP_KERNEL);
	u64 *id2 = kunit_kcalloc(test, n, sizeof(u64), GFP_KERNEL);
	u32 i, moved = 0;
	u16 *t1, *t2;

	KUNIT_ASSERT_NOT_NULL(test, id);
	KUNIT_ASSERT_NOT_NULL(test, id2);
	for (i = 0; i < n; i++) {
		id[i] = ident_of(i);
		if (i != gone)
			id2[i < gone ? i : i - 1] = id[i];
	}
	t1 = mh_build(test, id, n, size);
	t2 = mh_build(test, id2, n - 1, size);
	for (i = 0; i < size; i++) {
		if (t1[i] == gone)
			continue;
		if ((t1[i] < gone ? t1[i] : t1[i] - 1) != t2[i])
			moved++;
	}
	kunit_info(test, "removing 1 of 1000 moved %u of %u slots", moved,
		   size);
	KUNIT_EXPECT_LE(test, moved, size / 100);
}

static void mh_pinned_test(struct kunit *test)
{
	static const u8 ip10_0_0_1[16] = { 10, 0, 0, 1 };
	u64 *id = kunit_kcalloc(test, 100, sizeof(u64), GFP_KERNEL);
	u16 *a, *b;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, id);
	for (i = 0; i < 100; i++)
		id[i] = ident_of(i);
	a = mh_build(test, id, 100, 65537);
	b = mh_build(test, id, 100, 65537);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, 65537 * sizeof(u16)), 0);
	/* Same values as kmod/tests/host/test_maglev.c: nodes agree. */
	KUNIT_EXPECT_EQ(test, kpx_be_ident(ip10_0_0_1, htons(80)),
			0xe0feb58d2db51c15ULL);
	KUNIT_EXPECT_EQ(test, a[0], 33U);
	KUNIT_EXPECT_EQ(test, a[65536], 2U);
	KUNIT_EXPECT_EQ(test, kpx_mh_build(a, 65535, id, NULL, 100, NULL),
			-EINVAL);
}

/*
 * Scaled sizes: for n backends the table of kpx_mh_size_for() slots gives
 * every backend its share within one slot, and removing one backend within
 * a size step keeps the size and moves at most 4% of the other backends'
 * slots.
 */
static void mh_scaled_test(struct kunit *test)
{
	static const u32 ns[] = { 1, 4, 10, 100, 655 };
	u64 *id = kunit_kcalloc(test, 655, sizeof(u64), GFP_KERNEL);
	u32 *cnt = kunit_kcalloc(test, 655, sizeof(u32), GFP_KERNEL);
	u32 k, i;

	KUNIT_ASSERT_NOT_NULL(test, id);
	KUNIT_ASSERT_NOT_NULL(test, cnt);
	for (i = 0; i < 655; i++)
		id[i] = ident_of(i);
	for (k = 0; k < ARRAY_SIZE(ns); k++) {
		u32 n = ns[k], size = kpx_mh_size_for(n, 65537);
		u32 lo = U32_MAX, hi = 0, moved = 0, size2;
		u16 *t, *t2;

		KUNIT_EXPECT_GT(test, size, 100 * n);
		KUNIT_EXPECT_LE(test, size, 2 * 100 * n + 251);
		t = mh_build(test, id, n, size);
		memset(cnt, 0, n * sizeof(*cnt));
		for (i = 0; i < size; i++)
			cnt[t[i]]++;
		for (i = 0; i < n; i++) {
			lo = min(lo, cnt[i]);
			hi = max(hi, cnt[i]);
		}
		KUNIT_EXPECT_LE_MSG(test, hi - lo, 1U, "n=%u size=%u", n, size);
		if (n == 1)
			continue;
		/* remove backend 0: the others are id[1..n-1] */
		size2 = kpx_mh_size_for(n - 1, 65537);
		KUNIT_EXPECT_EQ(test, size2, size);
		t2 = mh_build(test, id + 1, n - 1, size2);
		for (i = 0; i < size; i++)
			if (t[i] && t[i] - 1 != t2[i])
				moved++;
		KUNIT_EXPECT_LE_MSG(test, moved, size / 25, "n=%u", n);
	}
}

static void rr_test(struct kunit *test)
{
	u32 c, cnt[4] = {};

	for (c = 0; c < 1000; c++) {
		KUNIT_EXPECT_EQ(test, kpx_pick_rr(c, 4), c % 4);
		cnt[kpx_pick_rr(c, 4)]++;
	}
	for (c = 0; c < 4; c++)
		KUNIT_EXPECT_EQ(test, cnt[c], 250U);
}

static void wrr_test(struct kunit *test)
{
	u32 w[4] = { 1, 2, 3, 4 }, prefix[4], stride, total, c, cnt[4] = {};

	total = kpx_wrr_prepare(prefix, w, 4, &stride);
	KUNIT_EXPECT_EQ(test, total, 10U);
	for (c = 0; c < 3 * total; c++)
		cnt[kpx_pick_wrr(prefix, 4, total, stride, c + 7)]++;
	for (c = 0; c < 4; c++)
		KUNIT_EXPECT_EQ(test, cnt[c], 3 * w[c]);
}

struct lc_ctx {
	u32 active[4];
	u32 weight[4];
};

static void lc_get_t(const void *ctx, u32 i, u32 *a, u32 *w)
{
	const struct lc_ctx *c = ctx;

	*a = c->active[i];
	*w = c->weight[i];
}

static void lc_test(struct kunit *test)
{
	struct lc_ctx c = { { 50, 0, 0, 0 }, { 1, 1, 1, 1 } };
	u32 k;

	for (k = 0; k < 100; k++)
		c.active[kpx_pick_lc(lc_get_t, &c, 4, k)]++;
	KUNIT_EXPECT_EQ(test, c.active[0], 50U);
	KUNIT_EXPECT_EQ(test, c.active[1] + c.active[2] + c.active[3], 100U);
	KUNIT_EXPECT_GE(test, min3(c.active[1], c.active[2], c.active[3]), 33U);
}

static void sh_test(struct kunit *test)
{
	u32 i, cnt[8] = {}, lo = U32_MAX, hi = 0;

	for (i = 0; i < 80000; i++) {
		u8 a[16] = { 10, 1, (u8)(i >> 8), (u8)i };
		u32 b = kpx_pick_sh(a, 8);

		KUNIT_ASSERT_EQ(test, b, kpx_pick_sh(a, 8));
		cnt[b]++;
	}
	for (i = 0; i < 8; i++) {
		lo = min(lo, cnt[i]);
		hi = max(hi, cnt[i]);
	}
	/* 10000 each expected; 5 sigma ~ 470 */
	KUNIT_EXPECT_GT(test, lo, 9500U);
	KUNIT_EXPECT_LT(test, hi, 10500U);
}

static void sched_names_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kpx_sched_by_name("mh"), KPX_SCHED_MH);
	KUNIT_EXPECT_EQ(test, kpx_sched_by_name("wlc"), -EINVAL);
	KUNIT_EXPECT_STREQ(test, kpx_sched_name(KPX_SCHED_RR), "rr");
}

static struct kpx_aff *aff_new(struct kunit *test, u32 cap, u32 timeout)
{
	struct kpx_aff *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct kpx_aff_entry *e = kunit_kcalloc(test, cap, sizeof(*e),
						GFP_KERNEL);
	u32 *b = kunit_kcalloc(test, kpx_aff_nbuckets(cap), sizeof(u32),
			       GFP_KERNEL);
	struct kpx_hkey key;

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_NOT_NULL(test, b);
	get_random_bytes(&key, sizeof(key));
	kpx_aff_init(t, e, b, cap, timeout, &key);
	return t;
}

static void addr_set(u8 *a, u32 i)
{
	memset(a, 0, 16);
	a[0] = 10;
	a[2] = (u8)(i >> 8);
	a[3] = (u8)i;
}

static bool keep_not_2(const void *ctx, const u8 *be, u16 port)
{
	return be[3] != 2;
}

static void aff_expiry_test(struct kunit *test)
{
	struct kpx_aff *t = aff_new(test, 4, 10);
	const struct kpx_aff_entry *e;
	u8 c[16], b[16];

	addr_set(c, 1);
	addr_set(b, 1);
	kpx_aff_update(t, c, b, 80, 1000);
	e = kpx_aff_lookup(t, c, 10999);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_EXPECT_EQ(test, e->be_port, 80);
	KUNIT_EXPECT_NULL(test, kpx_aff_lookup(t, c, 11000));
	KUNIT_EXPECT_EQ(test, t->used, 0U);
}

static void aff_removal_eviction_test(struct kunit *test)
{
	struct kpx_aff *t = aff_new(test, 4, 10);
	u8 c[16], b1[16], b2[16];
	u32 i;

	addr_set(b1, 1);
	addr_set(b2, 2);
	addr_set(c, 1);
	kpx_aff_update(t, c, b1, 80, 0);
	addr_set(c, 2);
	kpx_aff_update(t, c, b2, 80, 0);
	KUNIT_EXPECT_EQ(test, kpx_aff_purge(t, keep_not_2, NULL), 1U);
	KUNIT_EXPECT_NULL(test, kpx_aff_lookup(t, c, 1));
	addr_set(c, 1);
	KUNIT_EXPECT_NOT_NULL(test, kpx_aff_lookup(t, c, 1));
	for (i = 0; i < 6; i++) {
		addr_set(c, 100 + i);
		kpx_aff_update(t, c, b1, 80, 100 + i);
	}
	KUNIT_EXPECT_EQ(test, t->used, 4U);
	KUNIT_EXPECT_EQ(test, t->evictions, 3ULL);
}

static void aff_move_test(struct kunit *test)
{
	struct kpx_aff *t = aff_new(test, 64, 5), *g = aff_new(test, 512, 0);
	u8 c[16], b[16];
	u32 i;

	addr_set(b, 1);
	for (i = 0; i < 48; i++) {
		addr_set(c, i);
		kpx_aff_update(t, c, b, (u16)i, 1000 + i);
	}
	kpx_aff_move(g, t);
	KUNIT_EXPECT_EQ(test, g->used, 48U);
	KUNIT_EXPECT_EQ(test, g->timeout_ms, 5000U);
	addr_set(c, 0);
	/* entry 0 was refreshed at 1000 ms: alive at 5999, gone at 6000 */
	KUNIT_EXPECT_NOT_NULL(test, kpx_aff_lookup(g, c, 5999));
	KUNIT_EXPECT_NULL(test, kpx_aff_lookup(g, c, 6000));
	addr_set(c, 47);
	KUNIT_EXPECT_EQ(test, kpx_aff_lookup(g, c, 6000)->be_port, 47);
}

static void aff_flood_test(struct kunit *test)
{
	static const struct kpx_hkey vkey = {
		.sip.key = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL },
	};
	const u32 n = 65536, cap = 2 * n;
	struct kpx_aff t;
	struct kpx_aff_entry *e = kvcalloc(cap, sizeof(*e), GFP_KERNEL);
	u32 *b = kvcalloc(kpx_aff_nbuckets(cap), sizeof(u32), GFP_KERNEL);
	u32 i, j, len, longest = 0, found = 0, old_bucket0 = 0;
	struct kpx_hkey key;
	u8 c[16], be[16], v[16];

	for (i = 0; i < 16; i++)
		v[i] = (u8)i;
	/* SipHash-2-4 reference vector; the host tests check the same */
	KUNIT_EXPECT_EQ(test, kpx_keyed_hash16(v, &vkey),
			0x3f2acc7f57c29bdbULL);
	if (!e || !b) {
		kvfree(e);
		kvfree(b);
		KUNIT_FAIL(test, "no memory for a %u-entry table", cap);
		return;
	}
	get_random_bytes(&key, sizeof(key));
	kpx_aff_init(&t, e, b, cap, 100, &key);
	addr_set(be, 1);
	for (i = 0; i < n; i++) {
		kpx_aff_collide(c, i);
		old_bucket0 += !(u32)kpx_aff_old_hash(c);
		kpx_aff_update(&t, c, be, 80, 1000);
		if (!(i & 4095))
			cond_resched();
	}
	for (i = 0; i < n; i++) {
		kpx_aff_collide(c, i);
		found += kpx_aff_lookup(&t, c, 2000) != NULL;
	}
	for (i = 0; i < t.nbuckets; i++) {
		for (len = 0, j = t.bucket[i]; j != KPX_AFF_NIL;
		     j = t.e[j].hnext)
			len++;
		longest = max(longest, len);
	}
	KUNIT_EXPECT_EQ(test, old_bucket0, n);
	KUNIT_EXPECT_EQ(test, found, n);
	KUNIT_EXPECT_EQ(test, t.evictions, 0ULL);
	KUNIT_EXPECT_LE(test, longest, (u32)KPX_AFF_CHAIN_MAX);
	kvfree(e);
	kvfree(b);
}

static struct kunit_case maglev_cases[] = {
	KUNIT_CASE(mh_share_test),
	KUNIT_CASE(mh_remove_one_test),
	KUNIT_CASE(mh_pinned_test),
	KUNIT_CASE(mh_scaled_test),
	{}
};

static struct kunit_case sched_cases[] = {
	KUNIT_CASE(sched_names_test),
	KUNIT_CASE(rr_test),
	KUNIT_CASE(wrr_test),
	KUNIT_CASE(lc_test),
	KUNIT_CASE(sh_test),
	{}
};

static struct kunit_case aff_cases[] = {
	KUNIT_CASE(aff_expiry_test),
	KUNIT_CASE(aff_removal_eviction_test),
	KUNIT_CASE(aff_move_test),
	KUNIT_CASE(aff_flood_test),
	{}
};

static struct kunit_suite maglev_suite = {
	.name = "kpx_maglev",
	.test_cases = maglev_cases,
};

static struct kunit_suite sched_suite = {
	.name = "kpx_sched",
	.test_cases = sched_cases,
};

static struct kunit_suite aff_suite = {
	.name = "kpx_affinity",
	.test_cases = aff_cases,
};

kunit_test_suites(&maglev_suite, &sched_suite, &aff_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of kpx's scheduling core");
