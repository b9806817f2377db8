// SPDX-License-Identifier: GPL-2.0-only
/*
 * nl.c without a kernel: SET message building (sizes, byte order, backend
 * sets split over KPX_SVC_A_BACKENDS and top-level KPX_A_BACKENDS to stay
 * under the 64 KiB attribute limit), dump parsing (continuations, malformed input), error and
 * extended-ack decoding, stats parsing.  Uses the internals
 * declared in nl_priv.h.  TAP output.
 *
 * Over 600 lines as one concern: the client's encoding and decoding of
 * every message of the kpx family.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/kpx.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "dp/kpx/nl_priv.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

static struct kpx_nl fake = { .g = { .sk = NULL, .family_id = 0x1234 } };

/* A TCP frontend with @n generated backends 10.0.0.i / fd00:244::i, :8080. */
static struct kpx_service mksvc(int family, const char *vip, uint16_t port,
				size_t n)
{
	struct kpx_service s = fx_frontend(family, IPPROTO_TCP, vip, port);

	s.nbackends = n;
	s.backends = calloc(n ? n : 1, sizeof(*s.backends));
	for (size_t i = 0; i < n; i++) {
		struct kpx_backend *b = &s.backends[i];

		if (family == AF_INET) {
			b->addr.v4.s_addr = htonl(0x0a000000u | (uint32_t)i);
		} else {
			inet_pton(AF_INET6, "fd00:244::", &b->addr.v6);
			b->addr.v6.s6_addr[14] = (uint8_t)(i >> 8);
			b->addr.v6.s6_addr[15] = (uint8_t)i;
		}
		b->port = 8080;
		b->weight = 1;
	}
	return s;
}

static void test_build_small(void)
{
	struct kpx_service s = mksvc(AF_INET, "10.96.0.10", 80, 3);
	struct nlattr *tb[KPX_A_MAX + 1], *stb[KPX_SVC_A_MAX + 1];
	struct kpx_nl_dumpbuf d = { 0 };
	struct nl_msg *msg = NULL;
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;
	const uint8_t *p;
	int ret;

	s.flags = KPX_SVC_F_DROP_EMPTY;
	s.backends[1].weight = 5;
	s.backends[2].weight = 0;
	ret = kpx_nl_build_set(&fake, &s, &msg);
	ok(ret == 0 && msg, "build SET of 3 IPv4 backends");
	if (ret)
		return;
	nlh = nlmsg_hdr(msg);
	gh = nlmsg_data(nlh);
	ok(nlh->nlmsg_type == 0x1234 && gh->cmd == KPX_CMD_SET_SERVICE &&
	   gh->version == KPX_GENL_VERSION,
	   "family id, command and version in the headers");
	genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL);
	nla_parse_nested(stb, KPX_SVC_A_MAX, tb[KPX_A_SERVICE], NULL);
	p = nla_data(stb[KPX_SVC_A_PORT]);
	ok(nla_len(stb[KPX_SVC_A_PORT]) == 2 && p[0] == 0 && p[1] == 80,
	   "frontend port on the wire is big-endian 00 50");
	p = nla_data(stb[KPX_SVC_A_ADDR]);
	ok(nla_len(stb[KPX_SVC_A_ADDR]) == 4 && p[0] == 10 && p[1] == 96 &&
	   p[3] == 10, "VIP on the wire: 4 bytes 10.96.0.10");
	ok(nla_get_u16(stb[KPX_SVC_A_FAMILY]) == AF_INET &&
	   nla_get_u8(stb[KPX_SVC_A_PROTOCOL]) == IPPROTO_TCP &&
	   nla_get_u32(stb[KPX_SVC_A_FLAGS]) == KPX_SVC_F_DROP_EMPTY,
	   "family u16, protocol u8, flags u32");

	/* The SET body has the dump's shape: read it back with the parser. */
	ret = kpx_nl_parse_service(nlh, &d);
	ok(ret == 0 && d.n == 1 && d.v[0].nbackends == 3 &&
	   d.v[0].port == 80 && d.v[0].flags == KPX_SVC_F_DROP_EMPTY,
	   "parsed back: 1 frontend, port 80, 3 backends");
	ok(ret == 0 && d.v[0].backends[0].weight == 1 &&
	   d.v[0].backends[1].weight == 5 && d.v[0].backends[2].weight == 1 &&
	   d.v[0].backends[1].port == 8080 &&
	   ntohl(d.v[0].backends[2].addr.v4.s_addr) == 0x0a000002,
	   "weights 1 (omitted), 5, 1 (0 omitted); port 8080; addr 10.0.0.2");
	kpx_nl_dump_reset(&d);
	nlmsg_free(msg);
	kpx_service_free(&s);
}

/*
 * KPX_SVC_F_EXT_LOCAL sends KPX_SVC_A_CLUSTER_ADDR/PORT (network
 * order) and reads them back; without the flag they are not sent.
 */
static void test_build_ext_local(void)
{
	struct kpx_service s = mksvc(AF_INET6, "2001:db8::40", 443, 1);
	struct nlattr *tb[KPX_A_MAX + 1], *stb[KPX_SVC_A_MAX + 1];
	struct kpx_nl_dumpbuf d = { 0 };
	struct nl_msg *msg = NULL;
	struct in6_addr want;
	const uint8_t *p;
	int ret;

	inet_pton(AF_INET6, "fd00:10:96::30", &want);
	s.flags = KPX_SVC_F_EXT_LOCAL | KPX_SVC_F_DROP_EMPTY;
	s.cluster_addr.v6 = want;
	s.cluster_port = 8443;
	ret = kpx_nl_build_set(&fake, &s, &msg);
	ok(ret == 0 && msg, "build SET of an ext-local IPv6 frontend");
	if (ret)
		return;
	genlmsg_parse(nlmsg_hdr(msg), 0, tb, KPX_A_MAX, NULL);
	nla_parse_nested(stb, KPX_SVC_A_MAX, tb[KPX_A_SERVICE], NULL);
	p = stb[KPX_SVC_A_CLUSTER_PORT] ? nla_data(stb[KPX_SVC_A_CLUSTER_PORT]) : NULL;
	ok(p && nla_len(stb[KPX_SVC_A_CLUSTER_PORT]) == 2 && p[0] == 0x20 &&
	   p[1] == 0xfb, "cluster port on the wire is big-endian 20 fb");
	ok(stb[KPX_SVC_A_CLUSTER_ADDR] &&
	   nla_len(stb[KPX_SVC_A_CLUSTER_ADDR]) == 16 &&
	   !memcmp(nla_data(stb[KPX_SVC_A_CLUSTER_ADDR]), &want, 16),
	   "cluster address on the wire: 16 bytes fd00:10:96::30");
	ret = kpx_nl_parse_service(nlmsg_hdr(msg), &d);
	ok(ret == 0 && d.n == 1 && d.v[0].cluster_port == 8443 &&
	   !memcmp(&d.v[0].cluster_addr.v6, &want, 16) &&
	   kpx_service_same_config(&d.v[0], &s),
	   "parsed back: cluster [fd00:10:96::30]:8443, same config");
	kpx_nl_dump_reset(&d);
	nlmsg_free(msg);

	s.flags = KPX_SVC_F_DROP_EMPTY;
	msg = NULL;
	ret = kpx_nl_build_set(&fake, &s, &msg);
	if (ret == 0) {
		genlmsg_parse(nlmsg_hdr(msg), 0, tb, KPX_A_MAX, NULL);
		nla_parse_nested(stb, KPX_SVC_A_MAX, tb[KPX_A_SERVICE], NULL);
	}
	ok(ret == 0 && !stb[KPX_SVC_A_CLUSTER_ADDR] &&
	   !stb[KPX_SVC_A_CLUSTER_PORT],
	   "without KPX_SVC_F_EXT_LOCAL no cluster attribute is sent");
	nlmsg_free(msg);
	kpx_service_free(&s);
}

/* What walk_set() found in a SET message. */
struct set_walk {
	size_t found;		/* backends seen, all matching, in order */
	size_t in_svc;		/* of which inside KPX_SVC_A_BACKENDS */
	int extra;		/* top-level KPX_A_BACKENDS nests */
	int max_len;		/* largest nla_len of a top-level attribute */
	bool match;		/* backend k on the wire is s->backends[k] */
	bool exact;		/* top-level attributes fill the payload exactly */
};

/* Checks the backends of nest @list against @s from index w->found on. */
static void walk_list(const struct kpx_service *s, struct nlattr *list,
		      size_t alen, struct set_walk *w)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, list, rem) {
		struct nlattr *tb[KPX_BE_A_MAX + 1];
		const struct kpx_backend *b = &s->backends[w->found];
		uint32_t weight;

		if (w->found >= s->nbackends ||
		    nla_type(a) != KPX_BACKENDS_A_BACKEND ||
		    nla_parse_nested(tb, KPX_BE_A_MAX, a, NULL) < 0 ||
		    !tb[KPX_BE_A_ADDR] || !tb[KPX_BE_A_PORT] ||
		    (size_t)nla_len(tb[KPX_BE_A_ADDR]) != alen) {
			w->match = false;
			return;
		}
		weight = tb[KPX_BE_A_WEIGHT] ?
			 nla_get_u32(tb[KPX_BE_A_WEIGHT]) : 1;
		if (memcmp(nla_data(tb[KPX_BE_A_ADDR]), &b->addr, alen) ||
		    ntohs(nla_get_u16(tb[KPX_BE_A_PORT])) != b->port ||
		    weight != (b->weight > 1 ? b->weight : 1))
			w->match = false;
		w->found++;
	}
	if (rem)
		w->match = false;
}

/*
 * Reads a SET message back with libnl alone: KPX_A_SERVICE and its
 * KPX_SVC_A_BACKENDS through nla_parse, then every top-level attribute in
 * turn (nla_parse keeps only the last of a repeated type).
 */
static struct set_walk walk_set(const struct kpx_service *s,
				struct nl_msg *msg)
{
	struct set_walk w = { .match = true };
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[KPX_A_MAX + 1], *stb[KPX_SVC_A_MAX + 1], *a;
	size_t alen = s->family == AF_INET ? 4 : 16;
	int rem, nsvc = 0;

	if (nla_parse(tb, KPX_A_MAX, genlmsg_attrdata(gh, 0),
		      genlmsg_attrlen(gh, 0), NULL) < 0 || !tb[KPX_A_SERVICE] ||
	    nla_parse_nested(stb, KPX_SVC_A_MAX, tb[KPX_A_SERVICE], NULL) < 0) {
		w.match = false;
		return w;
	}
	if (stb[KPX_SVC_A_BACKENDS])
		walk_list(s, stb[KPX_SVC_A_BACKENDS], alen, &w);
	w.in_svc = w.found;
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		if (a->nla_len > w.max_len)
			w.max_len = a->nla_len;
		if (nla_type(a) == KPX_A_SERVICE) {
			/* One service nest, first, before any extension. */
			if (nsvc++ || w.extra)
				w.match = false;
		} else if (nla_type(a) == KPX_A_BACKENDS) {
			w.extra++;
			walk_list(s, a, alen, &w);
		} else {
			w.match = false;
		}
	}
	w.exact = rem == 0 && nsvc == 1;
	return w;
}

static void test_build_split(void)
{
	static const struct {
		int family;
		size_t n;
		bool weighted;		/* every weight > 1: 40-byte IPv6 entries */
		size_t in_svc;		/* expected in KPX_SVC_A_BACKENDS */
		int extra;		/* expected top-level KPX_A_BACKENDS */
	} cases[] = {
		{ AF_INET6, 0, false, 0, 0 },
		{ AF_INET6, 1, false, 1, 0 },
		{ AF_INET6, 2046, false, 2046, 0 },
		{ AF_INET6, 2047, false, 2046, 1 },
		/* 2046 + 31 * 2047 + 32 */
		{ AF_INET6, KPX_BACKENDS_MAX, false, 2046, 32 },
		/* 1636 + 39 * 1638 + 17 */
		{ AF_INET6, KPX_BACKENDS_MAX, true, 1636, 40 },
		{ AF_INET, 3274, false, 3274, 0 },
		{ AF_INET, 3275, false, 3274, 1 },
		/* 3274 + 19 * 3276 + 17 */
		{ AF_INET, KPX_BACKENDS_MAX, false, 3274, 20 },
		/* Over the limit is still built: the kernel says EINVAL. */
		{ AF_INET6, KPX_BACKENDS_MAX + 1, false, 2046, 32 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *fam = cases[i].family == AF_INET ? "IPv4" : "IPv6";
		struct kpx_service s = mksvc(cases[i].family,
					     cases[i].family == AF_INET ?
					     "10.0.0.1" : "fd00::1", 80,
					     cases[i].n);
		struct kpx_nl_dumpbuf d = { 0 };
		struct nl_msg *msg = NULL;
		struct set_walk w;
		size_t len, same = 0;
		int ret;

		for (size_t k = 0; k < s.nbackends; k++) {
			s.backends[k].port = (uint16_t)(1000 + k % 50000);
			if (cases[i].weighted)
				s.backends[k].weight = 2 + (uint32_t)k % 60000;
		}
		fake.g.errmsg[0] = '\0';
		ret = kpx_nl_build_set(&fake, &s, &msg);
		ok(ret == 0 && msg, "%s, %zu backends%s: built (%d)", fam,
		   cases[i].n, cases[i].weighted ? ", weighted" : "", ret);
		if (ret) {
			kpx_service_free(&s);
			continue;
		}
		len = nlmsg_hdr(msg)->nlmsg_len;
		w = walk_set(&s, msg);
		ok(w.match && w.exact && w.found == cases[i].n,
		   "  nla_parse finds all %zu backends once, in order (%zu)",
		   cases[i].n, w.found);
		ok(w.in_svc == cases[i].in_svc && w.extra == cases[i].extra,
		   "  %zu in KPX_SVC_A_BACKENDS (want %zu), %d KPX_A_BACKENDS "
		   "(want %d)", w.in_svc, cases[i].in_svc, w.extra,
		   cases[i].extra);
		ok(w.max_len <= 0xffff &&
		   (cases[i].extra == 0 || w.max_len > 0xffff - 40),
		   "  largest attribute %d bytes: < 64 KiB, nests filled",
		   w.max_len);
		ok(nlmsg_get_max_size(msg) >= len &&
		   len > cases[i].n * (cases[i].family == AF_INET ? 20 : 32),
		   "  message %zu bytes, buffer %zu bytes", len,
		   nlmsg_get_max_size(msg));

		/* The agent's own parser agrees (KPX_A_BACKENDS appended). */
		ret = kpx_nl_parse_service(nlmsg_hdr(msg), &d);
		if (!ret && d.n == 1 && d.v[0].nbackends == cases[i].n)
			for (size_t k = 0; k < cases[i].n; k++)
				same += !kpx_backend_cmp(&d.v[0].backends[k],
							 &s.backends[k]) &&
					d.v[0].backends[k].weight ==
					(s.backends[k].weight > 1 ?
					 s.backends[k].weight : 1);
		ok(ret == 0 && d.n == 1 && same == cases[i].n,
		   "  kpx_nl_parse_service reads %zu backends back",
		   same);
		kpx_nl_dump_reset(&d);
		/* kpx_nl_dump_frontends(): counted, not stored */
		d.count_backends = true;
		ret = kpx_nl_parse_service(nlmsg_hdr(msg), &d);
		ok(ret == 0 && d.n == 1 && d.v[0].nbackends == cases[i].n &&
		   !d.v[0].backends,
		   "  counting only: %zu backends, none stored",
		   d.n ? d.v[0].nbackends : 0);
		kpx_nl_dump_reset(&d);
		nlmsg_free(msg);
		kpx_service_free(&s);
	}
}

/* A dump message for VIP:80/tcp with backends 10.244.0.[first, first + n). */
static struct nl_msg *dump_msg(const char *vip, unsigned first, unsigned n,
			       uint64_t conns, int addrlen)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *svc, *list, *be;
	unsigned char a[16] = { 0 };

	genlmsg_put(msg, 0, 1, 0x1234, 0, NLM_F_MULTI, KPX_CMD_GET_SERVICE,
		    KPX_GENL_VERSION);
	inet_pton(AF_INET, vip, a);
	svc = nla_nest_start(msg, KPX_A_SERVICE);
	nla_put_u16(msg, KPX_SVC_A_FAMILY, AF_INET);
	nla_put_u8(msg, KPX_SVC_A_PROTOCOL, IPPROTO_TCP);
	nla_put(msg, KPX_SVC_A_ADDR, addrlen, a);
	nla_put_u16(msg, KPX_SVC_A_PORT, htons(80));
	nla_put_u64(msg, KPX_SVC_A_CONNS, conns);
	nla_put_u64(msg, KPX_SVC_A_REJECTS, 3);
	list = nla_nest_start(msg, KPX_SVC_A_BACKENDS);
	for (unsigned i = first; i < first + n; i++) {
		uint32_t ip = htonl(0x0af40000u + i);

		be = nla_nest_start(msg, KPX_BACKENDS_A_BACKEND);
		nla_put(msg, KPX_BE_A_ADDR, 4, &ip);
		nla_put_u16(msg, KPX_BE_A_PORT, htons(8080));
		nla_put_u32(msg, KPX_BE_A_WEIGHT, i + 1);
		nla_put_u64(msg, KPX_BE_A_CONNS, 100 + i);
		nla_nest_end(msg, be);
	}
	nla_nest_end(msg, list);
	nla_nest_end(msg, svc);
	return msg;
}

static void test_dump_parse(void)
{
	struct nl_msg *m1 = dump_msg("10.96.0.10", 0, 2, 60, 4);
	struct nl_msg *m2 = dump_msg("10.96.0.10", 2, 1, 999, 4);
	struct nl_msg *m3 = dump_msg("10.96.0.11", 5, 1, 7, 4);
	struct nl_msg *bad = dump_msg("10.96.0.12", 0, 1, 0, 16);
	struct kpx_nl_dumpbuf d = { 0 };
	int r1, r2, r3;

	r1 = kpx_nl_parse_service(nlmsg_hdr(m1), &d);
	r2 = kpx_nl_parse_service(nlmsg_hdr(m2), &d);
	r3 = kpx_nl_parse_service(nlmsg_hdr(m3), &d);
	ok(!r1 && !r2 && !r3 && d.n == 2,
	   "3 messages, 2 frontends (the 2nd message continues the 1st)");
	ok(d.n == 2 && d.v[0].nbackends == 3 && d.v[0].conns == 60 &&
	   d.v[0].rejects == 3 && d.v[0].backends[2].weight == 3 &&
	   d.v[0].backends[2].conns == 102 &&
	   ntohl(d.v[0].backends[2].addr.v4.s_addr) == 0x0af40002,
	   "continuation appended: 3 backends, counters of the first message");
	ok(d.n == 2 && d.v[1].nbackends == 1 && d.v[1].conns == 7 &&
	   d.v[1].backends[0].port == 8080 && d.v[1].port == 80 &&
	   ntohl(d.v[1].addr.v4.s_addr) == 0x0a60000b,
	   "second frontend 10.96.0.11:80 with its backend, host-order ports");
	ok(kpx_nl_parse_service(nlmsg_hdr(bad), &d) == -EBADMSG && d.n == 2,
	   "IPv4 frontend with a 16-byte address is -EBADMSG");
	kpx_nl_dump_reset(&d);
	ok(d.n == 0 && d.v == NULL, "dump_reset empties");
	nlmsg_free(m1);
	nlmsg_free(m2);
	nlmsg_free(m3);
	nlmsg_free(bad);
}

/*
 * A SET with more source ranges than one attribute holds: the first ones in
 * KPX_SVC_A_SOURCE_RANGES, the rest in top-level KPX_A_SOURCE_RANGES, all
 * in order, every attribute within 64 KiB; the backends all still there.
 */
static void test_build_ranges_split(void)
{
	struct kpx_service s = mksvc(AF_INET6, "fd00::1", 80, 3000);
	size_t n = 5000, found = 0, lists = 0, in_svc = 0;
	struct nlattr *tb[KPX_SVC_A_MAX + 1], *a, *c;
	struct nl_msg *msg = NULL;
	bool order = true, small = true;
	int ret, rem, crem;

	s.source_ranges = calloc(n, sizeof(*s.source_ranges));
	s.nsource_ranges = n;
	for (size_t i = 0; i < n; i++) {
		s.source_ranges[i].family = AF_INET6;
		inet_pton(AF_INET6, "2001:db8::", &s.source_ranges[i].addr.v6);
		s.source_ranges[i].addr.v6.s6_addr[4] = (uint8_t)(i >> 8);
		s.source_ranges[i].addr.v6.s6_addr[5] = (uint8_t)i;
		s.source_ranges[i].len = 48;
	}
	ret = kpx_nl_build_set(&fake, &s, &msg);
	ok(ret == 0 && msg, "5000 IPv6 ranges, 3000 backends: built (%d)", ret);
	if (ret) {
		kpx_service_free(&s);
		return;
	}
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlmsg_hdr(msg)), 0),
			  genlmsg_attrlen(nlmsg_data(nlmsg_hdr(msg)), 0), rem) {
		struct nlattr *list = NULL;

		small &= nla_len(a) <= 0xffff;
		if (nla_type(a) == KPX_A_SERVICE &&
		    !nla_parse_nested(tb, KPX_SVC_A_MAX, a, NULL))
			list = tb[KPX_SVC_A_SOURCE_RANGES];
		else if (nla_type(a) == KPX_A_SOURCE_RANGES)
			list = a, lists++;
		if (!list)
			continue;
		nla_for_each_nested(c, list, crem) {
			struct nlattr *cd[KPX_CIDR_A_MAX + 1];
			const unsigned char *ad;

			if (nla_parse_nested(cd, KPX_CIDR_A_MAX, c, NULL) ||
			    !cd[KPX_CIDR_A_ADDR]) {
				order = false;
				continue;
			}
			ad = nla_data(cd[KPX_CIDR_A_ADDR]);
			order &= (size_t)(ad[4] << 8 | ad[5]) == found % 65536;
			found++;
			in_svc += nla_type(a) == KPX_A_SERVICE;
		}
	}
	ok(found == n && order && small && lists >= 3 && in_svc > 0,
	   "  all %zu ranges once, in order (%zu: %zu in KPX_SVC_A_SOURCE_RANGES, %zu top-level lists), every attribute <= 64 KiB",
	   n, found, in_svc, lists);
	nlmsg_free(msg);
	kpx_service_free(&s);
}

/*
 * A dump message of 10.96.0.20:80 with source ranges 10.<first..first+nr>.0.0/16
 * (no ranges nest if @nr < 0) and backends 10.244.0.<bfirst..bfirst+nb>.
 */
static struct nl_msg *ranges_msg(int rfirst, int nr, unsigned bfirst,
				 unsigned nb)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlattr *svc, *list, *c, *be;
	uint32_t vip = htonl(0x0a600014u);

	genlmsg_put(msg, 0, 1, 0x1234, 0, NLM_F_MULTI, KPX_CMD_GET_SERVICE,
		    KPX_GENL_VERSION);
	svc = nla_nest_start(msg, KPX_A_SERVICE);
	nla_put_u16(msg, KPX_SVC_A_FAMILY, AF_INET);
	nla_put_u8(msg, KPX_SVC_A_PROTOCOL, IPPROTO_TCP);
	nla_put(msg, KPX_SVC_A_ADDR, 4, &vip);
	nla_put_u16(msg, KPX_SVC_A_PORT, htons(80));
	if (nr >= 0) {
		list = nla_nest_start(msg, KPX_SVC_A_SOURCE_RANGES);
		for (int i = rfirst; i < rfirst + nr; i++) {
			uint32_t a = htonl(0x0a000000u | (uint32_t)i << 16);

			c = nla_nest_start(msg, KPX_CIDRS_A_CIDR);
			nla_put_u16(msg, KPX_CIDR_A_FAMILY, AF_INET);
			nla_put(msg, KPX_CIDR_A_ADDR, 4, &a);
			nla_put_u8(msg, KPX_CIDR_A_PREFIXLEN, 16);
			nla_nest_end(msg, c);
		}
		nla_nest_end(msg, list);
	}
	if (nb) {
		list = nla_nest_start(msg, KPX_SVC_A_BACKENDS);
		for (unsigned i = bfirst; i < bfirst + nb; i++) {
			uint32_t ip = htonl(0x0af40000u + i);

			be = nla_nest_start(msg, KPX_BACKENDS_A_BACKEND);
			nla_put(msg, KPX_BE_A_ADDR, 4, &ip);
			nla_put_u16(msg, KPX_BE_A_PORT, htons(8080));
			nla_nest_end(msg, be);
		}
		nla_nest_end(msg, list);
	}
	nla_nest_end(msg, svc);
	return msg;
}

/*
 * A frontend's source ranges over several messages (before its backends)
 * are joined; a module that repeats the whole list in every message (with
 * each backend slice) is read as one list.
 */
static void test_dump_ranges_split(void)
{
	struct nl_msg *m[4] = {
		ranges_msg(0, 3, 0, 0), ranges_msg(3, 2, 0, 2),
		ranges_msg(0, -1, 2, 3), ranges_msg(0, 0, 0, 0),
	};
	struct nl_msg *old[2] = { ranges_msg(0, 4, 0, 2), ranges_msg(0, 4, 2, 2) };
	struct kpx_nl_dumpbuf d = { 0 };
	int r = 0;

	for (int i = 0; i < 3; i++)
		r |= kpx_nl_parse_service(nlmsg_hdr(m[i]), &d);
	ok(!r && d.n == 1 && d.v[0].nsource_ranges == 5 &&
	   d.v[0].nbackends == 5 &&
	   ntohl(d.v[0].source_ranges[4].addr.v4.s_addr) == 0x0a040000 &&
	   d.v[0].source_ranges[4].len == 16,
	   "ranges over 2 messages, then backends: 5 ranges, 5 backends (%zu, %zu)",
	   d.n ? d.v[0].nsource_ranges : 0, d.n ? d.v[0].nbackends : 0);
	kpx_nl_dump_reset(&d);
	r = kpx_nl_parse_service(nlmsg_hdr(m[3]), &d);
	ok(!r && d.n == 1 && d.v[0].nsource_ranges == 0 && !d.v[0].nbackends,
	   "an empty ranges nest: no ranges");
	kpx_nl_dump_reset(&d);
	r = kpx_nl_parse_service(nlmsg_hdr(old[0]), &d) |
	    kpx_nl_parse_service(nlmsg_hdr(old[1]), &d);
	ok(!r && d.n == 1 && d.v[0].nsource_ranges == 4 &&
	   d.v[0].nbackends == 4,
	   "the whole list repeated with each backend slice: 4 ranges, 4 backends (%zu)",
	   d.n ? d.v[0].nsource_ranges : 0);
	kpx_nl_dump_reset(&d);
	for (int i = 0; i < 4; i++)
		nlmsg_free(m[i]);
	nlmsg_free(old[0]);
	nlmsg_free(old[1]);
}

/* An NLMSG_ERROR for errno @err with extack @text (or none), capped or not. */
static struct nl_msg *error_msg(int err, const char *text, bool capped,
				int miss_type)
{
	int flags = (text || miss_type ? NLM_F_ACK_TLVS : 0) |
		    (capped ? NLM_F_CAPPED : 0);
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_ERROR, flags);
	struct nlmsgerr e = { .error = -err };
	unsigned char orig[24] = { 0 };

	e.msg.nlmsg_len = capped ? NLMSG_HDRLEN : NLMSG_HDRLEN + sizeof(orig);
	e.msg.nlmsg_type = 0x1234;
	nlmsg_append(msg, &e, sizeof(e), NLMSG_ALIGNTO);
	if (!capped)	/* the echoed request's payload */
		nlmsg_append(msg, orig, sizeof(orig), NLMSG_ALIGNTO);
	if (text)
		nla_put_string(msg, NLMSGERR_ATTR_MSG, text);
	if (miss_type)
		nla_put_u32(msg, NLMSGERR_ATTR_MISS_TYPE, (uint32_t)miss_type);
	return msg;
}

static void test_errors(void)
{
	static const struct {
		int err;
		const char *text;
		bool capped;
		int miss;
		const char *want;
	} cases[] = {
		{ EINVAL, "duplicate backend", true, 0, "duplicate backend" },
		{ ENOENT, "no such frontend", false, 0, "no such frontend" },
		{ EPERM, NULL, true, 0, "" },
		{ EINVAL, NULL, true, 4, "missing attribute 4" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nl_msg *msg = error_msg(cases[i].err, cases[i].text,
					       cases[i].capped, cases[i].miss);
		struct kpx_genl_req r = { .g = &fake.g };
		int ret;

		fake.g.errmsg[0] = '\0';
		ret = kpx_genl_on_error(NULL, nlmsg_data(nlmsg_hdr(msg)), &r);
		ok(ret == NL_STOP && r.done && r.err == -cases[i].err &&
		   !strcmp(fake.g.errmsg, cases[i].want),
		   "error %d (%s): errno %d, extack \"%s\"", cases[i].err,
		   cases[i].capped ? "capped" : "with request", r.err,
		   fake.g.errmsg);
		nlmsg_free(msg);
	}
}

static void test_done(void)
{
	struct nl_msg *msg = nlmsg_alloc_simple(NLMSG_DONE,
						NLM_F_MULTI | NLM_F_ACK_TLVS |
						NLM_F_DUMP_INTR);
	struct kpx_genl_req r = { .g = &fake.g };
	int err = -ENOBUFS;

	nlmsg_append(msg, &err, sizeof(err), NLMSG_ALIGNTO);
	nla_put_string(msg, NLMSGERR_ATTR_MSG, "dump failed");
	fake.g.errmsg[0] = '\0';
	ok(kpx_genl_on_finish(msg, &r) == NL_STOP && r.done && r.err == -ENOBUFS &&
	   r.intr && !strcmp(fake.g.errmsg, "dump failed"),
	   "NLMSG_DONE: error -ENOBUFS, extack, DUMP_INTR seen");
	nlmsg_free(msg);

	msg = nlmsg_alloc_simple(NLMSG_DONE, NLM_F_MULTI);
	err = 0;
	nlmsg_append(msg, &err, sizeof(err), NLMSG_ALIGNTO);
	r = (struct kpx_genl_req){ .g = &fake.g };
	ok(kpx_genl_on_finish(msg, &r) == NL_STOP && r.done && !r.err && !r.intr,
	   "NLMSG_DONE of a clean dump");
	nlmsg_free(msg);
}

static void test_stats(void)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct kpx_nl_stats st = { 0 };
	struct nlattr *n;

	genlmsg_put(msg, 0, 1, 0x1234, 0, 0, KPX_CMD_GET_STATS,
		    KPX_GENL_VERSION);
	n = nla_nest_start(msg, KPX_A_STATS);
	nla_put_u32(msg, KPX_STATS_A_SERVICES, 12);
	nla_put_u32(msg, KPX_STATS_A_BACKENDS, 34);
	nla_put_u64(msg, KPX_STATS_A_CONNS, 5000000000ULL);
	nla_put_u64(msg, KPX_STATS_A_REJECTS, 6);
	nla_put_u64(msg, KPX_STATS_A_DROPS, 7);
	nla_nest_end(msg, n);
	ok(kpx_nl_parse_stats(nlmsg_hdr(msg), &st) == 0 && st.services == 12 &&
	   st.backends == 34 && st.conns == 5000000000ULL &&
	   st.rejects == 6 && st.drops == 7, "stats reply parsed (64-bit conns)");
	nlmsg_free(msg);
}

static void test_errno_map(void)
{
	ok(kpx_genl_errno(-NLE_OBJ_NOTFOUND) == -ENOENT &&
	   kpx_genl_errno(-NLE_PERM) == -EPERM &&
	   kpx_genl_errno(-NLE_NOMEM) == -ENOMEM &&
	   kpx_genl_errno(-NLE_MSGSIZE) == -EMSGSIZE &&
	   kpx_genl_errno(0) == 0 && kpx_genl_errno(-9999) == -EIO,
	   "libnl errors map to errno");
}

int main(void)
{
	printf("TAP version 13\n");
	test_build_small();
	test_build_ext_local();
	test_build_split();
	test_build_ranges_split();
	test_dump_parse();
	test_dump_ranges_split();
	test_errors();
	test_done();
	test_stats();
	test_errno_map();
	return tap_done();
}
