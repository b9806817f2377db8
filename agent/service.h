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
#include <netinet/in.h>

struct kpx_backend {
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* network byte order */
	uint16_t port;		/* host byte order */
	uint32_t weight;	/* 1..KPX_WEIGHT_MAX */
	uint64_t conns;		/* read back from the module; 0 in desired state */
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
	uint64_t conns, rejects;	/* read back from the module */
	size_t nbackends;
	struct kpx_backend *backends;	/* sorted by kpx_backend_cmp() */
};

/* Orders frontends by key (family, protocol, addr, port); for sorting and diffs. */
int kpx_service_key_cmp(const struct kpx_service *a, const struct kpx_service *b);
/* Orders backends by (addr, port). */
int kpx_backend_cmp(const void *a, const void *b);
/* True when two frontends with the same key need no update (flags, backends, weights). */
bool kpx_service_same_config(const struct kpx_service *a, const struct kpx_service *b);
/* Sorts the backend array and removes duplicates (same addr and port). */
void kpx_service_normalize(struct kpx_service *s, size_t addrlen);
void kpx_service_free(struct kpx_service *s);
/* "10.96.0.10:80/tcp" or "[fd00::1]:80/udp" into buf; returns buf. */
const char *kpx_service_str(const struct kpx_service *s, char *buf, size_t len);

#define KPX_SERVICE_STRLEN (INET6_ADDRSTRLEN + 16)

#endif
