// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sockaddr.h"

static bool parse_port(const char *s, bool port0_ok, in_port_t *port)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	v = strtoul(s, &end, 10);
	if (*end || v > 65535 || (v == 0 && !port0_ok))
		return false;
	*port = htons((unsigned short)v);
	return true;
}

socklen_t kpx_parse_addrport(const char *text, struct sockaddr_storage *ss,
			     bool port0_ok)
{
	char host[INET6_ADDRSTRLEN];
	const char *colon;
	size_t len;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':')
			return 0;
		len = (size_t)(close - text - 1);
		if (len == 0 || len >= sizeof(host))
			return 0;
		memcpy(host, text + 1, len);
		host[len] = '\0';
		s6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1 ||
		    !parse_port(close + 2, port0_ok, &s6->sin6_port))
			return 0;
		return sizeof(*s6);
	}
	colon = strrchr(text, ':');
	if (!colon)
		return 0;
	len = (size_t)(colon - text);
	if (len == 0 || len >= sizeof(host))
		return 0;
	memcpy(host, text, len);
	host[len] = '\0';
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1 ||
		    !parse_port(colon + 1, port0_ok, &s4->sin_port))
			return 0;
		return sizeof(*s4);
	}
}

char *kpx_format_addrport(const struct sockaddr *sa, char *buf)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, KPX_ADDRSTRLEN, "[%s]:%u", host,
			 ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, KPX_ADDRSTRLEN, "%s:%u", host,
			 ntohs(s4->sin_port));
	} else {
		snprintf(buf, KPX_ADDRSTRLEN, "?family%u", sa->sa_family);
	}
	return buf;
}
