// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx conntrack hygiene (kube-proxy's stale-UDP bug class).
 *
 * A UDP (or SCTP) client that keeps its socket keeps refreshing its
 * conntrack entry, so the NAT decision of its first datagram would hold
 * forever.  After a change of a UDP or SCTP frontend kpx therefore deletes
 * the entries that the change made wrong:
 *   - a SET that drops backends: the frontend's DNATed entries whose
 *     backend (reply source) is not in the new set; their next datagram is
 *     a new connection and is scheduled (or refused) afresh;
 *   - a SET that gives a frontend without backends (or a new frontend) some:
 *     the frontend's entries without DNAT (traffic that reached the VIP
 *     untranslated before; kpx's own refusals never confirm an entry);
 *   - a DEL or FLUSH: every entry of the deleted frontends.
 * Nothing else is deleted: a SET that changes nothing, an agent restart or
 * a module load leave every entry alone.  TCP is left to its own state
 * machine (a connection to a removed backend fails and is re-opened).
 *
 * A KPX_SVC_F_EXT_LOCAL frontend schedules local clients with its ClusterIP
 * frontend's backends (hook.c), so its entries may be DNATed to either
 * frontend's backends: for such a frontend "the set" above is the union of
 * both, and a change of the ClusterIP frontend is also applied to the
 * entries of every EXT_LOCAL frontend that names it.
 *
 * The cleanups are deferred and batched, off the config path: a writer only
 * queues the frontend's key with what the change asks for (coalesced per
 * key, at most KPX_CT_PENDING_MAX keys per namespace, memory charged to the
 * writer), and one work item per namespace, after an RCU grace period (so
 * that no packet still scheduling from an old set can create an entry
 * after the walk), walks the host's conntrack table once for every key
 * queued (nf_ct_iterate_cleanup_net(), which reschedules between buckets)
 * without the config mutex.  It decides against the frontend table as it is
 * then: a key queued by several changes is walked once, with the state the
 * last one left.  Should the queue be full or an allocation fail, that one
 * cleanup runs at once in the writer's context, as a single-key walk.
 * KPX_CMD_CT_SYNC (kpx_ct_sync()) waits for the queued cleanups.
 *
 * The walk looks every UDP and SCTP entry of the host's table up among the
 * keys walked, and an entry's tuple is the client's choice: the queued and
 * the walked keys are in rhashtables (a random seed per table, chains of
 * at most RHT_ELASTICITY, re-seeded or grown in the background by moving
 * entries without lookups), so a lookup costs O(1) however many keys are
 * queued and whatever their values.
 */
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/socket.h>
#include <linux/in.h>
#include <linux/workqueue.h>
#include <net/netfilter/nf_conntrack.h>
#include <linux/kpx.h>

#include "ct.h"
#include "svc.h"
#include "backend.h"

/* Most keys queued per namespace; further ones are cleaned at once. */
#define KPX_CT_PENDING_MAX	65536
/* Most walks kpx_ct_sync() waits for. */
#define KPX_CT_SYNC_ROUNDS	8

/* What a queued key asks for (coalesced with |). */
#define CT_STALE_BE	BIT(0)	/* DNATed entries to a backend not in the set */
#define CT_NO_NAT	BIT(1)	/* entries without DNAT, if it has backends */
#define CT_GONE		BIT(2)	/* every entry, if the frontend is gone */

struct ct_key {
	struct rhash_head pnode;	/* in pending */
	struct rhash_head wnode;	/* in walking */
	struct list_head list;		/* on pending_list or walking_list */
	struct kpx_key key;
	u32 what;		/* CT_* */
	unsigned long gp;	/* get_state_synchronize_rcu() when queued */
};

/* Per-namespace cleanup queue, allocated by the first cleanup. */
struct kpx_ct {
	struct kpx_net *kn;
	struct rcu_work rwork;
	spinlock_t lock;	/* pending, pending_list, n_pending, dying */
	struct rhashtable pending;
	struct list_head pending_list;
	u32 n_pending;
	bool dying;		/* namespace exit: no more requeueing */
	/* the worker's own: the keys of the walk in progress */
	struct rhashtable walking;
	struct list_head walking_list;
};

/* One walk: the keys (a table, or one key), the entries found. */
struct ct_walk {
	struct kpx_net *kn;
	struct rhashtable *table;	/* or NULL */
	const struct ct_key *one;	/* with table NULL */
};

#ifdef KPX_TEST_HOOKS
atomic_t kpx_test_ct_cmps;

/* The default comparison, counted. */
static int ct_key_cmp(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct ct_key *e = obj;

	atomic_inc(&kpx_test_ct_cmps);
	return memcmp(&e->key, arg->key, sizeof(e->key));
}
#endif

static const struct rhashtable_params pending_params = {
	.key_len = sizeof(struct kpx_key),
	.key_offset = offsetof(struct ct_key, key),
	.head_offset = offsetof(struct ct_key, pnode),
	.automatic_shrinking = true,
#ifdef KPX_TEST_HOOKS
	.obj_cmpfn = ct_key_cmp,
#endif
};

static const struct rhashtable_params walking_params = {
	.key_len = sizeof(struct kpx_key),
	.key_offset = offsetof(struct ct_key, key),
	.head_offset = offsetof(struct ct_key, wnode),
	.automatic_shrinking = true,
#ifdef KPX_TEST_HOOKS
	.obj_cmpfn = ct_key_cmp,
#endif
};

/**
 * kpx_ct_wants_cleanup - does a change of this frontend need one?
 * @key: the frontend
 *
 * Return: true for UDP and SCTP frontends.
 */
bool kpx_ct_wants_cleanup(const struct kpx_key *key)
{
	return key->protocol == IPPROTO_UDP || key->protocol == IPPROTO_SCTP;
}

/* The walk's key @key, or NULL; the worker's own table. */
static struct ct_key *walking_find(struct rhashtable *walking,
				   const struct kpx_key *key)
{
	return rhashtable_lookup_fast(walking, key, walking_params);
}

static bool set_empty(const struct kpx_bset *set)
{
	return !set || !set->count;
}

/*
 * Is @ct, an entry of frontend @e->key, one to delete?  Decided against the
 * frontend table now; under rcu_read_lock().
 */
static bool ct_stale(struct kpx_net *kn, const struct ct_key *e,
		     const struct nf_conn *ct, u8 family)
{
	const struct nf_conntrack_tuple *r;
	const struct kpx_bset *set, *cset = NULL;
	struct kpx_svc *svc, *csvc;
	u32 what = e->what;
	union kpx_addr be;

	svc = kpx_svc_lookup(kn, &e->key);
	if (!svc)
		return true;	/* only a DEL or FLUSH queues a gone key */
	if (what & CT_GONE)	/* deleted, then set again meanwhile */
		what |= CT_STALE_BE | CT_NO_NAT;
	set = rcu_dereference(svc->bset);
	csvc = kpx_svc_cluster(kn, svc);
	if (csvc)
		cset = rcu_dereference(csvc->bset);
	if (!(ct->status & IPS_DST_NAT))
		return (what & CT_NO_NAT) &&
		       (!set_empty(set) || !set_empty(cset));
	if (!(what & CT_STALE_BE))
		return false;
	r = &ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	kpx_addr_from_nf(&be, family, &r->src.u3);
	return !kpx_bset_find(set, be.bytes, r->src.u.all) &&
	       !kpx_bset_find(cset, be.bytes, r->src.u.all);
}

static int ct_iter(struct nf_conn *ct, void *data)
{
	const struct nf_conntrack_tuple *o;
	const struct ct_walk *w = data;
	const struct ct_key *e;
	struct kpx_key key;
	bool stale;

	o = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	if (o->dst.protonum != IPPROTO_UDP && o->dst.protonum != IPPROTO_SCTP)
		return 0;
	if (o->src.l3num != AF_INET && o->src.l3num != AF_INET6)
		return 0;
	kpx_key_from_tuple(&key, o);
	if (w->table)
		e = walking_find(w->table, &key);
	else
		e = memcmp(&key, &w->one->key, sizeof(key)) ? NULL : w->one;
	if (!e)
		return 0;
	rcu_read_lock();
	stale = ct_stale(w->kn, e, ct, key.family);
	rcu_read_unlock();
	if (stale)
		atomic64_inc(&w->kn->ct_deleted[key.family == AF_INET6]);
	return stale;
}

static void ct_walk(struct kpx_net *kn, struct rhashtable *table,
		    const struct ct_key *one)
{
	struct ct_walk w = { .kn = kn, .table = table, .one = one };
	struct nf_ct_iter_data d = { .net = kn->net, .data = &w };

	nf_ct_iterate_cleanup_net(ct_iter, &d);
}

/*
 * Adds to the walk the KPX_SVC_F_EXT_LOCAL frontends whose ClusterIP
 * frontend is in it, asking what their ClusterIP frontend's key asks (their
 * entries may be DNATed to its backends).  The keys added are freed with
 * the walk's.  Best effort under memory pressure (GFP_ATOMIC, in an RCU
 * read section).
 */
static void add_ext_local(struct kpx_ct *q)
{
	struct kpx_net *kn = q->kn;
	const struct kpx_ckey *ck;
	struct ct_key *c, *e;
	struct kpx_svc *svc;

	rcu_read_lock();
	list_for_each_entry_rcu(svc, &kn->svc_list, list) {
		if (!(READ_ONCE(svc->flags) & KPX_SVC_F_EXT_LOCAL) ||
		    !kpx_ct_wants_cleanup(&svc->key))
			continue;
		ck = rcu_dereference(svc->cluster);
		c = ck ? walking_find(&q->walking, &ck->key) : NULL;
		if (!c || !(c->what & (CT_STALE_BE | CT_NO_NAT | CT_GONE)))
			continue;
		e = walking_find(&q->walking, &svc->key);
		if (e) {
			e->what |= c->what & (CT_STALE_BE | CT_NO_NAT);
			if (c->what & CT_GONE)
				e->what |= CT_STALE_BE;
			continue;
		}
		e = kmalloc(sizeof(*e), GFP_ATOMIC | __GFP_NOWARN);
		if (!e)
			break;
		e->key = svc->key;
		e->what = (c->what & (CT_STALE_BE | CT_NO_NAT)) |
			  ((c->what & CT_GONE) ? CT_STALE_BE : 0);
		if (rhashtable_insert_fast(&q->walking, &e->wnode,
					   walking_params)) {
			kfree(e);
			break;
		}
		list_add_tail(&e->list, &q->walking_list);
	}
	rcu_read_unlock();
}

/* Frees the keys of the walk that is over. */
static void walking_free(struct kpx_ct *q)
{
	struct ct_key *e, *tmp;

	list_for_each_entry_safe(e, tmp, &q->walking_list, list) {
		rhashtable_remove_fast(&q->walking, &e->wnode, walking_params);
		list_del(&e->list);
		kfree(e);
	}
}

/*
 * Moves the keys whose grace period is over (all of them with @all, after
 * the caller waited for one) from pending to walking.  A key the walking
 * table cannot take now (no memory) stays pending, for the next walk.
 */
static u32 take_ready(struct kpx_ct *q, bool all)
{
	struct ct_key *e, *tmp;
	u32 n = 0;

	spin_lock(&q->lock);
	list_for_each_entry_safe(e, tmp, &q->pending_list, list) {
		if (!all && !poll_state_synchronize_rcu(e->gp))
			continue;
		if (rhashtable_insert_fast(&q->walking, &e->wnode,
					   walking_params))
			break;
		rhashtable_remove_fast(&q->pending, &e->pnode, pending_params);
		list_move_tail(&e->list, &q->walking_list);
		q->n_pending--;
		n++;
	}
	spin_unlock(&q->lock);
	return n;
}

/* One walk for every ready key; in the worker, or at exit. */
static void ct_process(struct kpx_ct *q, bool all)
{
	if (!take_ready(q, all))
		return;
	/* A namespace on its way out loses its conntrack table anyway. */
	if (check_net(q->kn->net)) {
		add_ext_local(q);
		ct_walk(q->kn, &q->walking, NULL);
	}
	walking_free(q);
}

static void ct_work(struct work_struct *work)
{
	struct kpx_ct *q = container_of(to_rcu_work(work), struct kpx_ct,
					rwork);

	ct_process(q, false);
	/*
	 * Keys queued after this work's grace period began: another one.
	 * Under the lock, so that kpx_ct_net_exit() can stop it for good.
	 */
	spin_lock(&q->lock);
	if (q->n_pending && !q->dying)
		queue_rcu_work(system_unbound_wq, &q->rwork);
	spin_unlock(&q->lock);
}

static struct kpx_ct *ct_queue_get(struct kpx_net *kn)
{
	struct kpx_ct *q;

	lockdep_assert_held(&kn->lock);
	if (kn->ct)
		return kn->ct;
	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return NULL;
	if (rhashtable_init(&q->pending, &pending_params))
		goto free;
	if (rhashtable_init(&q->walking, &walking_params))
		goto destroy;
	q->kn = kn;
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->pending_list);
	INIT_LIST_HEAD(&q->walking_list);
	INIT_RCU_WORK(&q->rwork, ct_work);
	kn->ct = q;
	return q;

destroy:
	rhashtable_destroy(&q->pending);
free:
	kfree(q);
	return NULL;
}

/*
 * Queues @key for the worker; false if it cannot (queue full, no memory,
 * namespace exit), and the caller cleans it at once.
 */
static bool ct_queue(struct kpx_net *kn, const struct kpx_key *key, u32 what)
{
	struct kpx_ct *q = ct_queue_get(kn);
	struct ct_key *e, *fresh;
	unsigned long gp = get_state_synchronize_rcu();

	if (!q)
		return false;
	fresh = kmalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	spin_lock(&q->lock);
	if (q->dying) {
		spin_unlock(&q->lock);
		kfree(fresh);
		return false;
	}
	e = rhashtable_lookup_fast(&q->pending, key, pending_params);
	if (e) {
		e->what |= what;
		e->gp = gp;
	} else if (fresh && q->n_pending < KPX_CT_PENDING_MAX) {
		fresh->key = *key;
		fresh->what = what;
		fresh->gp = gp;
		if (!rhashtable_insert_fast(&q->pending, &fresh->pnode,
					    pending_params)) {
			e = fresh;
			fresh = NULL;
			list_add_tail(&e->list, &q->pending_list);
			q->n_pending++;
		}
	}
	if (e)
		queue_rcu_work(system_unbound_wq, &q->rwork);
	spin_unlock(&q->lock);
	kfree(fresh);
	return e != NULL;
}

/* The fallback: one key, cleaned now (process context, may sleep). */
static void ct_clean_now(struct kpx_net *kn, const struct kpx_key *key,
			 u32 what)
{
	struct ct_key e = { .key = *key, .what = what };

	synchronize_rcu();
	ct_walk(kn, NULL, &e);
}

static void ct_clean(struct kpx_net *kn, const struct kpx_key *key, u32 what)
{
	if (!ct_queue(kn, key, what))
		ct_clean_now(kn, key, what);
}

/* Is a backend of @old missing from @set?  Both sorted. */
static bool lost_backend(const struct kpx_bset *old,
			 const struct kpx_bset *set)
{
	u32 i;

	for (i = 0; old && i < old->count; i++)
		if (!kpx_bset_find(set, old->be[i]->addr.bytes,
				   old->be[i]->port))
			return true;
	return false;
}

/**
 * kpx_ct_after_set - clean the entries a SET made stale
 * @net: the frontend's namespace
 * @key: the frontend (UDP or SCTP, see kpx_ct_wants_cleanup())
 * @old: the replaced set (still allocated), or NULL
 * @set: the new, published set, or NULL
 * @created: the frontend is new
 *
 * Call from process context after publishing @set, under the writer lock.
 * Queues the cleanup for the namespace's worker (see the top of this file);
 * does not wait for it.
 */
void kpx_ct_after_set(struct net *net, const struct kpx_key *key,
		      const struct kpx_bset *old, const struct kpx_bset *set,
		      bool created)
{
	u32 what = 0;

	lockdep_assert_held(&kpx_net(net)->lock);
	if (lost_backend(old, set))
		what |= CT_STALE_BE;
	if (set && set->count && (created || !old || !old->count))
		what |= CT_NO_NAT;
	if (what)
		ct_clean(kpx_net(net), key, what);
}

/**
 * kpx_ct_after_del - clean every entry of deleted frontends
 * @net: their namespace
 * @keys: the frontends (only UDP and SCTP ones are cleaned)
 * @n: number of @keys; nothing is done for 0
 *
 * Call from process context after unlinking them, under the writer lock.
 * Queues the cleanups; does not wait for them.
 */
void kpx_ct_after_del(struct net *net, struct kpx_key *keys, u32 n)
{
	u32 i;

	lockdep_assert_held(&kpx_net(net)->lock);
	for (i = 0; i < n; i++)
		if (kpx_ct_wants_cleanup(&keys[i]))
			ct_clean(kpx_net(net), &keys[i], CT_GONE);
}

/**
 * kpx_ct_sync - wait for the namespace's queued cleanups
 * @kn: the namespace
 *
 * Process context, without kn->lock (the worker does not take it).
 * Returns once every key queued before the call has been walked; keys
 * queued meanwhile by other writers may make it wait for their walks too,
 * at most KPX_CT_SYNC_ROUNDS of them.
 */
void kpx_ct_sync(struct kpx_net *kn)
{
	struct kpx_ct *q;
	bool more;
	int i;

	mutex_lock(&kn->lock);
	q = kn->ct;	/* freed only at namespace exit, after the writers */
	mutex_unlock(&kn->lock);
	for (i = 0; q && i < KPX_CT_SYNC_ROUNDS; i++) {
		flush_rcu_work(&q->rwork);
		spin_lock(&q->lock);
		more = q->n_pending;
		spin_unlock(&q->lock);
		if (!more)
			break;
	}
}

/**
 * kpx_ct_net_exit - finish the namespace's queued cleanups
 * @kn: the namespace, its NAT hooks gone and no writer left (pre_exit)
 *
 * Waits for the worker, then walks the keys still queued at once (module
 * unload of a live namespace; a dying namespace skips the walks) and frees
 * the queue.
 */
void kpx_ct_net_exit(struct kpx_net *kn)
{
	struct kpx_ct *q = kn->ct;
	struct ct_key *e, *tmp;

	if (!q)
		return;
	spin_lock(&q->lock);
	q->dying = true;
	spin_unlock(&q->lock);
	flush_rcu_work(&q->rwork);
	if (q->n_pending) {
		synchronize_rcu();
		ct_process(q, true);
	}
	/* What the walking table could not take: dropped with the queue. */
	list_for_each_entry_safe(e, tmp, &q->pending_list, list) {
		list_del(&e->list);
		kfree(e);
	}
	rhashtable_destroy(&q->walking);
	rhashtable_destroy(&q->pending);
	kn->ct = NULL;
	kfree(q);
}

#ifdef KPX_TEST_HOOKS
/**
 * kpx_test_ct_lookup_cost - the most key comparisons one lookup of a walk's
 * table makes
 * @keys: inserted, distinct
 * @n: number of @keys
 * @probe: looked up after @keys, none of them in @keys
 * @np: number of @probe
 * @max_cmps: set to the most comparisons of one lookup of @keys or @probe,
 *	once the table's background rehashes are done
 *
 * A table of its own with the walk's parameters.  Process context.
 *
 * Return: 0; -ENOENT if a lookup of @keys missed or one of @probe hit;
 * -ENOMEM or an insertion error.
 */
int kpx_test_ct_lookup_cost(const struct kpx_key *keys, u32 n,
			    const struct kpx_key *probe, u32 np, u32 *max_cmps)
{
	struct bucket_table *tbl;
	struct ct_key *e, *hit;
	struct rhashtable t;
	bool settled;
	u32 i, c;
	int err;

	*max_cmps = 0;
	e = kvcalloc(n, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	err = rhashtable_init(&t, &walking_params);
	if (err)
		goto out;
	for (i = 0; i < n && !err; i++) {
		e[i].key = keys[i];
		err = rhashtable_insert_fast(&t, &e[i].wnode, walking_params);
	}
	do {
		flush_work(&t.run_work);
		rcu_read_lock();
		tbl = rcu_dereference(t.tbl);
		settled = !rcu_access_pointer(tbl->future_tbl);
		rcu_read_unlock();
	} while (!err && !settled);
	for (i = 0; i < n + np && !err; i++) {
		atomic_set(&kpx_test_ct_cmps, 0);
		hit = rhashtable_lookup_fast(&t, i < n ? &keys[i] :
					     &probe[i - n], walking_params);
		c = atomic_read(&kpx_test_ct_cmps);
		*max_cmps = max(*max_cmps, c);
		if (hit != (i < n ? &e[i] : NULL))
			err = -ENOENT;
	}
	rhashtable_destroy(&t);
out:
	kvfree(e);
	return err;
}

/** kpx_test_ct_pending - the keys the namespace's cleanup queue holds */
u32 kpx_test_ct_pending(struct kpx_net *kn)
{
	struct kpx_ct *q;
	u32 n;

	mutex_lock(&kn->lock);
	q = kn->ct;	/* freed only at namespace exit */
	mutex_unlock(&kn->lock);
	if (!q)
		return 0;
	spin_lock(&q->lock);
	n = q->n_pending;
	spin_unlock(&q->lock);
	return n;
}
#endif
