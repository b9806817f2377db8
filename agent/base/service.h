/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One frontend and its backends as plain C data: the unit the agent computes
 * (desired state), reads back from the module (actual state) and sends.
 * No library types escape into this header.
 */
#ifndef KPX_SERVICE_H
#define KPX_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <netinet/in.h>
#include <net/if.h>
#include "base/cidr.h"

struct kpx_backend {
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* network byte order */
	uint16_t port;		/* host byte order */
	uint32_t weight;	/* 1..KPX_WEIGHT_MAX */
	uint64_t conns;		/* read back from the module; 0 in desired state */
	uint32_t active;	/* KPX_BE_A_ACTIVE read back ("lc" only) */
};

struct kpx_service {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t protocol;	/* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* the VIP, network byte order */
	uint16_t port;		/* host byte order */
	uint32_t flags;		/* KPX_SVC_F_* */
	/* read back from the module (KPX_SVC_A_CONNS ...); 0 in desired
	 * state; drops are also counted in rejects */
	uint64_t conns, rejects, drops, filtered;
	size_t nbackends;
	struct kpx_backend *backends;	/* sorted by kpx_backend_cmp() */
	/*
	 * KPX_SVC_A_SOURCE_RANGES (Service.spec.loadBalancerSourceRanges on
	 * a LoadBalancer IP frontend): when not empty, new connections from
	 * other sources are dropped.  Same family as the frontend, host bits
	 * zero, sorted by kpx_cidr_cmp() without duplicates (normalize).
	 * Owned (malloc'd): a copy of a struct kpx_service must not be freed
	 * twice.
	 */
	size_t nsource_ranges;
	struct kpx_cidr *source_ranges;
	/*
	 * KPX_SVC_A_SCHEDULER ("" = the module's default "random"),
	 * KPX_SVC_A_MH_SIZE (0 = default 65537; only with "mh"),
	 * KPX_SVC_A_AFFINITY_TIMEOUT (seconds; 0 = no ClientIP affinity),
	 * KPX_SVC_A_AFFINITY_MAX (0 = default) and the read-back
	 * KPX_SVC_A_AFFINITY_EVICTIONS.
	 */
	char scheduler[16];
	uint32_t mh_size;
	uint32_t affinity_timeout;
	uint32_t affinity_max;
	uint64_t affinity_evictions;
	/*
	 * With KPX_SVC_F_EXT_LOCAL (an external frontend of a
	 * Service with externalTrafficPolicy: Local), the key of the
	 * Service's ClusterIP frontend, same family and protocol as this one
	 * (KPX_SVC_A_CLUSTER_ADDR, KPX_SVC_A_CLUSTER_PORT): the module
	 * schedules local clients and the node itself with that frontend's
	 * backends (kube-proxy's short-circuit of in-cluster traffic to
	 * external destinations).  All zero without the
	 * flag.
	 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} cluster_addr;			/* network byte order */
	uint16_t cluster_port;		/* host byte order; 0 = none */
	/*
	 * KPX_SVC_A_NAME: the Service the frontend belongs to,
	 * "namespace/name:port" ("namespace/name" for an unnamed port), and
	 * KPX_SVC_A_KIND (enum kpx_svc_kind).  Descriptive only: the module
	 * keeps them across SETs that leave them out.  @name is owned
	 * (malloc'd) as the lists are; NULL: not known (a SET leaves both
	 * out; read back from a module without names); "" read back: none.
	 */
	char *name;
	uint8_t kind;
	bool clear_kind;	/* send KPX_SVC_KIND_NONE (kpxctl --kind -) */
};

/*
 * The namespace settings of KPX_CMD_SET_CONFIG: what is a "local" source
 * for KPX_SVC_F_MASQ_NONLOCAL (kube-proxy --detect-local-mode).  Plain
 * data; zero it before filling so that memcmp() compares two.
 */
struct kpx_ns_config {
	size_t nlocal_cidrs;
	struct kpx_cidr local_cidrs[KPX_CONFIG_CIDRS_MAX];	/* KPX_CFG_A_LOCAL_CIDRS */
	char local_ifname[IF_NAMESIZE];		/* KPX_CFG_A_LOCAL_IFNAME, "" = none */
	char local_ifprefix[IF_NAMESIZE];	/* KPX_CFG_A_LOCAL_IFPREFIX, "" = none */
};

/* Orders frontends by key (family, protocol, addr, port); for sorting and diffs. */
int kpx_service_key_cmp(const struct kpx_service *a, const struct kpx_service *b);
/* The key fields of @s (family, protocol, addr, port), every other field
 * zero: a key to look up, owning nothing. */
struct kpx_service kpx_service_key(const struct kpx_service *s);
/* Orders backends by (addr, port). */
int kpx_backend_cmp(const void *a, const void *b);
/* True when two frontends with the same key need no update (flags, backends, weights,
 * source ranges, scheduler, cluster frontend key; when both know names
 * (not NULL), the kind and whether there is a name at all). */
bool kpx_service_same_config(const struct kpx_service *a, const struct kpx_service *b);
/* Sorts the backend array and removes duplicates (same addr and port); the
 * same for the source ranges. */
void kpx_service_normalize(struct kpx_service *s, size_t addrlen);
/* Frees what @s points to (backends, source ranges), not @s itself. */
void kpx_service_free(struct kpx_service *s);
/* Sets @s's name to a copy of @name (NULL: none); 0 or -ENOMEM. */
int kpx_service_set_name(struct kpx_service *s, const char *name);
/*
 * The uapi's names of enum kpx_svc_kind ("cluster-ip", "node-port",
 * "load-balancer", "external-ip"; "-" for none, "?" past the enum) and the
 * reverse (-EINVAL for an unknown name; "-" and "" are none).
 */
const char *kpx_kind_name(uint8_t kind);
int kpx_kind_parse(const char *name);
/*
 * The names of KPX_SVC_F_* in bit order ("drop-empty", "masq-nonlocal",
 * "masq", "cluster-ip", "ext-local"), NULL for a bit without one.
 */
const char *kpx_flag_name(unsigned int bit);
/* "10.96.0.10:80/tcp" or "[fd00::1]:80/udp" into buf; returns buf. */
const char *kpx_service_str(const struct kpx_service *s, char *buf, size_t len);

#define KPX_SERVICE_STRLEN (INET6_ADDRSTRLEN + 16)

/*
 * Parses a backend "ADDR:PORT[@WEIGHT]" (ADDR:PORT as above, WEIGHT decimal
 * 1..KPX_WEIGHT_MAX, default 1) into @be (conns zeroed).  Returns 0, or
 * -EINVAL for malformed input or a weight out of range.
 */
int kpx_backend_parse(const char *s, int *family, struct kpx_backend *be);

/*
 * A deep copy of @src into @dst, with backends and source ranges of its own
 * (@dst's old contents are not freed).  0, or -ENOMEM with @dst zeroed.
 */
int kpx_service_copy(struct kpx_service *dst, const struct kpx_service *src);

/*
 * Where @key's key is in @v[0..n-1] (sorted by kpx_service_key_cmp(), keys
 * unique): its index, or -(the index it would be inserted at) - 1.
 * O(log n).
 */
long kpx_service_find(const struct kpx_service *v, size_t n,
		      const struct kpx_service *key);

/* Frees @n frontends (kpx_service_free() each) and the array @v; NULL is a no-op. */
void kpx_services_free(struct kpx_service *v, size_t n);

/* One Service's health check (namespace and name are DNS labels, <= 63). */
struct kpx_hc_service {
	char namespace[64];
	char name[64];
	uint16_t port;		/* healthCheckNodePort, host order; 0 = any free
				 * port (tests; see kpx_hc_bound_port()) */
	unsigned int local_endpoints;	/* ready endpoints on this node */
	bool healthy;		/* "serviceProxyHealthy": the proxy has programmed
				 * this Service; false forces 503 */
};

/* Orders by (namespace, name). */
int kpx_hc_service_cmp(const void *a, const void *b);

#endif
