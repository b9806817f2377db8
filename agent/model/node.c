// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node's side of the desired state, from its Node object and the
 * settings (see model.h): the namespace settings for KPX_CMD_SET_CONFIG
 * (what is local: --detect-local-mode), the NodePort addresses
 * (--nodeport-addresses, "primary" from the Node's addresses) and the own
 * Node's state.  Pure: no I/O.
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

/* ---- Namespace settings (KPX_CMD_SET_CONFIG) -------------------------- */

const struct kpx_api_node *model_own_node(const struct kpx_model *m)
{
	const struct hnode *n;

	if (!m->cfg.hostname[0])
		return NULL;
	n = ht_find(&m->objs[KPX_KIND_NODE], m->cfg.hostname);
	if (!n)
		n = m->last_node;
	return n ? &((const struct m_node *)n)->o : NULL;
}

/*
 * kube-proxy's --detect-local-mode (pkg/proxy/util/localdetector.go):
 * ClusterCIDR: sources in --cluster-cidr; NodeCIDR: in the Node's
 * spec.podCIDRs; BridgeInterface / InterfaceNamePrefix: arriving through
 * that interface.  Pure: @nd is the own Node or NULL.
 */
void model_ns_config(const struct settings *s, const struct kpx_api_node *nd,
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
	model_ns_config(&m->cfg, model_own_node(m), out);
}

/*
 * kube-proxy's localDetector.IsImplemented() for one family: a detector
 * that can tell pod traffic apart exists.
 */
bool model_detect_local(const struct kpx_ns_config *nc, int family)
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
const struct kpx_api_ip *model_primary_ip(const struct kpx_api_node *nd,
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

/* Addresses that are never NodePort addresses of their own: loopback
 * (127.0.0.1 comes from a CIDR holding it, see below; ::1 is never served,
 * IPv6 has no route_localnet) and IPv6 link-local (no scope in a frontend). */
static bool np_skipped(int family, const union kpx_api_addr *a)
{
	if (family == AF_INET)
		return (ntohl(a->v4.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&a->v6) || IN6_IS_ADDR_LINKLOCAL(&a->v6);
}

/*
 * --nodeport-addresses: "primary" (the nftables default) gives the Node's
 * primary IP per family (the Node object is the source of truth, as
 * kube-proxy's nftables default, KEP-3866).  CIDRs select, per
 * family, the node's interface addresses inside them (kube-proxy's
 * NodePortAddresses.GetNodeIPs(): the host's addresses, not the Node's, so
 * an address added at run time, a keepalived VIP, is served and one
 * removed is dropped); until the interface addresses are known (dry run,
 * tests) the Node's InternalIP/ExternalIP addresses inside them.  A CIDR
 * holding 127.0.0.1 also gives the IPv4 localhost NodePort of
 * kube-proxy's iptables mode (route_localnet; always masqueraded), unless
 * iptables.localhostNodePorts is false.
 */
size_t model_nodeport_addrs(const struct kpx_model *m,
			    const struct kpx_api_node *nd, struct np_addr *v)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	const struct settings *s = &m->cfg;
	const struct kpx_api_ip *ip;
	struct kpx_api_ip lo, a;
	size_t n = 0, i;
	int j, f;

	if (s->nodeport_primary) {
		for (f = 0; f < 2; f++) {
			ip = model_primary_ip(nd, fams[f]);
			if (ip)
				np_add(v, &n, ip, false);
		}
	}
	if (m->local_known) {
		for (i = 0; nd && i < m->nlocal; i++) {
			memset(&a, 0, sizeof(a));
			a.family = m->local[i].family;
			memcpy(&a.addr, &m->local[i].addr, kpx_addr_len(a.family));
			if (np_skipped(a.family, &a.addr))
				continue;
			for (j = 0; j < s->n_nodeport_cidrs; j++)
				if (kpx_cidr_contains(&s->nodeport_cidrs[j],
						      a.family, &a.addr))
					np_add(v, &n, &a, false);
		}
	} else {
		for (i = 0; nd && i < nd->naddrs; i++)
			for (j = 0; j < s->n_nodeport_cidrs; j++)
				if (kpx_cidr_contains(&s->nodeport_cidrs[j],
						      nd->addrs[i].ip.family,
						      &nd->addrs[i].ip.addr))
					np_add(v, &n, &nd->addrs[i].ip, false);
	}
	memset(&lo, 0, sizeof(lo));
	lo.family = AF_INET;
	lo.addr.v4.s_addr = htonl(INADDR_LOOPBACK);
	for (j = 0; nd && !s->no_localhost_nodeports && j < s->n_nodeport_cidrs; j++)
		if (kpx_cidr_contains(&s->nodeport_cidrs[j], AF_INET, &lo.addr))
			np_add(v, &n, &lo, true);
	return n;
}

/* Whether --nodeport-addresses holds 0.0.0.0/0 and ::/0 (all). */
static bool np_match_all(const struct settings *s)
{
	bool v4 = false, v6 = false;
	int j;

	for (j = 0; j < s->n_nodeport_cidrs; j++) {
		if (s->nodeport_cidrs[j].len)
			continue;
		v4 = v4 || s->nodeport_cidrs[j].family == AF_INET;
		v6 = v6 || s->nodeport_cidrs[j].family == AF_INET6;
	}
	return v4 && v6;
}

/* The NodePort address set as it is now, for change detection. */
static size_t np_current(const struct kpx_model *m, struct np_addr *v)
{
	size_t n;

	memset(v, 0, NP_ADDRS_MAX * sizeof(*v));
	n = model_nodeport_addrs(m, model_own_node(m), v);
	return n;
}

int kpx_model_set_local_addrs(struct kpx_model *m, const struct kpx_cidr *v,
			      size_t n)
{
	struct np_addr before[NP_ADDRS_MAX], after[NP_ADDRS_MAX];
	size_t nb = np_current(m, before), na;
	struct kpx_cidr *c = NULL;
	bool same = m->local_known && n == m->nlocal &&
		    (!n || !memcmp(v, m->local, n * sizeof(*v)));

	if (same)
		return 0;
	if (n) {
		c = malloc(n * sizeof(*c));
		if (!c)
			return -ENOMEM;
		memcpy(c, v, n * sizeof(*c));
	}
	free(m->local);
	m->local = c;
	m->nlocal = n;
	m->local_known = true;
	na = np_current(m, after);
	/* a sync even so: it binds the health checks to an address that
	 * has just appeared (the Node's new primary IP, before the host
	 * had it) */
	m->dirty = true;
	if (na == nb && !memcmp(before, after, na * sizeof(after[0])))
		return 0;
	model_dirty_everything(m);
	return 1;
}

size_t kpx_model_nodeport_ips(const struct kpx_model *m,
			      char (*out)[INET6_ADDRSTRLEN], size_t max)
{
	struct np_addr v[NP_ADDRS_MAX];
	size_t n, i, k = 0;

	/* all of both families: one wildcard (dual-stack) server */
	if (np_match_all(&m->cfg))
		return 0;
	n = model_nodeport_addrs(m, model_own_node(m), v);
	for (i = 0; i < n && k < max; i++)
		if (!v[i].localhost &&
		    inet_ntop(v[i].ip.family, &v[i].ip.addr, out[k],
			      INET6_ADDRSTRLEN))
			k++;
	return k;
}

bool kpx_model_own_node(const struct kpx_model *m, size_t *naddrs,
			size_t *npod_cidrs)
{
	const struct kpx_api_node *nd = model_own_node(m);

	*naddrs = nd ? nd->naddrs : 0;
	*npod_cidrs = nd ? nd->npod_cidrs : 0;
	return nd != NULL;
}

bool kpx_model_localhost_nodeports(const struct kpx_model *m)
{
	return !m->cfg.no_localhost_nodeports &&
	       kpx_cidrs_hold_localhost(m->cfg.nodeport_cidrs, m->cfg.n_nodeport_cidrs);
}

