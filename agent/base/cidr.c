// SPDX-License-Identifier: GPL-2.0-only
/*
 * IP prefixes: parsing and order (cidr.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/addr.h"
#include "base/cidr.h"

int kpx_cidr_parse(const char *s, struct kpx_cidr *out)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned char *a;
	long len;
	int max, i;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash || !slash[1])
		return -EINVAL;
	*slash = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, &out->addr.v4) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, &out->addr.v6) == 1)
		out->family = AF_INET6;
	else
		return -EINVAL;
	max = out->family == AF_INET ? 32 : 128;
	errno = 0;
	len = strtol(slash + 1, &end, 10);
	if (errno || *end || !isdigit((unsigned char)slash[1]) || len < 0 ||
	    len > max)
		return -EINVAL;
	out->len = (uint8_t)len;
	a = (unsigned char *)&out->addr;
	for (i = 0; i < max / 8; i++) {
		int keep = (int)len - i * 8;

		if (keep <= 0)
			a[i] = 0;
		else if (keep < 8)
			a[i] &= (unsigned char)(0xff << (8 - keep));
	}
	return 0;
}

int kpx_cidr_cmp(const void *pa, const void *pb)
{
	const struct kpx_cidr *a = pa, *b = pb;
	int r = (a->family > b->family) - (a->family < b->family);

	if (!r)
		r = (a->len > b->len) - (a->len < b->len);
	if (!r)
		r = memcmp(&a->addr, &b->addr, kpx_addr_len(a->family));
	return r < 0 ? -1 : r > 0;
}

int kpx_parse_cidr(const char *s, struct kpx_cidr *c)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	size_t len, i;
	unsigned long bits;
	uint8_t *a;
	int fam;

	while (*s == ' ' || *s == '\t')
		s++;
	len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	slash = strchr(buf, '/');
	if (!slash || !slash[1])
		return -EINVAL;
	*slash = 0;
	memset(c, 0, sizeof(*c));
	fam = kpx_parse_addr(buf, 0, &c->addr);
	if (fam < 0)
		return -EINVAL;
	bits = strtoul(slash + 1, &end, 10);
	if (*end || slash[1] < '0' || slash[1] > '9' ||
	    bits > (fam == AF_INET ? 32UL : 128UL))
		return -EINVAL;
	c->family = fam;
	c->len = (uint8_t)bits;
	a = (uint8_t *)&c->addr;
	for (i = 0; i < 16; i++) {
		if (bits >= 8) {
			bits -= 8;
			continue;
		}
		a[i] &= (uint8_t)(0xff00 >> bits);
		bits = 0;
	}
	return fam;
}

bool kpx_cidr_contains(const struct kpx_cidr *c, int family, const void *addr)
{
	const uint8_t *x = (const uint8_t *)&c->addr, *y = addr;
	unsigned int bits = c->len, i;

	if (c->family != family)
		return false;
	for (i = 0; bits >= 8; i++, bits -= 8)
		if (x[i] != y[i])
			return false;
	return !bits || !((x[i] ^ y[i]) & (0xff00 >> bits));
}

bool kpx_cidrs_hold_localhost(const struct kpx_cidr *c, int n)
{
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	int i;

	for (i = 0; i < n; i++)
		if (kpx_cidr_contains(&c[i], AF_INET, &lo))
			return true;
	return false;
}
