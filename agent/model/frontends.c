// SPDX-License-Identifier: GPL-2.0-only
/*
 * The frontends of the desired state computed from the model's cache, with
 * kube-proxy's semantics (see model.h): each Service's frontends and
 * backends with their flags and source ranges, and the endpoint selection
 * that feeds them (kube-proxy's pkg/proxy/topology.go).  The namespace
 * settings and NodePort addresses are node.c's, the health checks
 * health.c's.  Pure: no I/O.
 *
 * Over 600 lines as one concern: a Service's EndpointSlices to its
 * frontends is one computation (ports, endpoint selection, then one
 * frontend per address and port); kept whole so that an endpoint change
 * crosses one file of the model (README.md, "The walk").
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
#include "base/addr.h"
#include "base/log.h"
#include "model/model_priv.h"

#define COMP "model"

_Static_assert(sizeof(union kpx_api_addr) ==
	       sizeof(((struct kpx_backend *)0)->addr),
	       "address unions differ");

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
 * topologyModeFromHints(): decided from the hints alone (the EndpointSlice
 * controller writes them only for Services that ask: trafficDistribution,
 * topology-mode Auto); only ready endpoints count.  Node hints (forNodes,
 * trafficDistribution PreferSameNode, KEP-3015) apply when every ready
 * endpoint has one and one is for this node; else zone hints (forZones,
 * KEP-2433 / PreferClose, PreferSameZone, KEP-4444) when every ready
 * endpoint has one and one is for this node's zone.  Else (an unhinted
 * endpoint, nothing for our zone, a node without a zone label, no ready
 * endpoint) every endpoint is used.
 */
static enum topo topo_mode(const struct ctx *x)
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
	if (node_all && node_hit)
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
static int categorize(const struct ctx *x, struct epsets *es)
{
	enum topo t = topo_mode(x);
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
uint16_t model_slice_port(const struct kpx_api_slice *sl, const char *name,
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
		port = model_slice_port(&sl->o, sp->name, sp->protocol);
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

/* A frontend being built, with the Service it came from and its rank in
 * the order of computation (for ties). */
struct frontend {
	struct kpx_service s;
	const char *owner;
	size_t idx;
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

/*
 * Adds a frontend of kind @kind (KPX_SVC_KIND_*), named after its Service
 * @owner ("namespace/name") and port as kube-proxy's ServicePortName
 * ("namespace/name:port", no ":port" for an unnamed port), with copies of
 * @be and @ranges (of @family only).
 */
static int emit(struct fevec *fv, const char *owner, int family,
		const struct kpx_api_port *sp, uint8_t kind,
		const union kpx_api_addr *addr, uint16_t port, uint32_t flags,
		const struct kpx_backend *be, size_t nbe,
		const struct kpx_cidr *ranges, size_t nranges)
{
	struct kpx_service *s;
	size_t i, nlen;

	if (fv->n == fv->cap) {
		size_t cap = fv->cap ? 2 * fv->cap : 16;
		struct frontend *v = realloc(fv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		fv->v = v;
		fv->cap = cap;
	}
	s = &fv->v[fv->n].s;
	memset(s, 0, sizeof(*s));
	fv->v[fv->n].owner = owner;
	fv->v[fv->n].idx = fv->n;
	fv->n++;
	s->family = family;
	s->protocol = sp->protocol;
	memcpy(&s->addr, addr, sizeof(s->addr));
	s->port = port;
	s->flags = flags;
	s->kind = kind;
	nlen = strlen(owner) + 1 + strlen(sp->name) + 1;
	s->name = malloc(nlen);
	if (!s->name)
		return -ENOMEM;
	snprintf(s->name, nlen, "%s%s%s", owner, sp->name[0] ? ":" : "", sp->name);
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

/*
 * The frontend just emitted, if KPX_SVC_F_EXT_LOCAL, names the
 * Service's ClusterIP frontend (@cip, @sp's port): the module serves local
 * clients and the node itself with it (kube-proxy short-circuits in-cluster
 * traffic to an eTP Local external address to the cluster chain).
 */
static void set_cluster(struct fevec *fv, const struct kpx_api_ip *cip,
			const struct kpx_api_port *sp)
{
	struct kpx_service *s = &fv->v[fv->n - 1].s;

	if (!(s->flags & KPX_SVC_F_EXT_LOCAL))
		return;
	memcpy(&s->cluster_addr, &cip->addr, kpx_addr_len(s->family));
	s->cluster_port = sp->port;
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
	const struct kpx_api_ip *nip = model_primary_ip(model_own_node(x->m), family);
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
 * off-cluster traffic to a ClusterIP); flagged KPX_SVC_F_CLUSTER_IP so that
 * the module refuses the ClusterIP's undefined ports, as kube-proxy's
 * nftables mode does.
 *
 * External frontends (NodePort on the selected node addresses, externalIPs,
 * LoadBalancer ingress IPs): externalTrafficPolicy Local uses the local set
 * with no masquerade (client IP preserved, KEP "Preserve source IP"),
 * Cluster the cluster set with KPX_SVC_F_MASQ, local sources included.
 * loadBalancerSourceRanges apply to the LB IPs only, not the NodePorts
 * (the API field's scope: the load balancer's ingress).  The 127.0.0.1
 * NodePort is always masqueraded and uses the cluster set (host traffic
 * goes to the cluster policy chain in kube-proxy).  The other external frontends of an eTP
 * Local Service carry KPX_SVC_F_EXT_LOCAL and the ClusterIP frontend's
 * key: local clients and the node itself are served as by the ClusterIP
 * (all endpoints), only external clients are limited to the local set
 * (kube-proxy's "pod traffic for svc external destinations" and "masquerade
 * LOCAL traffic" rules).
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
		 model_detect_local(&x->nc_cfg, fam) ? KPX_SVC_F_MASQ_NONLOCAL : 0;
	iflags |= empty_flag(nibe, es->has_any);
	/* an undefined port of the ClusterIP is refused (nftables mode) */
	iflags |= KPX_SVC_F_CLUSTER_IP;
	/*
	 * eTP Cluster: every connection to an external destination is
	 * masqueraded, a local pod's too, since the endpoint may be on
	 * another node (kube-proxy's external chain jumps to its masquerade
	 * mark unconditionally for a Service whose external policy is not
	 * Local: pkg/proxy/nftables/proxier.go, iptables/proxier.go).
	 */
	if (svc->etp_local)
		eflags = empty_flag(nebe, es->has_any) | KPX_SVC_F_EXT_LOCAL;
	else
		eflags = KPX_SVC_F_MASQ;

	r = emit(fv, owner, fam, sp, KPX_SVC_KIND_CLUSTER_IP, &cip->addr,
		 sp->port, iflags, ibe, nibe, NULL, 0);
	if (r)
		return r;
	if (sp->node_port && svc->type != KPX_API_CLUSTER_IP) {
		for (i = 0; i < x->nnp && !r; i++) {
			const struct np_addr *a = &x->np[i];

			if (a->ip.family != fam)
				continue;
			if (a->localhost)
				r = emit(fv, owner, fam, sp,
					 KPX_SVC_KIND_NODE_PORT, &a->ip.addr,
					 sp->node_port, KPX_SVC_F_MASQ,
					 es->cluster, es->ncluster, NULL, 0);
			else
				r = emit(fv, owner, fam, sp,
					 KPX_SVC_KIND_NODE_PORT, &a->ip.addr,
					 sp->node_port, eflags, ebe, nebe,
					 NULL, 0);
			if (!r && !a->localhost)
				set_cluster(fv, cip, sp);
		}
	}
	for (i = 0; i < svc->nexternal_ips && !r; i++) {
		if (svc->external_ips[i].family != fam)
			continue;
		r = emit(fv, owner, fam, sp, KPX_SVC_KIND_EXTERNAL_IP,
			 &svc->external_ips[i].addr,
			 sp->port, eflags, ebe, nebe, NULL, 0);
		if (!r)
			set_cluster(fv, cip, sp);
	}
	if (!r && svc->nlb_ips)
		r = lb_ranges(x, svc, fam, &ranges, &nranges);
	for (i = 0; i < svc->nlb_ips && !r; i++) {
		if (svc->lb_ips[i].family != fam)
			continue;
		r = emit(fv, owner, fam, sp, KPX_SVC_KIND_LOAD_BALANCER,
			 &svc->lb_ips[i].addr,
			 sp->port, eflags, ebe, nebe, ranges, nranges);
		if (!r)
			set_cluster(fv, cip, sp);
	}
	free(ranges);
	return r;
}

static int frontend_cmp(const void *a, const void *b)
{
	const struct frontend *x = a, *y = b;
	int r = kpx_service_key_cmp(&x->s, &y->s);

	if (!r)
		r = strcmp(x->owner, y->owner);
	return r ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Sorts fv->v by key (then owner, then rank) and moves the first frontend
 * of each key into a new array *out (the others are freed; logged at --v
 * 2).  Empties @fv.  Returns 0 or -ENOMEM (@fv then freed).
 */
static int fevec_take_unique(struct fevec *fv, struct kpx_service **out,
			     size_t *n)
{
	struct kpx_service *res;
	size_t i, nres = 0;

	*out = NULL;
	*n = 0;
	if (fv->n)
		qsort(fv->v, fv->n, sizeof(*fv->v), frontend_cmp);
	res = calloc(fv->n ? fv->n : 1, sizeof(*res));
	if (!res) {
		fevec_free(fv);
		return -ENOMEM;
	}
	for (i = 0; i < fv->n; i++) {
		if (nres && !kpx_service_key_cmp(&res[nres - 1], &fv->v[i].s)) {
			char buf[KPX_SERVICE_STRLEN];

			kpx_dbg(2, COMP, "%s of %s already used by another frontend, ignored",
				kpx_service_str(&fv->v[i].s, buf, sizeof(buf)),
				fv->v[i].owner);
			kpx_service_free(&fv->v[i].s);
			continue;
		}
		res[nres++] = fv->v[i].s;
	}
	free(fv->v);
	memset(fv, 0, sizeof(*fv));
	if (!nres) {
		free(res);
		res = NULL;
	}
	*out = res;
	*n = nres;
	return 0;
}

static void ctx_init(struct ctx *x, const struct kpx_model *m)
{
	const struct kpx_api_node *nd = model_own_node(m);

	memset(x, 0, sizeof(*x));
	x->m = m;
	x->zone = nd && nd->zone ? nd->zone : "";
	model_ns_config(&m->cfg, nd, &x->nc_cfg);
	x->nnp = model_nodeport_addrs(m, nd, x->np);
}

/*
 * The scheduler (the Service's kpx.io/scheduler annotation, else
 * --scheduler; "random" is left implicit) and ClientIP affinity of the
 * frontends fv->v[first..] of one Service.
 */
static void set_sched(const struct ctx *x, struct fevec *fv, size_t first,
		      const struct kpx_api_service *svc)
{
	const char *sched = svc->scheduler[0] ? svc->scheduler :
			    x->m->cfg.scheduler;
	size_t i;

	if (!strcmp(sched, "random"))
		sched = "";
	for (i = first; i < fv->n; i++) {
		struct kpx_service *s = &fv->v[i].s;

		snprintf(s->scheduler, sizeof(s->scheduler), "%s", sched);
		s->affinity_timeout = svc->affinity_timeout;
	}
}

static int service_frontends(struct ctx *x, struct fevec *fv,
			     const struct hnode *node)
{
	const struct kpx_api_service *svc = &((const struct m_service *)node)->o;
	const struct slice_group *g;
	struct epsets es = { 0 };
	size_t j, k, first = fv->n;
	int r = 0;

	if (svc->skip || !svc->nports)
		return 0;
	g = (const struct slice_group *)ht_find(&x->m->groups, node->key);
	for (j = 0; j < svc->nips && !r; j++) {
		for (k = 0; k < svc->nports && !r; k++) {
			r = gather(x, g, &svc->ports[k], svc->ips[j].family);
			if (!r)
				r = categorize(x, &es);
			if (!r)
				r = port_frontends(x, fv, node->key, svc,
						   &svc->ports[k], &svc->ips[j],
						   &es);
			free(es.cluster);
			free(es.local);
			memset(&es, 0, sizeof(es));
		}
	}
	if (!r)
		set_sched(x, fv, first, svc);
	return r;
}

int kpx_model_desired(struct kpx_model *m, struct kpx_service **out, size_t *n)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	struct fevec fv = { 0 };
	struct hnode *node, *tmp;
	struct ctx x;
	size_t i;
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
	if (r) {
		fevec_free(&fv);
		return r;
	}
	r = fevec_take_unique(&fv, out, n);
	if (!r && !*out)
		*out = calloc(1, sizeof(**out));	/* as before: never NULL */
	if (!r && !*out)
		return -ENOMEM;
	if (!r)
		m->dirty = false;
	return r;
}

int kpx_model_service_frontends(const struct kpx_model *m, const char *name,
				struct kpx_service **out, size_t *n)
{
	const struct hnode *node = ht_find(&m->objs[KPX_KIND_SERVICE], name);
	struct fevec fv = { 0 };
	struct ctx x;
	int r;

	*out = NULL;
	*n = 0;
	if (!node)
		return 0;
	ctx_init(&x, m);
	r = service_frontends(&x, &fv, node);
	free(x.c);
	if (r) {
		fevec_free(&fv);
		return r;
	}
	return fevec_take_unique(&fv, out, n);
}

