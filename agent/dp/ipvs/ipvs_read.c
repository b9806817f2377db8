// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the ipvs mode's state back (ipvs_read.h): the ipsets' entries
 * (`ipset save`), the SVC entry's comment the mode writes, and IPVS's
 * services and destinations as frontends.  Shared by the mode's dump()
 * (ipvs_state.c) and kpxctl (kpx_ipvs_read()); no data-plane state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/ip_vs.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/sysctl.h"
#include "dp/ipvs/ipvs_exec.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_priv.h"
#include "dp/ipvs/ipvs_read.h"
#include "dp/ipvs/ipvs_rules.h"

static const char *const set_names[2][KPX_IPVS_SET_N] = {
	{ "KPX-IPVS-SVC", "KPX-IPVS-MASQ", "KPX-IPVS-MASQ-NONLOCAL",
	  "KPX-IPVS-EMPTY-DROP", "KPX-IPVS-FW", "KPX-IPVS-FW-SRC",
	  "KPX-IPVS-LOOP", "KPX-IPVS-IPS" },
	{ "KPX-IPVS6-SVC", "KPX-IPVS6-MASQ", "KPX-IPVS6-MASQ-NONLOCAL",
	  "KPX-IPVS6-EMPTY-DROP", "KPX-IPVS6-FW", "KPX-IPVS6-FW-SRC",
	  "KPX-IPVS6-LOOP", "KPX-IPVS6-IPS" },
};

const char *kpx_ipvs_set_name(int family, enum kpx_ipvs_set set)
{
	if ((unsigned int)set >= KPX_IPVS_SET_N)
		return NULL;
	if (family == AF_INET)
		return set_names[0][set];
	if (family == AF_INET6)
		return set_names[1][set];
	return NULL;
}

/* Parses "ADDR" into @addr for @family; 0 or -EINVAL. */
static int parse_addr(const char *s, size_t n, int family, void *addr)
{
	char b[INET6_ADDRSTRLEN];

	if (n >= sizeof(b))
		return -EINVAL;
	memcpy(b, s, n);
	b[n] = '\0';
	return inet_pton(family, b, addr) == 1 ? 0 : -EINVAL;
}

int kpx_ipvs_parse_save_line(const char *line, struct kpx_ipvs_entry *e)
{
	char name[32], entry[160], *p, *q;
	const char *c;
	int set, fam, n;
	unsigned long port;

	if (sscanf(line, "add %31s %159s%n", name, entry, &n) != 2)
		return 0;
	for (fam = 0; fam < 2; fam++)
		for (set = 0; set < KPX_IPVS_SET_N; set++)
			if (!strcmp(name, set_names[fam][set]))
				goto found;
	return 0;
found:
	if (set == KPX_IPVS_SET_IPS)
		return 0; /* addresses of kpx-ipvs0, not frontends */
	memset(e, 0, sizeof(*e));
	e->set = set;
	e->family = fam ? AF_INET6 : AF_INET;
	/* ADDR,PROTO:PORT[,NET|,IP] */
	p = strchr(entry, ',');
	if (!p || parse_addr(entry, (size_t)(p - entry), e->family, &e->addr))
		return -EINVAL;
	q = strchr(++p, ':');
	if (!q)
		return -EINVAL;
	*q++ = '\0';
	if (kpx_proto_parse(p, &e->protocol))
		return -EINVAL;
	port = strtoul(q, &p, 10);
	if (port < 1 || port > 65535 || (*p && *p != ','))
		return -EINVAL;
	e->port = (uint16_t)port;
	if (set == KPX_IPVS_SET_FW_SRC) {
		char *slash;
		unsigned long len;

		if (*p++ != ',')
			return -EINVAL;
		e->net.family = e->family;
		slash = strchr(p, '/');
		len = e->family == AF_INET ? 32 : 128;
		if (slash) {
			len = strtoul(slash + 1, NULL, 10);
			*slash = '\0';
		}
		if (len > (e->family == AF_INET ? 32U : 128U) ||
		    parse_addr(p, strlen(p), e->family, &e->net.addr))
			return -EINVAL;
		e->net.len = (uint8_t)len;
	}
	c = strstr(line + n, "comment \"");
	if (set == KPX_IPVS_SET_SVC && c) {
		c += 9;
		snprintf(e->comment, sizeof(e->comment), "%.*s",
			 (int)strcspn(c, "\""), c);
	}
	return 1;
}

int kpx_ipvs_comment_parse(const char *comment, struct kpx_service *s)
{
	char sched[sizeof(s->scheduler)];
	unsigned int f, m, x;
	const char *c;

	if (sscanf(comment, "f=%u s=%15s m=%u x=%u", &f, sched, &m, &x) != 4)
		return -EINVAL;
	s->flags = f;
	snprintf(s->scheduler, sizeof(s->scheduler), "%s",
		 strcmp(sched, "-") ? sched : "");
	s->mh_size = m;
	s->affinity_max = x;
	c = strstr(comment, " c=");
	if (c) {
		char ca[INET6_ADDRSTRLEN];
		unsigned int port;

		if (sscanf(c, " c=%45[^/]/%u", ca, &port) != 2 || !port ||
		    port > 65535 ||
		    inet_pton(s->family, ca, &s->cluster_addr) != 1)
			return -EINVAL;
		s->cluster_port = (uint16_t)port;
	}
	/* " k=KIND n=NAME", last: the Service (absent from older agents) */
	c = strstr(comment, " k=");
	if (c) {
		const char *n = strstr(c, " n=");
		char kind[32];
		int k;

		if (!n || sscanf(c, " k=%31s", kind) != 1 ||
		    (k = kpx_kind_parse(kind)) < 0)
			return -EINVAL;
		s->kind = (uint8_t)k;
		return kpx_service_set_name(s, n + 3);
	}
	return 0;
}

void kpx_ipvs_comment(const struct kpx_service *s, char *buf, size_t len)
{
	const char *sched = s->scheduler[0] ? s->scheduler : "-";
	size_t at;

	snprintf(buf, len, "f=%u s=%s m=%u x=%u", s->flags, sched, s->mh_size,
		 s->affinity_max);
	at = strlen(buf);
	if (s->cluster_port) {
		/* eTP Local: the ClusterIP frontend's key, read back by dump() */
		char ca[INET6_ADDRSTRLEN];

		inet_ntop(s->family, &s->cluster_addr, ca, sizeof(ca));
		snprintf(buf + at, len - at, " c=%s/%u", ca, s->cluster_port);
		at = strlen(buf);
	}
	/* the Service when it fits whole and needs no quoting */
	if (s->name && *s->name && !strpbrk(s->name, "\"\\ ") &&
	    at + strlen(s->name) + 32 < len)
		snprintf(buf + at, len - at, " k=%s n=%s",
			 kpx_kind_name(s->kind), s->name);
}

bool ipvs_entry_is(const struct kpx_ipvs_entry *e, const struct kpx_ipvs_svc *s)
{
	return e->family == s->family && e->protocol == s->protocol &&
	       e->port == s->port &&
	       !memcmp(&e->addr, &s->addr, s->family == AF_INET ? 4 : 16);
}

/* Source ranges of @s from FW_SRC entries; the two /1 halves make 0/0. */
static int add_ranges(struct kpx_service *s, const struct kpx_ipvs_svc *is,
		      const struct kpx_ipvs_entry *e, size_t ne)
{
	size_t i, n = 0, halves = 0;

	for (i = 0; i < ne; i++)
		if (e[i].set == KPX_IPVS_SET_FW_SRC && ipvs_entry_is(&e[i], is))
			n++;
	if (!n)
		return 0;
	s->source_ranges = calloc(n, sizeof(*s->source_ranges));
	if (!s->source_ranges)
		return -ENOMEM;
	for (i = 0; i < ne; i++) {
		if (e[i].set != KPX_IPVS_SET_FW_SRC ||
		    !ipvs_entry_is(&e[i], is))
			continue;
		if (e[i].net.len == 1)
			halves++;
		s->source_ranges[s->nsource_ranges++] = e[i].net;
	}
	if (halves == 2) { /* written for 0/0: give it back as such */
		size_t o = 0;

		for (i = 0; i < s->nsource_ranges; i++)
			if (s->source_ranges[i].len != 1)
				s->source_ranges[o++] = s->source_ranges[i];
		memset(&s->source_ranges[o], 0, sizeof(s->source_ranges[o]));
		s->source_ranges[o].family = s->family;
		s->nsource_ranges = o + 1;
	}
	return 0;
}

int kpx_ipvs_frontend(const struct kpx_ipvs_svc *is, const char *comment,
		      const struct kpx_ipvs_dest *d, size_t nd,
		      const struct kpx_ipvs_entry *e, size_t ne,
		      struct kpx_service *s)
{
	const char *mapped;
	size_t i;
	bool fb;
	int r;

	memset(s, 0, sizeof(*s));
	s->family = is->family;
	s->protocol = is->protocol;
	memcpy(&s->addr, &is->addr, sizeof(s->addr));
	s->port = is->port;
	if (!comment || kpx_ipvs_comment_parse(comment, s))
		snprintf(s->scheduler, sizeof(s->scheduler), "%s", is->sched);
	/* a scheduler changed behind our back reads back as IPVS's own name */
	mapped = kpx_ipvs_sched(s->scheduler, &fb);
	if (!mapped || strcmp(mapped, is->sched))
		snprintf(s->scheduler, sizeof(s->scheduler), "%s", is->sched);
	if (is->flags & IP_VS_SVC_F_PERSISTENT)
		s->affinity_timeout = is->timeout;
	if (nd) {
		s->backends = calloc(nd, sizeof(*s->backends));
		if (!s->backends)
			return -ENOMEM;
	}
	for (i = 0; i < nd; i++) {
		struct kpx_backend *b = &s->backends[s->nbackends];

		/* quiesced: a removed backend still draining, not a backend */
		if (!d[i].weight)
			continue;
		memcpy(&b->addr, &d[i].addr, sizeof(d[i].addr));
		b->port = d[i].port;
		b->weight = d[i].weight;
		b->active = d[i].active_conns;
		s->nbackends++;
	}
	r = add_ranges(s, is, e, ne);
	if (r)
		return r;
	kpx_service_normalize(s, s->family == AF_INET ? 4 : 16);
	return 0;
}

int kpx_ipvs_parse_save(char *text, void (*bad)(const char *line),
			struct kpx_ipvs_entry **out, size_t *n)
{
	struct kpx_ipvs_entry *vec = NULL, e;
	size_t cnt = 0, cap = 0;
	char *line, *save = NULL;

	*out = NULL;
	*n = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		int r = kpx_ipvs_parse_save_line(line, &e);

		if (r < 0 && bad)
			bad(line);
		if (r != 1)
			continue;
		if (cnt == cap) {
			void *p = realloc(vec, (cap = cap ? cap * 2 : 64) *
						       sizeof(*vec));

			if (!p) {
				free(vec);
				return -ENOMEM;
			}
			vec = p;
		}
		vec[cnt++] = e;
	}
	*out = vec;
	*n = cnt;
	return 0;
}

int kpx_ipvs_read(struct kpx_service **out, size_t *n, char *err, size_t errlen)
{
	const char *argv[] = { "ipset", "save", NULL };
	struct kpx_ipvs_entry *e = NULL;
	struct kpx_ipvs_svc *svcs = NULL;
	struct kpx_service *res = NULL;
	size_t ne = 0, nsvc = 0, nres = 0, i, j;
	struct kpx_ipvs *ipvs = NULL;
	char *text = NULL;
	bool any = false;
	int r;

	*out = NULL;
	*n = 0;
	/* asking would load ip_set and ip_vs */
	if (!kpx_module_loaded("ip_set") || !kpx_module_loaded("ip_vs")) {
		snprintf(err, errlen, "ip_set or ip_vs not loaded");
		return -ENOENT;
	}
	r = kpx_ipvs_run(argv, NULL, &text, err, errlen);
	if (r)
		return r;
	r = kpx_ipvs_parse_save(text, NULL, &e, &ne);
	free(text);
	if (r)
		return r;
	for (i = 0; i < ne; i++)
		any |= e[i].set == KPX_IPVS_SET_SVC;
	if (!any) {
		snprintf(err, errlen, "no ipset %s or %s entries",
			 kpx_ipvs_set_name(AF_INET, KPX_IPVS_SET_SVC),
			 kpx_ipvs_set_name(AF_INET6, KPX_IPVS_SET_SVC));
		free(e);
		return -ENOENT;
	}
	r = kpx_ipvs_open(&ipvs);
	if (!r)
		r = kpx_ipvs_svc_dump(ipvs, &svcs, &nsvc);
	if (r) {
		snprintf(err, errlen, "IPVS: %s",
			 ipvs ? kpx_ipvs_errmsg(ipvs) : strerror(-r));
		goto out;
	}
	res = calloc(nsvc ? nsvc : 1, sizeof(*res));
	if (!res) {
		r = -ENOMEM;
		goto out;
	}
	/* the IPVS services the mode's SVC set names */
	for (i = 0; i < nsvc; i++) {
		struct kpx_ipvs_dest *d = NULL;
		const char *comment = NULL;
		size_t nd = 0;

		for (j = 0; j < ne && !comment; j++)
			if (e[j].set == KPX_IPVS_SET_SVC &&
			    ipvs_entry_is(&e[j], &svcs[i]))
				comment = e[j].comment;
		if (!comment)
			continue;
		r = kpx_ipvs_dest_dump(ipvs, &svcs[i], &d, &nd);
		if (!r)
			r = kpx_ipvs_frontend(&svcs[i], comment, d, nd, e, ne,
					      &res[nres]);
		free(d);
		if (r) {
			kpx_service_free(&res[nres]);
			snprintf(err, errlen, "IPVS destinations: %s",
				 strerror(-r));
			goto out;
		}
		nres++;
	}
	*out = res;
	*n = nres;
	res = NULL;
	nres = 0;
out:
	kpx_services_free(res, nres);
	if (ipvs)
		kpx_ipvs_close(ipvs);
	free(svcs);
	free(e);
	return r;
}

const char *kpx_ipvs_sched(const char *kpx_sched, bool *fallback)
{
	static const char *const native[] = { "rr", "wrr", "lc", "sh", "mh" };
	size_t i;

	*fallback = false;
	if (!kpx_sched[0] || !strcmp(kpx_sched, "random")) {
		*fallback = true;
		return "rr";
	}
	for (i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		if (!strcmp(kpx_sched, native[i]))
			return native[i];
	return NULL;
}
