// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's counters as tables (nl.h): which attribute carries each,
 * where it is kept, what kpxctl calls it and which /metrics series shows
 * it.  Linked into both kpx-agent and kpxctl.
 */
#include <stddef.h>
#include <string.h>
#include <netlink/attr.h>
#include <linux/kpx.h>

#include "dp/kpx/nl.h"

/* The field that holds a counter: its place and size. */
#define FIELD(type, f) \
	.offset = offsetof(type, f), .size = sizeof(((type *)0)->f)

const struct kpx_nl_counter kpx_nl_stats_counters[] = {
	{ .name = "services",
	  .attr = KPX_STATS_A_SERVICES,
	  FIELD(struct kpx_nl_stats, services),
	  .metric = "kpx_module_frontends",
	  .type = "gauge",
	  .help = "Frontends in the module" },
	{ .name = "backends",
	  .attr = KPX_STATS_A_BACKENDS,
	  FIELD(struct kpx_nl_stats, backends),
	  .metric = "kpx_module_backends",
	  .type = "gauge",
	  .help = "Backends in the module" },
	{ .name = "conns",
	  .attr = KPX_STATS_A_CONNS,
	  FIELD(struct kpx_nl_stats, conns),
	  .metric = "kpx_module_connections_total",
	  .type = "counter",
	  .help = "New connections the module scheduled" },
	{ .name = "rejects",
	  .attr = KPX_STATS_A_REJECTS,
	  FIELD(struct kpx_nl_stats, rejects),
	  .metric = "kpx_module_rejects_total",
	  .type = "counter",
	  .help = "Connections the module rejected" },
	{ .name = "drops",
	  .attr = KPX_STATS_A_DROPS,
	  FIELD(struct kpx_nl_stats, drops),
	  .metric = "kpx_module_drops_total",
	  .type = "counter",
	  .help = "Packets the module dropped" },
	{ .name = "filtered",
	  .attr = KPX_STATS_A_FILTERED,
	  FIELD(struct kpx_nl_stats, filtered) },
	{ .name = "invalid_drops",
	  .attr = KPX_STATS_A_INVALID_DROPS,
	  FIELD(struct kpx_nl_stats, invalid_drops),
	  .metric = "kpx_ct_state_invalid_dropped_packets_total",
	  .type = "counter",
	  .help = "Packets of flows the module translated that conntrack marked INVALID, dropped instead of leaving untranslated (kube-proxy: kubeproxy_iptables_ct_state_invalid_dropped_packets_total)" },
	/* /metrics: kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family} */
	{ .name = "ct_deleted_ipv4",
	  .attr = KPX_STATS_A_CT_DELETED4,
	  FIELD(struct kpx_nl_stats, ct_deleted[0]) },
	{ .name = "ct_deleted_ipv6",
	  .attr = KPX_STATS_A_CT_DELETED6,
	  FIELD(struct kpx_nl_stats, ct_deleted[1]) },
	{ .name = "generation",
	  .attr = KPX_STATS_A_GENERATION,
	  FIELD(struct kpx_nl_stats, generation) },
	{ .name = NULL },
};

const struct kpx_nl_counter kpx_nl_frontend_counters[] = {
	{ .name = "conns",
	  .column = "Conns",
	  .width = 12,
	  .attr = KPX_SVC_A_CONNS,
	  FIELD(struct kpx_service, conns),
	  .metric = "kpx_frontend_connections_total",
	  .type = "counter",
	  .help = "New connections the kpx module scheduled for a frontend" },
	{ .name = "rejects",
	  .column = "Rejects",
	  .width = 10,
	  .attr = KPX_SVC_A_REJECTS,
	  FIELD(struct kpx_service, rejects),
	  .metric = "kpx_frontend_rejects_total",
	  .type = "counter",
	  .help = "Connections the kpx module rejected for a frontend without backends" },
	{ .name = "drops",
	  .attr = KPX_SVC_A_DROPS,
	  FIELD(struct kpx_service, drops),
	  .metric = "kpx_frontend_drops_total",
	  .type = "counter",
	  .help = "Of the rejected connections, those the kpx module dropped (externalTrafficPolicy Local without a local endpoint) instead of refusing" },
	{ .name = "filtered",
	  .attr = KPX_SVC_A_FILTERED,
	  FIELD(struct kpx_service, filtered),
	  .metric = "kpx_frontend_filtered_total",
	  .type = "counter",
	  .help = "New connections the kpx module dropped by a frontend's source ranges (loadBalancerSourceRanges)" },
	{ .name = NULL },
};

const struct kpx_nl_counter kpx_nl_backend_counters[] = {
	{ .name = "conns",
	  .column = "Conns",
	  .width = 12,
	  .attr = KPX_BE_A_CONNS,
	  FIELD(struct kpx_backend, conns),
	  .metric = "kpx_backend_connections_total",
	  .type = "counter",
	  .help = "New connections the kpx module scheduled to a backend" },
	{ .name = "active",
	  .attr = KPX_BE_A_ACTIVE,
	  FIELD(struct kpx_backend, active) },
	{ .name = NULL },
};

uint64_t kpx_nl_counter_get(const struct kpx_nl_counter *c, const void *obj)
{
	const char *p = (const char *)obj + c->offset;
	uint32_t v32;
	uint64_t v64;

	if (c->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

void kpx_nl_counter_parse(const struct kpx_nl_counter *c, void *obj,
			  const struct nlattr *nla)
{
	char *p = (char *)obj + c->offset;
	uint32_t v32;
	uint64_t v64;

	if (c->size == sizeof(v32)) {
		v32 = nla_get_u32((struct nlattr *)nla);
		memcpy(p, &v32, sizeof(v32));
		return;
	}
	v64 = nla_get_u64((struct nlattr *)nla);
	memcpy(p, &v64, sizeof(v64));
}
