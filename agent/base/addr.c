// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parsing and formatting of "ADDR:PORT[@WEIGHT]" and protocol names.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
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

/* Parses [s, end) as a decimal number in [min, max], digits only. */
static int parse_uint(const char *s, const char *end, unsigned long min,
		      unsigned long max, unsigned long *out)
{
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
	if (parse_uint(colon + 1, end, 1, 65535, &p))
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

int kpx_backend_parse(const char *s, int *family, struct kpx_backend *be)
{
	const char *end = s + strlen(s);
	const char *at = strchr(s, '@');
	unsigned long w = 1;
	uint16_t port;
	int fam, err;
	struct in6_addr a;

	if (at && parse_uint(at + 1, end, 1, KPX_WEIGHT_MAX, &w))
		return -EINVAL;
	err = parse_hostport(s, at ? at : end, &fam, &a, &port);
	if (err)
		return err;
	memset(be, 0, sizeof(*be));
	memcpy(&be->addr, &a, sizeof(a));
	be->port = port;
	be->weight = (uint32_t)w;
	*family = fam;
	return 0;
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
