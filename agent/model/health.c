// SPDX-License-Identifier: GPL-2.0-only
/*
 * The health checks of the desired state (Service.spec.healthCheckNodePort
 * of externalTrafficPolicy Local Services): each one's local ready
 * endpoints, as kube-proxy's service health server counts them.  Pure: no
 * I/O.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "base/log.h"
#include "model/model_priv.h"

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
		if (model_slice_port(sl, svc->ports[i].name, svc->ports[i].protocol))
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

/*
 * The health-check server @node's Service wants into *out: 1, or 0 when it
 * wants none, or -ENOMEM.
 */
static int service_healthcheck(const struct kpx_model *m,
			       const struct hnode *node,
			       struct kpx_hc_service *out)
{
	const struct kpx_api_service *svc = &((const struct m_service *)node)->o;
	const char *slash = strchr(node->key, '/');
	long local;

	if (svc->skip || !svc->hc_node_port)
		return 0;
	local = local_ready(m, node, svc);
	if (local < 0)
		return (int)local;
	memset(out, 0, sizeof(*out));
	snprintf(out->namespace, sizeof(out->namespace), "%.*s",
		 (int)(slash - node->key), node->key);
	snprintf(out->name, sizeof(out->name), "%s", slash + 1);
	out->port = svc->hc_node_port;
	out->local_endpoints = (unsigned int)local;
	out->healthy = true;
	return 1;
}

int kpx_model_service_healthcheck(const struct kpx_model *m, const char *name,
				  struct kpx_hc_service *out)
{
	const struct hnode *node = ht_find(&m->objs[KPX_KIND_SERVICE], name);

	return node ? service_healthcheck(m, node, out) : 0;
}

int kpx_model_healthchecks(const struct kpx_model *m,
			   struct kpx_hc_service **out, size_t *n)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	struct kpx_hc_service *v = NULL, *nv, one;
	struct hnode *node, *tmp;
	size_t i, cnt = 0, cap = 0;
	int r;

	*out = NULL;
	*n = 0;
	ht_for_each_safe(t, i, node, tmp) {
		r = service_healthcheck(m, node, &one);
		if (r < 0)
			goto nomem;
		if (!r)
			continue;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[cnt++] = one;
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

