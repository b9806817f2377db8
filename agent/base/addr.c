// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parsing and formatting of "ADDR:PORT" and protocol names.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <linux/kpx.h>

#include "base/addr.h"

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ "sctp", IPPROTO_SCTP },
};

int kpx_proto_parse(const char *s, uint8_t *proto)
{
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (!strcasecmp(s, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	}
	return -EINVAL;
}

const char *kpx_proto_name(uint8_t proto)
{
	static __thread char other[16];

	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	snprintf(other, sizeof(other), "proto-%u", proto);
	return other;
}

size_t kpx_addr_len(int family)
{
	switch (family) {
	case AF_INET:
		return sizeof(struct in_addr);
	case AF_INET6:
		return sizeof(struct in6_addr);
	default:
		return 0;
	}
}

int kpx_uint_parse(const char *s, size_t len, unsigned long min,
		   unsigned long max, unsigned long *out)
{
	const char *end = s + len;
	unsigned long v = 0;

	if (s == end || end - s > 10)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Parses [s, end) as an endpoint; see kpx_hostport_parse(). */
static int parse_hostport(const char *s, const char *end, int *family,
			  void *addr, uint16_t *port)
{
	char host[INET6_ADDRSTRLEN];
	unsigned char buf[sizeof(struct in6_addr)] = { 0 };
	const char *host_start, *host_end, *colon;
	unsigned long p;
	int fam;

	if (*s == '[') {
		host_start = s + 1;
		host_end = memchr(host_start, ']', (size_t)(end - host_start));
		if (!host_end || host_end + 1 >= end || host_end[1] != ':')
			return -EINVAL;
		colon = host_end + 1;
		fam = AF_INET6;
	} else {
		host_start = s;
		colon = memchr(s, ':', (size_t)(end - s));
		if (!colon)
			return -EINVAL;
		host_end = colon;
		fam = AF_INET;
	}
	if (host_end == host_start ||
	    (size_t)(host_end - host_start) >= sizeof(host))
		return -EINVAL;
	memcpy(host, host_start, (size_t)(host_end - host_start));
	host[host_end - host_start] = '\0';
	if (inet_pton(fam, host, buf) != 1)
		return -EINVAL;
	if (kpx_uint_parse(colon + 1, (size_t)(end - colon - 1), 1, 65535, &p))
		return -EINVAL;
	*family = fam;
	memcpy(addr, buf, sizeof(buf));
	*port = (uint16_t)p;
	return 0;
}

int kpx_hostport_parse(const char *s, int *family, void *addr, uint16_t *port)
{
	return parse_hostport(s, s + strlen(s), family, addr, port);
}

const char *kpx_hostport_str(int family, const void *addr, uint16_t port,
			     char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (!kpx_addr_len(family) ||
	    !inet_ntop(family, addr, host, sizeof(host))) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", host, port);
	else
		snprintf(buf, len, "%s:%u", host, port);
	return buf;
}

/*
 * Dotted-quad IPv4 as Kubernetes parses it (netutils.ParseIPSloppy, Go
 * 1.16's net.ParseIP): four decimal parts of 0..255, leading zeros allowed
 * and still decimal ("010.001.002.003" is 10.1.2.3).  Writes 4 bytes.
 */
static int parse_ipv4_sloppy(const char *s, uint8_t *out)
{
	int i;

	for (i = 0; i < 4; i++) {
		unsigned int v = 0;
		const char *start = s;

		if (i && *s++ != '.')
			return -EINVAL;
		start = s;
		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (unsigned int)(*s++ - '0');
			if (v > 255)
				return -EINVAL;
		}
		if (s == start)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	return *s ? -EINVAL : 0;
}

int kpx_parse_addr(const char *s, int family, void *addr)
{
	int fam = strchr(s, ':') ? AF_INET6 : AF_INET;
	char buf[INET6_ADDRSTRLEN + 16];
	const char *tail;
	uint8_t v4[4];

	if (family && family != fam)
		return -EINVAL;
	memset(addr, 0, sizeof(struct in6_addr));
	if (fam == AF_INET)
		return parse_ipv4_sloppy(s, addr) ? -EINVAL : AF_INET;
	/* an IPv6 address ending in a dotted quad ("::ffff:010.1.2.3"):
	 * that quad is sloppy too, as in ParseIPSloppy */
	tail = strrchr(s, ':') + 1;
	if (strchr(tail, '.')) {
		size_t head = (size_t)(tail - s);

		if (head + 16 > sizeof(buf) || parse_ipv4_sloppy(tail, v4))
			return -EINVAL;
		snprintf(buf, sizeof(buf), "%.*s%u.%u.%u.%u", (int)head, s,
			 v4[0], v4[1], v4[2], v4[3]);
		s = buf;
	}
	if (inet_pton(AF_INET6, s, addr) != 1)
		return -EINVAL;
	return AF_INET6;
}
