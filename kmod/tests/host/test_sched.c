// SPDX-License-Identifier: GPL-2.0-only
/* Host tests of the schedulers (sched.c). */
#include <stdlib.h>
#include "tap.h"
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
	test_sh();
	test_random();
	return tap_done();
}
