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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/kpx.h>
#include "addr.h"
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

/* What the model uses of struct kpx_config (kpx_model_set_config()). */
struct settings {
	char hostname[HOST_NAME_MAX + 1];	/* "" until configured */
	struct kpx_cidr cluster_cidrs[KPX_CONFIG_CIDRS_MAX];
	int n_cluster_cidrs;
	enum kpx_detect_local detect_local;
	char bridge[IF_NAMESIZE], ifprefix[IF_NAMESIZE];
	bool masquerade_all;
	struct kpx_cidr nodeport_cidrs[KPX_CONFIG_CIDRS_MAX];
	int n_nodeport_cidrs;
	bool nodeport_primary;
};

struct kpx_model {
	struct htab objs[KPX_KIND_MAX];
	struct htab groups;		/* struct slice_group */
	unsigned int gen[KPX_KIND_MAX];
	bool relisting[KPX_KIND_MAX];
	bool dirty;
	struct settings cfg;
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
	/* Only the agent's own Node matters: see node_is_own() */
	[KPX_KIND_NODE] = {
		.name = "Node", .namespaced = false, .affects_desired = false,
		.parse = node_new, .free = node_free,
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

static void obj_remove(struct kpx_model *m, enum kpx_kind kind,
		       struct hnode *n)
{
	if (affects(m, kind, n))
		m->dirty = true;
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
	if (affects(m, kind, n))
		m->dirty = true;
	return 0;
}

/* ---- Public API ------------------------------------------------------- */

struct kpx_model *kpx_model_new(void)
{
	struct kpx_model *m = calloc(1, sizeof(struct kpx_model));

	if (m)
		m->cfg.nodeport_primary = true;	/* --nodeport-addresses default */
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
	m->dirty = true;
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

/* ---- Namespace settings (KPX_CMD_SET_CONFIG) -------------------------- */

static const struct kpx_api_node *own_node(const struct kpx_model *m)
{
	const struct hnode *n;

	if (!m->cfg.hostname[0])
		return NULL;
	n = ht_find(&m->objs[KPX_KIND_NODE], m->cfg.hostname);
	return n ? &((const struct m_node *)n)->o : NULL;
}

/*
 * kube-proxy's --detect-local-mode (pkg/proxy/util/localdetector.go):
 * ClusterCIDR: sources in --cluster-cidr; NodeCIDR: in the Node's
 * spec.podCIDRs; BridgeInterface / InterfaceNamePrefix: arriving through
 * that interface.  Pure: @nd is the own Node or NULL.
 */
static void ns_config(const struct settings *s, const struct kpx_api_node *nd,
		      struct kpx_ns_config *out)
{
	const struct kpx_cidr *v = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	switch (s->detect_local) {
	case KPX_DETECT_LOCAL_CLUSTER_CIDR:
		v = s->cluster_cidrs;
		n = (size_t)s->n_cluster_cidrs;
		break;
	case KPX_DETECT_LOCAL_NODE_CIDR:
		if (nd) {
			v = nd->pod_cidrs;
			n = nd->npod_cidrs;
		}
		break;
	case KPX_DETECT_LOCAL_BRIDGE:
		snprintf(out->local_ifname, sizeof(out->local_ifname), "%s",
			 s->bridge);
		break;
	case KPX_DETECT_LOCAL_IFPREFIX:
		snprintf(out->local_ifprefix, sizeof(out->local_ifprefix), "%s",
			 s->ifprefix);
		break;
	default:
		break;
	}
	if (n > KPX_CONFIG_CIDRS_MAX)
		n = KPX_CONFIG_CIDRS_MAX;
	if (n)
		memcpy(out->local_cidrs, v, n * sizeof(*v));
	out->nlocal_cidrs = n;
}

void kpx_model_ns_config(const struct kpx_model *m, struct kpx_ns_config *out)
{
	ns_config(&m->cfg, own_node(m), out);
}

/*
 * kube-proxy's localDetector.IsImplemented() for one family: a detector
 * that can tell pod traffic apart exists.
 */
static bool detect_local(const struct kpx_ns_config *nc, int family)
{
	size_t i;

	if (nc->local_ifname[0] || nc->local_ifprefix[0])
		return true;
	for (i = 0; i < nc->nlocal_cidrs; i++)
		if (nc->local_cidrs[i].family == family)
			return true;
	return false;
}

/* ---- NodePort addresses ------------------------------------------------ */

/* A NodePort address of this node; @localhost: 127.0.0.1 (needs MASQ). */
struct np_addr {
	struct kpx_api_ip ip;
	bool localhost;
};

#define NP_ADDRS_MAX 64

static bool np_has(const struct np_addr *v, size_t n, const struct kpx_api_ip *ip)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].ip.family == ip->family &&
		    !memcmp(&v[i].ip.addr, &ip->addr, sizeof(ip->addr)))
			return true;
	return false;
}

static void np_add(struct np_addr *v, size_t *n, const struct kpx_api_ip *ip,
		   bool localhost)
{
	if (*n < NP_ADDRS_MAX && !np_has(v, *n, ip)) {
		v[*n].ip = *ip;
		v[*n].localhost = localhost;
		(*n)++;
	}
}

/* The Node's primary IP of @family: its first InternalIP, else its first
 * ExternalIP (as utilnode.GetNodeHostIPs()); NULL if none. */
static const struct kpx_api_ip *primary_ip(const struct kpx_api_node *nd,
					   int family)
{
	const struct kpx_api_ip *ext = NULL;
	size_t i;

	for (i = 0; nd && i < nd->naddrs; i++) {
		if (nd->addrs[i].ip.family != family)
			continue;
		if (nd->addrs[i].type == KPX_API_INTERNAL_IP)
			return &nd->addrs[i].ip;
		if (!ext)
			ext = &nd->addrs[i].ip;
	}
	return ext;
}

/*
 * --nodeport-addresses: "primary" (the nftables default) gives the Node's
 * primary IP per family; CIDRs select the Node's InternalIP/ExternalIP
 * addresses inside them.  A CIDR holding 127.0.0.1 also gives the IPv4
 * localhost NodePort of kube-proxy's iptables mode (route_localnet; always
 * masqueraded).  IPv6 ::1 is never served (#90236).
 */
static size_t nodeport_addrs(const struct settings *s,
			     const struct kpx_api_node *nd, struct np_addr *v)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	const struct kpx_api_ip *ip;
	struct kpx_api_ip lo;
	size_t n = 0, i;
	int j, f;

	if (s->nodeport_primary) {
		for (f = 0; f < 2; f++) {
			ip = primary_ip(nd, fams[f]);
			if (ip)
				np_add(v, &n, ip, false);
		}
	}
	for (i = 0; nd && i < nd->naddrs; i++)
		for (j = 0; j < s->n_nodeport_cidrs; j++)
			if (kpx_cidr_contains(&s->nodeport_cidrs[j],
					      nd->addrs[i].ip.family,
					      &nd->addrs[i].ip.addr))
				np_add(v, &n, &nd->addrs[i].ip, false);
	memset(&lo, 0, sizeof(lo));
	lo.family = AF_INET;
	lo.addr.v4.s_addr = htonl(INADDR_LOOPBACK);
	for (j = 0; j < s->n_nodeport_cidrs; j++)
		if (kpx_cidr_contains(&s->nodeport_cidrs[j], AF_INET, &lo.addr))
			np_add(v, &n, &lo, true);
	return n;
}

/* ---- Endpoint selection (kube-proxy pkg/proxy/topology.go) ------------ */

/* One endpoint of a Service port: the slice's target port with it. */
struct cand {
	const struct kpx_api_endpoint *e;
	uint16_t port;
	bool local;		/* e->node_name is this node (IsLocal()) */
};

/* Per-call scratch and context of kpx_model_desired(). */
struct ctx {
	const struct kpx_model *m;
	const char *zone;	/* own Node's topology.kubernetes.io/zone, "" */
	struct cand *c;
	size_t nc, capc;
	struct kpx_ns_config nc_cfg;
	struct np_addr np[NP_ADDRS_MAX];
	size_t nnp;
};

/* The backend sets of one Service port in one family. */
struct epsets {
	struct kpx_backend *cluster, *local;
	size_t ncluster, nlocal;
	/* some endpoint is usable anywhere in the cluster (ready, or serving
	 * and terminating): with no usable one, drop instead of reject */
	bool has_any;
};

static bool has_str(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

enum topo { TOPO_NONE, TOPO_ZONE, TOPO_NODE };

/*
 * topologyModeFromHints(): only ready endpoints count.  PreferSameNode
 * (trafficDistribution, KEP-3015) applies when every ready endpoint has
 * node hints and one is for this node; otherwise, as for PreferClose /
 * PreferSameZone / topology-mode Auto (KEP-2433, KEP-4444), zone hints apply
 * when every ready endpoint has zone hints and one is for this node's zone.
 * Else (an unhinted endpoint, no endpoint for our zone, a node without a
 * zone label) every endpoint is used.
 */
static enum topo topo_mode(const struct ctx *x, const struct kpx_api_service *svc)
{
	bool node_all = true, node_hit = false, zone_all = true, zone_hit = false;
	const char *host = x->m->cfg.hostname;
	size_t i;

	for (i = 0; i < x->nc; i++) {
		const struct kpx_api_endpoint *e = x->c[i].e;

		if (!e->ready)
			continue;
		if (!e->nnode_hints)
			node_all = false;
		else if (has_str(e->node_hints, e->nnode_hints, host))
			node_hit = true;
		if (!e->nzone_hints)
			zone_all = false;
		else if (has_str(e->zone_hints, e->nzone_hints, x->zone))
			zone_hit = true;
	}
	if (svc->traffic_dist == KPX_API_TD_PREFER_NODE && node_all && node_hit)
		return TOPO_NODE;
	if (zone_all && zone_hit && x->zone[0])
		return TOPO_ZONE;
	return TOPO_NONE;
}

static bool topo_ok(const struct ctx *x, const struct kpx_api_endpoint *e,
		    enum topo t)
{
	switch (t) {
	case TOPO_NODE:
		return has_str(e->node_hints, e->nnode_hints, x->m->cfg.hostname);
	case TOPO_ZONE:
		return has_str(e->zone_hints, e->nzone_hints, x->zone);
	default:
		return true;
	}
}

enum pick { PICK_READY_TOPO, PICK_SERVING_TERM, PICK_LOCAL_READY,
	    PICK_LOCAL_SERVING_TERM };

static bool picked(const struct ctx *x, const struct cand *c, enum pick p,
		   enum topo t)
{
	const struct kpx_api_endpoint *e = c->e;

	switch (p) {
	case PICK_READY_TOPO:
		return e->ready && topo_ok(x, e, t);
	case PICK_SERVING_TERM:
		return e->serving && e->terminating;
	case PICK_LOCAL_READY:
		return c->local && e->ready;
	default:
		return c->local && e->serving && e->terminating;
	}
}

/* The candidates @p accepts as backends into *out (NULL when none). */
static int collect(const struct ctx *x, enum pick p, enum topo t,
		   struct kpx_backend **out, size_t *nout)
{
	struct kpx_backend *b;
	size_t i, n = 0;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < x->nc; i++)
		n += picked(x, &x->c[i], p, t);
	if (!n)
		return 0;
	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (i = 0, n = 0; i < x->nc; i++) {
		if (!picked(x, &x->c[i], p, t))
			continue;
		memcpy(&b[n].addr, &x->c[i].e->addr, sizeof(b[n].addr));
		b[n].port = x->c[i].port;
		b[n].weight = 1;
		n++;
	}
	*out = b;
	*nout = n;
	return 0;
}

/*
 * CategorizeEndpoints() (KEP-1669, KEP-2086, KEP-2433): the cluster set is
 * the ready endpoints allowed by topology, else (none ready anywhere) the
 * serving-and-terminating ones; the local set is the ready endpoints on
 * this node, else the serving-and-terminating ones on this node.
 */
static int categorize(const struct ctx *x, const struct kpx_api_service *svc,
		      struct epsets *es)
{
	enum topo t = topo_mode(x, svc);
	size_t i;
	int r;

	memset(es, 0, sizeof(*es));
	for (i = 0; i < x->nc; i++)
		if (x->c[i].e->ready ||
		    (x->c[i].e->serving && x->c[i].e->terminating))
			es->has_any = true;
	r = collect(x, PICK_READY_TOPO, t, &es->cluster, &es->ncluster);
	if (!r && !es->ncluster)
		r = collect(x, PICK_SERVING_TERM, t, &es->cluster,
			    &es->ncluster);
	if (!r)
		r = collect(x, PICK_LOCAL_READY, t, &es->local,
			    &es->nlocal);
	if (!r && !es->nlocal)
		r = collect(x, PICK_LOCAL_SERVING_TERM, t, &es->local,
			    &es->nlocal);
	return r;
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
 * The endpoints for Service port @sp in @family into x->c: from the
 * Service's slices of that family that carry a port of the same name and
 * protocol ("" matches ""); the target port is the slice's (named
 * targetPorts resolve per slice).
 */
static int gather(struct ctx *x, const struct slice_group *g,
		  const struct kpx_api_port *sp, int family)
{
	const char *host = x->m->cfg.hostname;
	const struct m_slice *sl;
	size_t i;
	uint16_t port;

	x->nc = 0;
	for (sl = g ? g->head : NULL; sl; sl = sl->gnext) {
		if (sl->o.family != family)
			continue;
		port = slice_port(&sl->o, sp->name, sp->protocol);
		if (!port)
			continue;
		for (i = 0; i < sl->o.neps; i++) {
			const struct kpx_api_endpoint *e = &sl->o.eps[i];

			if (x->nc == x->capc) {
				size_t cap = x->capc ? 2 * x->capc : 64;
				struct cand *c = realloc(x->c, cap * sizeof(*c));

				if (!c)
					return -ENOMEM;
				x->c = c;
				x->capc = cap;
			}
			x->c[x->nc].e = e;
			x->c[x->nc].port = port;
			x->c[x->nc].local = host[0] && e->node_name &&
					    !strcmp(e->node_name, host);
			x->nc++;
		}
	}
	return 0;
}

/* ---- Frontends --------------------------------------------------------- */

/* A frontend being built, with the Service it came from (for ties). */
struct frontend {
	struct kpx_service s;
	const char *owner;
};

struct fevec {
	struct frontend *v;
	size_t n, cap;
};

static void fevec_free(struct fevec *fv)
{
	size_t i;

	for (i = 0; i < fv->n; i++)
		kpx_service_free(&fv->v[i].s);
	free(fv->v);
	fv->v = NULL;
	fv->n = fv->cap = 0;
}

/* Adds a frontend with copies of @be and @ranges (of @family only). */
static int emit(struct fevec *fv, const char *owner, int family,
		const struct kpx_api_port *sp, const union kpx_api_addr *addr,
		uint16_t port, uint32_t flags, const struct kpx_backend *be,
		size_t nbe, const struct kpx_cidr *ranges, size_t nranges)
{
	struct kpx_service *s;
	size_t i;

	if (fv->n == fv->cap) {
		size_t cap = fv->cap ? 2 * fv->cap : 256;
		struct frontend *v = realloc(fv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fv->v = v;
		fv->cap = cap;
	}
	s = &fv->v[fv->n].s;
	memset(s, 0, sizeof(*s));
	fv->v[fv->n].owner = owner;
	fv->n++;
	s->family = family;
	s->protocol = sp->protocol;
	memcpy(&s->addr, addr, sizeof(s->addr));
	s->port = port;
	s->flags = flags;
	if (nbe) {
		s->backends = malloc(nbe * sizeof(*be));
		if (!s->backends)
			return -ENOMEM;
		memcpy(s->backends, be, nbe * sizeof(*be));
		s->nbackends = nbe;
	}
	for (i = 0; i < nranges; i++) {
		if (ranges[i].family != family)
			continue;
		if (!s->source_ranges) {
			s->source_ranges = calloc(nranges, sizeof(*ranges));
			if (!s->source_ranges)
				return -ENOMEM;
		}
		s->source_ranges[s->nsource_ranges++] = ranges[i];
	}
	kpx_service_normalize(s, kpx_addr_len(family));
	return 0;
}

/* With no backend: drop when endpoints exist elsewhere (a Local policy
 * found none here), else reject (no KPX_SVC_F_DROP_EMPTY).  kube-proxy
 * iptables: "has no local endpoints" DROP vs "has no endpoints" REJECT. */
static uint32_t empty_flag(size_t nbe, bool has_any)
{
	return !nbe && has_any ? KPX_SVC_F_DROP_EMPTY : 0;
}

/*
 * loadBalancerSourceRanges of @family for the LB IPs, plus the LB IPs
 * themselves when a range holds the node's primary IP (kube-proxy allows
 * a node's own requests to a VIP-like LB IP that loop back with the VIP as
 * source).  *out malloc'd or NULL.
 */
static int lb_ranges(const struct ctx *x, const struct kpx_api_service *svc,
		     int family, struct kpx_cidr **out, size_t *nout)
{
	const struct kpx_api_ip *nip = primary_ip(own_node(x->m), family);
	struct kpx_cidr *v;
	bool node_in = false;
	size_t i, n = 0;

	*out = NULL;
	*nout = 0;
	if (!svc->nsource_ranges)
		return 0;
	v = calloc(svc->nsource_ranges + svc->nlb_ips, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < svc->nsource_ranges; i++) {
		if (svc->source_ranges[i].family != family)
			continue;
		v[n++] = svc->source_ranges[i];
		if (nip && kpx_cidr_contains(&svc->source_ranges[i], family,
					     &nip->addr))
			node_in = true;
	}
	for (i = 0; node_in && i < svc->nlb_ips; i++) {
		if (svc->lb_ips[i].family != family)
			continue;
		memset(&v[n], 0, sizeof(v[n]));
		v[n].family = family;
		v[n].addr.v6 = svc->lb_ips[i].addr.v6;
		v[n].len = family == AF_INET ? 32 : 128;
		n++;
	}
	*out = v;
	*nout = n;
	return 0;
}

/*
 * The frontends of Service port @sp in the family of ClusterIP @cip.
 *
 * ClusterIP: internalTrafficPolicy Local uses the local set (KEP-2086),
 * else the cluster set; masqueraded with --masquerade-all, else sources
 * that are not local when a local detector exists (kube-proxy masquerades
 * off-cluster traffic to a ClusterIP).
 *
 * External frontends (NodePort on the selected node addresses, externalIPs,
 * LoadBalancer ingress IPs): externalTrafficPolicy Local uses the local set
 * with no masquerade (client IP preserved, KEP "Preserve source IP"),
 * Cluster the cluster set with KPX_SVC_F_MASQ_NONLOCAL (KPX_SVC_F_MASQ
 * with --masquerade-all).  loadBalancerSourceRanges apply to the LB IPs
 * only, not the NodePorts (#33586).  The 127.0.0.1 NodePort is always
 * masqueraded and uses the cluster set (host traffic goes to the cluster
 * policy chain in kube-proxy).
 */
static int port_frontends(struct ctx *x, struct fevec *fv, const char *owner,
			  const struct kpx_api_service *svc,
			  const struct kpx_api_port *sp,
			  const struct kpx_api_ip *cip, const struct epsets *es)
{
	const struct settings *cfg = &x->m->cfg;
	int fam = cip->family;
	const struct kpx_backend *ibe = svc->itp_local ? es->local : es->cluster;
	size_t nibe = svc->itp_local ? es->nlocal : es->ncluster;
	const struct kpx_backend *ebe = svc->etp_local ? es->local : es->cluster;
	size_t nebe = svc->etp_local ? es->nlocal : es->ncluster;
	uint32_t iflags, eflags;
	struct kpx_cidr *ranges = NULL;
	size_t nranges = 0, i;
	int r;

	iflags = cfg->masquerade_all ? KPX_SVC_F_MASQ :
		 detect_local(&x->nc_cfg, fam) ? KPX_SVC_F_MASQ_NONLOCAL : 0;
	iflags |= empty_flag(nibe, es->has_any);
	if (svc->etp_local)
		eflags = empty_flag(nebe, es->has_any);
	else
		eflags = cfg->masquerade_all ? KPX_SVC_F_MASQ :
					       KPX_SVC_F_MASQ_NONLOCAL;

	r = emit(fv, owner, fam, sp, &cip->addr, sp->port, iflags, ibe, nibe,
		 NULL, 0);
	if (r)
		return r;
	if (sp->node_port && svc->type != KPX_API_CLUSTER_IP) {
		for (i = 0; i < x->nnp && !r; i++) {
			const struct np_addr *a = &x->np[i];

			if (a->ip.family != fam)
				continue;
			if (a->localhost)
				r = emit(fv, owner, fam, sp, &a->ip.addr,
					 sp->node_port, KPX_SVC_F_MASQ,
					 es->cluster, es->ncluster, NULL, 0);
			else
				r = emit(fv, owner, fam, sp, &a->ip.addr,
					 sp->node_port, eflags, ebe, nebe,
					 NULL, 0);
		}
	}
	for (i = 0; i < svc->nexternal_ips && !r; i++)
		if (svc->external_ips[i].family == fam)
			r = emit(fv, owner, fam, sp, &svc->external_ips[i].addr,
				 sp->port, eflags, ebe, nebe, NULL, 0);
	if (!r && svc->nlb_ips)
		r = lb_ranges(x, svc, fam, &ranges, &nranges);
	for (i = 0; i < svc->nlb_ips && !r; i++)
		if (svc->lb_ips[i].family == fam)
			r = emit(fv, owner, fam, sp, &svc->lb_ips[i].addr,
				 sp->port, eflags, ebe, nebe, ranges, nranges);
	free(ranges);
	return r;
}

static int frontend_cmp(const void *a, const void *b)
{
	const struct frontend *x = a, *y = b;
	int r = kpx_service_key_cmp(&x->s, &y->s);

	return r ? r : strcmp(x->owner, y->owner);
}

static void ctx_init(struct ctx *x, const struct kpx_model *m)
{
	const struct kpx_api_node *nd = own_node(m);

	memset(x, 0, sizeof(*x));
	x->m = m;
	x->zone = nd && nd->zone ? nd->zone : "";
	ns_config(&m->cfg, nd, &x->nc_cfg);
	x->nnp = nodeport_addrs(&m->cfg, nd, x->np);
}

static int service_frontends(struct ctx *x, struct fevec *fv,
			     const struct hnode *node)
{
	const struct kpx_api_service *svc = &((const struct m_service *)node)->o;
	const struct slice_group *g;
	struct epsets es = { 0 };
	size_t j, k;
	int r = 0;

	if (svc->skip || !svc->nports)
		return 0;
	g = (const struct slice_group *)ht_find(&x->m->groups, node->key);
	for (j = 0; j < svc->nips && !r; j++) {
		for (k = 0; k < svc->nports && !r; k++) {
			r = gather(x, g, &svc->ports[k], svc->ips[j].family);
			if (!r)
				r = categorize(x, svc, &es);
			if (!r)
				r = port_frontends(x, fv, node->key, svc,
						   &svc->ports[k], &svc->ips[j],
						   &es);
			free(es.cluster);
			free(es.local);
			memset(&es, 0, sizeof(es));
		}
	}
	return r;
}

int kpx_model_desired(struct kpx_model *m, struct kpx_service **out, size_t *n)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	struct fevec fv = { 0 };
	struct kpx_service *res;
	struct hnode *node, *tmp;
	struct ctx x;
	size_t i, nres = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	ctx_init(&x, m);
	ht_for_each_safe(t, i, node, tmp) {
		r = service_frontends(&x, &fv, node);
		if (r)
			break;
	}
	free(x.c);
	if (r)
		goto fail;
	qsort(fv.v, fv.n, sizeof(*fv.v), frontend_cmp);
	res = calloc(fv.n ? fv.n : 1, sizeof(*res));
	if (!res) {
		r = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < fv.n; i++) {
		if (nres && !kpx_service_key_cmp(&res[nres - 1], &fv.v[i].s)) {
			char buf[KPX_SERVICE_STRLEN];

			kpx_dbg(2, COMP, "%s of %s already used by another frontend, ignored",
				kpx_service_str(&fv.v[i].s, buf, sizeof(buf)),
				fv.v[i].owner);
			kpx_service_free(&fv.v[i].s);
			continue;
		}
		res[nres++] = fv.v[i].s;
	}
	free(fv.v);
	m->dirty = false;
	*out = res;
	*n = nres;
	return 0;
fail:
	fevec_free(&fv);
	return r;
}

/* ---- Health checks ------------------------------------------------------ */

static int addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(union kpx_api_addr));
}

/* True when slice @sl carries a port of Service @svc (so its endpoints are
 * endpoints of the Service in kube-proxy's EndpointsMap). */
static bool slice_serves(const struct kpx_api_slice *sl,
			 const struct kpx_api_service *svc)
{
	size_t i;

	for (i = 0; i < svc->nports; i++)
		if (slice_port(sl, svc->ports[i].name, svc->ports[i].protocol))
			return true;
	return false;
}

/*
 * kube-proxy's EndpointsMap.LocalReadyEndpoints(): the distinct addresses
 * of the Service's endpoints on this node that are ready (terminating ones
 * do not count: the LB must stop sending new flows, KEP-1669), in the
 * Service's primary family.
 */
static long local_ready(const struct kpx_model *m, const struct hnode *node,
			const struct kpx_api_service *svc)
{
	const struct slice_group *g = (const struct slice_group *)
				      ht_find(&m->groups, node->key);
	const char *host = m->cfg.hostname;
	const struct m_slice *sl;
	union kpx_api_addr *v = NULL, *nv;
	size_t n = 0, cap = 0, i, uniq = 0;

	for (sl = g ? g->head : NULL; sl && host[0]; sl = sl->gnext) {
		/* one family, the Service's first: in kube-proxy each family's
		 * proxier opens the port and the first one serves it */
		if (sl->o.family != svc->ips[0].family ||
		    !slice_serves(&sl->o, svc))
			continue;
		for (i = 0; i < sl->o.neps; i++) {
			const struct kpx_api_endpoint *e = &sl->o.eps[i];

			if (!e->ready || !e->node_name || strcmp(e->node_name, host))
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = e->addr;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), addr_cmp);
	for (i = 0; i < n; i++)
		uniq += !i || addr_cmp(&v[i - 1], &v[i]);
	free(v);
	return (long)uniq;
}

int kpx_model_healthchecks(const struct kpx_model *m,
			   struct kpx_hc_service **out, size_t *n)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	struct kpx_hc_service *v = NULL, *nv;
	struct hnode *node, *tmp;
	size_t i, cnt = 0, cap = 0;
	const char *slash;
	long local;

	*out = NULL;
	*n = 0;
	ht_for_each_safe(t, i, node, tmp) {
		const struct kpx_api_service *svc = &((struct m_service *)node)->o;

		if (svc->skip || !svc->hc_node_port)
			continue;
		local = local_ready(m, node, svc);
		if (local < 0)
			goto nomem;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		memset(&v[cnt], 0, sizeof(v[cnt]));
		slash = strchr(node->key, '/');
		snprintf(v[cnt].namespace, sizeof(v[cnt].namespace), "%.*s",
			 (int)(slash - node->key), node->key);
		snprintf(v[cnt].name, sizeof(v[cnt].name), "%s", slash + 1);
		v[cnt].port = svc->hc_node_port;
		v[cnt].local_endpoints = (unsigned int)local;
		v[cnt].healthy = true;
		cnt++;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), kpx_hc_service_cmp);
	*out = v;
	*n = cnt;
	return 0;
nomem:
	free(v);
	return -ENOMEM;
}

size_t kpx_model_nodeport_ips(const struct kpx_model *m,
			      char (*out)[INET6_ADDRSTRLEN], size_t max)
{
	struct np_addr v[NP_ADDRS_MAX];
	size_t n = nodeport_addrs(&m->cfg, own_node(m), v), i, k = 0;

	for (i = 0; i < n && k < max; i++)
		if (!v[i].localhost &&
		    inet_ntop(v[i].ip.family, &v[i].ip.addr, out[k],
			      INET6_ADDRSTRLEN))
			k++;
	return k;
}
