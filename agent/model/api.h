/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Kubernetes objects the model takes (v1 Service, discovery.k8s.io/v1
 * EndpointSlice, v1 Node), as plain C data holding what the agent uses:
 * k8s/decode.c fills them from the API's JSON, the model owns them once
 * handed over.  No library types.
 */
#ifndef KPX_API_H
#define KPX_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "base/cidr.h"

union kpx_api_addr {
	struct in_addr v4;
	struct in6_addr v6;
};				/* network byte order; IPv4 zero-padded */

/* A Service port (spec.ports[]) or an EndpointSlice port (ports[]). */
struct kpx_api_port {
	char *name;		/* "" when absent or null */
	uint16_t port;		/* host order; 0: unset (slice ports only) */
	uint8_t protocol;	/* IPPROTO_TCP (default), _UDP, _SCTP */
	uint16_t node_port;	/* spec.ports[].nodePort, host order; 0: none
				 * (Service ports only) */
};

struct kpx_api_ip {
	int family;		/* AF_INET, AF_INET6 */
	union kpx_api_addr addr;
};

enum kpx_api_svc_type {
	KPX_API_CLUSTER_IP,	/* spec.type ClusterIP (the default) */
	KPX_API_NODE_PORT,	/* NodePort */
	KPX_API_LOAD_BALANCER,	/* LoadBalancer */
};

/* spec.trafficDistribution (KEP-4444, KEP-3015); informational: like
 * kube-proxy, the model goes by the endpoints' hints alone */
enum kpx_api_traffic_dist {
	KPX_API_TD_NONE,	/* absent or unknown */
	KPX_API_TD_PREFER_ZONE,	/* PreferClose, PreferSameZone */
	KPX_API_TD_PREFER_NODE,	/* PreferSameNode */
};

struct kpx_api_service {
	const char *skip;	/* static reason it has no frontends, or NULL:
				 * proxy-name label, ExternalName, headless */
	size_t nips, nports;
	struct kpx_api_ip *ips;	/* spec.clusterIPs (or spec.clusterIP) */
	struct kpx_api_port *ports;
	enum kpx_api_svc_type type;
	/*
	 * spec.externalTrafficPolicy Local, only where it applies: types
	 * NodePort and LoadBalancer, or any type with externalIPs (as
	 * kube-proxy's apiservice.ExternalPolicyLocal()).
	 */
	bool etp_local;
	bool itp_local;		/* spec.internalTrafficPolicy Local (KEP-2086) */
	/* spec.healthCheckNodePort when it is served: type LoadBalancer
	 * with etp_local (apiservice.NeedsHealthCheck()); else 0 */
	uint16_t hc_node_port;
	enum kpx_api_traffic_dist traffic_dist;
	/* spec.externalIPs; status.loadBalancer.ingress[].ip except those
	 * with ipMode Proxy (KEP-1860); spec.loadBalancerSourceRanges, host
	 * bits cleared.  Entries that do not parse are skipped, as kube-proxy
	 * does. */
	size_t nexternal_ips, nlb_ips, nsource_ranges;
	struct kpx_api_ip *external_ips, *lb_ips;
	struct kpx_cidr *source_ranges;
	/*
	 * Annotation kpx.io/scheduler when it names a scheduler
	 * (random, rr, wrr, lc, sh, mh), else "" (the agent's --scheduler);
	 * spec.sessionAffinity ClientIP: sessionAffinityConfig.clientIP.
	 * timeoutSeconds (default 10800, 1..86400), else 0 (None).
	 */
	char scheduler[16];
	uint32_t affinity_timeout;
};

struct kpx_api_endpoint {
	union kpx_api_addr addr;	/* addresses[0] */
	bool ready;		/* conditions.ready; nil = true */
	bool serving;		/* conditions.serving; nil = ready */
	bool terminating;	/* conditions.terminating; nil = false */
	char *node_name, *zone;	/* NULL when absent */
	/* hints.forZones[].name, hints.forNodes[].name (KEP-2433, KEP-3015);
	 * n = 0 when absent */
	size_t nzone_hints, nnode_hints;
	char **zone_hints, **node_hints;
};

struct kpx_api_slice {
	char *service;		/* "namespace/<kubernetes.io/service-name>",
				 * NULL when the label is absent */
	int family;		/* AF_INET, AF_INET6; 0 for FQDN (no endpoints
				 * are kept) */
	size_t nports, neps;
	struct kpx_api_port *ports;
	struct kpx_api_endpoint *eps;	/* endpoints with an address */
	/*
	 * Endpoints and ports that did not decode, left out (each costs only
	 * itself), and the reason for the last of them ("" when none).
	 */
	size_t nskipped;
	char skipped_why[160];
};

struct kpx_api_label {
	char *key, *value;
};

enum kpx_api_node_addr_type {
	KPX_API_INTERNAL_IP,
	KPX_API_EXTERNAL_IP,
};

struct kpx_api_node_addr {
	enum kpx_api_node_addr_type type;
	struct kpx_api_ip ip;
};

struct kpx_api_node {
	size_t nlabels;
	struct kpx_api_label *labels;
	const char *zone;	/* topology.kubernetes.io/zone, or NULL */
	/* status.addresses of type InternalIP and ExternalIP, in order
	 * (others, and addresses that do not parse, are skipped) */
	size_t naddrs;
	struct kpx_api_node_addr *addrs;
	/* spec.podCIDRs (or spec.podCIDR) */
	size_t npod_cidrs;
	struct kpx_cidr *pod_cidrs;
};

/* One object of any kind, as kpx_model_update() takes it. */
union kpx_api_object {
	struct kpx_api_service service;
	struct kpx_api_slice slice;
	struct kpx_api_node node;
};

/* Free what the struct points to (not the struct itself). */
void kpx_api_service_release(struct kpx_api_service *s);
void kpx_api_slice_release(struct kpx_api_slice *sl);
void kpx_api_node_release(struct kpx_api_node *nd);
void kpx_api_endpoint_release(struct kpx_api_endpoint *e);

#endif
