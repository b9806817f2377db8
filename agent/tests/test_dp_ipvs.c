// SPDX-License-Identifier: GPL-2.0-only
/*
 * ipvs_rules.c: scheduler mapping, IPVS service of a frontend, ipset
 * entries and their minimal diff, the iptables ruleset text, `ipset save`
 * parsing, the comment round trip, the KPX-IPVS-INPUT host-port filter,
 * the IPS set and the martian drop.  Pure; TAP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ip_vs.h>
#include <linux/kpx.h>

#include "dp/ipt/ipt_rules.h"
#include "dp/ipvs/ipvs_kubeproxy.h"
#include "dp/ipvs/ipvs_rules.h"
#include "base/strbuf.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

static void test_sched(void)
{
	bool fb;
	const char *r;

	r = kpx_ipvs_sched("", &fb);
	ok(r && !strcmp(r, "rr") && fb, "\"\" -> rr (fallback)");
	r = kpx_ipvs_sched("random", &fb);
	ok(r && !strcmp(r, "rr") && fb, "random -> rr (fallback)");
	r = kpx_ipvs_sched("wrr", &fb);
	ok(r && !strcmp(r, "wrr") && !fb, "wrr -> wrr");
	r = kpx_ipvs_sched("mh", &fb);
	ok(r && !strcmp(r, "mh") && !fb, "mh -> mh");
	r = kpx_ipvs_sched("lc", &fb);
	ok(r && !strcmp(r, "lc"), "lc -> lc");
	r = kpx_ipvs_sched("sh", &fb);
	ok(r && !strcmp(r, "sh"), "sh -> sh");
	ok(!kpx_ipvs_sched("lblc", &fb), "unknown scheduler refused");
}

static void test_svc_of(void)
{
	struct kpx_service s = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.10", 80);
	struct kpx_ipvs_svc is;

	ok(!kpx_ipvs_svc_of(&s, &is) && !strcmp(is.sched, "rr") && !is.flags &&
	   !is.timeout && is.port == 80 && is.protocol == IPPROTO_TCP &&
	   is.addr.v4.s_addr == htonl(0x0a60000a),
	   "plain frontend: rr, no persistence, key copied");
	strcpy(s.scheduler, "sh");
	s.affinity_timeout = 10800;
	ok(!kpx_ipvs_svc_of(&s, &is) && !strcmp(is.sched, "sh") &&
	   is.flags == IP_VS_SVC_F_PERSISTENT && is.timeout == 10800,
	   "ClientIP affinity -> persistence 10800 s, sh kept");
	strcpy(s.scheduler, "bogus");
	ok(kpx_ipvs_svc_of(&s, &is) == -EINVAL, "unknown scheduler -> EINVAL");
}

static void test_entries(void)
{
	struct kpx_service s = fx_frontend(AF_INET, IPPROTO_TCP, "198.51.100.40", 80);
	struct kpx_cidr r[2] = { 0 };
	char (*l)[KPX_IPVS_LINE_MAX];
	struct kpx_backend b = { 0 };
	char line[KPX_IPVS_LINE_MAX];
	int n;

	s.flags = KPX_SVC_F_DROP_EMPTY | KPX_SVC_F_MASQ_NONLOCAL;
	r[0].family = AF_INET;
	inet_pton(AF_INET, "10.0.1.0", &r[0].addr);
	r[0].len = 24;
	s.source_ranges = r;
	s.nsource_ranges = 1;
	l = calloc((size_t)kpx_ipvs_entries_max(&s), sizeof(*l));
	n = kpx_ipvs_entries(&s, l, kpx_ipvs_entries_max(&s));
	ok(n == 5, "LB frontend, drop-empty, masq-nonlocal, 1 range, no backend: 5 entries (%d)", n);
	ok(n > 0 && !strcmp(l[0], "KPX-IPVS-SVC 198.51.100.40,tcp:80 comment \"f=3 s=- m=0 x=0\""),
	   "SVC entry with comment: %s", l[0]);
	ok(n > 1 && !strcmp(l[1], "KPX-IPVS-MASQ-NONLOCAL 198.51.100.40,tcp:80"), "%s", l[1]);
	ok(n > 2 && !strcmp(l[2], "KPX-IPVS-EMPTY-DROP 198.51.100.40,tcp:80"), "%s", l[2]);
	ok(n > 3 && !strcmp(l[3], "KPX-IPVS-FW 198.51.100.40,tcp:80"), "%s", l[3]);
	ok(n > 4 && !strcmp(l[4], "KPX-IPVS-FW-SRC 198.51.100.40,tcp:80,10.0.1.0/24"), "%s", l[4]);
	free(l);

	/* with a backend: no EMPTY-DROP */
	s.nbackends = 1;
	s.backends = &b;
	l = calloc(8, sizeof(*l));
	n = kpx_ipvs_entries(&s, l, 8);
	ok(n == 4, "with a backend the EMPTY-DROP entry goes (%d)", n);
	free(l);

	/* 0/0 is split in two /1 (ipset nets are /1..) */
	r[0].len = 0;
	memset(&r[0].addr, 0, sizeof(r[0].addr));
	l = calloc((size_t)kpx_ipvs_entries_max(&s), sizeof(*l));
	n = kpx_ipvs_entries(&s, l, kpx_ipvs_entries_max(&s));
	ok(n == 5 && !strcmp(l[3], "KPX-IPVS-FW-SRC 198.51.100.40,tcp:80,0.0.0.0/1") &&
	   !strcmp(l[4], "KPX-IPVS-FW-SRC 198.51.100.40,tcp:80,128.0.0.0/1"),
	   "0.0.0.0/0 -> two /1 halves");
	free(l);

	s = fx_frontend(AF_INET6, IPPROTO_UDP, "fd00:10:96::a", 53);
	s.flags = KPX_SVC_F_MASQ;
	strcpy(s.scheduler, "mh");
	l = calloc(8, sizeof(*l));
	n = kpx_ipvs_entries(&s, l, 8);
	ok(n == 2 && !strcmp(l[0], "KPX-IPVS6-SVC fd00:10:96::a,udp:53 comment \"f=4 s=mh m=0 x=0\"") &&
	   !strcmp(l[1], "KPX-IPVS6-MASQ fd00:10:96::a,udp:53"),
	   "IPv6 UDP masq frontend: %s | %s", l[0], l[1]);
	ok(kpx_ipvs_entries(&s, l, 1) == -ENOSPC, "too small a buffer: ENOSPC");
	free(l);

	inet_pton(AF_INET, "10.244.1.40", &b.addr);
	b.port = 8080;
	kpx_ipvs_loop_entry(AF_INET, IPPROTO_TCP, &b, line, sizeof(line));
	ok(!strcmp(line, "KPX-IPVS-LOOP 10.244.1.40,tcp:8080,10.244.1.40"),
	   "hairpin entry: %s", line);
	inet_pton(AF_INET6, "fd00:10:244:1::2", &b.addr);
	kpx_ipvs_loop_entry(AF_INET6, IPPROTO_SCTP, &b, line, sizeof(line));
	ok(!strcmp(line, "KPX-IPVS6-LOOP fd00:10:244:1::2,sctp:8080,fd00:10:244:1::2"),
	   "IPv6 SCTP hairpin entry: %s", line);
}

static char *diff(char (*o)[KPX_IPVS_LINE_MAX], int no, char (*n)[KPX_IPVS_LINE_MAX],
		  int nn, char **dels)
{
	char *a = NULL;
	size_t la, ld;
	FILE *fa = open_memstream(&a, &la), *fd = open_memstream(dels, &ld);

	kpx_ipvs_ipset_diff(fa, fd, o, no, n, nn);
	fclose(fa);
	fclose(fd);
	return a;
}

static void test_diff(void)
{
	char o[3][KPX_IPVS_LINE_MAX] = {
		"KPX-IPVS-SVC 10.96.0.1,tcp:80 comment \"f=0 s=- m=0 x=0\"",
		"KPX-IPVS-MASQ 10.96.0.1,tcp:80",
		"KPX-IPVS-EMPTY-DROP 10.96.0.1,tcp:80",
	};
	char n[2][KPX_IPVS_LINE_MAX] = {
		"KPX-IPVS-SVC 10.96.0.1,tcp:80 comment \"f=2 s=- m=0 x=0\"",
		"KPX-IPVS-MASQ-NONLOCAL 10.96.0.1,tcp:80",
	};
	char *dels = NULL, *adds;

	adds = diff(o, 3, n, 2, &dels);
	ok(!strcmp(adds, "add KPX-IPVS-SVC 10.96.0.1,tcp:80 comment \"f=2 s=- m=0 x=0\"\n"
			 "add KPX-IPVS-MASQ-NONLOCAL 10.96.0.1,tcp:80\n"),
	   "diff adds: changed comment re-added, new flag added");
	ok(!strcmp(dels, "del KPX-IPVS-MASQ 10.96.0.1,tcp:80\n"
			 "del KPX-IPVS-EMPTY-DROP 10.96.0.1,tcp:80\n"),
	   "diff dels: the SVC entry stays, old flags go");
	free(adds);
	free(dels);
	adds = diff(o, 3, NULL, 0, &dels);
	ok(!*adds && strstr(dels, "del KPX-IPVS-SVC 10.96.0.1,tcp:80\n") &&
	   !strstr(dels, "comment"), "deleted frontend: every entry deleted, no comment");
	free(adds);
	free(dels);
	adds = diff(o, 3, o, 3, &dels);
	ok(!*adds && !*dels, "unchanged frontend: nothing to do");
	free(adds);
	free(dels);
}

static void test_rules(void)
{
	struct kpx_ns_config c;
	char *t = NULL;
	size_t len;
	FILE *f;

	c = fx_ns_config("10.244.0.0/16,fd00:10:244::/48", NULL, "veth");
	f = open_memstream(&t, &len);
	kpx_ipvs_iptables_rules(f, AF_INET, &c, true);
	fclose(f);
	ok(strstr(t, "*nat\n:KPX-IPVS-PREROUTING - [0:0]\n") != NULL, "nat chains declared");
	ok(strstr(t, "-A KPX-IPVS-NONLOCAL -s 10.244.0.0/16 -j RETURN\n") &&
	   !strstr(t, "fd00:10:244::"), "IPv4 local CIDR only in the IPv4 ruleset");
	ok(strstr(t, "-A KPX-IPVS-NONLOCAL -i veth+ -j RETURN\n") &&
	   !strstr(t, "NONLOCAL-OUT -i"), "interface prefix only on the PREROUTING path");
	ok(strstr(t, "-A KPX-IPVS-POSTROUTING -m set --match-set KPX-IPVS-LOOP dst,dst,src -j MASQUERADE\n") != NULL,
	   "hairpin masquerade by the LOOP set");
	ok(strstr(t, "-A KPX-IPVS-MARK-MASQ -j MARK --or-mark 0x4000\n") &&
	   strstr(t, "-A KPX-IPVS-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n"),
	   "mark bit 0x4000 set and tested");
	free(t);
	{
		/* iptables.masqueradeBit 12 */
		struct kpx_dp_params p = *kpx_dp_params();

		p.masq_mark = 1U << 12;
		kpx_dp_set_params(&p);
		t = NULL;
		f = open_memstream(&t, &len);
		kpx_ipvs_iptables_rules(f, AF_INET, &c, true);
		fclose(f);
		p.masq_mark = KPX_DP_MASQ_MARK_DEFAULT;
		kpx_dp_set_params(&p);
		ok(strstr(t, "-A KPX-IPVS-MARK-MASQ -j MARK --or-mark 0x1000\n") &&
		   strstr(t, "-A KPX-IPVS-POSTROUTING -m mark ! --mark 0x1000/0x1000 -j RETURN\n") &&
		   strstr(t, "-A KPX-IPVS-POSTROUTING -j MARK --xor-mark 0x1000\n") && !strstr(t, "0x4000"),
		   "masqueradeBit 12: mark 0x1000 set, tested and cleared, no 0x4000");
		free(t);
	}
	t = NULL;
	f = open_memstream(&t, &len);
	kpx_ipvs_iptables_rules(f, AF_INET, &c, true);
	fclose(f);
	ok(strstr(t, "-A KPX-IPVS-FILTER -m set --match-set KPX-IPVS-FW dst,dst -m set ! --match-set KPX-IPVS-FW-SRC dst,dst,src -m conntrack --ctstate NEW -j DROP\n") != NULL,
	   "source ranges drop new connections from other sources");
	ok(strstr(t, "-A KPX-IPVS-OUTPUT -m set --match-set KPX-IPVS-SVC src,dst -j KPX-IPVS-MARK-MASQ\n") != NULL,
	   "node clients with the VIP as source are masqueraded");
	{
		struct kpx_strbuf b = { 0 };
		char *want = NULL;

		kpx_ipt_localnet_drop(&b, "KPX-IPVS-INPUT");
		if (asprintf(&want, "*filter\n:KPX-IPVS-INPUT - [0:0]\n:KPX-IPVS-FORWARD - [0:0]\n"
			     "-A KPX-IPVS-FORWARD -m conntrack --ctstate INVALID -m comment --comment \"conntrack INVALID: never forwarded untranslated\" -j DROP\n%s"
			     "-A KPX-IPVS-INPUT -m set --match-set KPX-IPVS-SVC dst,dst -j RETURN\n"
			     "-A KPX-IPVS-INPUT -m conntrack --ctstate NEW -m set --match-set KPX-IPVS-IPS dst -j REJECT\n"
			     "COMMIT\n", b.s ? b.s : "") < 0)
			want = NULL;
		ok(want && strstr(t, want),
		   "filter: FORWARD drops conntrack INVALID (KUBE-FORWARD, tcp_be_liberal 0); INPUT: the iptables mode's martian drop, frontends return, new connections to other ports of kpx-ipvs0 addresses rejected (KUBE-IPVS-FILTER)");
		ok(b.s && strstr(b.s, "-A KPX-IPVS-INPUT ! -s 127.0.0.0/8 -d 127.0.0.0/8 ") &&
		   strstr(b.s, "-m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n"),
		   "martian drop: non-loopback sources to 127.0.0.0/8 unless DNAT/established (CVE-2020-8558)");
		free(want);
		kpx_strbuf_free(&b);
	}
	free(t);
	t = NULL;
	f = open_memstream(&t, &len);
	kpx_ipvs_iptables_rules(f, AF_INET6, &c, false);
	fclose(f);
	ok(strstr(t, ":KPX-IPVS-FORWARD - [0:0]\n") && !strstr(t, "INVALID"),
	   "tcp_be_liberal set: KPX-IPVS-FORWARD declared (flushed) and empty, no INVALID drop");
	ok(strstr(t, "-s fd00:10:244::/48 -j RETURN") && strstr(t, "KPX-IPVS6-EMPTY-DROP dst,dst") &&
	   !strstr(t, "10.244."), "IPv6 ruleset: IPv6 sets and CIDRs");
	ok(strstr(t, "--match-set KPX-IPVS6-SVC dst,dst -j RETURN\n") &&
	   strstr(t, "--match-set KPX-IPVS6-IPS dst -j REJECT\n") && !strstr(t, "127.0.0.0/8"),
	   "IPv6 KPX-IPVS-INPUT: IPv6 sets, no IPv4 martian drop");
	free(t);
	t = NULL;
	f = open_memstream(&t, &len);
	kpx_ipvs_iptables_delete(f);
	fclose(f);
	ok(strstr(t, "*filter\n:KPX-IPVS-INPUT - [0:0]\n:KPX-IPVS-FORWARD - [0:0]\n"
		  "-X KPX-IPVS-INPUT\n-X KPX-IPVS-FORWARD\nCOMMIT\n") != NULL,
	   "delete input removes the filter chains too");
	free(t);
	{
		size_t i;
		bool input = false, fwd = false;

		for (i = 0; i < kpx_ipvs_njumps; i++) {
			input |= !strcmp(kpx_ipvs_jumps[i].table, "filter") &&
				 !strcmp(kpx_ipvs_jumps[i].chain, "INPUT") &&
				 !strcmp(kpx_ipvs_jumps[i].target, "KPX-IPVS-INPUT");
			fwd |= !strcmp(kpx_ipvs_jumps[i].table, "filter") &&
			       !strcmp(kpx_ipvs_jumps[i].chain, "FORWARD") &&
			       !strcmp(kpx_ipvs_jumps[i].target, "KPX-IPVS-FORWARD");
		}
		ok(input, "jump filter INPUT -> KPX-IPVS-INPUT (inserted, deleted by cleanup)");
		ok(fwd, "jump filter FORWARD -> KPX-IPVS-FORWARD (inserted, deleted by cleanup)");
	}
	t = NULL;
	f = open_memstream(&t, &len);
	{
		struct in_addr a4;
		struct in6_addr a6;

		inet_pton(AF_INET, "10.96.0.10", &a4);
		inet_pton(AF_INET6, "fd00:10:96::a", &a6);
		kpx_ipvs_ips_flush(f);
		kpx_ipvs_ips_cmd(f, "add", AF_INET, &a4);
		kpx_ipvs_ips_cmd(f, "del", AF_INET6, &a6);
	}
	fclose(f);
	ok(!strcmp(t, "flush KPX-IPVS-IPS\nflush KPX-IPVS6-IPS\n"
		   "add KPX-IPVS-IPS 10.96.0.10\ndel KPX-IPVS6-IPS fd00:10:96::a\n"),
	   "IPS set restore lines");
	free(t);
	t = NULL;
	f = open_memstream(&t, &len);
	kpx_ipvs_ipset_create(f);
	fclose(f);
	ok(strstr(t, "create KPX-IPVS-SVC hash:ip,port family inet comment\n") &&
	   strstr(t, "create KPX-IPVS6-FW-SRC hash:ip,port,net family inet6\n") &&
	   strstr(t, "create KPX-IPVS-LOOP hash:ip,port,ip family inet\n") &&
	   strstr(t, "create KPX-IPVS-IPS hash:ip family inet\n") &&
	   strstr(t, "create KPX-IPVS6-IPS hash:ip family inet6\n"),
	   "ipset create lines (IPS: hash:ip, both families)");
	free(t);
}

/* Loopback frontends (127.0.0.1 NodePorts) are not IPVS services. */
static void test_serves(void)
{
	struct kpx_service a = fx_frontend(AF_INET, IPPROTO_TCP, "127.0.0.1", 30700);
	struct kpx_service b = fx_frontend(AF_INET, IPPROTO_TCP, "127.1.2.3", 30700);
	struct kpx_service c = fx_frontend(AF_INET6, IPPROTO_TCP, "::1", 30700);
	struct kpx_service d = fx_frontend(AF_INET, IPPROTO_TCP, "192.0.2.11", 30700);
	struct kpx_service e = fx_frontend(AF_INET6, IPPROTO_TCP, "::ffff:127.0.0.1", 30700);
	struct kpx_service g = fx_frontend(AF_INET, IPPROTO_TCP, "128.0.0.1", 80);

	ok(!kpx_ipvs_serves(&a) && !kpx_ipvs_serves(&b) && !kpx_ipvs_serves(&c),
	   "127.0.0.0/8 and ::1 frontends are not programmed (IPVS refuses loopback sources to other hosts)");
	ok(kpx_ipvs_serves(&d) && kpx_ipvs_serves(&e) && kpx_ipvs_serves(&g),
	   "node, v4-mapped and 128.0.0.1 frontends are");
}

static void test_parse(void)
{
	struct kpx_ipvs_entry e;
	struct kpx_service s;
	char a[INET6_ADDRSTRLEN];

	ok(kpx_ipvs_parse_save_line("create KPX-IPVS-SVC hash:ip,port family inet", &e) == 0,
	   "create line ignored");
	ok(kpx_ipvs_parse_save_line("add KUBE-CLUSTER-IP 10.96.0.1,tcp:443", &e) == 0,
	   "other sets ignored");
	ok(kpx_ipvs_parse_save_line("add KPX-IPVS-IPS 10.96.0.10", &e) == 0 &&
	   kpx_ipvs_parse_save_line("add KPX-IPVS6-IPS fd00:10:96::a", &e) == 0,
	   "IPS entries (addresses, not frontends) are not read back as entries");
	ok(kpx_ipvs_parse_save_line("add KPX-IPVS-SVC 10.96.0.10,udp:53 comment \"f=1 s=- m=0 x=0\"", &e) == 1 &&
	   e.set == KPX_IPVS_SET_SVC && e.family == AF_INET && e.protocol == IPPROTO_UDP &&
	   e.port == 53 && e.addr.v4.s_addr == inet_addr("10.96.0.10") &&
	   !strcmp(e.comment, "f=1 s=- m=0 x=0"), "SVC line parsed with its comment");
	memset(&s, 0, sizeof(s));
	ok(!kpx_ipvs_comment_parse(e.comment, &s) && s.flags == 1 && !s.scheduler[0],
	   "comment: flags 1, default scheduler");
	ok(!kpx_ipvs_comment_parse("f=4 s=mh m=251 x=100", &s) && s.flags == 4 &&
	   !strcmp(s.scheduler, "mh") && s.mh_size == 251 && s.affinity_max == 100,
	   "comment: mh, table size and affinity max kept");
	ok(kpx_ipvs_comment_parse("junk", &s) == -EINVAL, "bad comment: EINVAL");
	ok(kpx_ipvs_parse_save_line("add KPX-IPVS6-FW-SRC fd00:10:96::1,sctp:80,fd00:10:1::/64", &e) == 1 &&
	   e.set == KPX_IPVS_SET_FW_SRC && e.family == AF_INET6 && e.protocol == IPPROTO_SCTP &&
	   e.net.len == 64 && inet_ntop(AF_INET6, &e.net.addr, a, sizeof(a)) &&
	   !strcmp(a, "fd00:10:1::"), "IPv6 FW-SRC line parsed");
	ok(kpx_ipvs_parse_save_line("add KPX-IPVS-FW-SRC 198.51.100.40,tcp:80,10.0.1.2", &e) == 1 &&
	   e.net.len == 32 && e.net.addr.v4.s_addr == inet_addr("10.0.1.2"),
	   "a host net without /32 reads as /32");
	ok(kpx_ipvs_parse_save_line("add KPX-IPVS-SVC 10.96.0.10,icmp:0", &e) == -EINVAL,
	   "malformed entry of our set: EINVAL");
}

/* Graceful termination: which removed destinations drain, when they go. */
static void test_drain(void)
{
	struct kpx_ipvs_dest d = { .weight = 1 };

	ok(kpx_ipvs_dest_drains(IPPROTO_TCP) && kpx_ipvs_dest_drains(IPPROTO_SCTP),
	   "removed TCP and SCTP destinations drain (weight 0)");
	ok(!kpx_ipvs_dest_drains(IPPROTO_UDP), "removed UDP destinations go at once");
	ok(!kpx_ipvs_dest_reapable(&d), "a backend (weight 1, no connection) is not reaped");
	d.weight = 0;
	d.active_conns = 1;
	ok(!kpx_ipvs_dest_reapable(&d), "quiesced with an established connection: kept");
	d.active_conns = 0;
	d.inact_conns = 2;
	ok(!kpx_ipvs_dest_reapable(&d), "quiesced with inactive connections (TIME_WAIT): kept");
	d.inact_conns = 0;
	ok(kpx_ipvs_dest_reapable(&d), "quiesced with no connection left: deleted");
}

/* An eTP Local frontend's cluster key survives the comment round trip (dump). */
static void test_cluster_key(void)
{
	char l[8][KPX_IPVS_LINE_MAX], cm[KPX_IPVS_COMMENT_MAX];
	struct kpx_service s = { .family = AF_INET6, .protocol = IPPROTO_TCP,
				 .port = 30180, .flags = KPX_SVC_F_EXT_LOCAL | KPX_SVC_F_DROP_EMPTY,
				 .scheduler = "mh", .mh_size = 1048573, .affinity_max = 65536,
				 .cluster_port = 65535 };
	struct kpx_service r = { .family = AF_INET6 };
	const char *c;
	int n;

	inet_pton(AF_INET6, "fd00:1234:5678:9abc:def0:1234:5678:9abc", &s.addr);
	inet_pton(AF_INET6, "fd00:10:96:ffff:ffff:ffff:ffff:ffff", &s.cluster_addr);
	n = kpx_ipvs_entries(&s, l, 8);
	c = n > 0 ? strstr(l[0], "comment \"") : NULL;
	ok(c && strstr(l[0], " c=fd00:10:96:ffff:ffff:ffff:ffff:ffff/65535\""),
	   "cluster key in the comment: %s", n > 0 ? l[0] : "");
	if (!c)
		return;
	snprintf(cm, sizeof(cm), "%.*s", (int)strcspn(c + 9, "\""), c + 9);
	ok(!kpx_ipvs_comment_parse(cm, &r) && r.cluster_port == 65535 &&
	   !memcmp(&r.cluster_addr, &s.cluster_addr, sizeof(struct in6_addr)) &&
	   r.flags == s.flags && r.mh_size == s.mh_size,
	   "cluster key, flags, mh size read back");
	r.family = AF_INET6;
	ok(kpx_ipvs_comment_parse("f=16 s=- m=0 x=0 c=10.96.0.1/0", &r) == -EINVAL,
	   "cluster port 0 or a wrong family: -EINVAL");
}

/*
 * The first commit of a new frontend (nothing committed: old is
 * NULL) with backends.  A build whose backend lookup dereferenced the
 * missing old frontend crashed kpx-agent --proxy-mode ipvs (SIGSEGV) at
 * its first sync; here that would kill the test.
 */
static void test_new_frontend(void)
{
	struct kpx_service s = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.1", 80);
	struct kpx_service old = s, s6 = fx_frontend(AF_INET6, IPPROTO_UDP, "fd00:10:96::1", 53);
	struct kpx_backend b[2] = { { .port = 8080, .weight = 1 }, { .port = 8080, .weight = 1 } };
	struct kpx_backend ob = { .port = 8080, .weight = 3 }, b6 = { .port = 5353, .weight = 1 };
	char *text = NULL;
	size_t len;
	FILE *f;
	int n;

	inet_pton(AF_INET, "10.200.0.1", &b[0].addr);
	inet_pton(AF_INET, "10.201.0.1", &b[1].addr);
	s.backends = b;
	s.nbackends = 2;
	ok(!kpx_ipvs_find_backend(NULL, &b[0]), "no committed frontend: no backend");
	f = open_memstream(&text, &len);
	n = kpx_ipvs_loop_adds(f, NULL, &s);
	fclose(f);
	ok(n == 2 && !strcmp(text, "add KPX-IPVS-LOOP 10.200.0.1,tcp:8080,10.200.0.1\n"
				   "add KPX-IPVS-LOOP 10.201.0.1,tcp:8080,10.201.0.1\n"),
	   "new frontend, 2 backends: both hairpin entries added (%d)", n);
	free(text);

	/* committed with 10.200.0.1 (another weight): only 10.201.0.1 is new */
	ob.addr = b[0].addr;
	old.backends = &ob;
	old.nbackends = 1;
	ok(kpx_ipvs_find_backend(&old, &b[0]) == &ob && !kpx_ipvs_find_backend(&old, &b[1]),
	   "lookup by address and port, not weight");
	text = NULL;
	f = open_memstream(&text, &len);
	n = kpx_ipvs_loop_adds(f, &old, &s);
	fclose(f);
	ok(n == 1 && !strcmp(text, "add KPX-IPVS-LOOP 10.201.0.1,tcp:8080,10.201.0.1\n"),
	   "changed frontend: only the new backend's entry (%d)", n);
	free(text);

	/* IPv6: all 16 bytes compared */
	inet_pton(AF_INET6, "fd00:10:244:1::10", &b6.addr);
	s6.backends = &b6;
	s6.nbackends = 1;
	old = s6;
	ob = b6;
	ob.addr.v6.s6_addr[15] ^= 1;
	old.backends = &ob;
	ok(!kpx_ipvs_find_backend(&old, &b6) && kpx_ipvs_find_backend(&s6, &b6) == &b6,
	   "IPv6 backends differing in the last byte are different");
	text = NULL;
	f = open_memstream(&text, &len);
	n = kpx_ipvs_loop_adds(f, NULL, &s6);
	fclose(f);
	ok(n == 1 && !strcmp(text, "add KPX-IPVS6-LOOP fd00:10:244:1::10,udp:5353,fd00:10:244:1::10\n"),
	   "IPv6 new frontend: its hairpin entry (%d)", n);
	free(text);
}

/* kube-proxy's ipsets and NodePorts from an "ipset save" of its IPVS mode, with others' sets. */
static void test_kubeproxy_sets(void)
{
	struct kpx_kube_sets ks;
	char *text = NULL, names[512] = "";
	size_t len = 0, i;
	FILE *f = fopen("../testdata/kube-proxy/ipset.save", "r");

	ok(f && getdelim(&text, &len, '\0', f) > 0, "kube-proxy's ipset save fixture read");
	if (f)
		fclose(f);
	ok(kpx_kube_sets_parse(text, &ks) == 0, "parsed");
	for (i = 0; i < ks.nnames; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? " " : "",
			 ks.names[i]);
	ok(!strcmp(names, "KUBE-CLUSTER-IP KUBE-LOOP-BACK KUBE-NODE-PORT-TCP KUBE-NODE-PORT-UDP KUBE-NODE-PORT-SCTP-HASH KUBE-6-CLUSTER-IP KUBE-6-NODE-PORT-TCP KUBE-HEALTH-CHECK-NODE-PORT"),
	   "its 8 sets, both families; KUBE-SRC-SITE1 and site-allow are not its (%s)", names);
	ok(ks.nports == 4 && kpx_kube_sets_nodeport(&ks, IPPROTO_TCP, 30080) &&
	   kpx_kube_sets_nodeport(&ks, IPPROTO_UDP, 30053) &&
	   kpx_kube_sets_nodeport(&ks, IPPROTO_SCTP, 30132) &&
	   kpx_kube_sets_nodeport(&ks, IPPROTO_TCP, 30443),
	   "NodePorts tcp 30080, udp 30053, sctp 30132, tcp 30443 (IPv6) (%zu)", ks.nports);
	ok(!kpx_kube_sets_nodeport(&ks, IPPROTO_UDP, 30080) && !kpx_kube_sets_nodeport(&ks, IPPROTO_TCP, 80),
	   "udp 30080 and tcp 80 are not NodePorts");
	kpx_kube_sets_free(&ks);
	free(text);
}

int main(void)
{
	printf("TAP version 13\n");
	test_sched();
	test_svc_of();
	test_entries();
	test_diff();
	test_rules();
	test_parse();
	test_serves();
	test_drain();
	test_cluster_key();
	test_new_frontend();
	test_kubeproxy_sets();
	return tap_done();
}
