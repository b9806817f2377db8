/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Text forms of transport endpoints: "10.0.0.1:80", "[fd00::1]:80", and
 * protocol names.  Pure, no I/O.
 */
#ifndef KPX_ADDR_H
#define KPX_ADDR_H

#include <stdint.h>
#include <stddef.h>
#include <netinet/in.h>

/* Room for "[v6]:65535" plus NUL. */
#define KPX_HOSTPORT_STRLEN (INET6_ADDRSTRLEN + 8)

/*
 * Parses "tcp", "udp" or "sctp" (any case) into IPPROTO_*.
 * Returns 0, or -EINVAL for anything else.
 */
int kpx_proto_parse(const char *s, uint8_t *proto);
/* "tcp", "udp", "sctp", or "proto-N" (static storage) for others. */
const char *kpx_proto_name(uint8_t proto);

/*
 * Parses "A.B.C.D:PORT" or "[IPV6]:PORT" (IPv6 must be bracketed).  PORT is
 * decimal 1..65535.  On success *family is AF_INET or AF_INET6, @addr (16
 * bytes of room) holds the address in network byte order, zero-filled past
 * the family's length, and *port the port in host byte order.
 * Returns 0, or -EINVAL (nothing written) for malformed input.
 */
int kpx_hostport_parse(const char *s, int *family, void *addr, uint16_t *port);

/*
 * Parses the @len characters at @s as a decimal number in [@min, @max]:
 * digits only, at most 10 of them.  Returns 0, or -EINVAL (nothing
 * written).
 */
int kpx_uint_parse(const char *s, size_t len, unsigned long min,
		   unsigned long max, unsigned long *out);

/*
 * Formats @addr (network byte order) and @port (host byte order) as
 * "10.0.0.1:80" or "[fd00::1]:80" into @buf (KPX_HOSTPORT_STRLEN is enough).
 * Returns @buf; "?" for an unknown family.
 */
const char *kpx_hostport_str(int family, const void *addr, uint16_t port,
			     char *buf, size_t len);

/* Length of an address of @family in bytes (4 or 16), 0 if unknown. */
size_t kpx_addr_len(int family);

/*
 * Parses the textual IP address @s ("10.96.0.1", "fd00::1") into @addr
 * (16 bytes, network byte order; an IPv4 address uses the first 4 and the
 * rest is zeroed).  @family is AF_INET or AF_INET6 to accept only that
 * family, or 0 for either.  IPv4 parts (also those of a dotted quad
 * ending an IPv6 address) may have leading zeros and stay decimal, as
 * Kubernetes' netutils.ParseIPSloppy reads them: "010.001.002.003" is
 * 10.1.2.3.  Returns the family (AF_INET, AF_INET6), or -EINVAL.
 */
int kpx_parse_addr(const char *s, int family, void *addr);

#endif
