// SPDX-License-Identifier: GPL-2.0-only
/*
 * kube-proxy's IPVS mode state (see ipvs_kubeproxy.h): the pure part,
 * "ipset save" read; ipvs_kubeproxy_cleanup() (ipvs_priv.h) removes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "base/log.h"
#include "dp/ipvs/ipvs_exec.h"
#include "dp/ipvs/ipvs_kubeproxy.h"
#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_priv.h"

/* pkg/proxy/ipvs/ipset.go's names, without "KUBE-" (IPv6: "KUBE-6-" + these). */
static const char *const sets[] = {
	"LOOP-BACK", "CLUSTER-IP", "EXTERNAL-IP", "EXTERNAL-IP-LOCAL", "LOAD-BALANCER",
	"LOAD-BALANCER-LOCAL", "LOAD-BALANCER-FW", "LOAD-BALANCER-SOURCE-IP",
	"LOAD-BALANCER-SOURCE-CIDR", "NODE-PORT-TCP", "NODE-PORT-LOCAL-TCP", "NODE-PORT-UDP",
	"NODE-PORT-LOCAL-UDP", "NODE-PORT-SCTP-HASH", "NODE-PORT-LOCAL-SCTP-HASH",
	"HEALTH-CHECK-NODE-PORT", "IPVS-IPS",
};

/* @name without its "KUBE-" / "KUBE-6-" prefix, or NULL. */
static const char *bare(const char *name)
{
	if (!strncmp(name, "KUBE-6-", 7))
		return name + 7;
	if (!strncmp(name, "KUBE-", 5))
		return name + 5;
	return NULL;
}

bool kpx_ipvs_kubeproxy_set(const char *name)
{
	const char *b = bare(name);
	size_t i;

	for (i = 0; b && i < sizeof(sets) / sizeof(sets[0]); i++)
		if (!strcmp(b, sets[i]))
			return true;
	return false;
}

static int push_port(struct kpx_kube_sets *s, uint8_t proto, long port)
{
	void *p;

	if (port <= 0 || port > 65535)
		return 0;
	p = realloc(s->ports, (s->nports + 1) * sizeof(*s->ports));
	if (!p)
		return -ENOMEM;
	s->ports = p;
	s->ports[s->nports].protocol = proto;
	s->ports[s->nports++].port = (uint16_t)port;
	return 0;
}

/* A member "add SET VALUE" of a NodePort set: a port, or "IP,sctp:PORT". */
static int add_member(struct kpx_kube_sets *s, const char *set, const char *val)
{
	const char *b = bare(set), *c;

	if (!b || strncmp(b, "NODE-PORT-", 10))
		return 0;
	if (strstr(b, "SCTP")) {
		c = strstr(val, ",sctp:");
		return c ? push_port(s, IPPROTO_SCTP, strtol(c + 6, NULL, 10)) : 0;
	}
	return push_port(s, strstr(b, "UDP") ? IPPROTO_UDP : IPPROTO_TCP, strtol(val, NULL, 10));
}

int kpx_kube_sets_parse(const char *save, struct kpx_kube_sets *out)
{
	char *text = strdup(save ? save : ""), *l, *sp = NULL;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (!text)
		return -ENOMEM;
	for (l = strtok_r(text, "\n", &sp); l && !r; l = strtok_r(NULL, "\n", &sp)) {
		char cmd[16], set[64], val[128] = "";

		if (sscanf(l, "%15s %63s %127s", cmd, set, val) < 2 || !kpx_ipvs_kubeproxy_set(set))
			continue;
		if (!strcmp(cmd, "create")) {
			void *p = realloc(out->names, (out->nnames + 1) * sizeof(*out->names));

			if (!p) {
				r = -ENOMEM;
				break;
			}
			out->names = p;
			snprintf(out->names[out->nnames++], sizeof(out->names[0]), "%s", set);
		} else if (!strcmp(cmd, "add")) {
			r = add_member(out, set, val);
		}
	}
	free(text);
	if (r)
		kpx_kube_sets_free(out);
	return r;
}

void kpx_kube_sets_free(struct kpx_kube_sets *s)
{
	free(s->names);
	free(s->ports);
	memset(s, 0, sizeof(*s));
}

bool kpx_kube_sets_nodeport(const struct kpx_kube_sets *s, uint8_t protocol, uint16_t port)
{
	size_t i;

	for (i = 0; i < s->nports; i++)
		if (s->ports[i].protocol == protocol && s->ports[i].port == port)
			return true;
	return false;
}

static bool ip_in(const struct kpx_ipvs_ip *v, size_t n, const struct kpx_ipvs_svc *s)
{
	struct kpx_ipvs_ip ip = { .family = s->family, .addr.v6 = s->addr.v6 };

	if (s->family == AF_INET)
		memset((char *)&ip.addr + 4, 0, sizeof(ip.addr) - 4);
	return n && bsearch(&ip, v, n, sizeof(*v), kpx_ipvs_ip_cmp);
}

int ipvs_kubeproxy_cleanup(struct dp_ipvs *v)
{
	const char *sargv[] = { "ipset", "save", NULL };
	struct kpx_ipvs_ip *on = NULL, *other = NULL;
	struct kpx_kube_sets ks = { 0 };
	struct kpx_ipvs_svc *svcs = NULL;
	size_t non = 0, nother = 0, nsvc = 0, i, ndel = 0;
	char *save = NULL, err[400];
	int ifindex, r, first = 0;

	if (ipvs_module_loaded("ip_set") && !kpx_ipvs_run(sargv, NULL, &save, NULL, 0) &&
	    (r = kpx_kube_sets_parse(save, &ks)))
		first = r;
	free(save);
	ifindex = kpx_ipvs_link_index_of(v->rt, KPX_KUBE_IPVS_LINK);
	r = kpx_ipvs_addrs(v->rt, ifindex > 0 ? ifindex : 0, &on, &non, &other, &nother);
	if (r && !first)
		first = kpx_dp_fail(&v->dp, r, "listing addresses: %s", strerror(-r));
	if (ifindex <= 0)
		non = 0;	/* no kube-ipvs0: nothing is on it */
	if (v->ipvs && !r && !(r = kpx_ipvs_svc_dump(v->ipvs, &svcs, &nsvc))) {
		for (i = 0; i < nsvc; i++) {
			if (!ip_in(on, non, &svcs[i]) &&
			    !(ip_in(other, nother, &svcs[i]) &&
			      kpx_kube_sets_nodeport(&ks, svcs[i].protocol, svcs[i].port)))
				continue;
			r = kpx_ipvs_svc_del(v->ipvs, &svcs[i]);
			if (r && r != -ESRCH && !first)
				first = kpx_dp_fail(&v->dp, r, "IPVS delete service: %s", strerror(-r));
			ndel++;
		}
	}
	if (ifindex > 0 && (r = kpx_ipvs_link_delete_name(v->rt, KPX_KUBE_IPVS_LINK)) && !first)
		first = kpx_dp_fail(&v->dp, r, "deleting %s: %s", KPX_KUBE_IPVS_LINK, strerror(-r));
	if (ks.nnames) {
		const char *dargv[] = { "ipset", "destroy", NULL, NULL };

		for (i = 0; i < ks.nnames; i++) {
			dargv[2] = ks.names[i];
			r = kpx_ipvs_run(dargv, NULL, NULL, err, sizeof(err));
			if (r && !first)
				first = kpx_dp_fail(&v->dp, r, "ipset destroy %s: %s", ks.names[i], err);
		}
	}
	if (ndel || ifindex > 0 || ks.nnames)
		kpx_info("dataplane", "cleanup: removed kube-proxy's IPVS mode state: %zu IPVS services (on %s or its NodePorts), %s%s, %zu ipsets",
			 ndel, KPX_KUBE_IPVS_LINK, ifindex > 0 ? "" : "no ", KPX_KUBE_IPVS_LINK,
			 ks.nnames);
	kpx_kube_sets_free(&ks);
	free(on);
	free(other);
	free(svcs);
	return first;
}
