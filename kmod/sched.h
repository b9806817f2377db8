/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx schedulers (pure): each is a function of the backend set's shape
 * (count, weights, active connections), per-frontend state passed in, and
 * the client address or a random number.  No locking, no allocation.
 */
#ifndef _KPX_SCHED_H
#define _KPX_SCHED_H

#include "pure.h"

enum kpx_sched_id {
	KPX_SCHED_RANDOM,
	KPX_SCHED_RR,
	KPX_SCHED_WRR,
	KPX_SCHED_LC,
	KPX_SCHED_SH,
	KPX_SCHED_MH,
	__KPX_SCHED_NUM
};

#define KPX_SH_SEED	0x6b70782d73682d31ULL

int kpx_sched_by_name(const char *name);
const char *kpx_sched_name(unsigned int id);

u32 kpx_pick_random(u32 rnd, u32 n);
u32 kpx_pick_rr(u32 counter, u32 n);
u32 kpx_wrr_prepare(u32 *prefix, const u32 *weight, u32 n, u32 *stride);
u32 kpx_pick_wrr(const u32 *prefix, u32 n, u32 total, u32 stride,
		 u32 counter);
u32 kpx_pick_sh(const u8 *client16, u32 n);

/*
 * lc: @get returns backend @i's active connections and weight (>= 1); the
 * least loaded by active/weight wins, ties go to the first one at or after
 * @start (pass a random number to spread ties).
 */
typedef void (*kpx_lc_get_fn)(const void *ctx, u32 i, u32 *active,
			      u32 *weight);
u32 kpx_pick_lc(kpx_lc_get_fn get, const void *ctx, u32 n, u32 start);
u32 kpx_pick_lc2(kpx_lc_get_fn get, const void *ctx, u32 n, u32 r1, u32 r2);

/* lc reads every backend up to this many, two random ones above. */
#define KPX_LC_SCAN_MAX	8

#endif /* _KPX_SCHED_H */
