// SPDX-License-Identifier: GPL-2.0-only
/*
 * The object cache and the desired state computed from it; see model.h.
 *
 * Services, EndpointSlices and Nodes are decoded into plain structs
 * (decode.h) and kept in string-keyed hash tables ("namespace/name"; "name"
 * for Nodes).  Slices are also grouped by their Service ("namespace/<kubernetes.io/service-name
 * label>"), so a Service's backends come from its own slices only and
 * kpx_model_desired() is linear in Services x ports x endpoints.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include "decode.h"
#include "log.h"
#include "model.h"

#define COMP "model"

_Static_assert(sizeof(union kpx_api_addr) ==
	       sizeof(((struct kpx_backend *)0)->addr),
	       "address unions differ");

/* ---- A chained hash table keyed by C string --------------------------- */

struct hnode {
	struct hnode *next;
	uint32_t hash;
	unsigned int seen;	/* relist generation of the last apply */
	char *key;		/* owned */
};

struct htab {
	struct hnode **b;
	size_t nb, n;		/* nb: 0 or a power of two */
};

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static struct hnode *ht_find(const struct htab *t, const char *key)
{
	struct hnode *n;
	uint32_t h;

	if (!t->nb)
		return NULL;
	h = hash_str(key);
	for (n = t->b[h & (t->nb - 1)]; n; n = n->next)
		if (n->hash == h && !strcmp(n->key, key))
			return n;
	return NULL;
}

static int ht_grow(struct htab *t)
{
	size_t nb = t->nb ? t->nb * 2 : 64, i;
	struct hnode **b = calloc(nb, sizeof(*b));
	struct hnode *n, *next;

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->nb; i++) {
		for (n = t->b[i]; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
	return 0;
}

/* Links @n (n->key set) at the head of its chain: found before an older node
 * with the same key, which the caller then removes with ht_del(). */
static int ht_add(struct htab *t, struct hnode *n)
{
	struct hnode **head;

	if (t->n >= t->nb && ht_grow(t) && !t->nb)
		return -ENOMEM;	/* an overfull table is fine, none is not */
	n->hash = hash_str(n->key);
	head = &t->b[n->hash & (t->nb - 1)];
	n->next = *head;
	*head = n;
	t->n++;
	return 0;
}

static void ht_del(struct htab *t, struct hnode *n)
{
	struct hnode **pp = &t->b[n->hash & (t->nb - 1)];

	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	t->n--;
}

#define ht_for_each_safe(t, i, n, tmp)					\
	for ((i) = 0; (i) < (t)->nb; (i)++)				\
		for ((n) = (t)->b[i]; (n) && ((tmp) = (n)->next, 1);	\
		     (n) = (tmp))

/* ---- Cached objects: decoded structs with their hash node ------------ */

struct m_service {
	struct hnode node;	/* "ns/name" */
	struct kpx_api_service o;
};

struct m_slice;

/* The slices of one Service: "ns/service-name" -> list. */
struct slice_group {
	struct hnode node;
	struct m_slice *head;
};

struct m_slice {
	struct hnode node;	/* "ns/name" */
	struct slice_group *group;
	struct m_slice *gnext, *gprev;
	struct kpx_api_slice o;
};

struct m_node {
	struct hnode node;	/* "name" */
	struct kpx_api_node o;
};

struct kpx_model {
	struct htab objs[KPX_KIND_MAX];
	struct htab groups;		/* struct slice_group */
	unsigned int gen[KPX_KIND_MAX];
	bool relisting[KPX_KIND_MAX];
	bool dirty;
};

/* Each allocates the cached object and decodes into it: see decode.h. */
static int service_new(struct json_object *obj, struct hnode **out,
		       char *why, size_t len)
{
	struct m_service *s = calloc(1, sizeof(*s));

	*out = s ? &s->node : NULL;
	return s ? kpx_decode_service(obj, &s->o, why, len) : -ENOMEM;
}

static int slice_new(struct json_object *obj, struct hnode **out,
		     char *why, size_t len)
{
	struct m_slice *sl = calloc(1, sizeof(*sl));

	*out = sl ? &sl->node : NULL;
	return sl ? kpx_decode_slice(obj, &sl->o, why, len) : -ENOMEM;
}

static int node_new(struct json_object *obj, struct hnode **out,
		    char *why, size_t len)
{
	struct m_node *nd = calloc(1, sizeof(*nd));

	*out = nd ? &nd->node : NULL;
	return nd ? kpx_decode_node(obj, &nd->o, why, len) : -ENOMEM;
}

static void service_free(struct hnode *n)
{
	kpx_api_service_release(&((struct m_service *)n)->o);
	free(n->key);
	free(n);
}

static void slice_free(struct hnode *n)
{
	kpx_api_slice_release(&((struct m_slice *)n)->o);
	free(n->key);
	free(n);
}

static void node_free(struct hnode *n)
{
	kpx_api_node_release(&((struct m_node *)n)->o);
	free(n->key);
	free(n);
}

/* ---- Per-kind operations ---------------------------------------------- */

static void slice_unlink(struct kpx_model *m, struct m_slice *sl)
{
	struct slice_group *g = sl->group;

	if (!g)
		return;
	if (sl->gprev)
		sl->gprev->gnext = sl->gnext;
	else
		g->head = sl->gnext;
	if (sl->gnext)
		sl->gnext->gprev = sl->gprev;
	sl->group = NULL;
	if (!g->head) {
		ht_del(&m->groups, &g->node);
		free(g->node.key);
		free(g);
	}
}

static int slice_link(struct kpx_model *m, struct m_slice *sl)
{
	struct slice_group *g;

	if (!sl->o.service)
		return 0;
	g = (struct slice_group *)ht_find(&m->groups, sl->o.service);
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || !(g->node.key = strdup(sl->o.service)))
			goto nomem;
		if (ht_add(&m->groups, &g->node))
			goto nomem;
	}
	sl->gprev = NULL;
	sl->gnext = g->head;
	if (g->head)
		g->head->gprev = sl;
	g->head = sl;
	sl->group = g;
	return 0;
nomem:
	if (g)
		free(g->node.key);
	free(g);
	return -ENOMEM;
}

struct kind_ops {
	const char *name;
	bool namespaced;
	bool affects_desired;
	int (*parse)(struct json_object *obj, struct hnode **out,
		     char *why, size_t len);
	void (*free)(struct hnode *n);
};

static const struct kind_ops kinds[KPX_KIND_MAX] = {
	[KPX_KIND_SERVICE] = {
		.name = "Service", .namespaced = true, .affects_desired = true,
		.parse = service_new, .free = service_free,
	},
	[KPX_KIND_ENDPOINTSLICE] = {
		.name = "EndpointSlice", .namespaced = true,
		.affects_desired = true,
		.parse = slice_new, .free = slice_free,
	},
	/* Nodes matter only from topology-aware routing on */
	[KPX_KIND_NODE] = {
		.name = "Node", .namespaced = false, .affects_desired = false,
		.parse = node_new, .free = node_free,
	},
};

static void obj_remove(struct kpx_model *m, enum kpx_kind kind,
		       struct hnode *n)
{
	if (kind == KPX_KIND_ENDPOINTSLICE)
		slice_unlink(m, (struct m_slice *)n);
	ht_del(&m->objs[kind], n);
	kinds[kind].free(n);
	if (kinds[kind].affects_desired)
		m->dirty = true;
}

/* Adds @n, then drops @old (the same key) if any: no gap on -ENOMEM. */
static int obj_replace(struct kpx_model *m, enum kpx_kind kind,
		       struct hnode *n, struct hnode *old)
{
	if (ht_add(&m->objs[kind], n))
		return -ENOMEM;
	if (kind == KPX_KIND_ENDPOINTSLICE &&
	    slice_link(m, (struct m_slice *)n)) {
		ht_del(&m->objs[kind], n);
		return -ENOMEM;
	}
	n->seen = m->gen[kind];
	if (old)
		obj_remove(m, kind, old);
	if (kinds[kind].affects_desired)
		m->dirty = true;
	return 0;
}

/* ---- Public API ------------------------------------------------------- */

struct kpx_model *kpx_model_new(void)
{
	return calloc(1, sizeof(struct kpx_model));
}

void kpx_model_free(struct kpx_model *m)
{
	struct hnode *n, *tmp;
	size_t i;
	int k;

	if (!m)
		return;
	for (k = 0; k < KPX_KIND_MAX; k++) {
		ht_for_each_safe(&m->objs[k], i, n, tmp)
			kinds[k].free(n);
		free(m->objs[k].b);
	}
	ht_for_each_safe(&m->groups, i, n, tmp) {
		free(n->key);
		free(n);
	}
	free(m->groups.b);
	free(m);
}

int kpx_model_apply(struct kpx_model *m, enum kpx_kind kind,
		    enum kpx_event ev, struct json_object *obj)
{
	const struct kind_ops *ops;
	struct hnode *old, *n = NULL;
	char why[192], *key = NULL;
	int ret;

	if ((unsigned int)kind >= KPX_KIND_MAX)
		return -EINVAL;
	ops = &kinds[kind];
	ret = kpx_decode_key(obj, ops->namespaced, &key, why, sizeof(why));
	if (ret == -EINVAL)
		kpx_warn(COMP, "%s ignored: %s", ops->name, why);
	if (ret)
		return ret;
	old = ht_find(&m->objs[kind], key);
	if (ev == KPX_EV_DELETED) {
		if (old)
			obj_remove(m, kind, old);
		free(key);
		return 0;
	}
	ret = ops->parse(obj, &n, why, sizeof(why));
	if (!ret) {
		n->key = key;
		ret = obj_replace(m, kind, n, old);
		if (!ret)
			return 0;
		n->key = NULL;
	}
	if (ret == -EINVAL)
		kpx_warn(COMP, "%s %s: %s; %s", ops->name, key, why,
			 old ? "keeping the previous version" : "ignored");
	else
		kpx_err(COMP, "%s %s: %s", ops->name, key, strerror(-ret));
	if (old)
		old->seen = m->gen[kind];	/* exists, keep it on relist */
	if (n)
		ops->free(n);	/* partly filled; n->key is NULL */
	free(key);
	return ret;
}

void kpx_model_relist_begin(struct kpx_model *m, enum kpx_kind kind)
{
	if ((unsigned int)kind >= KPX_KIND_MAX)
		return;
	m->gen[kind]++;
	m->relisting[kind] = true;
}

void kpx_model_relist_end(struct kpx_model *m, enum kpx_kind kind)
{
	struct htab *t;
	struct hnode *n, *tmp;
	size_t i, dropped = 0;

	if ((unsigned int)kind >= KPX_KIND_MAX || !m->relisting[kind])
		return;
	m->relisting[kind] = false;
	t = &m->objs[kind];
	ht_for_each_safe(t, i, n, tmp) {
		if (n->seen == m->gen[kind])
			continue;
		kpx_dbg(2, COMP, "%s %s gone after relist", kinds[kind].name,
			n->key);
		obj_remove(m, kind, n);
		dropped++;
	}
	if (dropped)
		kpx_info(COMP, "relist dropped %zu %s object(s)", dropped,
			 kinds[kind].name);
}

bool kpx_model_dirty(const struct kpx_model *m)
{
	return m->dirty;
}

/* ---- Desired state ---------------------------------------------------- */

/* A frontend being built, with the Service it came from (for ties). */
struct frontend {
	struct kpx_service s;
	const char *owner;
};

/*
 * Which endpoints become backends: ready ones (nil ready counts as ready).
 * Terminating-but-serving fallback (used when a Service has no ready
 * endpoint at all) is a second predicate tried by add_backends()'s caller.
 */
static bool ep_ready(const struct kpx_api_endpoint *e)
{
	return e->ready;
}

/* The slice's port for Service port (@name, @proto), or 0 if it has none. */
static uint16_t slice_port(const struct kpx_api_slice *sl, const char *name,
			   uint8_t proto)
{
	size_t i;

	for (i = 0; i < sl->nports; i++)
		if (sl->ports[i].protocol == proto &&
		    !strcmp(sl->ports[i].name, name))
			return sl->ports[i].port;
	return 0;
}

/*
 * Fills fe->s.backends from the slices in @g of fe->s.family whose port
 * matches @sp, with the endpoints @use accepts; target port from each slice.
 * Returns the number of backends (before duplicates are removed) or -ENOMEM.
 */
static long add_backends(struct frontend *fe, const struct slice_group *g,
			 const struct kpx_api_port *sp,
			 bool (*use)(const struct kpx_api_endpoint *e))
{
	struct kpx_service *s = &fe->s;
	const struct kpx_api_slice *o;
	const struct m_slice *sl;
	struct kpx_backend *b;
	size_t i, n = 0;
	uint16_t port;

	for (sl = g ? g->head : NULL; sl; sl = sl->gnext) {
		o = &sl->o;
		if (o->family != s->family ||
		    !slice_port(o, sp->name, sp->protocol))
			continue;
		for (i = 0; i < o->neps; i++)
			n += use(&o->eps[i]);
	}
	s->nbackends = 0;
	s->backends = NULL;
	if (!n)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	s->backends = b;
	for (sl = g->head; sl; sl = sl->gnext) {
		o = &sl->o;
		port = o->family == s->family ?
		       slice_port(o, sp->name, sp->protocol) : 0;
		if (!port)
			continue;
		for (i = 0; i < o->neps; i++) {
			if (!use(&o->eps[i]))
				continue;
			memcpy(&b->addr, &o->eps[i].addr, sizeof(b->addr));
			b->port = port;
			b->weight = 1;
			b++;
		}
	}
	s->nbackends = n;
	kpx_service_normalize(s, s->family == AF_INET ?
			      sizeof(struct in_addr) : sizeof(struct in6_addr));
	return n;
}

static int frontend_cmp(const void *a, const void *b)
{
	const struct frontend *x = a, *y = b;
	int r = kpx_service_key_cmp(&x->s, &y->s);

	return r ? r : strcmp(x->owner, y->owner);
}

static void frontends_free(struct frontend *fe, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(fe[i].s.backends);
	free(fe);
}

int kpx_model_desired(struct kpx_model *m, struct kpx_service **out, size_t *n)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	const struct slice_group *g;
	const struct kpx_api_service *svc;
	struct frontend *fe, *f;
	struct kpx_service *res;
	struct hnode *node, *tmp;
	size_t i, j, k, total = 0, nfe = 0, nres = 0;

	*out = NULL;
	*n = 0;
	ht_for_each_safe(t, i, node, tmp) {
		svc = &((const struct m_service *)node)->o;
		if (!svc->skip)
			total += svc->nips * svc->nports;
	}
	fe = calloc(total ? total : 1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	ht_for_each_safe(t, i, node, tmp) {
		svc = &((const struct m_service *)node)->o;
		if (svc->skip || !svc->nports)
			continue;
		g = (const struct slice_group *)ht_find(&m->groups, node->key);
		for (j = 0; j < svc->nips; j++) {
			for (k = 0; k < svc->nports; k++) {
				f = &fe[nfe++];
				f->owner = node->key;
				f->s.family = svc->ips[j].family;
				f->s.protocol = svc->ports[k].protocol;
				memcpy(&f->s.addr, &svc->ips[j].addr,
				       sizeof(f->s.addr));
				f->s.port = svc->ports[k].port;
				if (add_backends(f, g, &svc->ports[k],
						 ep_ready) < 0)
					goto nomem;
			}
		}
	}
	qsort(fe, nfe, sizeof(*fe), frontend_cmp);
	res = calloc(nfe ? nfe : 1, sizeof(*res));
	if (!res)
		goto nomem;
	for (i = 0; i < nfe; i++) {
		if (nres && !kpx_service_key_cmp(&res[nres - 1], &fe[i].s)) {
			char buf[KPX_SERVICE_STRLEN];

			kpx_dbg(2, COMP, "%s of %s already used by another Service, ignored",
				kpx_service_str(&fe[i].s, buf, sizeof(buf)),
				fe[i].owner);
			free(fe[i].s.backends);
			continue;
		}
		res[nres++] = fe[i].s;
	}
	free(fe);
	m->dirty = false;
	*out = res;
	*n = nres;
	return 0;
nomem:
	frontends_free(fe, nfe);
	return -ENOMEM;
}
