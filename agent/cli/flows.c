// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl flows' grouping of conntrack entries (see flows.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "base/addr.h"
#include "cli/flows.h"

int kpx_flow_filter_parse(const char *arg, struct kpx_flow_filter *f)
{
	memset(f, 0, sizeof(*f));
	if (!arg)
		return 0;
	if (!kpx_hostport_parse(arg, &f->family, &f->addr, &f->port)) {
		f->by_addr = true;
		return 0;
	}
	/* namespace/name[:port]: one '/', both parts not empty */
	{
		const char *slash = strchr(arg, '/');

		if (!slash || slash == arg || !slash[1] || slash[1] == ':' ||
		    strchr(slash + 1, '/'))
			return -EINVAL;
	}
	f->service = arg;
	return 0;
}

bool kpx_flow_filter_match(const struct kpx_flow_filter *f,
			   const struct kpx_service *fe)
{
	size_t len;

	if (!f)
		return true;
	if (f->by_addr)
		return fe->family == f->family && fe->port == f->port &&
		       !memcmp(&fe->addr, &f->addr, kpx_addr_len(f->family));
	if (!f->service)
		return true;
	if (!fe->name)
		return false;
	if (!strcmp(fe->name, f->service))
		return true;
	/* "ns/name" selects every port: "ns/name:port" names */
	len = strlen(f->service);
	return !strchr(f->service, ':') &&
	       !strncmp(fe->name, f->service, len) && fe->name[len] == ':';
}

const struct kpx_service *kpx_flow_frontend(const struct kpx_service *v,
					    size_t n, const struct kpx_flow *fl)
{
	struct kpx_service key = { 0 };
	long i;

	/* DNAT by the module, nftables or iptables; IPVS changes the reply
	 * tuple only (the backend answers) */
	if (!(fl->status & IPS_DST_NAT) &&
	    (!memcmp(&fl->be, &fl->dst, kpx_addr_len(fl->family)) &&
	     fl->be_port == fl->dport))
		return NULL;
	key.family = fl->family;
	key.protocol = fl->protocol;
	memcpy(&key.addr, &fl->dst, kpx_addr_len(fl->family));
	key.port = fl->dport;
	i = kpx_service_find(v, n, &key);
	return i >= 0 ? &v[i] : NULL;
}

static int be_cmp(const struct kpx_flow_backend *b,
		  const union kpx_flow_addr *a, uint16_t port)
{
	int c = memcmp(&b->addr, a, sizeof(*a));

	return c ? c : (int)b->port - (int)port;
}

/* Client order: source address, then port. */
static int flow_cmp(const void *pa, const void *pb)
{
	const struct kpx_flow *a = *(const struct kpx_flow *const *)pa;
	const struct kpx_flow *b = *(const struct kpx_flow *const *)pb;
	int c = memcmp(&a->src, &b->src, sizeof(a->src));

	return c ? c : (int)a->sport - (int)b->sport;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct kpx_flow_group *a = pa, *b = pb;

	return a->fe < b->fe ? -1 : a->fe > b->fe;
}

/* The backend @fl went to in @g, added (sorted) when new; NULL: ENOMEM. */
static struct kpx_flow_backend *group_backend(struct kpx_flow_group *g,
					      const struct kpx_flow *fl)
{
	struct kpx_flow_backend *v, *b;
	struct kpx_backend key = { 0 };
	size_t lo = 0, hi = g->nbackends;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = be_cmp(&g->backends[mid], &fl->be, fl->be_port);

		if (!c)
			return &g->backends[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	v = realloc(g->backends, (g->nbackends + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g->backends = v;
	memmove(&v[lo + 1], &v[lo], (g->nbackends - lo) * sizeof(*v));
	g->nbackends++;
	b = &v[lo];
	memset(b, 0, sizeof(*b));
	b->addr = fl->be;
	b->port = fl->be_port;
	memcpy(&key.addr, &fl->be, sizeof(key.addr));
	key.port = fl->be_port;
	b->current = g->fe->nbackends &&
		     bsearch(&key, g->fe->backends, g->fe->nbackends,
			     sizeof(key), kpx_backend_cmp);
	return b;
}

int kpx_flow_group(const struct kpx_service *v, size_t n,
		   const struct kpx_flow *flows, size_t nflows,
		   const struct kpx_flow_filter *f, struct kpx_flow_group **out,
		   size_t *nout)
{
	struct kpx_flow_group *g;
	long *slot;
	size_t ng = 0, i, j;

	*out = NULL;
	*nout = 0;
	slot = malloc((n ? n : 1) * sizeof(*slot));
	g = calloc(n ? n : 1, sizeof(*g));
	if (!slot || !g)
		goto nomem;
	/* a filter names its frontends even without flows */
	for (i = 0; i < n; i++) {
		slot[i] = -1;
		if (f && (f->service || f->by_addr) &&
		    kpx_flow_filter_match(f, &v[i])) {
			g[ng].fe = &v[i];
			slot[i] = (long)ng++;
		}
	}
	for (i = 0; i < nflows; i++) {
		const struct kpx_service *fe =
			kpx_flow_frontend(v, n, &flows[i]);
		struct kpx_flow_backend *b;
		const struct kpx_flow **fv;
		size_t k;

		if (!fe || !kpx_flow_filter_match(f, fe))
			continue;
		k = (size_t)(fe - v);
		if (slot[k] < 0) {
			g[ng].fe = fe;
			slot[k] = (long)ng++;
		}
		b = group_backend(&g[slot[k]], &flows[i]);
		if (!b)
			goto nomem;
		fv = realloc(b->flows, (b->nflows + 1) * sizeof(*fv));
		if (!fv)
			goto nomem;
		b->flows = fv;
		fv[b->nflows++] = &flows[i];
	}
	free(slot);
	slot = NULL;
	/* frontend order: the caller's (key) order */
	qsort(g, ng, sizeof(*g), group_cmp);
	for (i = 0; i < ng; i++)
		for (j = 0; j < g[i].nbackends; j++)
			qsort(g[i].backends[j].flows, g[i].backends[j].nflows,
			      sizeof(*g[i].backends[j].flows), flow_cmp);
	*out = g;
	*nout = ng;
	return 0;
nomem:
	free(slot);
	kpx_flow_groups_free(g, n);
	return -ENOMEM;
}

void kpx_flow_groups_free(struct kpx_flow_group *g, size_t n)
{
	size_t i, j;

	for (i = 0; g && i < n; i++) {
		for (j = 0; j < g[i].nbackends; j++)
			free(g[i].backends[j].flows);
		free(g[i].backends);
	}
	free(g);
}

const char *kpx_flow_state(const struct kpx_flow *fl)
{
	static const char *const tcp[] = {
		"NONE",	    "SYN_SENT",	  "SYN_RECV", "ESTABLISHED",
		"FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT",
		"CLOSE",    "SYN_SENT2",
	};
	static const char *const sctp[] = {
		"NONE",		  "CLOSED",
		"COOKIE_WAIT",	  "COOKIE_ECHOED",
		"ESTABLISHED",	  "SHUTDOWN_SENT",
		"SHUTDOWN_RECD",  "SHUTDOWN_ACK_SENT",
		"HEARTBEAT_SENT", "HEARTBEAT_ACKED",
	};

	if (fl->state >= 0 && fl->protocol == IPPROTO_TCP &&
	    (size_t)fl->state < sizeof(tcp) / sizeof(tcp[0]))
		return tcp[fl->state];
	if (fl->state >= 0 && fl->protocol == IPPROTO_SCTP &&
	    (size_t)fl->state < sizeof(sctp) / sizeof(sctp[0]))
		return sctp[fl->state];
	if (fl->state >= 0 &&
	    (fl->protocol == IPPROTO_TCP || fl->protocol == IPPROTO_SCTP))
		return "?";
	if (fl->status & IPS_ASSURED)
		return "ASSURED";
	return fl->status & IPS_SEEN_REPLY ? "REPLIED" : "UNREPLIED";
}
