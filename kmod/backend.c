// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx backend objects and backend sets.
 *
 * A backend set is built once, published with rcu_assign_pointer() and never
 * changed.  It holds one reference on each backend; a backend that is in the
 * old and the new set of a SET is the same object, so its counter keeps
 * counting.  Sets are kept sorted by (address, port), which makes finding the
 * backends to reuse a merge walk and finding duplicates a neighbour check.
 */
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/overflow.h>
#include <linux/err.h>

#include "backend.h"
#include "lb.h"

static int be_cmp(const union kpx_addr *a1, __be16 p1,
		  const union kpx_addr *a2, __be16 p2)
{
	int r = memcmp(a1->bytes, a2->bytes, sizeof(a1->bytes));

	if (r)
		return r;
	return (int)ntohs(p1) - (int)ntohs(p2);
}

static int cfg_cmp(const void *a, const void *b)
{
	const struct kpx_be_cfg *x = a, *y = b;

	return be_cmp(&x->addr, x->port, &y->addr, y->port);
}

/**
 * kpx_be_cfg_sort - sort requested backends and look for duplicates
 * @cfg: the backends of one request
 * @n: number of entries in @cfg
 * @dup_pos: set to the request position of a repeated backend
 *
 * Return: 0, or -EINVAL if two entries have the same address and port.
 */
int kpx_be_cfg_sort(struct kpx_be_cfg *cfg, u32 n, u32 *dup_pos)
{
	u32 i;

	sort(cfg, n, sizeof(*cfg), cfg_cmp, NULL);
	for (i = 1; i < n; i++) {
		if (!cfg_cmp(&cfg[i - 1], &cfg[i])) {
			*dup_pos = max(cfg[i - 1].pos, cfg[i].pos);
			return -EINVAL;
		}
	}
	return 0;
}

static void be_put(struct kpx_backend *be)
{
	if (refcount_dec_and_test(&be->ref))
		kfree(be);
}

/**
 * kpx_bset_free - free a set that no reader can see any more
 * @set: the set, or NULL
 *
 * Drops the set's reference on each backend.  Callable from RCU callbacks.
 */
void kpx_bset_free(struct kpx_bset *set)
{
	u32 i;

	if (!set)
		return;
	for (i = 0; i < set->count; i++)
		be_put(set->be[i]);
	kpx_sched_data_free(set->sd);
	kvfree(set);
}

static void bset_free_rcu_cb(struct rcu_head *head)
{
	kpx_bset_free(container_of(head, struct kpx_bset, rcu));
}

/**
 * kpx_bset_free_rcu - free a set once readers are done with it
 * @set: the set, or NULL, already unpublished (replaced or unlinked)
 *
 * Frees it after an RCU grace period.
 */
void kpx_bset_free_rcu(struct kpx_bset *set)
{
	if (set)
		call_rcu(&set->rcu, bset_free_rcu_cb);
}

/**
 * kpx_bset_build - build a new backend set, reusing backends of the old one
 * @old: the set being replaced, or NULL; not modified except for weights
 * @cfg: the requested backends, sorted by kpx_be_cfg_sort(), no duplicates
 * @n: number of entries in @cfg
 *
 * A backend of @old with the same address and port is shared (one more
 * reference) and takes the requested weight once the build has succeeded
 * (readers of @old see the new weight too).  Must be called under the
 * namespace's writer lock.
 *
 * Return: the new set; NULL if @n is 0; ERR_PTR(-ENOMEM).
 */
struct kpx_bset *kpx_bset_build(const struct kpx_bset *old,
				const struct kpx_be_cfg *cfg, u32 n)
{
	struct kpx_bset *set;
	u32 i, j = 0;

	if (!n)
		return NULL;
	set = kvzalloc(struct_size(set, be, n), GFP_KERNEL);
	if (!set)
		return ERR_PTR(-ENOMEM);

	for (i = 0; i < n; i++) {
		struct kpx_backend *be = NULL;
		int r = 1;

		while (old && j < old->count) {
			be = old->be[j];
			r = be_cmp(&be->addr, be->port, &cfg[i].addr,
				   cfg[i].port);
			if (r >= 0)
				break;
			j++;
		}
		if (!r) {
			refcount_inc(&be->ref);
			j++;
		} else {
			be = kzalloc(sizeof(*be), GFP_KERNEL);
			if (!be)
				goto nomem;
			refcount_set(&be->ref, 1);
			be->addr = cfg[i].addr;
			be->port = cfg[i].port;
			be->weight = cfg[i].weight;
			atomic64_set(&be->conns, 0);
		}
		set->count = i + 1;
		set->be[i] = be;
	}
	/* Only now, so that a failed build leaves the old set untouched. */
	for (i = 0; i < n; i++)
		WRITE_ONCE(set->be[i]->weight, cfg[i].weight);
	return set;

nomem:
	kpx_bset_free(set);
	return ERR_PTR(-ENOMEM);
}
