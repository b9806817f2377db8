// SPDX-License-Identifier: GPL-2.0-only
/*
 * --proxy-mode iptables: the iptables-restore text of ipt_rules.c (chain
 * names, statistic probabilities, affinity, masquerade, reject/drop,
 * source ranges, partial restores, iptables-save parsing, cleanup), then,
 * when this process can enter a network namespace of its own (root,
 * unshare(CLONE_NEWNET), checked by the namespace's inode changing), the
 * real mode (dp_ipt.c) against iptables-restore in that private namespace:
 * full and partial commits, stale-chain removal, cleanup.  The host's own
 * namespace is never touched: without a new namespace those tests skip.
 * No packet is sent.  TAP output.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/kpx.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dp/dataplane.h"
#include "dp/ipt/ipt_kubeproxy.h"
#include "dp/ipt/ipt_rules.h"
#include "dp/kpx/nl.h"
#include "base/service.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

static bool has(const char *text, const char *line)
{
	return text && strstr(text, line) != NULL;
}

/* Occurrences of @needle in @text. */
static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static char *gen(int family, const struct kpx_service *v, size_t n, const bool *write,
		 const struct kpx_ns_config *cfg, unsigned int hooks,
		 const kpx_ipt_chain_t *del, size_t ndel)
{
	struct kpx_ipt_gen g = {
		.family = family, .svcs = v, .n = n, .write = write, .cfg = cfg,
		.add_hooks = hooks, .del_nat = del, .ndel_nat = ndel,
	};
	struct kpx_strbuf b = { 0 };
	int r = kpx_ipt_restore_text(&g, &b);

	ok(r == 0, "restore text generated (family %d): %d", family, r);
	return b.s;
}

/*
 * KPX-FORWARD: kube-proxy's KUBE-FORWARD drop of conntrack INVALID packets
 * while nf_conntrack_tcp_be_liberal is 0, on every forwarded packet (no
 * ctstate NEW on its hook), in full and partial restores; empty when
 * liberal, and never in INPUT or OUTPUT.
 */
static void test_forward_invalid(void)
{
	static const char drop[] =
		"-A KPX-FORWARD -m conntrack --ctstate INVALID -m comment --comment \"conntrack INVALID: never forwarded untranslated\" -j DROP\n";
	struct kpx_backend b1[1] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1) };
	struct kpx_service v[1];
	struct kpx_ipt_gen g = { .family = AF_INET, .svcs = v, .n = 1 };
	struct kpx_strbuf b = { 0 };
	const bool write[1] = { false };
	const char *nat;

	v[0] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, b1, 1);
	g.add_hooks = KPX_IPT_HOOKS_ALL;
	g.drop_invalid = true;
	ok(kpx_ipt_restore_text(&g, &b) == 0, "full restore, tcp_be_liberal 0");
	nat = b.s ? strstr(b.s, "*nat\n") : NULL;
	ok(b.s && !strncmp(b.s, "*filter\n:KPX-SERVICES - [0:0]\n:KPX-FORWARD - [0:0]\n",
			   strlen("*filter\n:KPX-SERVICES - [0:0]\n:KPX-FORWARD - [0:0]\n")),
	   "filter declares (flushes) KPX-FORWARD with KPX-SERVICES");
	ok(has(b.s, "-I FORWARD 1 -m comment --comment \"kpx forwarding rules\" -j KPX-FORWARD\n"),
	   "FORWARD -> KPX-FORWARD for every packet (no ctstate NEW: INVALID ones have no state)");
	ok(count(b.s, drop) == 1 && nat && strstr(b.s, drop) < nat, "one INVALID drop, in filter KPX-FORWARD");
	ok(count(b.s, "--ctstate INVALID") == 1, "no INVALID rule in INPUT, OUTPUT or nat (kube-proxy's forward path only)");
	kpx_strbuf_free(&b);

	memset(&b, 0, sizeof(b));
	g.add_hooks = 0;
	g.write = write;
	ok(kpx_ipt_restore_text(&g, &b) == 0 && count(b.s, drop) == 1 && !has(b.s, "-I "),
	   "partial restore rewrites KPX-FORWARD with its drop, inserts no hook");
	kpx_strbuf_free(&b);

	memset(&b, 0, sizeof(b));
	g.write = NULL;
	g.drop_invalid = false;
	ok(kpx_ipt_restore_text(&g, &b) == 0 && has(b.s, ":KPX-FORWARD - [0:0]\n") &&
	   !has(b.s, "INVALID") && !has(b.s, "-A KPX-FORWARD"),
	   "tcp_be_liberal set: KPX-FORWARD declared and empty, no INVALID drop");
	kpx_strbuf_free(&b);
	kpx_service_free(&v[0]);
}

static void test_names(void)
{
	struct kpx_backend b[1] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1) };
	struct kpx_service s = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, b, 1);
	kpx_ipt_chain_t c;
	char h[17];

	/* Reference: base32(sha256(text))[:16], computed with Python's hashlib. */
	kpx_ipt_hash("tcp/10.96.0.10/80", h);
	ok(!strcmp(h, "AHIFKRU6V7LPT6DE"), "hash of the frontend key: %s", h);
	kpx_ipt_chain_svc(&s, c);
	ok(!strcmp(c, "KPX-SVC-AHIFKRU6V7LPT6DE"), "service chain %s", c);
	kpx_ipt_chain_sep(&s, &b[0], c);
	ok(!strcmp(c, "KPX-SEP-2ECJOJEKTHPHX4LO"), "endpoint chain %s", c);
	ok(strlen(c) < KPX_IPT_CHAIN_LEN, "within iptables' name limit (%zu)", strlen(c));
	kpx_ipt_chain_fw(&s, c);
	ok(!strncmp(c, "KPX-FW-AHIFKRU6V7LPT6DE", 24), "firewall chain %s", c);
	s.protocol = IPPROTO_UDP;
	kpx_ipt_chain_svc(&s, c);
	ok(strcmp(c, "KPX-SVC-AHIFKRU6V7LPT6DE") != 0, "another protocol, another chain (%s)", c);
	kpx_service_free(&s);
}

static void test_full_v4(void)
{
	struct kpx_backend b2[2] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1),
				     fx_backend(AF_INET, "10.244.2.2", 8080, 1) };
	struct kpx_backend b3[3] = { fx_backend(AF_INET, "10.244.1.2", 53, 1),
				     fx_backend(AF_INET, "10.244.2.2", 53, 3),
				     fx_backend(AF_INET, "10.244.3.2", 53, 1) };
	struct kpx_service v[5];
	struct kpx_ns_config cfg;
	kpx_ipt_chain_t svc0, sep0, sep1, svc1, fw3;
	char *t, line[256];

	cfg = fx_ns_config("10.244.0.0/16,fd00:10:244::/56", NULL, "veth");

	v[0] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, b2, 2);
	v[0].flags = KPX_SVC_F_MASQ_NONLOCAL;
	v[0].affinity_timeout = 10800;
	v[1] = fx_service(AF_INET, IPPROTO_UDP, "10.96.0.53", 53, b3, 3);
	v[1].flags = KPX_SVC_F_MASQ;
	v[2] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.99", 80, NULL, 0);	/* reject */
	v[3] = fx_service(AF_INET, IPPROTO_TCP, "198.51.100.40", 80, b2, 2);
	fx_add_range(&v[3], "203.0.113.0/24");
	fx_add_range(&v[3], "10.0.1.0/24");
	v[4] = fx_service(AF_INET, IPPROTO_SCTP, "192.0.2.11", 30180, NULL, 0);
	v[4].flags = KPX_SVC_F_DROP_EMPTY;

	t = gen(AF_INET, v, 5, NULL, &cfg, KPX_IPT_HOOKS_ALL, NULL, 0);
	kpx_ipt_chain_svc(&v[0], svc0);
	kpx_ipt_chain_sep(&v[0], &v[0].backends[0], sep0);
	kpx_ipt_chain_sep(&v[0], &v[0].backends[1], sep1);
	kpx_ipt_chain_svc(&v[1], svc1);
	kpx_ipt_chain_fw(&v[3], fw3);

	ok(!strncmp(t, "*filter\n:KPX-SERVICES - [0:0]\n", 30), "filter first, its chain declared");
	ok(count(t, "COMMIT\n") == 2, "two tables committed");
	ok(has(t, "-I PREROUTING 1 -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n") &&
	   has(t, "-I OUTPUT 1 -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n") &&
	   has(t, "-I POSTROUTING 1 -m comment --comment \"kpx postrouting rules\" -j KPX-POSTROUTING\n"),
	   "nat hooks inserted");
	ok(has(t, "-I INPUT 1 -m conntrack --ctstate NEW -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n") &&
	   has(t, "-I FORWARD 1 -m conntrack --ctstate NEW") &&
	   has(t, "-I OUTPUT 1 -m conntrack --ctstate NEW"), "filter hooks inserted, new connections only");
	ok(has(t, "-A KPX-MARK-MASQ -j MARK --or-mark 0x4000\n"), "masquerade mark 0x4000");
	ok(has(t, "-A KPX-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n-A KPX-POSTROUTING -j MARK --xor-mark 0x4000\n-A KPX-POSTROUTING -m comment --comment \"kpx service traffic requiring SNAT\" -j MASQUERADE\n"),
	   "postrouting: unmarked return, mark cleared, masquerade");
	{
		/* iptables.masqueradeBit 0 */
		struct kpx_dp_params p = *kpx_dp_params();
		char *t2;

		p.masq_mark = 1U << 0;
		kpx_dp_set_params(&p);
		t2 = gen(AF_INET, v, 5, NULL, &cfg, KPX_IPT_HOOKS_ALL, NULL, 0);
		p.masq_mark = KPX_DP_MASQ_MARK_DEFAULT;
		kpx_dp_set_params(&p);
		ok(has(t2, "-A KPX-MARK-MASQ -j MARK --or-mark 0x1\n") &&
		   has(t2, "-A KPX-POSTROUTING -m mark ! --mark 0x1/0x1 -j RETURN\n-A KPX-POSTROUTING -j MARK --xor-mark 0x1\n") &&
		   !has(t2, "0x4000"),
		   "masqueradeBit 0: mark 0x1 set, tested and cleared, no 0x4000");
		free(t2);
	}
	ok(has(t, "-A KPX-MASQ-NONLOCAL -s 10.244.0.0/16 -j RETURN\n-A KPX-MASQ-NONLOCAL -i veth+ -j RETURN\n-A KPX-MASQ-NONLOCAL -j KPX-MARK-MASQ\n"),
	   "non-local: IPv4 prefix and interface prefix return, the rest is marked");
	ok(!has(t, "fd00:10:244"), "no IPv6 prefix in the IPv4 restore");

	snprintf(line, sizeof(line), "-A KPX-SERVICES -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -m comment --comment \"tcp 10.96.0.10:80\" -j %s\n", svc0);
	ok(has(t, line), "nat KPX-SERVICES jumps to the service chain");
	snprintf(line, sizeof(line), "-A %s -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KPX-MASQ-NONLOCAL\n", svc0);
	ok(has(t, line), "MASQ_NONLOCAL frontend jumps to KPX-MASQ-NONLOCAL, for its own destination");
	snprintf(line, sizeof(line), "-A %s -m recent --name %s --rcheck --seconds 10800 --reap -j %s\n", svc0, sep0, sep0);
	ok(has(t, line), "affinity check per endpoint (recent --rcheck --seconds --reap)");
	snprintf(line, sizeof(line), "-A %s -m statistic --mode random --probability 0.5000000000 -j %s\n-A %s -j %s\n",
		 svc0, sep0, svc0, sep1);
	ok(has(t, line), "two equal endpoints: 1/2 then the rest");
	snprintf(line, sizeof(line), "-A %s -s 10.244.1.2/32 -j KPX-MARK-MASQ\n-A %s -p tcp -m recent --name %s --set --rsource -m tcp -j DNAT --to-destination 10.244.1.2:8080\n",
		 sep0, sep0, sep0);
	ok(has(t, line), "endpoint chain: hairpin mark, affinity set, DNAT");
	snprintf(line, sizeof(line), "-A %s -d 10.96.0.53/32 -p udp -m udp --dport 53 -j KPX-MARK-MASQ\n", svc1);
	ok(has(t, line), "MASQ frontend marks every connection to it");
	ok(has(t, "--probability 0.2000000000 -j") && has(t, "--probability 0.7500000000 -j"),
	   "weights 1,3,1: probabilities 1/5 then 3/4");
	ok(count(t, "-m statistic") == 1 + 2 + 1, "one statistic rule per endpoint but the last");
	ok(has(t, "-p udp -m udp -j DNAT --to-destination 10.244.2.2:53\n"), "UDP DNAT");

	ok(has(t, "-A KPX-SERVICES -d 10.96.0.99/32 -p tcp -m tcp --dport 80 -m comment --comment \"tcp 10.96.0.99:80 has no endpoints\" -j REJECT\n"),
	   "no endpoints: REJECT in filter");
	ok(has(t, "-A KPX-SERVICES -d 192.0.2.11/32 -p sctp -m sctp --dport 30180 -m comment --comment \"sctp 192.0.2.11:30180 has no endpoints\" -j DROP\n"),
	   "no endpoints with DROP_EMPTY: DROP, SCTP match");
	ok(!has(t, "-d 10.96.0.99/32 -p tcp -m tcp --dport 80 -m comment --comment \"tcp 10.96.0.99:80\" -j"),
	   "no nat jump for a frontend without endpoints");

	snprintf(line, sizeof(line), "-m comment --comment \"tcp 198.51.100.40:80\" -j %s\n", fw3);
	ok(has(t, line), "source ranges: KPX-SERVICES jumps to the firewall chain");
	snprintf(line, sizeof(line), "-A %s -s 10.0.1.0/24 -j KPX-SVC-", fw3);
	ok(has(t, line), "firewall chain passes an allowed range on to the service chain");
	ok(has(t, "-A KPX-SERVICES -d 198.51.100.40/32 -p tcp -m tcp --dport 80 -m comment --comment \"tcp 198.51.100.40:80 source not allowed\" -j DROP\n"),
	   "other sources dropped in filter");
	ok(!has(t, "127.0.0.0/8"), "no localnet rule without a 127.0.0.1 frontend");
	ok(count(t, "\n:KPX-SEP-") == 2 + 3 + 2, "every endpoint chain declared in a full restore");
	free(t);

	/* Partial: only v[1] rewritten; a removed backend's chain deleted. */
	{
		bool write[5] = { false, true, false, false, false };
		kpx_ipt_chain_t del[1];

		snprintf(del[0], sizeof(del[0]), "KPX-SEP-AAAAAAAAAAAAAAAA");
		t = gen(AF_INET, v, 5, write, &cfg, 0, del, 1);
		snprintf(line, sizeof(line), ":%s - [0:0]\n", svc0);
		ok(!has(t, line), "partial: an unchanged frontend's chain is not flushed");
		snprintf(line, sizeof(line), "-j %s\n", svc0);
		ok(has(t, line), "partial: KPX-SERVICES still jumps to it");
		snprintf(line, sizeof(line), ":%s - [0:0]\n", svc1);
		ok(has(t, line), "partial: the changed frontend's chain is rewritten");
		ok(count(t, "\n:KPX-SEP-") == 3 + 1, "partial: its 3 endpoint chains and the deleted one declared");
		ok(has(t, "-X KPX-SEP-AAAAAAAAAAAAAAAA\nCOMMIT\n"), "partial: the removed chain deleted last");
		ok(!has(t, "-I "), "partial: no hook rule inserted");
		free(t);
	}
	for (int i = 0; i < 5; i++)
		kpx_service_free(&v[i]);
}

/*
 * An eTP Local external frontend (KPX_SVC_F_EXT_LOCAL) naming its
 * ClusterIP frontend: pods (the local-traffic detector's prefix and
 * interface prefix) and the node itself (addrtype LOCAL, masqueraded) jump
 * to the ClusterIP frontend's chain, before the local endpoints, as
 * kube-proxy's KUBE-EXT chain; the ClusterIP chain's masquerade rule
 * matches its own destination only, so the short-circuited pods keep
 * their source.  Without the ClusterIP frontend (or without its backends,
 * no chain) no short-circuit.
 */
static void test_etp_local_shortcut(void)
{
	struct kpx_backend all[2] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1),
				      fx_backend(AF_INET, "10.244.2.2", 8080, 1) };
	struct kpx_backend mine[1] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1) };
	struct kpx_service v[2];
	struct kpx_ns_config cfg;
	kpx_ipt_chain_t cip, ext;
	char *t, line[512];

	cfg = fx_ns_config("10.244.0.0/16", NULL, "veth");
	v[0] = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.42", 80, all, 2);
	v[0].flags = KPX_SVC_F_MASQ_NONLOCAL | KPX_SVC_F_CLUSTER_IP;
	v[1] = fx_service(AF_INET, IPPROTO_TCP, "198.51.100.8", 80, mine, 1);
	v[1].flags = KPX_SVC_F_EXT_LOCAL;
	inet_pton(AF_INET, "10.96.0.42", &v[1].cluster_addr.v4);
	v[1].cluster_port = 80;
	kpx_ipt_chain_svc(&v[0], cip);
	kpx_ipt_chain_svc(&v[1], ext);

	t = gen(AF_INET, v, 2, NULL, &cfg, 0, NULL, 0);
	snprintf(line, sizeof(line),
		 "-A %s -s 10.244.0.0/16 -j %s\n-A %s -i veth+ -j %s\n"
		 "-A %s -m addrtype --src-type LOCAL -j KPX-MARK-MASQ\n"
		 "-A %s -m addrtype --src-type LOCAL -j %s\n-A %s -j KPX-SEP-",
		 ext, cip, ext, cip, ext, ext, cip, ext);
	ok(has(t, line), "eTP Local LB IP: pods, then the node masqueraded, to the ClusterIP chain; the rest to the local endpoint");
	snprintf(line, sizeof(line), "-A %s -d 10.96.0.42/32 -p tcp -m tcp --dport 80 -j KPX-MASQ-NONLOCAL\n", cip);
	ok(has(t, line), "the ClusterIP chain's masquerade rule matches the ClusterIP only");
	free(t);

	t = gen(AF_INET, &v[1], 1, NULL, &cfg, 0, NULL, 0);
	ok(!has(t, "--src-type LOCAL") && !has(t, "-s 10.244.0.0/16 -j KPX-SVC"),
	   "no ClusterIP frontend: no short-circuit");
	free(t);
	v[1].nbackends = 0;
	t = gen(AF_INET, v, 2, NULL, &cfg, 0, NULL, 0);
	snprintf(line, sizeof(line), "-A KPX-SERVICES -d 198.51.100.8/32 -p tcp -m tcp --dport 80 -m comment --comment \"tcp 198.51.100.8:80\" -j %s\n", ext);
	ok(has(t, line), "no local endpoint: the nat jump stays, for the short-circuit");
	snprintf(line, sizeof(line), "-A %s -m addrtype --src-type LOCAL -j %s\nCOMMIT\n", ext, cip);
	ok(has(t, line) && has(t, "has no endpoints\" -j REJECT\n"),
	   "no local endpoint: pods and the node short-circuited, the rest falls through to the filter's drop or reject");
	free(t);
	v[1].nbackends = 1;
	v[0].nbackends = 0;
	t = gen(AF_INET, v, 2, NULL, &cfg, 0, NULL, 0);
	ok(!has(t, "--src-type LOCAL"), "ClusterIP frontend without backends (no chain): no short-circuit");
	free(t);
	v[0].nbackends = 2;
	v[1].flags = 0;
	t = gen(AF_INET, v, 2, NULL, &cfg, 0, NULL, 0);
	ok(!has(t, "--src-type LOCAL"), "eTP Cluster: no short-circuit");
	free(t);
	free(v[0].backends);
	free(v[1].backends);
}

static void test_v6_and_localhost(void)
{
	struct kpx_backend b6[1] = { fx_backend(AF_INET6, "fd00:10:244:1::2", 8080, 1) };
	struct kpx_backend b4[1] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1) };
	struct kpx_service v[2];
	char *t;

	v[0] = fx_service(AF_INET, IPPROTO_TCP, "127.0.0.1", 30180, b4, 1);
	v[0].flags = KPX_SVC_F_MASQ;
	v[1] = fx_service(AF_INET6, IPPROTO_TCP, "fd00:10:96::a", 80, b6, 1);
	ok(kpx_ipt_is_localhost(&v[0]) && !kpx_ipt_is_localhost(&v[1]), "127.0.0.1 frontend needs route_localnet");
	t = gen(AF_INET6, v, 2, NULL, NULL, 0, NULL, 0);
	ok(has(t, "-d fd00:10:96::a/128 -p tcp -m tcp --dport 80 -m comment --comment \"tcp [fd00:10:96::a]:80\" -j KPX-SVC-"),
	   "IPv6 frontend match");
	ok(has(t, "-j DNAT --to-destination [fd00:10:244:1::2]:8080\n"), "IPv6 DNAT in brackets");
	ok(has(t, "-s fd00:10:244:1::2/128 -j KPX-MARK-MASQ\n"), "IPv6 hairpin");
	ok(!has(t, "127.0.0.1") && !has(t, "statistic"), "IPv4 frontend skipped; one endpoint, no statistic");
	ok(has(t, ":KPX-MASQ-NONLOCAL - [0:0]\n") && has(t, "-A KPX-MASQ-NONLOCAL -j KPX-MARK-MASQ\n"),
	   "no local config: every source is non-local");
	free(t);
	t = gen(AF_INET, v, 2, NULL, NULL, 0, NULL, 0);
	ok(has(t, "-A KPX-SERVICES ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n"),
	   "localnet guard as kube-proxy (CVE-2020-8558)");
	ok(has(t, "-A KPX-SERVICES ! -s 127.0.0.0/8 -m comment --comment \"block forwarded localnet connections\" -m conntrack --ctstate DNAT --ctorigdst 127.0.0.0/8 -j DROP\n"),
	   "another host's 127.0.0.1:NodePort connection dropped after DNAT (CVE-2020-8558)");
	free(t);
	kpx_service_free(&v[0]);
	kpx_service_free(&v[1]);
}

static const char save_text[] =
	"# Generated by iptables-nft-save v1.8.9 (nf_tables)\n"
	"*filter\n"
	":INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
	":KPX-SERVICES - [0:0]\n"
	":KUBE-SERVICES - [0:0]\n"
	":KPX-IPVS-INPUT - [0:0]\n"
	"-A INPUT -j KPX-IPVS-INPUT\n"
	"-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n"
	"-A INPUT -j KUBE-SERVICES\n"
	"-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n"
	"COMMIT\n"
	"*nat\n"
	":PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n"
	":KPX-SERVICES - [0:0]\n:KPX-SVC-AHIFKRU6V7LPT6DE - [0:0]\n:KPX-POSTROUTING - [0:0]\n"
	"-A PREROUTING -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n"
	"-A POSTROUTING -m comment --comment \"kpx postrouting rules\" -j KPX-POSTROUTING\n"
	"-A KPX-SERVICES -d 10.96.0.10/32 -j KPX-SVC-AHIFKRU6V7LPT6DE\n"
	"COMMIT\n";

static void test_save_and_cleanup(void)
{
	struct kpx_ipt_saved s;
	struct kpx_strbuf b = { 0 };
	unsigned int want = (1U << KPX_IPT_HOOK_FILTER_INPUT) | (1U << KPX_IPT_HOOK_FILTER_OUTPUT) |
			    (1U << KPX_IPT_HOOK_NAT_PREROUTING) | (1U << KPX_IPT_HOOK_NAT_POSTROUTING);

	ok(kpx_ipt_parse_save(save_text, &s) == 0, "iptables-save output parsed");
	ok(s.nfilter == 1 && !strcmp(s.filter[0], "KPX-SERVICES"),
	   "filter: our chain only (not KUBE-, not the ipvs mode's KPX-IPVS-)");
	ok(s.nnat == 3 && !strcmp(s.nat[1], "KPX-SVC-AHIFKRU6V7LPT6DE"), "nat: 3 KPX- chains");
	ok(s.hooks == want, "hooks present: 0x%x (want 0x%x: nat OUTPUT and filter FORWARD missing)",
	   s.hooks, want);
	ok(s.njumps_filter == 2 && s.njumps_nat == 2, "jump rules from built-in chains: %zu filter, %zu nat",
	   s.njumps_filter, s.njumps_nat);
	ok(kpx_ipt_cleanup_text(&s, &b) == 0, "cleanup text");
	ok(has(b.s, "*filter\n:KPX-SERVICES - [0:0]\n-D INPUT -m conntrack --ctstate NEW -m comment --comment \"kpx service portals\" -j KPX-SERVICES\n"),
	   "cleanup: filter chain flushed, jump deleted");
	ok(has(b.s, "-X KPX-SVC-AHIFKRU6V7LPT6DE\n") && has(b.s, "-X KPX-POSTROUTING\n") &&
	   has(b.s, "-D POSTROUTING -m comment --comment \"kpx postrouting rules\" -j KPX-POSTROUTING\n"),
	   "cleanup: nat chains deleted, POSTROUTING jump deleted");
	ok(!has(b.s, "KUBE-"), "cleanup leaves kube-proxy's chains alone");
	ok(!has(b.s, "KPX-IPVS"), "and the ipvs mode's (its own cleanup removes them)");
	kpx_strbuf_free(&b);
	kpx_ipt_saved_free(&s);
	memset(&b, 0, sizeof(b));
	ok(kpx_ipt_parse_save("*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n", &s) == 0 &&
	   kpx_ipt_cleanup_text(&s, &b) == 0 && b.len == 0, "nothing of ours: empty cleanup");
	kpx_strbuf_free(&b);
	kpx_ipt_saved_free(&s);
}

/* --- the real mode in a private network namespace ------------------------ */

static char *sh_out(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *s = calloc(1, 1 << 20);
	size_t n = 0;

	if (!f || !s) {
		if (f)
			pclose(f);
		return s;
	}
	n = fread(s, 1, (1 << 20) - 1, f);
	while (n && s[n - 1] == '\n')
		n--;
	s[n] = '\0';
	pclose(f);
	return s;
}

static int chains_of(const char *save, const char *prefix)
{
	char want[32];

	snprintf(want, sizeof(want), "\n:%s", prefix);
	return count(save, want);
}

static void test_netns(void)
{
	extern const struct kpx_dp_ops kpx_dp_iptables;
	const struct kpx_dp_ops *ops = &kpx_dp_iptables;
	const struct kpx_dp_ops *const modes[] = { ops, NULL };
	struct kpx_backend b2[2] = { fx_backend(AF_INET, "10.244.1.2", 8080, 1),
				     fx_backend(AF_INET, "10.244.2.2", 8080, 1) };
	struct kpx_backend b6[1] = { fx_backend(AF_INET6, "fd00:10:244:1::2", 8080, 1) };
	struct kpx_service a, c, six, key, *dumped = NULL;
	struct kpx_ns_config cfg;
	struct stat st0, st1;
	struct kpx_dp *dp = NULL;
	size_t ndumped = 0;
	char err[512], *s, line[160];
	kpx_ipt_chain_t sep1;
	int r;

	if (stat("/proc/self/ns/net", &st0) || unshare(CLONE_NEWNET) ||
	    stat("/proc/self/ns/net", &st1) || st0.st_ino == st1.st_ino) {
		printf("# SKIP real iptables-restore tests: no private network namespace (needs root)\n");
		return;
	}
	ok(st0.st_ino != st1.st_ino, "in a private network namespace (inode %lu, was %lu)",
	   (unsigned long)st1.st_ino, (unsigned long)st0.st_ino);
	r = ops->open(&dp, 0, err, sizeof(err));
	if (r) {
		printf("# SKIP real iptables-restore tests: open: %s\n", err);
		return;
	}
	dp->ops = ops;
	/* A stale chain of an earlier run, and a rule of someone else. */
	s = sh_out("printf '*nat\\n:KPX-SVC-STALE - [0:0]\\n:OTHER - [0:0]\\n-A OTHER -j RETURN\\nCOMMIT\\n' | iptables-restore --noflush 2>&1; echo rc=$?");
	ok(has(s, "rc=0"), "stale chain planted: %s", s);
	free(s);

	cfg = fx_ns_config("10.244.0.0/16", NULL, NULL);
	a = fx_service(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, b2, 2);
	a.flags = KPX_SVC_F_MASQ_NONLOCAL;
	a.affinity_timeout = 60;
	c = fx_service(AF_INET, IPPROTO_UDP, "10.96.0.53", 53, NULL, 0);
	six = fx_service(AF_INET6, IPPROTO_TCP, "fd00:10:96::a", 80, b6, 1);
	fx_add_range(&six, "fd00:10:1::/64");
	ok(ops->set_config(dp, &cfg) == 0, "set_config");
	ok(ops->set_service(dp, &a) == 0 && ops->set_service(dp, &c) == 0 &&
	   ops->set_service(dp, &six) == 0, "three frontends queued");
	r = ops->commit(dp);
	ok(r == 0, "first commit: %d %s", r, dp->errmsg);

	s = sh_out("iptables-save");
	ok(chains_of(s, "KPX-SVC-") == 1 && chains_of(s, "KPX-SEP-") == 2,
	   "IPv4: one service chain, two endpoint chains");
	ok(!has(s, "KPX-SVC-STALE"), "stale KPX- chain removed by the first commit");
	ok(has(s, ":OTHER - [0:0]"), "someone else's chain left alone");
	ok(has(s, "-m statistic --mode random --probability 0.50000000000 -j KPX-SEP-") ||
	   has(s, "-m statistic --mode random --probability 0.5000000000 -j KPX-SEP-"),
	   "statistic rule accepted by the kernel");
	ok(has(s, "-m recent --rcheck --seconds 60 --reap --name KPX-SEP-") ||
	   has(s, "--rcheck --seconds 60 --reap"), "recent rule accepted");
	ok(has(s, "-d 10.96.0.53/32 -p udp -m udp --dport 53") && has(s, "-j REJECT"),
	   "UDP frontend without endpoints rejected in filter");
	ok(count(s, "-j KPX-SERVICES") == 5 && count(s, "-j KPX-POSTROUTING") == 1, "six hook rules");
	ok(count(s, "-A FORWARD -m comment --comment \"kpx forwarding rules\" -j KPX-FORWARD\n") == 1 &&
	   count(s, "-A KPX-FORWARD -m conntrack --ctstate INVALID") == 1,
	   "FORWARD -> KPX-FORWARD, its INVALID drop accepted by the kernel (a new namespace: tcp_be_liberal 0)");
	free(s);
	s = sh_out("ip6tables-save");
	ok(chains_of(s, "KPX-SVC-") == 1 && chains_of(s, "KPX-FW-") == 1 && chains_of(s, "KPX-SEP-") == 1,
	   "IPv6: service, firewall and endpoint chains");
	ok(has(s, "--to-destination [fd00:10:244:1::2]:8080"), "IPv6 DNAT accepted");
	free(s);

	/* Partial: a loses a backend, c is deleted. */
	kpx_ipt_chain_sep(&a, &a.backends[1], sep1);
	a.nbackends = 1;
	key = c;
	ok(ops->set_service(dp, &a) == 0 && ops->del_service(dp, &key) == 0, "partial changes queued");
	r = ops->commit(dp);
	ok(r == 0, "partial commit: %d %s", r, dp->errmsg);
	s = sh_out("iptables-save");
	snprintf(line, sizeof(line), ":%s ", sep1);
	ok(!has(s, line), "removed backend's endpoint chain deleted (%s)", sep1);
	ok(chains_of(s, "KPX-SEP-") == 1 && !has(s, "10.96.0.53"), "one endpoint left; deleted frontend gone");
	ok(count(s, "-j KPX-SERVICES") == 5, "hooks not duplicated");
	free(s);
	/*
	 * dump() is the syncer's periodic re-check.  With KPX-SERVICES in
	 * place and the last full commit under an hour old, the next commit
	 * rewrites nothing: a hook rule deleted by hand stays deleted until
	 * the hourly full commit, as with kube-proxy's FullSyncPeriod.
	 */
	s = sh_out("iptables -t nat -D OUTPUT -m comment --comment 'kpx service portals' -j KPX-SERVICES 2>&1; echo rc=$?");
	ok(has(s, "rc=0"), "nat OUTPUT hook deleted by hand: %s", s);
	free(s);
	ok(ops->dump(dp, &dumped, &ndumped) == 0 && ndumped == 2 && dumped[0].nbackends == 1,
	   "dump: what was committed (%zu frontends)", ndumped);
	kpx_services_free(dumped, ndumped);
	r = ops->commit(dp);
	ok(r == 0, "commit after the re-check, no change: %d %s", r, dp->errmsg);
	s = sh_out("iptables-save");
	ok(count(s, "-j KPX-SERVICES") == 4, "chains in place: no full rewrite, the hook stays deleted");
	free(s);
	/*
	 * A firewall reload flushes the nat table and deletes its chains:
	 * the re-check misses KPX-SERVICES and the next commit is full.
	 */
	s = sh_out("iptables -t nat -F && iptables -t nat -X && iptables -t nat -N OTHER 2>&1; echo rc=$?");
	ok(has(s, "rc=0"), "nat table flushed, its chains deleted: %s", s);
	free(s);
	ok(ops->dump(dp, &dumped, &ndumped) == 0 && ndumped == 2, "dump after the flush");
	kpx_services_free(dumped, ndumped);
	r = ops->commit(dp);
	ok(r == 0, "full commit after the flush: %d %s", r, dp->errmsg);
	s = sh_out("iptables-save");
	ok(count(s, "-j KPX-SERVICES") == 5 && chains_of(s, "KPX-SEP-") == 1 &&
	   has(s, "--to-destination 10.244.1.2:8080"),
	   "KPX-SERVICES missing: everything rewritten, every hook present once");
	free(s);

	/* Several changes of one frontend in one commit: the last one wins. */
	ok(ops->set_service(dp, &c) == 0 && ops->del_service(dp, &key) == 0 &&
	   ops->set_service(dp, &c) == 0 && ops->commit(dp) == 0, "set, del, set: committed");
	s = sh_out("iptables-save -t filter");
	ok(count(s, "-d 10.96.0.53/32 -p udp") == 1, "set, del, set: the frontend is there once");
	free(s);
	ok(ops->del_service(dp, &key) == 0 && ops->set_service(dp, &c) == 0 &&
	   ops->del_service(dp, &key) == 0 && ops->commit(dp) == 0, "del, set, del: committed");
	s = sh_out("iptables-save -t filter");
	ok(!has(s, "10.96.0.53"), "del, set, del: the frontend is gone");
	free(s);

	/*
	 * A failing restore reports iptables-restore's stderr: someone
	 * else's rule references the endpoint chain a change deletes.
	 */
	a.nbackends = 2;
	ok(ops->set_service(dp, &a) == 0 && ops->commit(dp) == 0, "backend back: %s", dp->errmsg);
	snprintf(line, sizeof(line), "printf '*nat\\n-A OTHER -j %s\\nCOMMIT\\n' | iptables-restore --noflush 2>&1; echo rc=$?", sep1);
	s = sh_out(line);
	ok(has(s, "rc=0"), "a foreign reference to %s planted: %s", sep1, s);
	free(s);
	a.nbackends = 1;
	ops->set_service(dp, &a);
	r = ops->commit(dp);
	ok(r != 0 && has(dp->errmsg, "iptables-restore"), "failed restore: %d, errmsg \"%s\"", r, dp->errmsg);
	snprintf(line, sizeof(line), "iptables -t nat -D OTHER -j %s 2>&1; echo rc=$?", sep1);
	s = sh_out(line);
	free(s);
	/* As the syncer: the next sync is full (dump) and sends the change again. */
	ok(ops->dump(dp, &dumped, &ndumped) == 0 && ndumped == 2 && dumped[0].nbackends == 2,
	   "dump after a failure: the state last committed (2 backends)");
	kpx_services_free(dumped, ndumped);
	ops->set_service(dp, &a);
	dp->errmsg[0] = '\0';
	r = ops->commit(dp);
	ok(r == 0, "next commit (full) repairs: %d %s", r, dp->errmsg);
	s = sh_out("iptables-save -t nat");
	snprintf(line, sizeof(line), ":%s ", sep1);
	ok(!has(s, line) && chains_of(s, "KPX-SEP-") == 1, "repaired: the removed backend's chain is gone");
	free(s);

	/*
	 * The local-traffic detector changes (the Node's pod CIDR moved): an
	 * eTP Local LB IP's short-circuit of pods to its ClusterIP's chain
	 * follows, though neither frontend changed.
	 */
	{
		struct kpx_service lb = fx_service(AF_INET, IPPROTO_TCP, "198.51.100.8", 80, b2, 1);
		kpx_ipt_chain_t ext, cip;

		lb.flags = KPX_SVC_F_EXT_LOCAL;
		memcpy(&lb.cluster_addr, &a.addr, sizeof(lb.cluster_addr));
		lb.cluster_port = a.port;
		kpx_ipt_chain_svc(&lb, ext);
		kpx_ipt_chain_svc(&a, cip);
		ok(ops->set_service(dp, &lb) == 0 && ops->commit(dp) == 0, "eTP Local LB IP committed: %s",
		   dp->errmsg);
		s = sh_out("iptables-save -t nat");
		snprintf(line, sizeof(line), "-A %s -s 10.244.0.0/16 -j %s\n", ext, cip);
		ok(has(s, line), "pods of 10.244.0.0/16 short-circuited to the ClusterIP chain");
		free(s);
		cfg = fx_ns_config("10.245.7.0/24", NULL, NULL);
		ok(ops->set_config(dp, &cfg) == 0 && ops->commit(dp) == 0,
		   "set_config 10.245.7.0/24 alone committed: %s", dp->errmsg);
		s = sh_out("iptables-save -t nat");
		ok(!has(s, line), "the old pod CIDR's short-circuit gone");
		snprintf(line, sizeof(line), "-A %s -s 10.245.7.0/24 -j %s\n", ext, cip);
		ok(has(s, line), "the new pod CIDR's pods short-circuited");
		free(s);
		key = lb;
		ok(ops->del_service(dp, &key) == 0 && ops->commit(dp) == 0, "eTP Local LB IP deleted");
	}

	/*
	 * The agent's start-up removal of leftovers in iptables mode:
	 * kube-proxy's chains (its iptables-save fixture) go, kpx's own
	 * iptables mode's stay, and so do the kubelet's and others'.
	 */
	s = sh_out("iptables-restore --noflush <../testdata/kube-proxy/iptables.save 2>&1; echo rc=$?");
	ok(has(s, "rc=0"), "kube-proxy's chains planted: %s", s);
	free(s);
	r = kpx_dp_cleanup_leftovers(modes, "iptables");
	s = sh_out("iptables-save");
	ok(r == 0 && !has(s, ":KUBE-SERVICES ") && !has(s, ":KUBE-SVC-") && !has(s, "-j KUBE-POSTROUTING"),
	   "start-up in iptables mode: kube-proxy's chains and jumps gone (%d failed)", r);
	ok(count(s, "-j KPX-SERVICES") == 5 && chains_of(s, "KPX-SEP-") == 1 &&
	   has(s, "--to-destination 10.244.1.2:8080"), "and kpx's iptables mode's own rules kept");
	ok(has(s, ":KUBE-FIREWALL ") && has(s, ":KUBE-KUBELET-CANARY ") && has(s, ":OTHER "),
	   "the kubelet's chains and someone else's kept");
	free(s);

	ok(ops->cleanup(dp) == 0, "cleanup: %s", dp->errmsg);
	s = sh_out("iptables-save; ip6tables-save");
	ok(!has(s, "KPX-"), "nothing of ours left after cleanup");
	ok(has(s, ":OTHER - [0:0]"), "someone else's chain still there");
	free(s);
	ops->close(dp);
	dp = NULL;
	r = ops->open(&dp, KPX_DP_OPEN_CLEANUP, err, sizeof(err));
	if (!r) {
		dp->ops = ops;
		ok(ops->cleanup(dp) == 0, "cleanup with nothing to remove: 0");
		ops->close(dp);
	} else {
		ok(r == -ENOENT, "open for cleanup: %d %s", r, err);
	}
	/* Started in another mode: kpx's iptables mode is a leftover too. */
	r = ops->open(&dp, 0, err, sizeof(err));
	ok(r == 0, "open again: %s", err);
	if (!r) {
		dp->ops = ops;
		ok(ops->set_config(dp, &cfg) == 0 && ops->set_service(dp, &a) == 0 &&
		   ops->commit(dp) == 0, "a frontend committed again: %s", dp->errmsg);
		ops->close(dp);
	}
	s = sh_out("iptables-restore --noflush <../testdata/kube-proxy/iptables.save 2>&1; echo rc=$?");
	ok(has(s, "rc=0"), "kube-proxy's chains planted again: %s", s);
	free(s);
	r = kpx_dp_cleanup_leftovers(modes, "nftables");
	s = sh_out("iptables-save; ip6tables-save");
	ok(r == 0 && !has(s, "KPX-") && !has(s, ":KUBE-SERVICES ") && !has(s, ":KUBE-MARK-MASQ "),
	   "start-up in nftables mode: kpx's iptables mode's chains and kube-proxy's gone (%d failed)", r);
	ok(has(s, ":KUBE-FIREWALL ") && has(s, ":OTHER "), "the kubelet's and someone else's still kept");
	free(s);
	a.nbackends = 2;
	kpx_service_free(&a);
	kpx_service_free(&c);
	kpx_service_free(&six);
}

/* kube-proxy's own chains (an iptables-save of its iptables mode with the kubelet's and a site's rules). */
static void test_kubeproxy_cleanup(void)
{
	static const char *const want[] = {
		"*mangle\n:KUBE-PROXY-CANARY - [0:0]\n-X KUBE-PROXY-CANARY\nCOMMIT\n",
		"-D INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL\n",
		"-D INPUT -m comment --comment \"kubernetes health check service ports\" -j KUBE-NODEPORTS\n",
		"-D FORWARD -m comment --comment \"kubernetes forwarding rules\" -j KUBE-FORWARD\n",
		"-D OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n",
		"-D PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n",
		"-D POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n",
		":KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]\n", "-X KUBE-SEP-IT2ZTR26TO4XFPTO\n",
		"-X KUBE-EXT-TCOU7JCQXEZGVUNU\n", "-X KUBE-MARK-MASQ\n", "-X KUBE-PROXY-FIREWALL\n",
	};
	struct kpx_strbuf b = { 0 };
	char *text = NULL;
	size_t n = 0, len = 0, i;
	FILE *f = fopen("../testdata/kube-proxy/iptables.save", "r");
	bool all = true;

	ok(f && getdelim(&text, &len, '\0', f) > 0, "kube-proxy's iptables-save fixture read");
	if (f)
		fclose(f);
	ok(kpx_ipt_kubeproxy_cleanup_text(text ? text : "", &b, &n) == 0 && b.s, "cleanup text made");
	for (i = 0; b.s && i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(b.s, want[i])) {
			printf("# missing: %s", want[i]);
			all = false;
		}
	ok(b.s && all, "the jumps from INPUT, FORWARD, OUTPUT, PREROUTING, POSTROUTING deleted, kube-proxy's chains flushed and deleted");
	/* mangle 1; filter 6; nat 9 */
	ok(n == 16, "16 chains removed in mangle, filter and nat (%zu)", n);
	ok(b.s && !strstr(b.s, "KUBE-FIREWALL") && !strstr(b.s, "KUBE-KUBELET-CANARY") &&
	   !strstr(b.s, "KUBE-IPTABLES-HINT"), "the kubelet's chains and rules kept");
	ok(b.s && !strstr(b.s, "SITE-") && !strstr(b.s, "dport 22"), "a site's chains and rules kept");
	ok(b.s && !strstr(b.s, "-D KUBE-"), "no rule of a flushed chain deleted one by one");
	kpx_strbuf_free(&b);
	ok(kpx_ipt_kubeproxy_cleanup_text("*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j KPX-SERVICES\nCOMMIT\n",
					  &b, &n) == 0 && !b.s && n == 0,
	   "nothing of kube-proxy's: nothing to restore (kpx's own chains are not its)");
	kpx_strbuf_free(&b);
	free(text);
}

int main(void)
{
	printf("TAP version 13\n");
	test_names();
	test_forward_invalid();
	test_full_v4();
	test_etp_local_shortcut();
	test_v6_and_localhost();
	test_save_and_cleanup();
	test_kubeproxy_cleanup();
	test_netns();
	return tap_done();
}
