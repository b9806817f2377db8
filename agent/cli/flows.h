/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpxctl flows: conntrack entries matched to the module's frontends and
 * grouped by frontend and backend, as plain data (flows.c, no library):
 * cmd_flows.c reads the entries through libnetfilter_conntrack and prints
 * the groups; tests/test_flows.c drives the grouping and the filter.
 */
#ifndef KPX_CLI_FLOWS_H
#define KPX_CLI_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "base/service.h"

union kpx_flow_addr {
	struct in_addr v4;
	struct in6_addr v6;
};

/* One conntrack entry, as much of it as kpxctl flows shows. */
struct kpx_flow {
	int family;		      /* AF_INET, AF_INET6 */
	uint8_t protocol;	      /* IPPROTO_* */
	union kpx_flow_addr src, dst; /* original direction: client, VIP */
	uint16_t sport, dport;	      /* host byte order */
	union kpx_flow_addr be; /* reply direction's source: the backend */
	uint16_t be_port;
	uint32_t status;   /* IPS_* bits */
	int state;	   /* TCP or SCTP state number, -1: none */
	uint32_t timeout;  /* seconds left */
	uint64_t start_ns; /* CLOCK_REALTIME ns of creation; 0: not recorded */
};

/* A frontend's flows to one backend address and port. */
struct kpx_flow_backend {
	union kpx_flow_addr addr;
	uint16_t port;
	bool current; /* one of the frontend's backends now */
	size_t nflows;
	const struct kpx_flow **flows; /* into the caller's flow array */
};

struct kpx_flow_group {
	const struct kpx_service *fe; /* into the caller's frontend array */
	size_t nbackends;
	struct kpx_flow_backend *backends; /* sorted by address, port */
};

/*
 * What the user asked for: every frontend, a Service ("ns/name": each of
 * its ports; "ns/name:port": that port), or a frontend address
 * ("VIP:PORT", every protocol).  kpx_flow_filter_parse(): 0 or -EINVAL.
 */
struct kpx_flow_filter {
	const char *service; /* NULL: not by name */
	bool by_addr;
	int family;
	union kpx_flow_addr addr;
	uint16_t port;
};
int kpx_flow_filter_parse(const char *arg, struct kpx_flow_filter *f);
bool kpx_flow_filter_match(const struct kpx_flow_filter *f,
			   const struct kpx_service *fe);

/*
 * The frontend of @v (@n, sorted by kpx_service_key_cmp()) that @fl was
 * translated for: the one whose key is the original destination, when the
 * entry was destination-NATed (IPS_DST_NAT, or, as IPVS leaves it, a
 * reply source other than the original destination).  NULL: not one.
 */
const struct kpx_service *kpx_flow_frontend(const struct kpx_service *v,
					    size_t n,
					    const struct kpx_flow *fl);

/*
 * Groups @flows by frontend of @v (sorted) and backend into *@out (*@nout
 * groups, in frontend order; each backend's flows in client order).  With
 * @f, only the frontends it matches, each one even without flows; without,
 * only frontends with flows.  0 or -ENOMEM.  kpx_flow_groups_free() frees
 * what it allocated (not the flows nor the frontends).
 */
int kpx_flow_group(const struct kpx_service *v, size_t n,
		   const struct kpx_flow *flows, size_t nflows,
		   const struct kpx_flow_filter *f, struct kpx_flow_group **out,
		   size_t *nout);
void kpx_flow_groups_free(struct kpx_flow_group *g, size_t n);

/* The entry's state: "ESTABLISHED", "TIME_WAIT", ... for TCP and SCTP;
 * "ASSURED" or "UNREPLIED" otherwise (from the status bits). */
const char *kpx_flow_state(const struct kpx_flow *fl);

#endif
