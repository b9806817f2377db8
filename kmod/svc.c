// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx frontend table: one RCU rhashtable per network namespace, keyed by
 * (family, protocol, VIP, port), plus an RCU list of the same entries for
 * dumps and /proc.  Readers (the NAT hook, dumps, /proc) only take
 * rcu_read_lock(); every writer holds kpx_net.lock.
 */
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/err.h>
#include <linux/sched.h>
#include <linux/socket.h>
#include <linux/kpx.h>

#include "svc.h"
#include "backend.h"
#include "lb.h"
#include "ranges.h"
#include "ct.h"
#include "vip.h"
#include "stats.h"
#include "name.h"

static const struct rhashtable_params svc_params = {
	.key_len = sizeof(struct kpx_key),
	.key_offset = offsetof(struct kpx_svc, key),
	.head_offset = offsetof(struct kpx_svc, node),
	.automatic_shrinking = true,
};

int kpx_svc_table_init(struct kpx_net *kn)
{
	int err;

	mutex_init(&kn->lock);
	INIT_LIST_HEAD(&kn->svc_list);
	kn->gen = 1;
	err = rhashtable_init(&kn->svcs, &svc_params);
	if (err)
		return err;
	err = kpx_vip_table_init(kn);
	if (err)
		rhashtable_destroy(&kn->svcs);
	return err;
}

/**
 * kpx_svc_lookup - find a frontend, for readers
 * @kn: the namespace's state
 * @key: built with kpx_key_init()
 *
 * Call under rcu_read_lock(); the result is valid until it is dropped.
 *
 * Return: the frontend or NULL.
 */
struct kpx_svc *kpx_svc_lookup(struct kpx_net *kn, const struct kpx_key *key)
{
	return rhashtable_lookup(&kn->svcs, key, svc_params);
}

/**
 * kpx_svc_cluster - the ClusterIP frontend of a KPX_SVC_F_EXT_LOCAL one
 * @kn: the namespace's state
 * @svc: a frontend found with kpx_svc_lookup()
 *
 * Call under rcu_read_lock(); O(1), one table lookup.
 *
 * Return: the frontend named by @svc's KPX_SVC_A_CLUSTER_* key, or NULL if
 * @svc has no KPX_SVC_F_EXT_LOCAL or that frontend does not exist.
 */
struct kpx_svc *kpx_svc_cluster(struct kpx_net *kn, const struct kpx_svc *svc)
{
	const struct kpx_ckey *ck;

	if (!(READ_ONCE(svc->flags) & KPX_SVC_F_EXT_LOCAL))
		return NULL;
	ck = rcu_dereference(svc->cluster);
	return ck ? kpx_svc_lookup(kn, &ck->key) : NULL;
}

#ifdef KPX_TEST_HOOKS
void (*kpx_test_svc_hook)(const struct kpx_svc *svc, int step);
#define test_hook(svc, step) do {				\
	if (kpx_test_svc_hook)					\
		kpx_test_svc_hook(svc, step);			\
} while (0)
#else
#define test_hook(svc, step) do { } while (0)
#endif

/* Writers' lookup: kn->lock keeps the result alive. */
static struct kpx_svc *svc_find(struct kpx_net *kn, const struct kpx_key *key)
{
	lockdep_assert_held(&kn->lock);
	return rhashtable_lookup_fast(&kn->svcs, key, svc_params);
}

static void gen_bump(struct kpx_net *kn)
{
	u32 gen = kn->gen + 1;

	WRITE_ONCE(kn->gen, gen ? gen : 1);
}

/* A set and its scheduler data, once no reader can see them. */
static void svc_bset_free(struct kpx_bset *set)
{
	if (!set)
		return;
	kpx_sched_data_free(set->sd);
	set->sd = NULL;
	kpx_bset_free(set);
}

static void svc_bset_free_work(struct work_struct *work)
{
	svc_bset_free(container_of(to_rcu_work(work), struct kpx_bset, rwork));
}

/* Frees an unpublished set (replaced) from a work item after RCU. */
static void svc_bset_free_rcu(struct kpx_bset *set)
{
	if (set)
		kpx_free_after_rcu(&set->rwork, svc_bset_free_work);
}

/* Frees a frontend after its grace period, in process context. */
static void svc_free_work(struct work_struct *work)
{
	struct kpx_svc *svc = container_of(to_rcu_work(work), struct kpx_svc,
					   rwork);

	svc_bset_free(rcu_dereference_raw(svc->bset));
	kpx_cidrs_free(rcu_dereference_raw(svc->ranges));
	kfree(rcu_dereference_raw(svc->cluster));
	kfree(rcu_dereference_raw(svc->name));
	kpx_aff_release(svc);
	kpx_stats_free(svc->stats);
	kfree(svc);
}

/* Unlink @svc; it is freed with its set after a grace period. */
static void svc_unlink(struct kpx_net *kn, struct kpx_svc *svc)
{
	struct kpx_bset *set;

	lockdep_assert_held(&kn->lock);
	rhashtable_remove_fast(&kn->svcs, &svc->node, svc_params);
	kpx_lc_svc_unlink(kn, svc);	/* before it leaves the list */
	list_del_rcu(&svc->list);
	set = rcu_dereference_protected(svc->bset, lockdep_is_held(&kn->lock));
	WRITE_ONCE(kn->n_svcs, kn->n_svcs - 1);
	WRITE_ONCE(kn->n_backends, kn->n_backends - (set ? set->count : 0));
	if (svc->flags & KPX_SVC_F_CLUSTER_IP)
		kpx_vip_put(kn, &svc->key);
	kpx_aff_stop(svc);	/* no work left on its table */
	kpx_free_after_rcu(&svc->rwork, svc_free_work);
}

/**
 * __kpx_svc_set - create or replace a frontend and its whole backend set
 * @kn: the namespace's state; kn->lock held, its NAT hooks on
 * @req: the frontend, its backends and settings; req->ranges taken over
 *
 * Readers see the old set or the new one.  Backends in both keep their
 * object and counter.  Every step that can fail (allocations of the
 * frontend, the set, its scheduler tables, the affinity table, the
 * ClusterIP reference, the table insertion) runs before the first change
 * readers can see; the commit that follows cannot fail.  On error nothing
 * has changed.  A UDP or SCTP frontend's stale
 * conntrack entries are deleted afterwards (kpx_ct_after_set()).
 * KPX_SVC_F_CLUSTER_IP frontends hold a reference on their address in the
 * ClusterIP set (vip.c).  Allocations are charged to the caller's memory
 * cgroup.
 *
 * Return: 0, -ENOMEM, -ENOSPC (the namespace would pass KPX_SERVICES_MAX
 * frontends or KPX_NS_BACKENDS_MAX backends), or an rhashtable insertion
 * error.
 */
int __kpx_svc_set(struct kpx_net *kn, const struct kpx_svc_req *req)
{
	const struct kpx_name_req *nreq = &req->name;
	const struct kpx_sched_cfg *scfg = &req->scfg;
	const struct kpx_key *key = &req->key;
	struct kpx_cidrs *ranges = req->ranges;
	struct kpx_be_cfg *cfg = req->cfg;
	u32 flags = req->flags, n = req->n;
	struct kpx_name *nm = NULL, *old_nm;
	struct kpx_ckey *ck = NULL, *old_ck;
	struct kpx_affk *fresh = NULL;
	struct kpx_bset *old = NULL, *set;
	struct kpx_cidrs *old_ranges;
	struct kpx_svc *svc, *nsvc = NULL;
	bool vip_got = false;
	int err = 0;

	lockdep_assert_held(&kn->lock);
	if (req->has_cluster) {
		ck = kmalloc(sizeof(*ck), GFP_KERNEL_ACCOUNT);
		if (!ck) {
			kpx_cidrs_free(ranges);
			return -ENOMEM;
		}
		ck->key = req->cluster;
	}
	svc = svc_find(kn, key);
	if (svc)
		old = rcu_dereference_protected(svc->bset,
						lockdep_is_held(&kn->lock));
	if (kpx_name_req_any(nreq)) {
		nm = kpx_name_build(svc ? rcu_dereference_protected(svc->name,
				    lockdep_is_held(&kn->lock)) : NULL, nreq);
		if (IS_ERR(nm)) {
			err = PTR_ERR(nm);
			nm = NULL;
			goto out;
		}
	}
	if ((!svc && kn->n_svcs >= KPX_SERVICES_MAX) ||
	    (u64)kn->n_backends - (old ? old->count : 0) + n >
	    KPX_NS_BACKENDS_MAX) {
		err = -ENOSPC;
		goto out;
	}
	if (!svc) {
		nsvc = kzalloc(sizeof(*nsvc), GFP_KERNEL_ACCOUNT);
		if (nsvc)
			nsvc->stats = kpx_stats_alloc();
		if (!nsvc || !nsvc->stats) {
			err = -ENOMEM;
			goto out;
		}
	}
	if ((flags & KPX_SVC_F_CLUSTER_IP) &&
	    !(svc && (svc->flags & KPX_SVC_F_CLUSTER_IP))) {
		err = kpx_vip_get(kn, key);
		if (err)
			goto out;
		vip_got = true;
	}
	set = kpx_bset_build(old, cfg, n);
	if (IS_ERR(set)) {
		err = PTR_ERR(set);
		goto out;
	}
	/* Scheduler tables and affinity table, before any change. */
	err = kpx_lb_attach(kn, set, old, scfg);
	if (!err) {
		fresh = kpx_aff_prepare(svc, scfg);
		if (IS_ERR(fresh))
			err = PTR_ERR(fresh);
	}
	if (err) {
		svc_bset_free(set);
		goto out;
	}

	if (svc) {
		/* Count before the old set is handed to RCU to be freed. */
		WRITE_ONCE(kn->n_backends,
			   kn->n_backends - (old ? old->count : 0) + n);
		if ((svc->flags & KPX_SVC_F_CLUSTER_IP) &&
		    !(flags & KPX_SVC_F_CLUSTER_IP))
			kpx_vip_put(kn, key);
		vip_got = false;	/* kept by the frontend */
		WRITE_ONCE(svc->flags, flags);
		old_ranges = rcu_replace_pointer(svc->ranges, ranges,
						 lockdep_is_held(&kn->lock));
		ranges = NULL;
		kpx_cidrs_free_rcu(old_ranges);
		old_ck = rcu_replace_pointer(svc->cluster, ck,
					     lockdep_is_held(&kn->lock));
		ck = NULL;
		if (old_ck)
			kfree_rcu(old_ck, rcu);
		if (kpx_name_req_any(nreq)) {
			old_nm = rcu_replace_pointer(svc->name, nm,
						     lockdep_is_held(&kn->lock));
			nm = NULL;
			if (old_nm)
				kfree_rcu(old_nm, rcu);
		}
		svc->scfg = *scfg;
		rcu_assign_pointer(svc->bset, set);
		kpx_aff_commit(svc, fresh, set);
		kpx_lc_scan_kick(kn, scfg);
		gen_bump(kn);
		if (kpx_ct_wants_cleanup(key))
			kpx_ct_after_set(kn->net, key, old, set, false);
		svc_bset_free_rcu(old);
		goto out;
	}

	svc = nsvc;
	nsvc = NULL;
	svc->key = *key;
	svc->seq = ++kn->svc_seq;
	svc->flags = flags;
	RCU_INIT_POINTER(svc->bset, set);
	RCU_INIT_POINTER(svc->ranges, ranges);
	RCU_INIT_POINTER(svc->cluster, ck);
	RCU_INIT_POINTER(svc->name, nm);
	svc->scfg = *scfg;
	RCU_INIT_POINTER(svc->aff, fresh);
	ranges = NULL;
	ck = NULL;
	nm = NULL;
	/*
	 * On the list first, then in the table: a dump that finds a frontend
	 * through the table (to resume at it) may walk the list from there.
	 */
	list_add_tail_rcu(&svc->list, &kn->svc_list);
	test_hook(svc, 1);
	err = rhashtable_insert_fast(&kn->svcs, &svc->node, svc_params);
	if (err) {
		/* List readers may hold it: free it after a grace period. */
		list_del_rcu(&svc->list);
		kpx_free_after_rcu(&svc->rwork, svc_free_work);
		goto out;
	}
	test_hook(svc, 2);
	vip_got = false;	/* kept by the frontend */
	WRITE_ONCE(kn->n_svcs, kn->n_svcs + 1);
	WRITE_ONCE(kn->n_backends, kn->n_backends + n);
	kpx_lc_scan_kick(kn, scfg);
	gen_bump(kn);
	if (kpx_ct_wants_cleanup(key))
		kpx_ct_after_set(kn->net, key, NULL, set, true);
out:
	if (vip_got)
		kpx_vip_put(kn, key);
	if (nsvc)
		kpx_stats_free(nsvc->stats);
	kfree(nsvc);
	kpx_cidrs_free(ranges);
	kfree(ck);
	kfree(nm);
	return err;
}

/**
 * kpx_svc_del - delete a frontend
 * @kn: the namespace's state
 * @key: built with kpx_key_init()
 *
 * Return: 0 or -ENOENT.
 */
int kpx_svc_del(struct kpx_net *kn, const struct kpx_key *key)
{
	struct kpx_svc *svc;
	int err = -ENOENT;

	mutex_lock(&kn->lock);
	svc = svc_find(kn, key);
	if (svc) {
		struct kpx_key k = *key;

		svc_unlink(kn, svc);
		gen_bump(kn);
		err = 0;
		if (kpx_ct_wants_cleanup(&k))
			kpx_ct_after_del(kn->net, &k, 1);
	}
	mutex_unlock(&kn->lock);
	return err;
}

static void svc_flush_locked(struct kpx_net *kn)
{
	struct kpx_svc *svc, *tmp;

	lockdep_assert_held(&kn->lock);
	list_for_each_entry_safe(svc, tmp, &kn->svc_list, list) {
		svc_unlink(kn, svc);
		cond_resched();
	}
	gen_bump(kn);
}

/**
 * kpx_svc_flush - delete every frontend of the namespace
 * @kn: the namespace's state
 */
void kpx_svc_flush(struct kpx_net *kn)
{
	struct kpx_key *keys;
	struct kpx_svc *svc;
	u32 n = 0;

	mutex_lock(&kn->lock);
	/* The UDP/SCTP keys, for kpx_ct_after_del(); best effort. */
	keys = kvmalloc_array(kn->n_svcs ?: 1, sizeof(*keys),
			      GFP_KERNEL_ACCOUNT);
	list_for_each_entry(svc, &kn->svc_list, list) {
		if (keys && kpx_ct_wants_cleanup(&svc->key))
			keys[n++] = svc->key;
		cond_resched();
	}
	svc_flush_locked(kn);
	kpx_ct_after_del(kn->net, keys, n);
	mutex_unlock(&kn->lock);
	kvfree(keys);
}

/**
 * kpx_svc_table_destroy - free the table at namespace exit
 * @kn: the namespace's state
 *
 * The NAT hooks must be gone already; frees are still deferred past a
 * grace period, and module exit waits for them with rcu_barrier().
 */
void kpx_svc_table_destroy(struct kpx_net *kn)
{
	mutex_lock(&kn->lock);
	svc_flush_locked(kn);
	mutex_unlock(&kn->lock);
	kpx_vip_table_destroy(kn);
	rhashtable_destroy(&kn->svcs);
	mutex_destroy(&kn->lock);
}
