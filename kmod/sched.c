// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx schedulers, pure part.  The module keeps the per-frontend state (an
 * atomic counter for rr and wrr, per-backend active counts for lc) and
 * tables built at SET time (wrr prefix sums, the Maglev table); these
 * functions turn that into a backend index below n (n >= 1).
 */
#include "sched.h"

static const char *const sched_names[__KPX_SCHED_NUM] = {
	[KPX_SCHED_RANDOM] = "random",
	[KPX_SCHED_RR] = "rr",
	[KPX_SCHED_WRR] = "wrr",
	[KPX_SCHED_LC] = "lc",
	[KPX_SCHED_SH] = "sh",
	[KPX_SCHED_MH] = "mh",
};

/**
 * kpx_sched_by_name - scheduler id from its IPVS-style name
 * @name: NUL-terminated name
 *
 * Return: an enum kpx_sched_id, or -EINVAL.
 */
int kpx_sched_by_name(const char *name)
{
	int i;

	for (i = 0; i < __KPX_SCHED_NUM; i++)
		if (!strcmp(name, sched_names[i]))
			return i;
	return -EINVAL;
}

/** kpx_sched_name - name of scheduler @id, "?" if unknown. */
const char *kpx_sched_name(unsigned int id)
{
	return id < __KPX_SCHED_NUM ? sched_names[id] : "?";
}

/** kpx_pick_random - uniform choice from a random 32-bit @rnd. */
u32 kpx_pick_random(u32 rnd, u32 n)
{
	return kpx_scale(rnd, n);
}

/**
 * kpx_pick_rr - round robin
 * @counter: the frontend's connection counter before this connection
 * @n: backends
 *
 * Return: @counter mod @n: n consecutive counters visit each backend once.
 */
u32 kpx_pick_rr(u32 counter, u32 n)
{
	return counter % n;
}

/**
 * kpx_wrr_prepare - build the wrr tables of a set
 * @prefix: @n entries: prefix[i] = weight[0] + ... + weight[i]
 * @weight: backend weights, 1..65535
 * @n: backends, at most 65536 (the total then fits 32 bits)
 * @stride: set to a step coprime with the total, used to interleave
 *
 * Return: the total weight (one cycle's length).
 */
u32 kpx_wrr_prepare(u32 *prefix, const u32 *weight, u32 n, u32 *stride)
{
	u32 i, sum = 0, st;

	for (i = 0; i < n; i++) {
		sum += weight[i];
		prefix[i] = sum;
	}
	/*
	 * A step near total / golden ratio, coprime with the total so that
	 * counter * step visits every slot of a cycle once, spreading each
	 * backend's consecutive slots over the cycle.
	 */
	st = (u32)(((u64)sum * 40503) >> 16);
	if (!st)
		st = 1;
	while (kpx_gcd32(st, sum) != 1)
		st++;
	*stride = st;
	return sum;
}

/**
 * kpx_pick_wrr - weighted round robin
 * @prefix: from kpx_wrr_prepare()
 * @n: backends
 * @total: kpx_wrr_prepare()'s return value
 * @stride: kpx_wrr_prepare()'s stride
 * @counter: the frontend's connection counter before this connection
 *
 * Slot (counter * stride) mod total of the cycle is mapped to the backend
 * whose prefix range holds it: over any @total consecutive counters each
 * backend is chosen exactly weight times, interleaved by the stride.
 *
 * Return: a backend index below @n.
 */
u32 kpx_pick_wrr(const u32 *prefix, u32 n, u32 total, u32 stride,
		 u32 counter)
{
	u32 slot = (u32)(((u64)(counter % total) * stride) % total);
	u32 lo = 0, hi = n - 1;

	/* First i with prefix[i] > slot. */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (prefix[mid] > slot)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/**
 * kpx_pick_sh - source hashing
 * @client16: client address, 16 bytes, network order
 * @n: backends
 *
 * Return: an index that depends only on the address and @n.
 */
u32 kpx_pick_sh(const u8 *client16, u32 n)
{
	return kpx_scale((u32)(kpx_hash16(client16, KPX_SH_SEED) >> 32), n);
}

/**
 * kpx_pick_lc - least connections, weighted
 * @get: reads backend i's active count and weight
 * @ctx: passed to @get
 * @n: backends
 * @start: where the scan (and tie-breaking) begins, any value
 *
 * Return: index minimizing active/weight (compared by cross-multiplying).
 */
u32 kpx_pick_lc(kpx_lc_get_fn get, const void *ctx, u32 n, u32 start)
{
	u32 best, ba, bw, k, i;

	best = start % n;
	get(ctx, best, &ba, &bw);
	for (k = 1, i = best; k < n; k++) {
		u32 a, w;

		if (++i == n)
			i = 0;
		get(ctx, i, &a, &w);
		if ((u64)a * bw < (u64)ba * w) {
			best = i;
			ba = a;
			bw = w;
		}
	}
	return best;
}

/**
 * kpx_pick_lc2 - least connections by the power of two random choices
 * @get: reads backend i's active count and weight
 * @ctx: passed to @get
 * @n: backends, at least 2
 * @r1: a random 32-bit value
 * @r2: another, independent
 *
 * Reads two distinct backends chosen at random and returns the less
 * loaded by active/weight (the first on a tie): O(1) whatever @n, and
 * with high probability the chosen backend's load is within O(log log n)
 * of the least (Mitzenmacher, "The Power of Two Choices in Randomized Load
 * Balancing", 2001).  Use kpx_pick_lc() for a few backends.
 *
 * Return: an index below @n.
 */
u32 kpx_pick_lc2(kpx_lc_get_fn get, const void *ctx, u32 n, u32 r1, u32 r2)
{
	u32 i = kpx_scale(r1, n), j = kpx_scale(r2, n - 1), ai, wi, aj, wj;

	if (j >= i)
		j++;
	get(ctx, i, &ai, &wi);
	get(ctx, j, &aj, &wj);
	return (u64)aj * wi < (u64)ai * wj ? j : i;
}
