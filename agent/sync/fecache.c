// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-Service frontend cache of incremental syncs; see
 * fecache.h.  Two chained hash tables: Services by "namespace/name" with
 * their sorted frontends, and frontend keys with the Services claiming them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"
#include "sync/fecache.h"
#include "model/model_nolocal.h"

/* ---- A chained hash table of intrusive links --------------------------- */

struct link {
	struct link *next;
	uint32_t hash;
};

struct table {
	struct link **b;
	size_t nb, n;		/* nb: 0 or a power of two */
};

static struct link *tab_head(const struct table *t, uint32_t hash)
{
	return t->nb ? t->b[hash & (t->nb - 1)] : NULL;
}

static int tab_add(struct table *t, struct link *l)
{
	if (t->n >= t->nb) {
		size_t nb = t->nb ? 2 * t->nb : 64, i;
		struct link **b = calloc(nb, sizeof(*b)), *p, *next;

		if (!b && !t->nb)
			return -ENOMEM;
		for (i = 0; b && i < t->nb; i++) {
			for (p = t->b[i]; p; p = next) {
				next = p->next;
				p->next = b[p->hash & (nb - 1)];
				b[p->hash & (nb - 1)] = p;
			}
		}
		if (b) {	/* else stay overfull */
			free(t->b);
			t->b = b;
			t->nb = nb;
		}
	}
	l->next = t->b[l->hash & (t->nb - 1)];
	t->b[l->hash & (t->nb - 1)] = l;
	t->n++;
	return 0;
}

static void tab_del(struct table *t, struct link *l)
{
	struct link **pp = &t->b[l->hash & (t->nb - 1)];

	while (*pp != l)
		pp = &(*pp)->next;
	*pp = l->next;
	t->n--;
}

/* ---- Entries ------------------------------------------------------------ */

/* One Service's frontends and status (first member: the link). */
struct fe_svc {
	struct link l;
	char *name;			/* "namespace/name" */
	struct kpx_service *v;		/* sorted by key, unique */
	size_t n;
	struct kpx_no_local nl;		/* its no-local-endpoints counts */
	struct kpx_hc_service *hc;	/* its health-check server, or NULL */
	struct fe_svc *hc_next, *hc_prev;	/* the Services with one */
};

/* One frontend key and the Services with a frontend of that key. */
struct fe_key {
	struct link l;
	struct kpx_service key;		/* key fields only */
	struct fe_svc **own;
	size_t nown, cap;
};

struct kpx_fecache {
	struct table svcs, keys;
	struct kpx_no_local nl;		/* sum over svcs */
	struct fe_svc *hc_head;		/* the svcs with an hc */
	size_t nhc;
	bool valid;
};

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= 16777619u;
	}
	return h;
}

static uint32_t key_hash(const struct kpx_service *s)
{
	uint32_t h = 2166136261u;

	h = fnv(h, &s->family, sizeof(s->family));
	h = fnv(h, &s->protocol, sizeof(s->protocol));
	h = fnv(h, &s->addr, kpx_addr_len(s->family));
	return fnv(h, &s->port, sizeof(s->port));
}

static struct fe_svc *svc_find(const struct kpx_fecache *c, const char *name)
{
	uint32_t h = fnv(2166136261u, name, strlen(name));
	struct link *l;

	for (l = tab_head(&c->svcs, h); l; l = l->next)
		if (l->hash == h && !strcmp(((struct fe_svc *)l)->name, name))
			return (struct fe_svc *)l;
	return NULL;
}

static struct fe_key *key_find(const struct kpx_fecache *c,
			       const struct kpx_service *s)
{
	uint32_t h = key_hash(s);
	struct link *l;

	for (l = tab_head(&c->keys, h); l; l = l->next)
		if (l->hash == h &&
		    !kpx_service_key_cmp(&((struct fe_key *)l)->key, s))
			return (struct fe_key *)l;
	return NULL;
}

/* Adds @svc to the claimants of @s's key. */
static int claim(struct kpx_fecache *c, struct fe_svc *svc,
		 const struct kpx_service *s)
{
	struct fe_key *k = key_find(c, s);

	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return -ENOMEM;
		k->key = kpx_service_key(s);
		k->l.hash = key_hash(s);
		if (tab_add(&c->keys, &k->l)) {
			free(k);
			return -ENOMEM;
		}
	}
	if (k->nown == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 2;
		struct fe_svc **v = realloc(k->own, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;	/* k stays, maybe unclaimed: invalid */
		k->own = v;
		k->cap = cap;
	}
	k->own[k->nown++] = svc;
	return 0;
}

/* Removes @svc from the claimants of @s's key; the key goes with the last. */
static void unclaim(struct kpx_fecache *c, struct fe_svc *svc,
		    const struct kpx_service *s)
{
	struct fe_key *k = key_find(c, s);
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nown; i++) {
		if (k->own[i] == svc) {
			k->own[i] = k->own[--k->nown];
			break;
		}
	}
	if (k->nown)
		return;
	tab_del(&c->keys, &k->l);
	free(k->own);
	free(k);
}

static int fe_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* The key's winner: the claimant first by name, or NULL. */
static const struct fe_svc *winner_svc(const struct fe_key *k)
{
	const struct fe_svc *w = NULL;
	size_t i;

	for (i = 0; i < k->nown; i++)
		if (!w || strcmp(k->own[i]->name, w->name) < 0)
			w = k->own[i];
	return w;
}

/* The frontend of the key's winner. */
static const struct kpx_service *winner(const struct fe_key *k)
{
	const struct fe_svc *w = winner_svc(k);

	return w ? bsearch(&k->key, w->v, w->n, sizeof(*w->v), fe_cmp) : NULL;
}

/* ---- Keys touched by an update ----------------------------------------- */

struct keyvec {
	struct kpx_service *v;
	size_t n, cap;
};

static int keyvec_add(struct keyvec *kv, const struct kpx_service *v, size_t n)
{
	size_t i;

	if (kv->n + n > kv->cap) {
		size_t cap = kv->cap ? kv->cap : 16;
		struct kpx_service *nv;

		while (cap < kv->n + n)
			cap *= 2;
		nv = realloc(kv->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		kv->v = nv;
		kv->cap = cap;
	}
	for (i = 0; i < n; i++)
		kv->v[kv->n++] = kpx_service_key(&v[i]);
	return 0;
}

/* Sorts and removes duplicates. */
static void keyvec_unique(struct keyvec *kv)
{
	size_t i, k = 0;

	if (!kv->n)
		return;
	qsort(kv->v, kv->n, sizeof(*kv->v), fe_cmp);
	for (i = 1; i < kv->n; i++)
		if (kpx_service_key_cmp(&kv->v[k], &kv->v[i]))
			kv->v[++k] = kv->v[i];
	kv->n = k + 1;
}

/* ---- Updates ------------------------------------------------------------ */

/* Counts @svc's status into the totals (@sign 1) or out of them (-1). */
static void status_account(struct kpx_fecache *c, struct fe_svc *svc,
			   int sign)
{
	if (sign > 0) {
		c->nl.internal += svc->nl.internal;
		c->nl.external += svc->nl.external;
		c->nl.internal6 += svc->nl.internal6;
		c->nl.external6 += svc->nl.external6;
	} else {
		c->nl.internal -= svc->nl.internal;
		c->nl.external -= svc->nl.external;
		c->nl.internal6 -= svc->nl.internal6;
		c->nl.external6 -= svc->nl.external6;
	}
	if (!svc->hc)
		return;
	if (sign > 0) {
		svc->hc_prev = NULL;
		svc->hc_next = c->hc_head;
		if (c->hc_head)
			c->hc_head->hc_prev = svc;
		c->hc_head = svc;
		c->nhc++;
		return;
	}
	if (svc->hc_prev)
		svc->hc_prev->hc_next = svc->hc_next;
	else
		c->hc_head = svc->hc_next;
	if (svc->hc_next)
		svc->hc_next->hc_prev = svc->hc_prev;
	c->nhc--;
}

static void svc_free(struct fe_svc *svc)
{
	kpx_services_free(svc->v, svc->n);
	free(svc->hc);
	free(svc->name);
	free(svc);
}

static void svc_drop(struct kpx_fecache *c, struct fe_svc *svc)
{
	size_t i;

	for (i = 0; i < svc->n; i++)
		unclaim(c, svc, &svc->v[i]);
	status_account(c, svc, -1);
	tab_del(&c->svcs, &svc->l);
	svc_free(svc);
}

/*
 * Service @name's status from @m: its no-local-endpoints counts into *nl,
 * its health-check server into *hc (malloc'd; NULL when none).  Returns 0
 * or -ENOMEM.
 */
static int status_of(const struct kpx_model *m, const char *name,
		     struct kpx_no_local *nl, struct kpx_hc_service **hc)
{
	struct kpx_hc_service one;
	int r;

	*hc = NULL;
	kpx_model_service_no_local(m, name, nl);
	r = kpx_model_service_healthcheck(m, name, &one);
	if (r <= 0)
		return r;
	*hc = malloc(sizeof(**hc));
	if (!*hc)
		return -ENOMEM;
	**hc = one;
	return 0;
}

/*
 * Recomputes Service @name from @m; adds the keys of its old and new
 * frontends to @kv when not NULL.
 */
static int svc_update(struct kpx_fecache *c, const struct kpx_model *m,
		      const char *name, struct keyvec *kv)
{
	struct fe_svc *svc = svc_find(c, name);
	struct kpx_hc_service *hc;
	struct kpx_no_local nl;
	struct kpx_service *v;
	size_t n, i;
	int r;

	r = kpx_model_service_frontends(m, name, &v, &n);
	if (r)
		return r;
	if (status_of(m, name, &nl, &hc))
		goto nomem;
	if (kv && svc && keyvec_add(kv, svc->v, svc->n))
		goto nomem;
	if (kv && keyvec_add(kv, v, n))
		goto nomem;
	if (svc)
		svc_drop(c, svc);
	if (!n && !hc && !nl.internal && !nl.external)
		return 0;
	svc = calloc(1, sizeof(*svc));
	if (!svc || !(svc->name = strdup(name)))
		goto nomem_svc;
	svc->l.hash = fnv(2166136261u, name, strlen(name));
	if (tab_add(&c->svcs, &svc->l))
		goto nomem_svc;
	svc->v = v;
	svc->n = n;
	svc->nl = nl;
	svc->hc = hc;
	status_account(c, svc, 1);
	for (i = 0; i < n; i++)
		if (claim(c, svc, &v[i]))
			return -ENOMEM;	/* c invalid: rebuilt next time */
	return 0;
nomem_svc:
	if (svc)
		free(svc->name);
	free(svc);
nomem:
	free(hc);
	kpx_services_free(v, n);
	return -ENOMEM;
}

static void clear(struct kpx_fecache *c)
{
	struct link *l, *next;
	size_t i;

	for (i = 0; i < c->svcs.nb; i++) {
		for (l = c->svcs.b[i]; l; l = next) {
			struct fe_svc *svc = (struct fe_svc *)l;

			next = l->next;
			svc_free(svc);
		}
	}
	for (i = 0; i < c->keys.nb; i++) {
		for (l = c->keys.b[i]; l; l = next) {
			next = l->next;
			free(((struct fe_key *)l)->own);
			free(l);
		}
	}
	free(c->svcs.b);
	free(c->keys.b);
	memset(c, 0, sizeof(*c));
}

struct rebuild_arg {
	struct kpx_fecache *c;
	const struct kpx_model *m;
};

static int rebuild_one(void *arg, const char *name)
{
	struct rebuild_arg *a = arg;

	return svc_update(a->c, a->m, name, NULL);
}

/* ---- Public API --------------------------------------------------------- */

struct kpx_fecache *kpx_fecache_new(void)
{
	return calloc(1, sizeof(struct kpx_fecache));
}

void kpx_fecache_free(struct kpx_fecache *c)
{
	if (!c)
		return;
	clear(c);
	free(c);
}

int kpx_fecache_sync(struct kpx_fecache *c, struct kpx_model *m, bool full,
		     struct kpx_service **keys, size_t *nkeys)
{
	struct rebuild_arg a = { c, m };
	struct keyvec kv = { 0 };
	char **names;
	size_t n, i;
	bool all;
	int r;

	*keys = NULL;
	*nkeys = 0;
	r = kpx_model_take_dirty(m, &names, &n, &all);
	if (r) {
		c->valid = false;
		return r;
	}
	if (full || all || !c->valid) {
		for (i = 0; i < n; i++)
			free(names[i]);
		free(names);
		clear(c);
		r = kpx_model_for_each_service(m, rebuild_one, &a);
		c->valid = !r;
		return r ? r : 1;
	}
	for (i = 0; i < n; i++) {
		if (!r)
			r = svc_update(c, m, names[i], &kv);
		free(names[i]);
	}
	free(names);
	if (r) {
		c->valid = false;
		free(kv.v);
		return r;
	}
	keyvec_unique(&kv);
	if (!kv.n) {
		free(kv.v);
		kv.v = NULL;
	}
	*keys = kv.v;
	*nkeys = kv.n;
	return 0;
}

const struct kpx_service *kpx_fecache_get(const struct kpx_fecache *c,
					  const struct kpx_service *key)
{
	const struct fe_key *k = key_find(c, key);

	return k ? winner(k) : NULL;
}

const char *kpx_fecache_owner(const struct kpx_fecache *c,
			      const struct kpx_service *key)
{
	const struct fe_key *k = key_find(c, key);
	const struct fe_svc *w = k ? winner_svc(k) : NULL;

	return w ? w->name : NULL;
}

size_t kpx_fecache_count(const struct kpx_fecache *c)
{
	return c->keys.n;
}

void kpx_fecache_no_local(const struct kpx_fecache *c,
			  struct kpx_no_local *out)
{
	*out = c->nl;
}

int kpx_fecache_healthchecks(const struct kpx_fecache *c,
			     struct kpx_hc_service **out, size_t *n)
{
	struct kpx_hc_service *v = NULL;
	const struct fe_svc *svc;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (!c->nhc)
		return 0;
	v = malloc(c->nhc * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (svc = c->hc_head; svc && k < c->nhc; svc = svc->hc_next)
		v[k++] = *svc->hc;
	qsort(v, k, sizeof(*v), kpx_hc_service_cmp);
	*out = v;
	*n = k;
	return 0;
}

int kpx_fecache_keys(const struct kpx_fecache *c, struct kpx_service **out,
		     size_t *n)
{
	struct kpx_service *v = NULL;
	struct link *l;
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (!c->keys.n)
		return 0;
	v = malloc(c->keys.n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < c->keys.nb; i++)
		for (l = c->keys.b[i]; l; l = l->next)
			if (winner((const struct fe_key *)l))
				v[k++] = ((const struct fe_key *)l)->key;
	qsort(v, k, sizeof(*v), fe_cmp);
	*out = v;
	*n = k;
	return 0;
}
