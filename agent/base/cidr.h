/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IP prefixes (CIDRs) as plain data: the type, its text form and its
 * order.  Pure, no I/O.
 */
#ifndef KPX_CIDR_H
#define KPX_CIDR_H

#include <stdbool.h>
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

/*
 * Parses "10.0.0.0/8" or "fd00::/64" (surrounding blanks allowed, as in
 * loadBalancerSourceRanges) into @c, clearing the bits past the prefix (as
 * kube-proxy's ParseCIDRSloppy + mask).  Returns the family or -EINVAL.
 */
int kpx_parse_cidr(const char *s, struct kpx_cidr *c);

/* True when @addr (network order, @family) lies in @c. */
bool kpx_cidr_contains(const struct kpx_cidr *c, int family, const void *addr);

/*
 * Whether one of @n CIDRs holds 127.0.0.1: --nodeport-addresses then asks
 * for localhost NodePorts (kube-proxy's iptables mode and route_localnet).
 */
bool kpx_cidrs_hold_localhost(const struct kpx_cidr *c, int n);

#endif
