// SPDX-License-Identifier: GPL-2.0-only
/*
 * The object cache and the settings; see model.h.  The desired state
 * computed from it is in frontends.c, node.c and health.c.
 *
 * Services, EndpointSlices and Nodes are decoded into plain structs
 * (decode.h) and kept in string-keyed hash tables ("namespace/name"; "name"
 * for Nodes).  Slices are also grouped by their Service ("namespace/<kubernetes.io/service-name
 * label>"), so a Service's backends come from its own slices only and
 * kpx_model_desired() is linear in Services x ports x endpoints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "model/model_priv.h"

#define COMP "model"

/* ---- The hash table (types and lookup in model_priv.h) --------------- */

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

/* Each allocates the cached object and takes @o's contents into it. */
static int service_new(union kpx_api_object *o, struct hnode **out)
{
	struct m_service *s = calloc(1, sizeof(*s));

	*out = s ? &s->node : NULL;
	if (s)
		s->o = o->service;
	return s ? 0 : -ENOMEM;
}

static int slice_new(union kpx_api_object *o, struct hnode **out)
{
	struct m_slice *sl = calloc(1, sizeof(*sl));

	*out = sl ? &sl->node : NULL;
	if (sl)
		sl->o = o->slice;
	return sl ? 0 : -ENOMEM;
}

static int node_new(union kpx_api_object *o, struct hnode **out)
{
	struct m_node *nd = calloc(1, sizeof(*nd));

	*out = nd ? &nd->node : NULL;
	if (nd)
		nd->o = o->node;
	return nd ? 0 : -ENOMEM;
}

static void service_release(union kpx_api_object *o)
{
	kpx_api_service_release(&o->service);
}

static void slice_release(union kpx_api_object *o)
{
	kpx_api_slice_release(&o->slice);
}

static void node_release(union kpx_api_object *o)
{
	kpx_api_node_release(&o->node);
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
	int (*take)(union kpx_api_object *o, struct hnode **out);
	void (*release)(union kpx_api_object *o);	/* when not taken */
	void (*free)(struct hnode *n);
};

static const struct kind_ops kinds[KPX_KIND_MAX] = {
	[KPX_KIND_SERVICE] = {
		.name = "Service", .namespaced = true, .affects_desired = true,
		.take = service_new, .release = service_release,
		.free = service_free,
	},
	[KPX_KIND_ENDPOINTSLICE] = {
		.name = "EndpointSlice", .namespaced = true,
		.affects_desired = true,
		.take = slice_new, .release = slice_release,
		.free = slice_free,
	},
	/* Only the agent's own Node matters: see node_is_own() */
	[KPX_KIND_NODE] = {
		.name = "Node", .namespaced = false, .affects_desired = false,
		.take = node_new, .release = node_release,
		.free = node_free,
	},
};

/* True when a change to @n of @kind can change the desired state. */
static bool affects(const struct kpx_model *m, enum kpx_kind kind,
		    const struct hnode *n)
{
	if (kinds[kind].affects_desired)
		return true;
	/* the own Node: addresses (NodePorts), zone (hints), podCIDRs */
	return kind == KPX_KIND_NODE && !strcmp(n->key, m->cfg.hostname);
}

/* ---- Change tracking ------------------------------------------------- */

static void dirty_clear(struct kpx_model *m)
{
	struct hnode *n, *tmp;
	size_t i;

	ht_for_each_safe(&m->dirty_svcs, i, n, tmp) {
		free(n->key);
		free(n);
	}
	free(m->dirty_svcs.b);
	memset(&m->dirty_svcs, 0, sizeof(m->dirty_svcs));
}

/* Everything changed: the per-Service marks are moot. */
void model_dirty_everything(struct kpx_model *m)
{
	m->dirty = true;
	m->dirty_all = true;
	dirty_clear(m);
}

/*
 * Marks Service @key ("ns/name") dirty.  When marks pile up past half the
 * Services (a relist), or on -ENOMEM, everything is marked instead.
 */
static void dirty_service(struct kpx_model *m, const char *key)
{
	struct hnode *n;

	m->dirty = true;
	if (m->dirty_all || ht_find(&m->dirty_svcs, key))
		return;
	if (m->dirty_svcs.n >= 64 &&
	    m->dirty_svcs.n > m->objs[KPX_KIND_SERVICE].n / 2) {
		model_dirty_everything(m);
		return;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->key = strdup(key)) || ht_add(&m->dirty_svcs, n)) {
		if (n)
			free(n->key);
		free(n);
		model_dirty_everything(m);
	}
}

/* Records that @n of @kind changed (added, replaced or removed). */
static void mark_changed(struct kpx_model *m, enum kpx_kind kind,
			 const struct hnode *n)
{
	const struct m_slice *sl;

	switch (kind) {
	case KPX_KIND_SERVICE:
		dirty_service(m, n->key);
		break;
	case KPX_KIND_ENDPOINTSLICE:
		/* its Service: kubernetes.io/service-name; none: no effect */
		sl = (const struct m_slice *)n;
		if (sl->o.service)
			dirty_service(m, sl->o.service);
		break;
	default:
		if (affects(m, kind, n))
			model_dirty_everything(m);	/* the own Node */
		break;
	}
}

static void obj_remove(struct kpx_model *m, enum kpx_kind kind,
		       struct hnode *n)
{
	mark_changed(m, kind, n);
	if (kind == KPX_KIND_ENDPOINTSLICE)
		slice_unlink(m, (struct m_slice *)n);
	ht_del(&m->objs[kind], n);
	kinds[kind].free(n);
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
	if (kind == KPX_KIND_NODE && m->last_node &&
	    !strcmp(n->key, m->last_node->key)) {
		kpx_info(COMP, "own Node %s is back", n->key);
		node_free(m->last_node);
		m->last_node = NULL;
	}
	mark_changed(m, kind, n);
	return 0;
}

/*
 * Removes @n of @kind on a delete event or a relist that no longer lists
 * it.  The own Node is kept as last seen instead (kube-proxy keeps the
 * node's pod CIDRs and NodePort addresses when its Node is deleted, a
 * re-registration: no moment without NodePorts or local detection), until
 * a Node of that name comes back.
 */
static void obj_delete(struct kpx_model *m, enum kpx_kind kind,
		       struct hnode *n)
{
	if (kind != KPX_KIND_NODE || strcmp(n->key, m->cfg.hostname)) {
		obj_remove(m, kind, n);
		return;
	}
	kpx_warn(COMP, "own Node %s deleted: its last-seen addresses and pod CIDRs stay in use until it is back",
		 n->key);
	ht_del(&m->objs[kind], n);
	if (m->last_node)
		node_free(m->last_node);
	m->last_node = n;
}

/* ---- Public API ------------------------------------------------------- */

struct kpx_model *kpx_model_new(void)
{
	struct kpx_model *m = calloc(1, sizeof(struct kpx_model));

	if (m) {
		m->cfg.nodeport_primary = true;	/* --nodeport-addresses default */
		m->dirty_all = true;
	}
	return m;
}

void kpx_model_set_config(struct kpx_model *m, const struct kpx_config *c)
{
	struct settings *s = &m->cfg;

	memset(s, 0, sizeof(*s));
	snprintf(s->hostname, sizeof(s->hostname), "%s", c->hostname);
	s->n_cluster_cidrs = c->n_cluster_cidrs < 0 ? 0 :
			     c->n_cluster_cidrs > KPX_CONFIG_CIDRS_MAX ?
			     KPX_CONFIG_CIDRS_MAX : c->n_cluster_cidrs;
	memcpy(s->cluster_cidrs, c->cluster_cidrs,
	       (size_t)s->n_cluster_cidrs * sizeof(s->cluster_cidrs[0]));
	s->detect_local = c->detect_local;
	snprintf(s->bridge, sizeof(s->bridge), "%s", c->pod_bridge_interface);
	snprintf(s->ifprefix, sizeof(s->ifprefix), "%s", c->pod_interface_prefix);
	s->masquerade_all = c->masquerade_all;
	s->n_nodeport_cidrs = c->n_nodeport_cidrs < 0 ? 0 :
			      c->n_nodeport_cidrs > KPX_CONFIG_CIDRS_MAX ?
			      KPX_CONFIG_CIDRS_MAX : c->n_nodeport_cidrs;
	memcpy(s->nodeport_cidrs, c->nodeport_cidrs,
	       (size_t)s->n_nodeport_cidrs * sizeof(s->nodeport_cidrs[0]));
	s->nodeport_primary = c->nodeport_primary || !s->n_nodeport_cidrs;
	s->no_localhost_nodeports = c->no_localhost_nodeports;
	snprintf(s->scheduler, sizeof(s->scheduler), "%s", c->scheduler);
	model_dirty_everything(m);
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
	dirty_clear(m);
	if (m->last_node)
		node_free(m->last_node);
	free(m->local);
	free(m);
}

int kpx_model_update(struct kpx_model *m, enum kpx_kind kind, char *key,
		     union kpx_api_object *o)
{
	const struct kind_ops *ops;
	struct hnode *old, *n = NULL;
	int ret;

	if ((unsigned int)kind >= KPX_KIND_MAX) {
		free(key);
		return -EINVAL;
	}
	ops = &kinds[kind];
	old = ht_find(&m->objs[kind], key);
	ret = ops->take(o, &n);
	if (ret) {
		ops->release(o);
	} else {
		n->key = key;
		ret = obj_replace(m, kind, n, old);
		if (!ret)
			return 0;
		n->key = NULL;
	}
	kpx_err(COMP, "%s %s: %s", ops->name, key, strerror(-ret));
	if (old)
		old->seen = m->gen[kind];	/* exists, keep it on relist */
	if (n)
		ops->free(n);	/* n->key is NULL */
	free(key);
	return ret;
}

void kpx_model_delete(struct kpx_model *m, enum kpx_kind kind, const char *key)
{
	struct hnode *old;

	if ((unsigned int)kind >= KPX_KIND_MAX)
		return;
	old = ht_find(&m->objs[kind], key);
	if (old)
		obj_delete(m, kind, old);
}

bool kpx_model_keep(struct kpx_model *m, enum kpx_kind kind, const char *key)
{
	struct hnode *old;

	if ((unsigned int)kind >= KPX_KIND_MAX)
		return false;
	old = ht_find(&m->objs[kind], key);
	if (old)
		old->seen = m->gen[kind];	/* exists, keep it on relist */
	return old != NULL;
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
		obj_delete(m, kind, n);
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

int kpx_model_take_dirty(struct kpx_model *m, char ***names, size_t *n,
			 bool *all)
{
	struct hnode *nd, *tmp;
	char **v = NULL;
	size_t i, k = 0;

	*names = NULL;
	*n = 0;
	*all = m->dirty_all;
	if (!m->dirty_all && m->dirty_svcs.n) {
		v = malloc(m->dirty_svcs.n * sizeof(*v));
		if (!v)
			return -ENOMEM;	/* the marks stay */
		ht_for_each_safe(&m->dirty_svcs, i, nd, tmp) {
			v[k++] = nd->key;
			nd->key = NULL;
		}
	}
	dirty_clear(m);
	m->dirty_all = false;
	m->dirty = false;
	*names = v;
	*n = k;
	return 0;
}

int kpx_model_for_each_service(const struct kpx_model *m,
			       int (*fn)(void *arg, const char *name),
			       void *arg)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	struct hnode *nd, *tmp;
	size_t i;
	int r;

	ht_for_each_safe(t, i, nd, tmp) {
		r = fn(arg, nd->key);
		if (r)
			return r;
	}
	return 0;
}
