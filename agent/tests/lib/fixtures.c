// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fixtures of the agent's unit tests (fixtures.h).
 */
#include <arpa/inet.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <curl/curl.h>

#include "base/cidr.h"
#include "base/service.h"
#include "fixtures.h"

static void addr_or_abort(int family, const char *s, void *addr)
{
	if (inet_pton(family, s, addr) != 1) {
		fprintf(stderr, "fixtures: bad test address '%s'\n", s);
		abort();
	}
}

struct kpx_service fx_frontend(int family, uint8_t proto, const char *vip,
			       uint16_t port)
{
	struct kpx_service s;

	memset(&s, 0, sizeof(s));
	s.family = family;
	s.protocol = proto;
	addr_or_abort(family, vip, &s.addr);
	s.port = port;
	return s;
}

struct kpx_backend fx_backend(int family, const char *ip, uint16_t port,
			      uint32_t weight)
{
	struct kpx_backend b;

	memset(&b, 0, sizeof(b));
	addr_or_abort(family, ip, &b.addr);
	b.port = port;
	b.weight = weight;
	return b;
}

struct kpx_service fx_service(int family, uint8_t proto, const char *vip,
			      uint16_t port, const struct kpx_backend *bes,
			      size_t n)
{
	struct kpx_service s = fx_frontend(family, proto, vip, port);

	s.nbackends = n;
	s.backends = calloc(n ? n : 1, sizeof(*bes));
	if (!s.backends)
		abort();
	if (n)
		memcpy(s.backends, bes, n * sizeof(*bes));
	return s;
}

struct kpx_service fx_service_str(int family, uint8_t proto, const char *vip,
				  uint16_t port, const char *const *bes,
				  size_t n)
{
	struct kpx_service s = fx_frontend(family, proto, vip, port);
	size_t i;
	int fam;

	s.backends = calloc(n ? n : 1, sizeof(*s.backends));
	if (!s.backends)
		abort();
	for (i = 0; i < n; i++) {
		if (kpx_backend_parse(bes[i], &fam, &s.backends[i]) ||
		    fam != family) {
			fprintf(stderr, "fixtures: bad test backend '%s'\n",
				bes[i]);
			abort();
		}
	}
	s.nbackends = n;
	kpx_service_normalize(&s, family == AF_INET ? 4 : 16);
	return s;
}

struct kpx_ns_config fx_ns_config(const char *cidrs, const char *ifname,
				  const char *ifprefix)
{
	struct kpx_ns_config c;
	char buf[1024], *tok, *save;

	memset(&c, 0, sizeof(c));
	snprintf(buf, sizeof(buf), "%s", cidrs);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c.nlocal_cidrs == KPX_CONFIG_CIDRS_MAX ||
		    kpx_cidr_parse(tok, &c.local_cidrs[c.nlocal_cidrs]) < 0) {
			fprintf(stderr, "fixtures: bad test CIDR '%s'\n", tok);
			abort();
		}
		c.nlocal_cidrs++;
	}
	snprintf(c.local_ifname, sizeof(c.local_ifname), "%s",
		 ifname ? ifname : "");
	snprintf(c.local_ifprefix, sizeof(c.local_ifprefix), "%s",
		 ifprefix ? ifprefix : "");
	return c;
}

bool fx_matches(const char *re, const char *s)
{
	regex_t r;
	bool m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NEWLINE))
		return false;
	m = !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	return m;
}

struct fx_body {
	char *buf;
	size_t size, len;
};

static size_t fx_on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct fx_body *b = arg;
	size_t add = sz * n;

	if (b->buf && b->len + 1 < b->size) {
		size_t room = b->size - 1 - b->len;
		size_t take = add < room ? add : room;

		memcpy(b->buf + b->len, p, take);
		b->len += take;
		b->buf[b->len] = '\0';
	}
	return add;
}

long fx_http_get(const char *url, char *body, size_t size)
{
	struct fx_body b = { .buf = body, .size = size };
	CURL *c = curl_easy_init();
	long status = 0;

	if (body && size)
		body[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fx_on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	return status;
}

void fx_add_range(struct kpx_service *s, const char *cidr)
{
	struct kpx_cidr *v =
		realloc(s->source_ranges, (s->nsource_ranges + 1) * sizeof(*v));

	if (!v || kpx_cidr_parse(cidr, &v[s->nsource_ranges]))
		abort();
	s->source_ranges = v;
	s->nsource_ranges++;
}
