/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IP prefixes (CIDRs) as plain data: the type, its text form and its
 * order.  Pure, no I/O.
 */
#ifndef KPX_CIDR_H
#define KPX_CIDR_H

#include <stdint.h>
#include <netinet/in.h>

/* A prefix: addr in network byte order, bits past len zero. */
struct kpx_cidr {
	int family;			/* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint8_t len;
};

/* Prefixes per list (--nodeport-addresses, local CIDRs): the module's
 * KPX_CIDRS_MAX (uapi/linux/kpx.h), checked where a list is read. */
#define KPX_CONFIG_CIDRS_MAX 256

/*
 * Parses one --cluster-cidr / --nodeport-addresses element "ADDR/LEN" into
 * @out (host bits cleared).  Returns 0 or -EINVAL.
 */
int kpx_cidr_parse(const char *s, struct kpx_cidr *out);

/* Orders CIDRs by (family, prefix length, address). */
int kpx_cidr_cmp(const void *a, const void *b);

#endif
