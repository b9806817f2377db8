/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Services whose Local traffic policy finds no endpoint on this node,
 * for kube-proxy's kubeproxy_sync_proxy_rules_no_local_endpoints_total
 * gauge (pkg/proxy/metrics, label traffic_policy "internal"|"external").
 * sync.c publishes it after each sync, as kube-proxy's proxiers set it in
 * syncProxyRules, from per-Service counts kept by fecache.h (recomputed for
 * the changed Services only); the whole-model walk is the tests' reference.
 */
#ifndef KPX_MODEL_NOLOCAL_H
#define KPX_MODEL_NOLOCAL_H

#include "model/model.h"

struct kpx_no_local {
	unsigned int internal;	/* internalTrafficPolicy Local, both families */
	unsigned int external;	/* externalTrafficPolicy Local, both families */
	unsigned int internal6, external6;	/* of which IPv6 */
};

/*
 * Counts, as kube-proxy's proxiers do per Service port (serviceNoLocal-
 * EndpointsTotal{Internal,External}), the Service ports that have a usable
 * endpoint somewhere in the cluster (ready, or serving and terminating,
 * KEP-1669) but none on this node (endpoints[].nodeName == the configured
 * hostname), with internalTrafficPolicy Local (internal) or an
 * externalTrafficPolicy Local that applies (external: NodePort and
 * LoadBalancer types or externalIPs).  Endpoints are those of the
 * Service's slices with a port of the same name and protocol.  Counted per
 * Service port and per family of the Service's clusterIPs (kube-proxy runs
 * one proxier per family, each with its ip_family series; the IPv6 part
 * is also in internal6 and external6).  Skipped Services (headless, ExternalName,
 * service-proxy-name) count nothing.  Pure; O(endpoints).
 */
void kpx_model_no_local_endpoints(const struct kpx_model *m,
				  struct kpx_no_local *out);

/* kpx_model_no_local_endpoints() of one Service ("namespace/name"; zero
 * when unknown), for incremental syncs (fecache.h).  O(its endpoints). */
void kpx_model_service_no_local(const struct kpx_model *m, const char *name,
				struct kpx_no_local *out);

#endif
