// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx backend selection.  The schedulers are pure functions of the set and
 * a random number, so they can be unit-tested outside the kernel.
 */
#include <linux/kernel.h>
#include <linux/random.h>

#include "select.h"

/* Uniform choice: maps @rnd onto [0, count) without a division. */
static u32 random_pick(const struct kpx_bset *set, u32 rnd)
{
	return reciprocal_scale(rnd, set->count);
}

const struct kpx_sched_ops kpx_sched_random = {
	.name = "random",
	.pick = random_pick,
};

/**
 * kpx_select - choose a backend for a new connection
 * @ops: the scheduler
 * @set: the frontend's current set, or NULL
 *
 * Call under rcu_read_lock(); the result is valid until it is dropped.
 *
 * Return: the backend, or NULL if @set has none.
 */
struct kpx_backend *kpx_select(const struct kpx_sched_ops *ops,
			       const struct kpx_bset *set)
{
	if (!set || !set->count)
		return NULL;
	return set->be[ops->pick(set, get_random_u32())];
}
