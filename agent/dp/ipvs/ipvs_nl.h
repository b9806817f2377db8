/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small client of the kernel's IPVS generic-netlink family ("IPVS",
 * linux/ip_vs.h) through libnl-genl-3: virtual services keyed by (family,
 * protocol, address, port), their real servers (destinations) in NAT
 * ("masquerading") forwarding, and dumps of both.  Used by dp_ipvs.c.
 *
 * Byte order: addresses in network order, ports and every other integer in
 * host order (converted here).  Errors are negative errno values, the
 * kernel's own when it refused (IPVS answers ESRCH for an unknown service,
 * ENOENT for an unknown destination, EEXIST for a duplicate).
 */
#ifndef KPX_IPVS_NL_H
#define KPX_IPVS_NL_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

struct kpx_ipvs;

/* One IPVS virtual service (not fwmark-based). */
struct kpx_ipvs_svc {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t protocol;	/* IPPROTO_TCP, _UDP, _SCTP */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* network byte order */
	uint16_t port;		/* host byte order */
	char sched[16];		/* IPVS scheduler name ("rr", "wrr", ...) */
	uint32_t flags;		/* IP_VS_SVC_F_* (PERSISTENT for affinity) */
	uint32_t timeout;	/* persistence timeout, seconds */
};

/* One real server of a service, always forwarded by NAT. */
struct kpx_ipvs_dest {
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* network byte order, the service's family */
	uint16_t port;		/* host byte order */
	uint32_t weight;	/* IPVS weight; 0 = quiesced */
	/* from a dump (IPVS_DEST_ATTR_ACTIVE_CONNS, _INACT_CONNS): IPVS's
	 * connections to it, established and others (e.g. TIME_WAIT, UDP) */
	uint32_t active_conns, inact_conns;
};

/*
 * Connects and resolves the "IPVS" family.  -ENOENT when the family is
 * not registered (ip_vs not loaded); other negative errno on socket errors.
 */
int kpx_ipvs_open(struct kpx_ipvs **out);
void kpx_ipvs_close(struct kpx_ipvs *v);
/* The kernel's extack text of the last failure, or "". */
const char *kpx_ipvs_errmsg(const struct kpx_ipvs *v);

/* IPVS_CMD_NEW_SERVICE (@create) or IPVS_CMD_SET_SERVICE. */
int kpx_ipvs_svc_put(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s, int create);
/* IPVS_CMD_DEL_SERVICE of the service's key; -ESRCH if it does not exist. */
int kpx_ipvs_svc_del(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s);
/* IPVS_CMD_NEW_DEST (@create) or IPVS_CMD_SET_DEST, NAT forwarding. */
int kpx_ipvs_dest_put(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s,
		      const struct kpx_ipvs_dest *d, int create);
/* IPVS_CMD_DEL_DEST. */
int kpx_ipvs_dest_del(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s,
		      const struct kpx_ipvs_dest *d);
/*
 * IPVS_CMD_GET_SERVICE dump of the namespace's address-based services
 * (fwmark services are skipped).  *out malloc'd (free()), in kernel order.
 */
int kpx_ipvs_svc_dump(struct kpx_ipvs *v, struct kpx_ipvs_svc **out, size_t *n);
/* IPVS_CMD_GET_DEST dump of one service's destinations; *out malloc'd. */
int kpx_ipvs_dest_dump(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s,
		       struct kpx_ipvs_dest **out, size_t *n);

/* IPVS's connection timeouts, seconds (ipvsadm --set tcp tcpfin udp). */
struct kpx_ipvs_timeouts {
	uint32_t tcp, tcpfin, udp;
};

/*
 * IPVS_CMD_SET_CONFIG with the timeouts of @t that are not 0 (the others
 * keep their value); 0 without a request when all are 0.
 */
int kpx_ipvs_set_timeouts(struct kpx_ipvs *v, const struct kpx_ipvs_timeouts *t);
/* IPVS_CMD_GET_CONFIG: the namespace's timeouts into *t. */
int kpx_ipvs_get_timeouts(struct kpx_ipvs *v, struct kpx_ipvs_timeouts *t);

#endif
