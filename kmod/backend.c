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
#include <linux/sched.h>
#include <linux/workqueue.h>

#include "backend.h"
#include "stats.h"

/* The order of a set: by address (16 bytes), then port, host order. */
static int be_cmp(const u8 *a1, __be16 p1, const u8 *a2, __be16 p2)
{
	int r = memcmp(a1, a2, sizeof_field(union kpx_addr, bytes));

	if (r)
		return r;
	return (int)ntohs(p1) - (int)ntohs(p2);
}

static int cfg_cmp(const void *a, const void *b)
{
	const struct kpx_be_cfg *x = a, *y = b;

	return be_cmp(x->addr.bytes, x->port, y->addr.bytes, y->port);
}

/**
 * kpx_bset_find - find a backend of a set by address and port
 * @set: the set (a published one under rcu_read_lock(), or one the
 *	caller owns), or NULL
 * @addr16: the address, 16 bytes in network order, as in union kpx_addr
 *	(an IPv4 address in the first four, the rest zero); any alignment
 * @port: network order
 *
 * A binary search of the sorted set: O(log n), no lock, any context.
 *
 * Return: the backend, or NULL if @set has none with that address and port.
 */
struct kpx_backend *kpx_bset_find(const struct kpx_bset *set,
				  const u8 *addr16, __be16 port)
{
	u32 lo = 0, hi = set ? set->count : 0;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		struct kpx_backend *be = set->be[mid];
		int r = be_cmp(be->addr.bytes, be->port, addr16, port);

		if (!r)
			return be;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
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
	if (refcount_dec_and_test(&be->ref)) {
		kpx_be_stats_free(be->conns);
		kfree(be);
	}
}

/* Frees and allocations of large sets reschedule every this many steps. */
#define BSET_STEP	1024

/* Where set frees run: process context, after their grace period. */
static struct workqueue_struct *kpx_free_wq;

/**
 * kpx_free_wq_init - create the workqueue of the deferred frees
 *
 * Return: 0 or -ENOMEM.
 */
int kpx_free_wq_init(void)
{
	kpx_free_wq = alloc_workqueue("kpx_free", WQ_UNBOUND, 0);
	return kpx_free_wq ? 0 : -ENOMEM;
}

/**
 * kpx_free_wq_exit - wait for every deferred free, then destroy the queue
 *
 * Call once nothing can queue a free any more.
 */
void kpx_free_wq_exit(void)
{
	rcu_barrier();		/* the callbacks that queue the work */
	destroy_workqueue(kpx_free_wq);	/* drains it */
}

/**
 * kpx_free_after_rcu - run @fn from a work item after a grace period
 * @rwork: embedded in the object to free
 * @fn: the work function; process context, may sleep
 */
void kpx_free_after_rcu(struct rcu_work *rwork, work_func_t fn)
{
	INIT_RCU_WORK(rwork, fn);
	queue_rcu_work(kpx_free_wq, rwork);
}

/**
 * kpx_bset_free - free a set that no reader can see any more
 * @set: the set, or NULL; its owner has freed @set->sd already (the
 *	scheduler data hung on it, lb.c)
 *
 * Drops the set's reference on each backend.  Process context: it
 * reschedules every BSET_STEP backends.
 */
void kpx_bset_free(struct kpx_bset *set)
{
	u32 i;

	if (!set)
		return;
	might_sleep();
	for (i = 0; i < set->count; i++) {
		be_put(set->be[i]);
		if (!((i + 1) % BSET_STEP))
			cond_resched();
	}
	WARN_ON_ONCE(set->sd);
	kvfree(set);
}

/**
 * kpx_bset_build - build a new backend set, reusing backends of the old one
 * @old: the set being replaced, or NULL; not modified
 * @cfg: the requested backends, sorted by kpx_be_cfg_sort(), no duplicates
 * @n: number of entries in @cfg, at most KPX_BACKENDS_MAX
 *
 * A backend of @old with the same address and port is shared (one more
 * reference, so its counters go on); the new set carries the requested
 * weights, so readers of @old keep seeing its own.  Must be called under
 * the namespace's writer lock, in process context (it reschedules every
 * BSET_STEP backends).  Memory is charged to the caller's memory cgroup.
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
	set = kvzalloc(size_add(struct_size(set, be, n),
				array_size(n, sizeof(u32))),
		       GFP_KERNEL_ACCOUNT);
	if (!set)
		return ERR_PTR(-ENOMEM);
	set->weight = (u32 *)&set->be[n];

	for (i = 0; i < n; i++) {
		struct kpx_backend *be = NULL;
		int r = 1;

		while (old && j < old->count) {
			be = old->be[j];
			r = be_cmp(be->addr.bytes, be->port,
				   cfg[i].addr.bytes, cfg[i].port);
			if (r >= 0)
				break;
			j++;
		}
		if (!r) {
			refcount_inc(&be->ref);
			j++;
		} else {
			be = kzalloc(sizeof(*be), GFP_KERNEL_ACCOUNT);
			if (!be)
				goto nomem;
			be->conns = kpx_be_stats_alloc();
			if (!be->conns) {
				kfree(be);
				goto nomem;
			}
			refcount_set(&be->ref, 1);
			be->addr = cfg[i].addr;
			be->port = cfg[i].port;
		}
		set->count = i + 1;
		set->be[i] = be;
		set->weight[i] = cfg[i].weight;
		if (!((i + 1) % BSET_STEP))
			cond_resched();
	}
	return set;

nomem:
	kpx_bset_free(set);
	return ERR_PTR(-ENOMEM);
}
