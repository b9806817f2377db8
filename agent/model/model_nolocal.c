// SPDX-License-Identifier: GPL-2.0-only
/*
 * Services with a Local traffic policy and no local endpoint (see
 * model_nolocal.h).  Reads the model's cache only (model_priv.h).
 */
#include <string.h>
#include <sys/socket.h>

#include "model/model_nolocal.h"
#include "model/model_priv.h"

/* Usable as kube-proxy's CategorizeEndpoints() counts it (hasAnyEndpoints). */
static bool usable(const struct kpx_api_endpoint *e)
{
	return e->ready || (e->serving && e->terminating);
}

/* The slice's port for Service port @sp, or 0 (name and protocol match). */
static uint16_t port_of(const struct kpx_api_slice *sl,
			const struct kpx_api_port *sp)
{
	size_t i;

	for (i = 0; i < sl->nports; i++)
		if (sl->ports[i].protocol == sp->protocol &&
		    !strcmp(sl->ports[i].name, sp->name))
			return sl->ports[i].port;
	return 0;
}

/*
 * Whether Service port @sp in @family has a usable endpoint (*any) and a
 * usable endpoint on node @host (*local), over the slices of group @g.
 */
static void scan(const struct slice_group *g, const struct kpx_api_port *sp,
		 int family, const char *host, bool *any, bool *local)
{
	const struct m_slice *sl;
	size_t i;

	*any = *local = false;
	for (sl = g ? g->head : NULL; sl; sl = sl->gnext) {
		if (sl->o.family != family || !port_of(&sl->o, sp))
			continue;
		for (i = 0; i < sl->o.neps; i++) {
			const struct kpx_api_endpoint *e = &sl->o.eps[i];

			if (!usable(e))
				continue;
			*any = true;
			if (host[0] && e->node_name &&
			    !strcmp(e->node_name, host)) {
				*local = true;
				return;
			}
		}
	}
}

/* Adds the Service port counts of @node's Service to *out. */
static void service_no_local(const struct kpx_model *m,
			     const struct hnode *node, struct kpx_no_local *out)
{
	const struct kpx_api_service *svc = &((const struct m_service *)node)->o;
	const struct slice_group *g;
	size_t j, k;
	bool any, local;

	if (svc->skip || !(svc->itp_local || svc->etp_local))
		return;
	g = (const struct slice_group *)ht_find(&m->groups, node->key);
	for (j = 0; j < svc->nips; j++) {
		for (k = 0; k < svc->nports; k++) {
			scan(g, &svc->ports[k], svc->ips[j].family,
			     m->cfg.hostname, &any, &local);
			if (!any || local)
				continue;
			out->internal += svc->itp_local;
			out->external += svc->etp_local;
			if (svc->ips[j].family == AF_INET6) {
				out->internal6 += svc->itp_local;
				out->external6 += svc->etp_local;
			}
		}
	}
}

void kpx_model_service_no_local(const struct kpx_model *m, const char *name,
				struct kpx_no_local *out)
{
	const struct hnode *node = ht_find(&m->objs[KPX_KIND_SERVICE], name);

	memset(out, 0, sizeof(*out));
	if (node)
		service_no_local(m, node, out);
}

void kpx_model_no_local_endpoints(const struct kpx_model *m,
				  struct kpx_no_local *out)
{
	const struct htab *t = &m->objs[KPX_KIND_SERVICE];
	struct hnode *node, *tmp;
	size_t b;

	memset(out, 0, sizeof(*out));
	ht_for_each_safe(t, b, node, tmp)
		service_no_local(m, node, out);
}
