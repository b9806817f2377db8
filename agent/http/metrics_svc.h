/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-Service series of /metrics: the module's frontend counters summed
 * over the frontends of one Service port (its ClusterIPs, NodePorts,
 * LoadBalancer IPs and externalIPs, every family), by the name the agent
 * gave each frontend (KPX_SVC_A_NAME, "namespace/name:port").
 */
#ifndef KPX_METRICS_SVC_H
#define KPX_METRICS_SVC_H

#include <stddef.h>
#include <stdio.h>
#include "base/service.h"

/*
 * Writes, in the Prometheus text format, with the labels namespace,
 * service and port (the Service port's name, "" for an unnamed port):
 *   kpx_service_connections_total   new connections scheduled
 *   kpx_service_rejects_total       refused for want of an endpoint
 *   kpx_service_drops_total{reason} dropped: "no_endpoints" (an
 *                                   externalTrafficPolicy Local frontend
 *                                   without a local endpoint),
 *                                   "source_range" (loadBalancerSourceRanges)
 * Frontends without a name (kpxctl set, an agent of before names) are not
 * counted.  @v is not changed; 0, or -ENOMEM (nothing written).
 */
int kpx_metrics_services(FILE *f, const struct kpx_service *v, size_t n);

#endif
