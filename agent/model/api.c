// SPDX-License-Identifier: GPL-2.0-only
/*
 * Releasing the model's Kubernetes objects (api.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/api.h"

static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void kpx_api_endpoint_release(struct kpx_api_endpoint *e)
{
	free(e->node_name);
	free(e->zone);
	free_strv(e->zone_hints, e->nzone_hints);
	free_strv(e->node_hints, e->nnode_hints);
	memset(e, 0, sizeof(*e));
}

static void free_ports(struct kpx_api_port *p, size_t n)
{
	size_t i;

	for (i = 0; p && i < n; i++)
		free(p[i].name);
	free(p);
}

void kpx_api_service_release(struct kpx_api_service *s)
{
	free(s->ips);
	free_ports(s->ports, s->nports);
	free(s->external_ips);
	free(s->lb_ips);
	free(s->source_ranges);
}

void kpx_api_slice_release(struct kpx_api_slice *sl)
{
	size_t i;

	for (i = 0; sl->eps && i < sl->neps; i++)
		kpx_api_endpoint_release(&sl->eps[i]);
	free(sl->eps);
	free_ports(sl->ports, sl->nports);
	free(sl->service);
}

void kpx_api_node_release(struct kpx_api_node *nd)
{
	size_t i;

	for (i = 0; nd->labels && i < nd->nlabels; i++) {
		free(nd->labels[i].key);
		free(nd->labels[i].value);
	}
	free(nd->labels);
	free(nd->addrs);
	free(nd->pod_cidrs);
}
