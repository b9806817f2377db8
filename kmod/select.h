/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx backend schedulers. */
#ifndef _KPX_SELECT_H
#define _KPX_SELECT_H

#include "kpx.h"

/**
 * struct kpx_sched_ops - a backend scheduler
 * @name: short name, for messages
 * @pick: returns an index below @set->count, given a uniformly random
 *	32-bit @rnd; @set->count is at least 1.  Must not sleep.
 */
struct kpx_sched_ops {
	const char *name;
	u32 (*pick)(const struct kpx_bset *set, u32 rnd);
};

extern const struct kpx_sched_ops kpx_sched_random;

struct kpx_backend *kpx_select(const struct kpx_sched_ops *ops,
			       const struct kpx_bset *set);

#endif /* _KPX_SELECT_H */
