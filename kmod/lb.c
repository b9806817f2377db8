// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx scheduling glue: turns the pure core (sched.c, maglev.c, affinity.c)
 * into per-frontend decisions.
 *
 * - Tables (the Maglev lookup table, wrr prefix sums) are built at SET time
 *   in process context and hang off the new backend set, so the packet path
 *   sees a set and its tables change together under RCU.
 * - rr and wrr share one atomic counter per frontend.
 * - ClientIP affinity: a bounded table per frontend, looked up before the
 *   scheduler without a lock (a seqcount read), locked only to insert or
 *   refresh an entry (see struct kpx_affk).  An entry whose backend is not in
 *   the current set is ignored and dropped on lookup; a SET also purges
 *   every entry whose backend left.  Times come from jiffies in ms.
 * - lc: each backend has an "active" count, read by the pick.  It is
 *   incremented on the packet path when a connection is sent to the
 *   backend (O(1), no lock) and recounted by one periodic walk of the
 *   host's conntrack table shared by every namespace that has an lc
 *   frontend (lc_scan_fn()), which counts the NATed entries that are not
 *   closing (a local client of a KPX_SVC_F_EXT_LOCAL frontend counts for
 *   its ClusterIP frontend's backend): a connection's end shows as a
 *   decrement at the next pass, about a second later.  kpx cannot learn
 *   of an entry's end any sooner: conntrack's event notifier is single
 *   per namespace (ctnetlink takes it, and a module that replaced it would
 *   silence conntrack -E and every flow exporter), its extensions are a
 *   fixed enum with no slot for a module, and neither 6.1 nor 6.12 has a
 *   destroy hook for others.  So lc is exact at each pass (give or take the
 *   connections opened during it) and errs towards "busier" in between.
 *   The walk takes no kpx lock, holds one conntrack bucket lock at a time
 *   (as ctnetlink's dump) and reschedules every few hundred buckets; the
 *   marking of the backends before and after it reschedules every slice
 *   of LC_WALK_BUDGET, each under the namespace's config mutex.  Its
 *   period stretches with its cost (LC_SCAN_COST), so however many
 *   namespaces use lc, the recount costs a bounded share of one CPU.  A
 *   pick reads every backend of a small set (KPX_LC_SCAN_MAX) and two
 *   random ones of a bigger set (kpx_pick_lc2()), so it is O(1) per
 *   connection.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/spinlock.h>
#include <linux/seqlock.h>
#include <linux/siphash.h>
#include <linux/list.h>
#include <linux/workqueue.h>
#include <linux/socket.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <linux/kpx.h>

#include "lb.h"
#include "sched.h"
#include "maglev.h"
#include "affinity.h"
#include "svc.h"
#include "backend.h"

/*
 * A table starts with AFF_CAP0 entries (or max if smaller) and grows by
 * AFF_GROW times from a work item once three quarters are used, up to max:
 * memory follows the number of clients, bounded by max.  The work builds a
 * bigger table, publishes it with rcu_assign_pointer() and frees the old
 * one after a grace period.
 *
 * Locking: writers (insert, refresh, purge, grow) hold lock; those that
 * change a published table in place bump seq (the grow fills a new one and
 * publishes it with RCU alone, see aff_grow_fn()); a new connection first
 * looks its client up without the lock, in a seq read section
 * (kpx_aff_peek() reads a bounded number of in-bounds entries, and a
 * section a writer overlapped is retried).  A live entry
 * whose backend is in the set and which was refreshed less than
 * aff_refresh_ms() ago is used as it is: a client opening many connections
 * takes the lock about once per refresh interval, not per connection;
 * only new clients and refreshes do.  The timeout so counts from the
 * client's last refresh, at most aff_refresh_ms() (1 s, or 1/16 of a
 * shorter timeout) before its last new connection.
 */
#define AFF_CAP0	64
#define AFF_GROW	8
#define AFF_REFRESH_MS	1000U
/* Slots a SET's purge looks at per lock hold (kpx_aff_commit()). */
#define AFF_PURGE_STEP	1024U

struct kpx_afft {
	struct rcu_head rcu;
	struct kpx_aff t;
};

struct kpx_affk {
	spinlock_t lock;
	seqcount_spinlock_t seq;	/* writers of tab->t hold lock */
	u32 max;
	bool growing;		/* grow work queued or running */
	bool dead;		/* no more grow work (kpx_aff_stop()) */
	struct work_struct grow;
	struct rcu_head rcu;
	struct kpx_afft __rcu *tab;
};

static u32 aff_refresh_ms(const struct kpx_aff *t)
{
	return min(AFF_REFRESH_MS, READ_ONCE(t->timeout_ms) / 16);
}

static struct kpx_afft *afft_alloc(u32 cap, u32 timeout,
				   const struct kpx_hkey *key)
{
	struct kpx_afft *tab = kzalloc(sizeof(*tab), GFP_KERNEL_ACCOUNT);
	struct kpx_aff_entry *e;
	u32 *b;

	if (!tab)
		return NULL;
	e = kvmalloc_array(cap, sizeof(*e), GFP_KERNEL_ACCOUNT);
	b = kvmalloc_array(kpx_aff_nbuckets(cap), sizeof(*b),
			   GFP_KERNEL_ACCOUNT);
	if (!e || !b) {
		kvfree(e);
		kvfree(b);
		kfree(tab);
		return NULL;
	}
	kpx_aff_init(&tab->t, e, b, cap, timeout, key);
	return tab;
}

static void afft_free(struct kpx_afft *tab)
{
	kvfree(tab->t.e);
	kvfree(tab->t.bucket);
	kfree(tab);
}

static void afft_free_rcu(struct rcu_head *head)
{
	afft_free(container_of(head, struct kpx_afft, rcu));
}

/* The table, for a writer (a->lock held) or the grow work. */
static struct kpx_aff *aff_t(struct kpx_affk *a)
{
	return &rcu_dereference_protected(a->tab, 1)->t;
}

/** kpx_sched_cfg_default - "random", no affinity, default sizes. */
void kpx_sched_cfg_default(struct kpx_sched_cfg *scfg)
{
	scfg->id = KPX_SCHED_RANDOM;
	scfg->mh_size = KPX_MH_SIZE_DEFAULT;
	scfg->aff_timeout = 0;
	scfg->aff_max = KPX_AFFINITY_MAX_DEFAULT;
}

/*
 * Maglev tables are refcounted and shared: by a set and the next one when
 * a SET keeps the backends and weights, and by every frontend of the
 * namespace whose set has the same backend identities (address, port),
 * weights and table size, as a Service's ClusterIP, NodePort and load
 * balancer frontends usually do.  A namespace's tables are found through
 * its cache, keyed by a keyed hash of (identities, weights, size) and
 * compared in full.  The cache is refcounted by the namespace and by each
 * table in it, so a table freed from an RCU callback after the namespace
 * has gone can still unlink itself.  The cache's lock is taken from those
 * callbacks (softirq).
 */
#define MH_CACHE_BUCKETS	1024

struct kpx_mh_cache {
	refcount_t ref;
	spinlock_t lock;
	siphash_key_t key;
	struct hlist_head b[MH_CACHE_BUCKETS];
};

struct kpx_mh_tab {
	refcount_t ref;
	struct kpx_mh_cache *c;	/* NULL: not in a cache */
	struct hlist_node node;
	u64 sig;
	u32 size;
	u32 n;
	u64 *ident;		/* what it was built from: n identities */
	u32 *w;			/* and n weights */
	u16 *slot;		/* size entries, mh_slots_alloc() */
};

static void mh_cache_put(struct kpx_mh_cache *c)
{
	if (refcount_dec_and_test(&c->ref))
		kvfree(c);
}

/*
 * The slots of a table, apart from its header: the listed sizes are primes
 * just below a power of two, so 2 * size bytes fill a kmalloc object of
 * that power of two (251 slots: 512 bytes, 65521: 128 KiB) where a header
 * in front would push them into one twice as big.  A size that would still
 * waste more than an eighth of its object (the default largest size 65537,
 * 2 bytes over 128 KiB) is vmalloc()ed instead, in whole pages.
 */
static u16 *mh_slots_alloc(u32 size)
{
	size_t bytes = (size_t)size * sizeof(u16);

	if (bytes > PAGE_SIZE &&
	    roundup_pow_of_two(bytes) - bytes > bytes / 8)
		return __vmalloc(bytes, GFP_KERNEL_ACCOUNT);
	return kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
}

static void mh_tab_free(struct kpx_mh_tab *mt)
{
	kvfree(mt->slot);
	kvfree(mt->ident);
	kvfree(mt->w);
	kfree(mt);
}

static void mh_tab_put(struct kpx_mh_tab *mt)
{
	struct kpx_mh_cache *c;
	unsigned long flags;

	if (!mt)
		return;
	c = mt->c;
	if (!c) {
		if (refcount_dec_and_test(&mt->ref))
			mh_tab_free(mt);
		return;
	}
	if (!refcount_dec_and_lock_irqsave(&mt->ref, &c->lock, &flags))
		return;
	__acquire(&c->lock);	/* for sparse: taken on true */
	hlist_del(&mt->node);
	spin_unlock_irqrestore(&c->lock, flags);
	mh_tab_free(mt);
	mh_cache_put(c);
}

/* The namespace's cache, created on first use; kn->lock held. */
static struct kpx_mh_cache *mh_cache_get(struct kpx_net *kn)
{
	struct kpx_mh_cache *c = kn->mhc;
	u32 i;

	lockdep_assert_held(&kn->lock);
	if (c)
		return c;
	c = kvmalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return NULL;
	refcount_set(&c->ref, 1);
	spin_lock_init(&c->lock);
	get_random_bytes(&c->key, sizeof(c->key));
	for (i = 0; i < MH_CACHE_BUCKETS; i++)
		INIT_HLIST_HEAD(&c->b[i]);
	kn->mhc = c;
	return c;
}

/**
 * kpx_lb_net_pre_exit - drop the namespace's reference to its Maglev
 * cache (the tables still in use keep it until they go)
 * @kn: the namespace, whose writers are gone
 */
void kpx_lb_net_pre_exit(struct kpx_net *kn)
{
	struct kpx_mh_cache *c;

	mutex_lock(&kn->lock);
	c = kn->mhc;
	kn->mhc = NULL;
	mutex_unlock(&kn->lock);
	if (c)
		mh_cache_put(c);
}

static u64 mh_sig(const struct kpx_mh_cache *c, const u64 *ident,
		  const u32 *w, u32 n, u32 size)
{
	return siphash_3u64(siphash(ident, n * sizeof(*ident), &c->key),
			    siphash(w, n * sizeof(*w), &c->key), size,
			    &c->key);
}

/* A cached table built from exactly these inputs, with a reference. */
static struct kpx_mh_tab *mh_cache_find(struct kpx_mh_cache *c, u64 sig,
					u32 size, u32 n, const u64 *ident,
					const u32 *w)
{
	struct kpx_mh_tab *mt;

	spin_lock_bh(&c->lock);
	hlist_for_each_entry(mt, &c->b[sig % MH_CACHE_BUCKETS], node) {
		if (mt->sig == sig && mt->size == size && mt->n == n &&
		    !memcmp(mt->ident, ident, n * sizeof(*ident)) &&
		    !memcmp(mt->w, w, n * sizeof(*w)) &&
		    refcount_inc_not_zero(&mt->ref))
			goto out;
	}
	mt = NULL;
out:
	spin_unlock_bh(&c->lock);
	return mt;
}

/** kpx_sched_data_free - free a set's scheduler data (NULL is fine). */
void kpx_sched_data_free(struct kpx_sched_data *sd)
{
	if (!sd)
		return;
	mh_tab_put(sd->mht);
	kvfree(sd->wrr_prefix);
	kfree(sd);
}

/* Can @set use @old's Maglev table of @size slots as it is? */
static struct kpx_mh_tab *mh_reusable(const struct kpx_bset *set,
				      const struct kpx_bset *old, u32 size)
{
	struct kpx_mh_tab *mt;
	u32 i;

	if (!old || !old->sd || !old->sd->mht || old->count != set->count)
		return NULL;
	mt = old->sd->mht;
	if (mt->size != size)
		return NULL;
	for (i = 0; i < set->count; i++)
		if (old->be[i] != set->be[i] ||
		    mt->w[i] != kpx_bset_weight(set, i))
			return NULL;
	return mt;
}

static int build_mh(struct kpx_net *kn, struct kpx_sched_data *sd,
		    const struct kpx_bset *set, const struct kpx_bset *old,
		    u32 max)
{
	u32 i, n = set->count, *w;
	struct kpx_mh_cache *c;
	struct kpx_mh_tab *mt;
	void *scratch = NULL;
	u64 *ident, sig;
	int err = -ENOMEM;

	sd->mh_size = kpx_mh_size_for(n, max);
	mt = mh_reusable(set, old, sd->mh_size);
	if (mt) {
		refcount_inc(&mt->ref);
		goto done;
	}
	c = mh_cache_get(kn);
	ident = kvmalloc_array(n, sizeof(*ident), GFP_KERNEL_ACCOUNT);
	w = kvmalloc_array(n, sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!c || !ident || !w)
		goto fail;
	for (i = 0; i < n; i++) {
		ident[i] = kpx_be_ident(set->be[i]->addr.bytes,
					(__force u16)set->be[i]->port);
		w[i] = kpx_bset_weight(set, i);
	}
	sig = mh_sig(c, ident, w, n, sd->mh_size);
	mt = mh_cache_find(c, sig, sd->mh_size, n, ident, w);
	if (mt) {
		kvfree(ident);
		kvfree(w);
		goto done;
	}
	mt = kzalloc(sizeof(*mt), GFP_KERNEL_ACCOUNT);
	if (!mt)
		goto fail;
	mt->slot = mh_slots_alloc(sd->mh_size);
	scratch = kvmalloc(kpx_mh_scratch_size(n), GFP_KERNEL_ACCOUNT);
	if (!mt->slot || !scratch)
		goto fail;
	err = kpx_mh_build(mt->slot, sd->mh_size, ident, w, n, scratch);
	if (err)
		goto fail;
	kvfree(scratch);
	refcount_set(&mt->ref, 1);
	mt->sig = sig;
	mt->size = sd->mh_size;
	mt->n = n;
	mt->ident = ident;
	mt->w = w;
	mt->c = c;
	refcount_inc(&c->ref);
	spin_lock_bh(&c->lock);
	hlist_add_head(&mt->node, &c->b[sig % MH_CACHE_BUCKETS]);
	spin_unlock_bh(&c->lock);
done:
	sd->mht = mt;
	sd->mh = mt->slot;
	return 0;
fail:
	kvfree(scratch);
	if (mt)
		kvfree(mt->slot);
	kfree(mt);
	kvfree(w);
	kvfree(ident);
	return err;
}

static int build_wrr(struct kpx_sched_data *sd, const struct kpx_bset *set)
{
	u32 i, n = set->count, *w;

	w = kvmalloc_array(n, sizeof(*w), GFP_KERNEL_ACCOUNT);
	sd->wrr_prefix = kvmalloc_array(n, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!w || !sd->wrr_prefix) {
		kvfree(w);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		w[i] = kpx_bset_weight(set, i);
	sd->wrr_total = kpx_wrr_prepare(sd->wrr_prefix, w, n,
					&sd->wrr_stride);
	kvfree(w);
	return 0;
}

/**
 * kpx_lb_attach - build a new set's scheduler data, before publishing it
 * @kn: the frontend's namespace; kn->lock held
 * @set: the new set, or NULL (no backend: nothing to build)
 * @old: the set it replaces (still published), or NULL
 * @scfg: the frontend's validated scheduler settings
 *
 * Process context; the Maglev build is O(size), reschedules, and runs
 * here, never in the packet path.  Its size follows the backend count
 * (kpx_mh_size_for(), at most scfg->mh_size); a set with @old's backends
 * and weights takes @old's table, and one with the same backends, weights
 * and size as another frontend's shares that one's (kpx_mh_tab).  On error
 * @set is unchanged (the caller frees it).
 *
 * Return: 0, -ENOMEM, or -EINVAL if the Maglev size does not exceed the
 * backend count.
 */
int kpx_lb_attach(struct kpx_net *kn, struct kpx_bset *set,
		  const struct kpx_bset *old, const struct kpx_sched_cfg *scfg)
{
	struct kpx_sched_data *sd;
	int err = 0;

	BUILD_BUG_ON(KPX_BACKENDS_MAX > KPX_MH_BACKENDS_MAX);
	if (!set)
		return 0;
	sd = kzalloc(sizeof(*sd), GFP_KERNEL_ACCOUNT);
	if (!sd)
		return -ENOMEM;
	sd->id = scfg->id;
	if (sd->id == KPX_SCHED_MH)
		err = build_mh(kn, sd, set, old, scfg->mh_size);
	else if (sd->id == KPX_SCHED_WRR)
		err = build_wrr(sd, set);
	if (err) {
		kpx_sched_data_free(sd);
		return err;
	}
	set->sd = sd;
	return 0;
}

static void aff_grow_fn(struct work_struct *work)
{
	struct kpx_affk *a = container_of(work, struct kpx_affk, grow);
	struct kpx_afft *old, *nt;
	struct kpx_hkey key;
	u32 cap;

	spin_lock_bh(&a->lock);
	cap = min_t(u64, (u64)aff_t(a)->cap * AFF_GROW, a->max);
	key = aff_t(a)->key;
	spin_unlock_bh(&a->lock);
	nt = afft_alloc(cap, 0, &key);
	spin_lock_bh(&a->lock);
	old = rcu_dereference_protected(a->tab, lockdep_is_held(&a->lock));
	if (nt && !a->dead && cap > old->t.cap) {
		/*
		 * Published with RCU alone, outside a seqcount write section,
		 * so lockless readers never retry for the move.  Under the
		 * lock nobody changes the old table, and after the publish
		 * every writer changes the new one: a reader that loaded the
		 * old table reads it as it was at the publish, and it stays
		 * valid until the grace period ends.  An entry
		 * added after the publish is a miss for such a reader, which
		 * then takes the lock and looks the client up in the new
		 * table (kpx_schedule()), so the client keeps its backend.
		 */
		kpx_aff_move(&nt->t, &old->t);
		rcu_assign_pointer(a->tab, nt);
		nt = NULL;
	} else {
		old = NULL;
	}
	a->growing = false;
	spin_unlock_bh(&a->lock);
	if (nt)
		afft_free(nt);
	if (old)
		call_rcu(&old->rcu, afft_free_rcu);
}

static struct kpx_affk *affk_alloc(u32 timeout, u32 max)
{
	struct kpx_affk *a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	u32 cap = min_t(u32, max, AFF_CAP0);
	struct kpx_afft *tab;
	struct kpx_hkey key;

	if (!a)
		return ERR_PTR(-ENOMEM);
	get_random_bytes(&key, sizeof(key));
	tab = afft_alloc(cap, timeout, &key);
	if (!tab) {
		kfree(a);
		return ERR_PTR(-ENOMEM);
	}
	spin_lock_init(&a->lock);
	seqcount_spinlock_init(&a->seq, &a->lock);
	INIT_WORK(&a->grow, aff_grow_fn);
	a->max = max;
	RCU_INIT_POINTER(a->tab, tab);
	return a;
}

/* Stops growing @a for good; process context, before it is freed. */
static void affk_stop(struct kpx_affk *a)
{
	spin_lock_bh(&a->lock);
	a->dead = true;
	spin_unlock_bh(&a->lock);
	cancel_work_sync(&a->grow);
}

/**
 * kpx_aff_stop - stop background work on a frontend's affinity table
 * @svc: the frontend, being unlinked (kn->lock held)
 *
 * Must be called before the frontend is freed (its table goes with it).
 */
void kpx_aff_stop(struct kpx_svc *svc)
{
	struct kpx_affk *a = rcu_dereference_raw(svc->aff);

	if (a)
		affk_stop(a);
}

/* Frees @a and its table; nothing can reach it any more. */
static void affk_free_rcu(struct rcu_head *head)
{
	struct kpx_affk *a = container_of(head, struct kpx_affk, rcu);

	afft_free(rcu_dereference_raw(a->tab));
	kfree(a);
}

/**
 * kpx_aff_prepare - allocate a new affinity table if a SET needs one
 * @svc: the existing frontend, or NULL; caller holds kn->lock
 * @scfg: the requested settings
 *
 * Return: a new table, NULL if none is needed (no affinity, or the current
 * table has the requested size and is kept), or ERR_PTR(-ENOMEM).
 */
struct kpx_affk *kpx_aff_prepare(const struct kpx_svc *svc,
				 const struct kpx_sched_cfg *scfg)
{
	const struct kpx_affk *cur = NULL;

	if (!scfg->aff_timeout)
		return NULL;
	if (svc)
		cur = rcu_dereference_raw(svc->aff);
	if (cur && cur->max == scfg->aff_max)
		return NULL;
	return affk_alloc(scfg->aff_timeout, scfg->aff_max);
}

static bool keep_in_set(const void *ctx, const u8 *addr16, u16 port)
{
	return kpx_bset_find(ctx, addr16, (__force __be16)port);
}

/**
 * kpx_aff_commit - install a SET's affinity settings
 * @svc: the frontend, already carrying @set and its new scfg
 * @fresh: kpx_aff_prepare()'s table, or NULL
 * @set: the frontend's new backend set (may be NULL)
 *
 * Caller holds kn->lock (process context; may sleep).  Cannot fail.  A
 * kept table takes the new timeout and loses the entries whose backend is
 * not in @set, in steps of AFF_PURGE_STEP slots with the table's lock
 * dropped and a reschedule point between them: the packet path waits at
 * most one step, and an entry it reads before its step is reached is
 * checked against @set there (kpx_schedule()).  A grow that moves the
 * entries restarts the walk; the grows are bounded by AFF_GROW's powers up
 * to max.  A replaced table keeps the eviction count.
 */
void kpx_aff_commit(struct kpx_svc *svc, struct kpx_affk *fresh,
		    const struct kpx_bset *set)
{
	struct kpx_affk *cur = rcu_dereference_raw(svc->aff);
	u32 pos = 0, cap = 0;
	struct kpx_aff *at;

	might_sleep();
	if (!svc->scfg.aff_timeout || fresh) {
		if (fresh && cur) {
			/* cur's grow work swaps and frees its table under lock */
			spin_lock_bh(&cur->lock);
			aff_t(fresh)->evictions = aff_t(cur)->evictions;
			spin_unlock_bh(&cur->lock);
		}
		rcu_assign_pointer(svc->aff, fresh);
		if (cur) {
			affk_stop(cur);
			call_rcu(&cur->rcu, affk_free_rcu);
		}
		return;
	}
	if (!cur)
		return;
	for (;;) {
		spin_lock_bh(&cur->lock);
		write_seqcount_begin(&cur->seq);
		at = aff_t(cur);
		if (at->cap != cap) {
			/* the first step, or the grow work moved the entries */
			WRITE_ONCE(at->timeout_ms,
				   svc->scfg.aff_timeout * 1000U);
			cap = at->cap;
			pos = 0;
		}
		kpx_aff_purge_step(at, keep_in_set, set, &pos,
				   AFF_PURGE_STEP);
		write_seqcount_end(&cur->seq);
		spin_unlock_bh(&cur->lock);
		if (pos >= cap)
			return;
		cond_resched();
	}
}

/**
 * kpx_aff_free - free kpx_aff_prepare()'s table that a failed SET did not
 * install (NULL and error pointers are fine)
 */
void kpx_aff_free(struct kpx_affk *fresh)
{
	if (!IS_ERR_OR_NULL(fresh))
		affk_free_rcu(&fresh->rcu);
}

/** kpx_aff_release - free a dying frontend's table (from its RCU free). */
void kpx_aff_release(struct kpx_svc *svc)
{
	struct kpx_affk *a = rcu_dereference_raw(svc->aff);

	if (a)
		affk_free_rcu(&a->rcu);
}

/** kpx_aff_evictions - entries of @svc evicted for room (under RCU). */
u64 kpx_aff_evictions(const struct kpx_svc *svc)
{
	const struct kpx_affk *a = rcu_dereference(svc->aff);

	return a ? READ_ONCE(rcu_dereference(a->tab)->t.evictions) : 0;
}

static void lc_get(const void *ctx, u32 i, u32 *active, u32 *weight)
{
	const struct kpx_bset *set = ctx;
	int a = atomic_read(&set->be[i]->active);

	*active = a > 0 ? a : 0;
	*weight = kpx_bset_weight(set, i);
}

/*
 * The random pick and lc's tie-breaking start need a uniform value, not a
 * secret one: a per-CPU prandom state (seeded from the kernel's RNG at
 * module load) costs a few shifts, where get_random_u32() runs the batched
 * ChaCha20 with periodic refills under a local lock, more than the frontend
 * lookup itself (bench/results/profile.md).  A softirq pick interrupting a
 * process-context one on the same CPU may reuse or tear the state's words:
 * that weakens the sequence, never the choice's validity (the result is
 * still scaled into 0..n-1), as with bpf_user_rnd_u32().
 */
static DEFINE_PER_CPU(struct rnd_state, kpx_rnd);

/** kpx_lb_init - seed the per-CPU pick state; module init, process context. */
void kpx_lb_init(void)
{
	prandom_seed_full_state(&kpx_rnd);
}

static u32 kpx_rand(void)
{
	u32 r = prandom_u32_state(get_cpu_ptr(&kpx_rnd));

	put_cpu_ptr(&kpx_rnd);
	return r;
}

/* Does another backend of a small lc @set tie with backend @best? */
static bool lc_tied(const struct kpx_bset *set, u32 best)
{
	u32 i, a, w, ba, bw;

	lc_get(set, best, &ba, &bw);
	for (i = 0; i < set->count; i++) {
		lc_get(set, i, &a, &w);
		if (i != best && (u64)a * bw == (u64)ba * w)
			return true;
	}
	return false;
}

/*
 * The scheduler's choice of a backend of @set (not empty).  With @peek
 * (KPX_CMD_EXPLAIN) nothing changes: rr and wrr read their counter instead
 * of advancing it, lc starts its scan at 0 instead of a random place and
 * says whether another backend ties, random only says it is random.
 */
static u32 pick(struct kpx_svc *svc, const struct kpx_bset *set,
		const u8 *client16, struct kpx_peek *peek)
{
	const struct kpx_sched_data *sd = set->sd;
	u32 n = set->count, ctr, i;

	switch (sd ? sd->id : KPX_SCHED_RANDOM) {
	case KPX_SCHED_RR:
		ctr = peek ? (u32)atomic_read(&svc->sched_ctr) :
			     atomic_inc_return(&svc->sched_ctr) - 1;
		return kpx_pick_rr(ctr, n);
	case KPX_SCHED_WRR:
		ctr = peek ? (u32)atomic_read(&svc->sched_ctr) :
			     atomic_inc_return(&svc->sched_ctr) - 1;
		return kpx_pick_wrr(sd->wrr_prefix, n, sd->wrr_total,
				    sd->wrr_stride, ctr);
	case KPX_SCHED_LC:
		if (peek) {
			if (n > KPX_LC_SCAN_MAX) {
				peek->pick = KPX_EXP_PICK_LEAST;
				return kpx_pick_lc2(lc_get, set, n, 0, 0);
			}
			i = kpx_pick_lc(lc_get, set, n, 0);
			if (lc_tied(set, i))
				peek->pick = KPX_EXP_PICK_LEAST;
			return i;
		}
		if (n <= KPX_LC_SCAN_MAX)
			return kpx_pick_lc(lc_get, set, n, kpx_rand());
		return kpx_pick_lc2(lc_get, set, n, kpx_rand(), kpx_rand());
	case KPX_SCHED_SH:
		return kpx_pick_sh(client16, n);
	case KPX_SCHED_MH:
		return kpx_mh_lookup(sd->mh, sd->mh_size, client16);
	default:
		if (peek && n > 1) {
			peek->pick = KPX_EXP_PICK_RANDOM;
			return 0;
		}
		return kpx_pick_random(kpx_rand(), n);
	}
}

/*
 * kpx_schedule() with @peek: the live affinity entry, if any, and the
 * scheduler's choice, with no lock taken and nothing written.
 */
static struct kpx_backend *schedule_peek(struct kpx_svc *svc,
					 const struct kpx_bset *set,
					 const u8 *client16,
					 struct kpx_peek *peek)
{
	struct kpx_affk *aff = rcu_dereference(svc->aff);
	const struct kpx_afft *tab;
	struct kpx_aff_entry copy;
	struct kpx_backend *be;
	unsigned int seq;
	bool hit;
	u64 now;

	peek->aff = KPX_EXP_AFF_OFF;
	peek->pick = KPX_EXP_PICK_EXACT;
	if (aff) {
		now = jiffies64_to_msecs(get_jiffies_64());
		do {
			seq = read_seqcount_begin(&aff->seq);
			tab = rcu_dereference(aff->tab);
			hit = kpx_aff_peek(&tab->t, client16, now, &copy);
		} while (read_seqcount_retry(&aff->seq, seq));
		peek->aff = hit ? KPX_EXP_AFF_STALE : KPX_EXP_AFF_MISS;
		if (hit) {
			be = kpx_bset_find(set, copy.be_addr,
					   (__force __be16)copy.be_port);
			if (be) {
				peek->aff = KPX_EXP_AFF_HIT;
				peek->aff_age_ms = now > copy.last_ms ?
						   now - copy.last_ms : 0;
				return be;
			}
		}
	}
	return set->be[pick(svc, set, client16, peek)];
}

/**
 * kpx_schedule - choose a backend for a new connection
 * @svc: the frontend
 * @set: its current set (rcu_dereference()d by the caller), or NULL
 * @client: the connection's source address
 * @peek: NULL from the NAT hook; else (KPX_CMD_EXPLAIN) only look: the
 *	choice is made without changing anything, and described in @peek
 *
 * Call under rcu_read_lock() (any context).  With ClientIP affinity, a
 * live entry whose backend is still in @set wins; without @peek the
 * client's entry is then refreshed to the chosen backend (at most once per
 * aff_refresh_ms() for a kept binding, see kpx_affk).
 *
 * Return: the backend, or NULL if @set is empty; with @peek and "random",
 * the set's first backend (peek->pick KPX_EXP_PICK_RANDOM).
 */
struct kpx_backend *kpx_schedule(struct kpx_svc *svc,
				 const struct kpx_bset *set,
				 const union kpx_addr *client,
				 struct kpx_peek *peek)
{
	struct kpx_backend *be = NULL;
	struct kpx_aff_entry copy;
	const struct kpx_afft *tab;
	struct kpx_affk *aff;
	struct kpx_aff *at;
	unsigned int seq;
	bool hit;
	u64 now;

	if (!set || !set->count)
		return NULL;
	if (peek)
		return schedule_peek(svc, set, client->bytes, peek);
	aff = rcu_dereference(svc->aff);
	if (!aff)
		return set->be[pick(svc, set, client->bytes, NULL)];

	now = jiffies64_to_msecs(get_jiffies_64());
	do {
		seq = read_seqcount_begin(&aff->seq);
		tab = rcu_dereference(aff->tab);
		hit = kpx_aff_peek(&tab->t, client->bytes, now, &copy);
	} while (read_seqcount_retry(&aff->seq, seq));
	/* another CPU may have refreshed it with a later clock reading */
	if (hit && (copy.last_ms >= now ||
		    now - copy.last_ms < aff_refresh_ms(&tab->t))) {
		be = kpx_bset_find(set, copy.be_addr,
				   (__force __be16)copy.be_port);
		if (be)
			return be;
	}

	spin_lock_bh(&aff->lock);
	write_seqcount_begin(&aff->seq);
	at = aff_t(aff);
	{
		const struct kpx_aff_entry *e;

		be = NULL;
		e = kpx_aff_lookup(at, client->bytes, now);
		if (e) {
			be = kpx_bset_find(set, e->be_addr,
					   (__force __be16)e->be_port);
			if (!be)
				kpx_aff_forget(at, client->bytes);
		}
	}
	if (!be)
		be = set->be[pick(svc, set, client->bytes, NULL)];
	kpx_aff_update(at, client->bytes, be->addr.bytes,
		       (__force u16)be->port, now);
	if (at->used >= at->cap / 4 * 3 && at->cap < aff->max &&
	    !aff->growing && !aff->dead) {
		aff->growing = true;
		schedule_work(&aff->grow);
	}
	write_seqcount_end(&aff->seq);
	spin_unlock_bh(&aff->lock);
	return be;
}

/* lc: the shared conntrack recount. */

/*
 * Every namespace with an lc frontend is on lc_nets.  One delayed work
 * item serves them all; a pass
 *   1. marks every backend of an lc set of the listed namespaces with the
 *      pass number and zeroes its scan and recent counts (the namespaces
 *      without an lc frontend left are dropped from the list, and with
 *      none left the work stops until a kick);
 *   2. walks the host's conntrack hash once, bucket by bucket under the
 *      bucket's lock (as ctnetlink's dump), with cond_resched() every
 *      LC_STEP_BUCKETS buckets and no kpx lock held, counting into scan
 *      each live entry with DNAT that is not closing whose backend is in
 *      an lc set of a listed namespace and was marked in step 1;
 *   3. publishes active = scan + recent for every marked backend.
 * recent counts the connections sent to a backend since step 1, so those
 * whose bucket the walk had already passed are not lost (one whose bucket
 * was still ahead counts twice until the next pass).  A backend that
 * joins an lc set during a pass is not marked: it only counts its new
 * connections until the next pass.
 *
 * Steps 1 and 3 walk a namespace's frontends in slices of at most
 * LC_WALK_BUDGET frontends and backends, each under the namespace's
 * config mutex (kn->lock; a SET or DEL waits for one slice at most),
 * with cond_resched() between slices.  Between two slices the walk's
 * place is kn->lc_cursor, the next frontend, which a DEL of that frontend
 * moves on to the one after it (kpx_lc_svc_unlink()); frontends created
 * meanwhile are appended to the list, so the walk reaches them.
 *
 * Locks: lc_mutex is the work's own (and the namespace exit's, which
 * waits for it so the walk never touches a namespace after its exit
 * began); it is taken before kn->lock and never under it.  lc_lock (a
 * spinlock, never held while sleeping) guards lc_nets and each
 * namespace's lc_node, lc_on and lc_kicked: a SET that installs lc (kn->lock
 * held) only takes lc_lock, to set lc_kicked and, the first time, list
 * its namespace.  The work clears lc_kicked before its step-1 walk of a
 * namespace and drops a namespace whose walk found no lc frontend only if
 * lc_kicked is still clear: a SET whose lc frontend the walk missed (it
 * came after the walk had passed its place) kicked after the clear, so
 * its namespace stays listed.  Only the work and the namespace's exit
 * take a namespace off the list, both under lc_mutex, so the work may
 * sleep on a listed namespace and find the next one from it.  A listed
 * namespace always has a pass ahead: the work re-arms itself while the
 * list is not empty, and a kick that lists a namespace queues it.
 *
 * The pass runs every LC_SCAN_PERIOD, or LC_SCAN_COST times as long as the
 * last pass took if that is longer (at most LC_SCAN_PERIOD_MAX), so the
 * recount takes at most about 1/LC_SCAN_COST of one CPU whatever the size
 * of the host's conntrack table and however many namespaces use lc.
 */
#define LC_SCAN_PERIOD		HZ
#define LC_SCAN_PERIOD_MAX	(30 * HZ)
#define LC_SCAN_COST		20
#define LC_STEP_BUCKETS		256
#define LC_WALK_BUDGET		1024	/* frontends + backends per slice */

static void lc_scan_fn(struct work_struct *work);

static DEFINE_MUTEX(lc_mutex);		/* the work's steps 1 and 3 */
static DEFINE_SPINLOCK(lc_lock);	/* lc_nets, kpx_net.lc_* */
static LIST_HEAD(lc_nets);
static DECLARE_DELAYED_WORK(lc_work, lc_scan_fn);
static u32 lc_pass;			/* the work's own */

#ifdef KPX_TEST_HOOKS
unsigned int kpx_test_lc_budget = LC_WALK_BUDGET;
void (*kpx_test_lc_hook)(struct kpx_net *kn, bool zero);
#define lc_budget()	READ_ONCE(kpx_test_lc_budget)
#define lc_test_hook(kn, zero) do {				\
	if (kpx_test_lc_hook)					\
		kpx_test_lc_hook(kn, zero);			\
} while (0)

/**
 * kpx_test_lc_pass - run one recount pass now, in the caller's context,
 * and leave none queued (until a kick lists a namespace)
 */
void kpx_test_lc_pass(void)
{
	cancel_delayed_work_sync(&lc_work);
	lc_scan_fn(&lc_work.work);
	cancel_delayed_work_sync(&lc_work);
}

/** kpx_test_lc_mutex - the recount's mutex, for tests to hold */
struct mutex *kpx_test_lc_mutex(void)
{
	return &lc_mutex;
}
#else
#define lc_budget()	LC_WALK_BUDGET
#define lc_test_hook(kn, zero) do { } while (0)
#endif

/*
 * Marks (@zero) or publishes the counts of every backend of @svc's set if
 * it is an lc set; kn->lock held.  Return: the slice budget it used, and
 * whether it is an lc frontend in @is_lc.
 */
static u32 lc_svc(struct kpx_net *kn, struct kpx_svc *svc, bool zero,
		  u32 pass, bool *is_lc)
{
	const struct kpx_bset *set;
	struct kpx_backend *be;
	u32 i;

	lockdep_assert_held(&kn->lock);
	set = rcu_dereference_protected(svc->bset, lockdep_is_held(&kn->lock));
	*is_lc = set && set->sd && set->sd->id == KPX_SCHED_LC;
	if (!*is_lc)
		return 1;
	for (i = 0; i < set->count; i++) {
		be = set->be[i];
		if (zero) {
			WRITE_ONCE(be->scan_pass, pass);
			WRITE_ONCE(be->scan, 0);
			atomic_set(&be->recent, 0);
		} else if (READ_ONCE(be->scan_pass) == pass) {
			atomic_set(&be->active,
				   READ_ONCE(be->scan) +
				   atomic_read(&be->recent));
		}
	}
	return 1 + set->count;
}

/*
 * Marks (@zero) or publishes the counts of every backend of @kn's lc sets,
 * in slices (see above); lc_mutex held, kn->lock not.  Return: the number
 * of lc frontends it saw.
 */
static u32 lc_walk(struct kpx_net *kn, bool zero, u32 pass)
{
	struct kpx_svc *svc;
	u32 n_lc = 0, used;
	bool is_lc;

	lockdep_assert_held(&lc_mutex);
	mutex_lock(&kn->lock);
	svc = list_first_entry_or_null(&kn->svc_list, struct kpx_svc, list);
	while (svc) {
		for (used = 0; svc && used < lc_budget();) {
			used += lc_svc(kn, svc, zero, pass, &is_lc);
			n_lc += is_lc;
			svc = list_is_last(&svc->list, &kn->svc_list) ? NULL :
			      list_next_entry(svc, list);
		}
		if (!svc)
			break;
		kn->lc_cursor = svc;
		mutex_unlock(&kn->lock);
		lc_test_hook(kn, zero);
		cond_resched();
		mutex_lock(&kn->lock);
		svc = kn->lc_cursor;	/* NULL: the rest was deleted */
		kn->lc_cursor = NULL;
	}
	mutex_unlock(&kn->lock);
	return n_lc;
}

/**
 * kpx_lc_svc_unlink - keep the recount's place when a frontend goes
 * @kn: the namespace; kn->lock held
 * @svc: the frontend, still on kn->svc_list
 *
 * If the recount's walk is to resume at @svc, it resumes at the frontend
 * after it (or ends if @svc is the last).
 */
void kpx_lc_svc_unlink(struct kpx_net *kn, struct kpx_svc *svc)
{
	lockdep_assert_held(&kn->lock);
	if (kn->lc_cursor != svc)
		return;
	kn->lc_cursor = list_is_last(&svc->list, &kn->svc_list) ? NULL :
			list_next_entry(svc, list);
}

static bool ct_closing(const struct nf_conn *ct)
{
	if (nf_ct_protonum(ct) != IPPROTO_TCP)
		return false;
	return READ_ONCE(ct->proto.tcp.state) > TCP_CONNTRACK_ESTABLISHED;
}

/* @set's backend (@addr, @port) if @set is scheduled by lc. */
static struct kpx_backend *lc_backend(const struct kpx_bset *set,
				      const union kpx_addr *addr, __be16 port)
{
	if (!set || !set->sd || set->sd->id != KPX_SCHED_LC)
		return NULL;
	return kpx_bset_find(set, addr->bytes, port);
}

/* One entry of the walk: its bucket's lock and rcu_read_lock() held. */
static void lc_count(struct nf_conn *ct, u32 pass)
{
	const struct nf_conntrack_tuple *o, *r;
	struct kpx_backend *be;
	struct kpx_svc *svc;
	union kpx_addr ra;
	struct kpx_net *kn;
	struct kpx_key key;

	if (!(ct->status & IPS_DST_NAT) || nf_ct_is_expired(ct) ||
	    nf_ct_is_dying(ct) || ct_closing(ct))
		return;
	o = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	if (o->src.l3num != NFPROTO_IPV4 && o->src.l3num != NFPROTO_IPV6)
		return;
	/*
	 * The entry is in the hash, so its namespace has not finished its
	 * exit; kpx's pre_exit takes it off lc_nets (lc_on) a grace period
	 * before its frontend table goes.
	 */
	kn = kpx_net(nf_ct_net(ct));
	if (!READ_ONCE(kn->lc_on))
		return;
	r = &ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	kpx_key_from_tuple(&key, o);
	kpx_addr_from_nf(&ra, o->src.l3num, &r->src.u3);
	svc = kpx_svc_lookup(kn, &key);
	/*
	 * The frontend's own backend, or one of its ClusterIP frontend's: a
	 * local client of a KPX_SVC_F_EXT_LOCAL frontend was scheduled with
	 * that one (hook.c).
	 */
	be = svc ? lc_backend(rcu_dereference(svc->bset), &ra, r->src.u.all) :
		   NULL;
	if (svc && !be) {
		svc = kpx_svc_cluster(kn, svc);
		if (svc)
			be = lc_backend(rcu_dereference(svc->bset), &ra,
					r->src.u.all);
	}
	/* Only this work writes scan and scan_pass. */
	if (be && READ_ONCE(be->scan_pass) == pass)
		WRITE_ONCE(be->scan, be->scan + 1);
}

/*
 * Step 2: every entry of the host's conntrack table once (its reply
 * tuple's hash node; the original one may be missing after a NAT clash).
 * The table may be resized meanwhile (the bucket index is checked under
 * the bucket's lock, as ctnetlink's dump does): entries are then missed
 * or counted twice until the next pass.
 */
static void lc_ct_walk(u32 pass)
{
	struct nf_conntrack_tuple_hash *h;
	struct hlist_nulls_node *n;
	spinlock_t *lockp;
	unsigned int i;

	for (i = 0;; i++) {
		if (i && !(i % LC_STEP_BUCKETS))
			cond_resched();
		lockp = &nf_conntrack_locks[i % CONNTRACK_LOCKS];
		local_bh_disable();
		nf_conntrack_lock(lockp);
		__acquire(lockp);	/* for sparse: not annotated */
		if (i >= nf_conntrack_htable_size) {
			spin_unlock(lockp);
			local_bh_enable();
			break;
		}
		rcu_read_lock();
		hlist_nulls_for_each_entry(h, n, &nf_conntrack_hash[i], hnnode)
			if (NF_CT_DIRECTION(h) == IP_CT_DIR_REPLY)
				lc_count(nf_ct_tuplehash_to_ctrack(h), pass);
		rcu_read_unlock();
		spin_unlock(lockp);
		local_bh_enable();
	}
}

/* The listed namespace after @kn (the first with NULL); lc_mutex held. */
static struct kpx_net *lc_next(struct kpx_net *kn)
{
	struct list_head *next;

	lockdep_assert_held(&lc_mutex);
	spin_lock(&lc_lock);
	next = kn ? kn->lc_node.next : lc_nets.next;
	spin_unlock(&lc_lock);
	return next == &lc_nets ? NULL :
	       list_entry(next, struct kpx_net, lc_node);
}

static void lc_scan_fn(struct work_struct *work)
{
	unsigned long t0 = jiffies, period;
	struct kpx_net *kn, *next;
	bool listed;
	u32 pass, n_lc;

	mutex_lock(&lc_mutex);
	/* 0 is a fresh backend's scan_pass: never a pass number */
	pass = ++lc_pass ? lc_pass : ++lc_pass;
	for (kn = lc_next(NULL); kn; kn = next) {
		spin_lock(&lc_lock);
		kn->lc_kicked = false;
		spin_unlock(&lc_lock);
		n_lc = lc_walk(kn, true, pass);
		spin_lock(&lc_lock);
		next = list_is_last(&kn->lc_node, &lc_nets) ? NULL :
		       list_next_entry(kn, lc_node);
		if (!n_lc && !kn->lc_kicked) {
			/* No lc frontend left: off the list until a kick. */
			WRITE_ONCE(kn->lc_on, false);
			list_del_init(&kn->lc_node);
		}
		spin_unlock(&lc_lock);
	}
	spin_lock(&lc_lock);
	listed = !list_empty(&lc_nets);
	spin_unlock(&lc_lock);
	mutex_unlock(&lc_mutex);
	if (!listed)
		return;

	lc_ct_walk(pass);

	mutex_lock(&lc_mutex);
	for (kn = lc_next(NULL); kn; kn = lc_next(kn))
		lc_walk(kn, false, pass);
	period = clamp_t(unsigned long, (jiffies - t0) * LC_SCAN_COST,
			 LC_SCAN_PERIOD, LC_SCAN_PERIOD_MAX);
	spin_lock(&lc_lock);
	if (!list_empty(&lc_nets))
		queue_delayed_work(system_unbound_wq, &lc_work, period);
	spin_unlock(&lc_lock);
	mutex_unlock(&lc_mutex);
}

/** kpx_lc_scan_init - set up the namespace's lc state (not listed). */
void kpx_lc_scan_init(struct kpx_net *kn)
{
	INIT_LIST_HEAD(&kn->lc_node);
	kn->lc_on = false;
	kn->lc_kicked = false;
	kn->lc_cursor = NULL;
}

/**
 * kpx_lc_scan_kick - list the namespace for the recount if a frontend now
 * uses lc, and start the recount if it is idle
 * @kn: the namespace; kn->lock held, the frontend published
 * @scfg: the settings just installed on one of its frontends
 *
 * Takes lc_lock only (never lc_mutex, which the recount holds while it
 * waits for kn->lock); O(1).
 */
void kpx_lc_scan_kick(struct kpx_net *kn, const struct kpx_sched_cfg *scfg)
{
	bool listed;

	lockdep_assert_held(&kn->lock);
	if (scfg->id != KPX_SCHED_LC)
		return;
	spin_lock(&lc_lock);
	kn->lc_kicked = true;
	listed = !list_empty(&kn->lc_node);
	if (!listed) {
		list_add_tail(&kn->lc_node, &lc_nets);
		WRITE_ONCE(kn->lc_on, true);
		/* a no-op if a pass is already queued */
		queue_delayed_work(system_unbound_wq, &lc_work,
				   LC_SCAN_PERIOD);
	}
	spin_unlock(&lc_lock);
}

/**
 * kpx_lc_scan_stop - take the namespace off the recount for good
 * @kn: the namespace, in pre_exit (its frontend table is freed after the
 *      grace period that follows, which the walk's readers are inside);
 *      kn->lock not held
 *
 * Waits for a pass's walk of its frontends (lc_mutex).
 */
void kpx_lc_scan_stop(struct kpx_net *kn)
{
	mutex_lock(&lc_mutex);
	spin_lock(&lc_lock);
	WRITE_ONCE(kn->lc_on, false);
	list_del_init(&kn->lc_node);
	spin_unlock(&lc_lock);
	mutex_unlock(&lc_mutex);
}

/**
 * kpx_lc_exit - stop the recount for good (module exit, before the
 * namespaces' state is freed; no writer is left to kick it)
 */
void kpx_lc_exit(void)
{
	cancel_delayed_work_sync(&lc_work);
}

/**
 * kpx_lb_connected - account a connection just sent to @be
 * @set: the set @be was chosen from
 * @be: the backend
 */
void kpx_lb_connected(const struct kpx_bset *set, struct kpx_backend *be)
{
	if (set->sd && set->sd->id == KPX_SCHED_LC) {
		atomic_inc(&be->active);
		atomic_inc(&be->recent);
	}
}
