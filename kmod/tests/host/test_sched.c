// SPDX-License-Identifier: GPL-2.0-only
/* Host tests of the schedulers (sched.c). */
#include <stdlib.h>
#include "../../../agent/tests/lib/tap.h"
#include "sched.h"

static void test_names(void)
{
	ok(kpx_sched_by_name("random") == KPX_SCHED_RANDOM &&
	   kpx_sched_by_name("rr") == KPX_SCHED_RR &&
	   kpx_sched_by_name("wrr") == KPX_SCHED_WRR &&
	   kpx_sched_by_name("lc") == KPX_SCHED_LC &&
	   kpx_sched_by_name("sh") == KPX_SCHED_SH &&
	   kpx_sched_by_name("mh") == KPX_SCHED_MH, "names map to ids");
	ok(kpx_sched_by_name("wlc") == -EINVAL &&
	   kpx_sched_by_name("") == -EINVAL, "unknown names are EINVAL");
	ok(!strcmp(kpx_sched_name(KPX_SCHED_MH), "mh") &&
	   !strcmp(kpx_sched_name(99), "?"), "ids map to names");
}

static void test_rr(void)
{
	u32 c, cnt[4] = { 0 }, good = 1;

	for (c = 0; c < 1000; c++) {
		u32 i = kpx_pick_rr(c, 4);

		if (i != c % 4)
			good = 0;
		cnt[i]++;
	}
	ok(good, "rr visits 0,1,2,3,0,... in order");
	ok(cnt[0] == 250 && cnt[1] == 250 && cnt[2] == 250 && cnt[3] == 250,
	   "rr: 1000 picks over 4 give %u/%u/%u/%u", cnt[0], cnt[1], cnt[2],
	   cnt[3]);
}

static void test_wrr(void)
{
	u32 w[4] = { 1, 2, 3, 4 }, prefix[4], stride, total, c, cnt[4] = { 0 };
	u32 run = 0, maxrun = 0, prev = ~0U;

	total = kpx_wrr_prepare(prefix, w, 4, &stride);
	ok(total == 10, "wrr total weight %u", total);
	for (c = 0; c < 3 * total; c++) {
		u32 i = kpx_pick_wrr(prefix, 4, total, stride, c);

		cnt[i]++;
		run = i == prev ? run + 1 : 1;
		if (run > maxrun)
			maxrun = run;
		prev = i;
	}
	ok(cnt[0] == 3 && cnt[1] == 6 && cnt[2] == 9 && cnt[3] == 12,
	   "wrr 1:2:3:4 over 3 cycles gives exactly %u:%u:%u:%u", cnt[0],
	   cnt[1], cnt[2], cnt[3]);
	ok(maxrun < 4, "wrr interleaves (longest run %u)", maxrun);

	{
		u32 w2[3] = { 65535, 1, 7 }, p2[3], n2[3] = { 0 }, s2, t2;

		t2 = kpx_wrr_prepare(p2, w2, 3, &s2);
		for (c = 0; c < t2; c++)
			n2[kpx_pick_wrr(p2, 3, t2, s2, c + 12345)]++;
		ok(n2[0] == 65535 && n2[1] == 1 && n2[2] == 7,
		   "wrr extreme weights exact over a cycle starting anywhere");
	}
}

struct lc_ctx {
	u32 active[4];
	u32 weight[4];
};

static void lc_get(const void *ctx, u32 i, u32 *a, u32 *w)
{
	const struct lc_ctx *c = ctx;

	*a = c->active[i];
	*w = c->weight[i];
}

static void test_lc(void)
{
	struct lc_ctx c = { { 50, 3, 10, 3 }, { 1, 1, 1, 1 } };
	u32 k, cnt[4] = { 0 };

	ok(kpx_pick_lc(lc_get, &c, 4, 0) == 1, "lc picks the least loaded");
	ok(kpx_pick_lc(lc_get, &c, 4, 2) == 3, "lc breaks ties from start");
	/* Skew: 0 starts at 50; 100 new connections (none close) fill the rest. */
	c = (struct lc_ctx){ { 50, 0, 0, 0 }, { 1, 1, 1, 1 } };
	for (k = 0; k < 100; k++) {
		u32 i = kpx_pick_lc(lc_get, &c, 4, k);

		c.active[i]++;
		cnt[i]++;
	}
	ok(cnt[0] == 0 && c.active[1] + c.active[2] + c.active[3] == 100 &&
	   c.active[1] >= 33 && c.active[2] >= 33 && c.active[3] >= 33,
	   "lc under skew: loaded backend gets %u, others end at %u/%u/%u",
	   cnt[0], c.active[1], c.active[2], c.active[3]);
	c = (struct lc_ctx){ { 0, 0, 0, 0 }, { 1, 3, 1, 1 } };
	for (k = 0; k < 60; k++)
		c.active[kpx_pick_lc(lc_get, &c, 4, k)]++;
	ok(c.active[1] == 30 && c.active[0] == 10,
	   "weighted lc: weight 3 carries %u vs %u", c.active[1], c.active[0]);
}

struct lc_big {
	u32 active[1000];
	u32 weight[1000];
};

static void lc_big_get(const void *ctx, u32 i, u32 *a, u32 *w)
{
	const struct lc_big *c = ctx;

	*a = c->active[i];
	*w = c->weight[i];
}

static u32 xs32(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void test_lc2(void)
{
	static struct lc_big c;
	u32 k, i, r1, r2, seed = 12345, lo = ~0U, hi = 0, bad = 0;
	u32 hit_busy = 0;

	for (i = 0; i < 1000; i++) {
		c.active[i] = (i * 7919) % 13;
		c.weight[i] = 1 + i % 3;
	}
	/* Always the less loaded of two distinct backends. */
	for (k = 0; k < 100000; k++) {
		u32 a, b, got;

		r1 = xs32(&seed);
		r2 = xs32(&seed);
		a = kpx_scale(r1, 1000);
		b = kpx_scale(r2, 999);
		b += b >= a;
		got = kpx_pick_lc2(lc_big_get, &c, 1000, r1, r2);
		if (a == b || (got != a && got != b) ||
		    (u64)c.active[got] * c.weight[got == a ? b : a] >
		    (u64)c.active[got == a ? b : a] * c.weight[got])
			bad++;
	}
	ok(!bad, "lc2 returns the less loaded of two distinct backends");
	/* Balance: 100,000 connections that stay open over 1,000 backends. */
	for (i = 0; i < 1000; i++) {
		c.active[i] = 0;
		c.weight[i] = 1;
	}
	for (k = 0; k < 100000; k++)
		c.active[kpx_pick_lc2(lc_big_get, &c, 1000, xs32(&seed),
				      xs32(&seed))]++;
	for (i = 0; i < 1000; i++) {
		lo = c.active[i] < lo ? c.active[i] : lo;
		hi = c.active[i] > hi ? c.active[i] : hi;
	}
	ok(lo >= 95 && hi <= 105,
	   "lc2: 100000 open connections on 1000 backends: %u..%u", lo, hi);
	/* Skew: half the backends hold 1000 connections each. */
	for (i = 0; i < 1000; i++)
		c.active[i] = i < 500 ? 1000 : 0;
	for (k = 0; k < 100000; k++) {
		i = kpx_pick_lc2(lc_big_get, &c, 1000, xs32(&seed),
				 xs32(&seed));
		hit_busy += i < 500;
		c.active[i]++;
	}
	/* only when both choices are busy: 1/4 of the time */
	ok(hit_busy >= 23000 && hit_busy <= 27000,
	   "lc2 under skew: %u of 100000 to the busy half (both busy: 25%%)",
	   hit_busy);
	{
		struct lc_ctx two = { { 5, 1, 0, 0 }, { 1, 1, 1, 1 } };

		ok(kpx_pick_lc2(lc_get, &two, 2, 0, 0) == 1 &&
		   kpx_pick_lc2(lc_get, &two, 2, U32_MAX, U32_MAX) == 1,
		   "lc2 with 2 backends compares both");
	}
}

static void test_sh(void)
{
	u32 i, stable = 1, cnt[8] = { 0 }, lo = ~0U, hi = 0;

	for (i = 0; i < 80000; i++) {
		u8 a[16] = { 10, 1, (u8)(i >> 8), (u8)i };
		u32 b = kpx_pick_sh(a, 8);

		if (b != kpx_pick_sh(a, 8))
			stable = 0;
		cnt[b]++;
	}
	for (i = 0; i < 8; i++) {
		lo = cnt[i] < lo ? cnt[i] : lo;
		hi = cnt[i] > hi ? cnt[i] : hi;
	}
	ok(stable, "sh: a client always maps to the same backend");
	/* 10000 expected per backend; 5 sigma is about 470. */
	ok(lo > 9500 && hi < 10500, "sh spreads 80000 clients: %u..%u", lo, hi);
}

static void test_random(void)
{
	ok(kpx_pick_random(0, 7) == 0 && kpx_pick_random(~0U, 7) == 6 &&
	   kpx_pick_random(0x80000000U, 4) == 2, "random maps rnd onto [0,n)");
}

int main(void)
{
	test_names();
	test_rr();
	test_wrr();
	test_lc();
	test_lc2();
	test_sh();
	test_random();
	return tap_done();
}
