// SPDX-License-Identifier: GPL-2.0-only
/*
 * --proxy-mode nftables: the generated rule text (pure, nft_rules.c), then,
 * in a network namespace of our own (unshare(CLONE_NEWNET); skipped when
 * that is not allowed), the text checked by the kernel through
 * libnftables' dry run and the mode's ops run for real against that
 * namespace's empty ruleset: first commit, partial updates, dump, cleanup.
 * The host's own namespace is never touched.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kpx.h>
#include <nftables/libnftables.h>

#include "dp/dataplane.h"
#include "base/log.h"
#include "dp/nft/nft_rules.h"
#include "dp/kpx/nl.h"
#include "lib/fixtures.h"
#include "lib/tap.h"

extern const struct kpx_dp_ops kpx_dp_nft;

static bool has(const struct kpx_strbuf *b, const char *needle)
{
	return b->s && strstr(b->s, needle);
}

static const char *const two[] = { "10.244.1.5:8080", "10.244.2.6:8080" };

static void test_table(void)
{
	struct kpx_strbuf b = { 0 };

	kpx_nft_gen_table(&b, AF_INET);
	ok(has(&b, "add table ip kpx\ndelete table ip kpx\nadd table ip kpx {"),
	   "first commit deletes and recreates the table");
	ok(has(&b, "add map ip kpx service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }"),
	   "service-ips verdict map keyed by daddr . l4proto . dport");
	ok(has(&b, "add rule ip kpx services ip daddr . meta l4proto . th dport vmap @service-ips"),
	   "one O(1) vmap lookup");
	ok(has(&b, "add chain ip kpx nat-prerouting { type nat hook prerouting priority dstnat ; policy accept ; }\n"
		   "add rule ip kpx nat-prerouting jump services"), "nat prerouting dstnat");
	ok(has(&b, "add chain ip kpx nat-output { type nat hook output priority -100 ;"), "nat output dstnat");
	ok(has(&b, "add chain ip kpx nat-postrouting { type nat hook postrouting priority srcnat ; policy accept ; }\n"
		   "add rule ip kpx nat-postrouting jump masquerading"), "nat postrouting srcnat");
	ok(has(&b, "add chain ip kpx filter-prerouting { type filter hook prerouting priority dstnat - 10 ;"),
	   "firewall before DNAT");
	ok(has(&b, "add rule ip kpx filter-forward ct state new jump endpoints-check") &&
	   has(&b, "add rule ip kpx filter-input ct state new jump endpoints-check") &&
	   has(&b, "add rule ip kpx filter-output ct state new jump endpoints-check\n"
		   "add rule ip kpx filter-output ct state new jump firewall-check"),
	   "no-endpoint check on input, forward, output");
	ok(has(&b, "add rule ip kpx masquerading meta mark and 0x4000 == 0 return\n"
		   "add rule ip kpx masquerading meta mark set meta mark xor 0x4000\n"
		   "add rule ip kpx masquerading masquerade fully-random"), "masquerade by mark 0x4000");
	{
		/* nftables.masqueradeBit 13 */
		struct kpx_dp_params p = *kpx_dp_params();
		struct kpx_strbuf b2 = { 0 };

		p.masq_mark = 1U << 13;
		kpx_dp_set_params(&p);
		kpx_nft_gen_table(&b2, AF_INET);
		p.masq_mark = KPX_DP_MASQ_MARK_DEFAULT;
		kpx_dp_set_params(&p);
		ok(has(&b2, "add rule ip kpx mark-for-masquerade meta mark set meta mark or 0x2000\n") &&
		   has(&b2, "add rule ip kpx masquerading meta mark and 0x2000 == 0 return\n"
			    "add rule ip kpx masquerading meta mark set meta mark xor 0x2000\n") &&
		   !has(&b2, "0x4000"), "masqueradeBit 13: mark 0x2000 set, tested and cleared, no 0x4000");
		kpx_strbuf_free(&b2);
	}
	ok(has(&b, "add rule ip kpx filter-input ip daddr 127.0.0.0/8 ip saddr != 127.0.0.0/8 ct state != { established, related } ct status & dnat == 0 drop\n"),
	   "127/8 closed to other hosts (CVE-2020-8558)");
	ok(has(&b, "add rule ip kpx filter-prerouting ct state new jump firewall-check\n"
		   "add rule ip kpx filter-prerouting ip daddr 127.0.0.0/8 iif != \"lo\" drop\n"),
	   "127/8 from other hosts dropped before a localhost NodePort DNATs it (CVE-2020-8558)");
	ok(has(&b, "add rule ip kpx cluster-ips-check ip daddr @cluster-ips reject\n") &&
	   has(&b, "add rule ip kpx filter-forward ct state new jump cluster-ips-check\n") &&
	   has(&b, "add chain ip kpx filter-output-post-dnat { type filter hook output priority -90 ; policy accept ; }\n"
		   "add rule ip kpx filter-output-post-dnat ct state new jump cluster-ips-check\n"),
	   "undefined ClusterIP ports rejected after DNAT (forward, output -90)");
	ok(b.s && strstr(b.s, "nat-prerouting {") > strstr(b.s, "add chain ip kpx services"),
	   "base chains after the chains they jump to");
	kpx_strbuf_reset(&b);
	kpx_nft_gen_table(&b, AF_INET6);
	ok(has(&b, "add map ip6 kpx service-ips { type ipv6_addr . inet_proto") &&
	   has(&b, "add rule ip6 kpx services ip6 daddr . meta l4proto . th dport vmap @service-ips"),
	   "IPv6 table");
	kpx_strbuf_free(&b);
}

static void test_config(void)
{
	struct kpx_strbuf b = { 0 };
	struct kpx_ns_config c;

	c = fx_ns_config("10.244.0.0/16,fd00:10:244::/48", NULL, "veth");
	kpx_nft_gen_config(&b, AF_INET, &c, false);
	ok(b.s && !strcmp(b.s,
	   "flush chain ip kpx mark-nonlocal\nflush set ip kpx local-cidrs\n"
	   "add element ip kpx local-cidrs { 10.244.0.0/16 }\n"
	   "add rule ip kpx mark-nonlocal ip saddr @local-cidrs return\n"
	   "add rule ip kpx mark-nonlocal iifname \"veth*\" return\n"
	   "add rule ip kpx mark-nonlocal jump mark-for-masquerade\n"),
	   "config v4: local prefixes and interface prefix, exact text");
	kpx_strbuf_reset(&b);
	kpx_nft_gen_config(&b, AF_INET6, &c, true);
	ok(has(&b, "add element ip6 kpx local-cidrs { fd00:10:244::/48 }") &&
	   !has(&b, "flush") && !has(&b, "10.244.0.0"), "config v6 only its family, no flush when fresh");
	kpx_strbuf_free(&b);
}

static void test_service(void)
{
	struct kpx_strbuf b = { 0 };
	struct kpx_service s = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, two, 2), o;
	static const char *const v6be[] = { "[fd00::5]:8080" };
	static const char *const three[] = { "10.244.1.5:8080", "10.244.3.7:8080" };
	struct kpx_cidr r[2];
	bool sup;

	kpx_nft_gen_service(&b, NULL, &s);
	ok(has(&b, "add chain ip kpx svc-tcp-10.96.0.10-80\n"), "service chain");
	ok(has(&b, "add rule ip kpx svc-tcp-10.96.0.10-80 numgen random mod 2 vmap { "
		   "0 : goto ep-tcp-10.96.0.10-80__10.244.1.5-8080, "
		   "1 : goto ep-tcp-10.96.0.10-80__10.244.2.6-8080 }\n"), "numgen random mod 2 vmap");
	ok(has(&b, "add rule ip kpx ep-tcp-10.96.0.10-80__10.244.1.5-8080 ip saddr 10.244.1.5 jump mark-for-masquerade\n"
		   "add rule ip kpx ep-tcp-10.96.0.10-80__10.244.1.5-8080 meta l4proto tcp dnat to 10.244.1.5:8080\n"),
	   "endpoint chain: hairpin mark, dnat");
	ok(has(&b, "add element ip kpx service-ips { 10.96.0.10 . tcp . 80 : goto svc-tcp-10.96.0.10-80 }"),
	   "service-ips element");
	ok(!has(&b, "mark-nonlocal") && !has(&b, "svc-tcp-10.96.0.10-80 jump mark-for-masquerade"),
	   "no masquerade without flags");
	ok(!has(&b, "delete") && !has(&b, "flush"), "new frontend: nothing deleted");

	/* Partial update: one backend replaced, masquerade-all, affinity. */
	o = s;
	s = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, three, 2);
	s.flags = KPX_SVC_F_MASQ;
	s.affinity_timeout = 10800;
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, &o, &s);
	ok(has(&b, "flush chain ip kpx svc-tcp-10.96.0.10-80\n") &&
	   has(&b, "flush chain ip kpx ep-tcp-10.96.0.10-80__10.244.2.6-8080\n"), "old chains flushed");
	ok(has(&b, "delete chain ip kpx ep-tcp-10.96.0.10-80__10.244.2.6-8080\n") &&
	   !has(&b, "delete chain ip kpx ep-tcp-10.96.0.10-80__10.244.1.5-8080") &&
	   !has(&b, "delete chain ip kpx svc-"), "only the gone backend's chain deleted");
	ok(has(&b, "add chain ip kpx ep-tcp-10.96.0.10-80__10.244.3.7-8080\n") &&
	   !has(&b, "add chain ip kpx ep-tcp-10.96.0.10-80__10.244.1.5-8080\n") &&
	   !has(&b, "add chain ip kpx svc-"), "only the new backend's chain created");
	ok(!has(&b, "element"), "map element unchanged");
	ok(has(&b, "add set ip kpx aff-tcp-10.96.0.10-80__10.244.3.7-8080 { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }"),
	   "affinity set per endpoint with timeout");
	ok(has(&b, "add rule ip kpx svc-tcp-10.96.0.10-80 ip saddr @aff-tcp-10.96.0.10-80__10.244.3.7-8080 goto ep-tcp-10.96.0.10-80__10.244.3.7-8080\n") &&
	   has(&b, "add rule ip kpx ep-tcp-10.96.0.10-80__10.244.3.7-8080 update @aff-tcp-10.96.0.10-80__10.244.3.7-8080 { ip saddr }\n"),
	   "affinity lookup and update");
	ok(has(&b, "add rule ip kpx svc-tcp-10.96.0.10-80 jump mark-for-masquerade\n"), "KPX_SVC_F_MASQ marks");
	ok(strstr(b.s, "delete chain") > strstr(b.s, "flush chain ip kpx ep-tcp-10.96.0.10-80__10.244.2.6-8080"),
	   "flush before delete");

	/* To no endpoints: reject, then drop. */
	o = s;
	s.nbackends = 0;
	s.flags = KPX_SVC_F_MASQ_NONLOCAL;
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, &o, &s);
	ok(has(&b, "delete element ip kpx service-ips { 10.96.0.10 . tcp . 80 }\n") &&
	   has(&b, "add element ip kpx no-endpoint-services { 10.96.0.10 . tcp . 80 : goto reject-chain }"),
	   "no backends: moved to no-endpoint-services, reject");
	ok(has(&b, "delete chain ip kpx svc-tcp-10.96.0.10-80\n") &&
	   has(&b, "delete set ip kpx aff-tcp-10.96.0.10-80__10.244.1.5-8080\n"), "chains and sets removed");
	o = s;
	s.flags |= KPX_SVC_F_DROP_EMPTY;
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, &o, &s);
	ok(b.s && !strcmp(b.s, "delete element ip kpx no-endpoint-services { 10.96.0.10 . tcp . 80 }\n"
			  "add element ip kpx no-endpoint-services { 10.96.0.10 . tcp . 80 : drop }\n"),
	   "KPX_SVC_F_DROP_EMPTY: drop, exact text");
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, &s, NULL);
	ok(b.s && !strcmp(b.s, "delete element ip kpx no-endpoint-services { 10.96.0.10 . tcp . 80 }\n"),
	   "delete of an empty frontend");

	/* Source ranges, MASQ_NONLOCAL, IPv6, udp. */
	s = fx_service_str(AF_INET6, IPPROTO_UDP, "fd00::10", 53, v6be, 1);
	s.flags = KPX_SVC_F_MASQ_NONLOCAL;
	memset(r, 0, sizeof(r));
	r[0].family = r[1].family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::", &r[0].addr);
	r[0].len = 32;
	inet_pton(AF_INET6, "fd00:1::", &r[1].addr);
	r[1].len = 64;
	s.source_ranges = r;
	s.nsource_ranges = 2;
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, NULL, &s);
	ok(has(&b, "add rule ip6 kpx ep-udp-fd00--10-53__fd00--5-8080 meta l4proto udp dnat to [fd00::5]:8080\n"),
	   "IPv6 dnat, name with '-' for ':'");
	ok(has(&b, "add rule ip6 kpx svc-udp-fd00--10-53 jump mark-nonlocal\n"), "MASQ_NONLOCAL jumps to mark-nonlocal");
	ok(has(&b, "add rule ip6 kpx fw-udp-fd00--10-53 ip6 saddr != { 2001:db8::/32, fd00:1::/64 } drop\n") &&
	   has(&b, "add element ip6 kpx firewall-ips { fd00::10 . udp . 53 : goto fw-udp-fd00--10-53 }"),
	   "source ranges: firewall chain and element");
	o = s;
	s.nsource_ranges = 0;
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, &o, &s);
	ok(has(&b, "delete element ip6 kpx firewall-ips { fd00::10 . udp . 53 }\n") &&
	   has(&b, "delete chain ip6 kpx fw-udp-fd00--10-53\n"), "source ranges removed");

	/* Schedulers. */
	s = fx_service_str(AF_INET, IPPROTO_SCTP, "10.96.0.11", 9, two, 2);
	s.backends[1].weight = 3;
	strcpy(s.scheduler, "wrr");
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, NULL, &s);
	ok(has(&b, "numgen inc mod 4 vmap { 0 : goto ep-sctp-10.96.0.11-9__10.244.1.5-8080, 1-3 : goto ep-sctp-10.96.0.11-9__10.244.2.6-8080 }"),
	   "wrr: numgen inc over weight ranges");
	strcpy(s.scheduler, "sh");
	kpx_strbuf_reset(&b);
	kpx_nft_gen_service(&b, NULL, &s);
	ok(has(&b, "jhash ip saddr mod 2 vmap {"), "sh: jhash of the source");
	ok(kpx_nft_sched("lc", &sup) == KPX_NFT_SCHED_RANDOM && !sup &&
	   kpx_nft_sched("rr", &sup) == KPX_NFT_SCHED_RR && sup &&
	   kpx_nft_sched("", &sup) == KPX_NFT_SCHED_RANDOM && sup, "scheduler mapping");
	kpx_strbuf_free(&b);
}

/* ---- in a private network namespace ---- */

static struct nft_ctx *lister;

static const char *ruleset(void)
{
	if (nft_run_cmd_from_buffer(lister, "list ruleset"))
		return "";
	return nft_ctx_get_output_buffer(lister);
}

static void test_kernel(void)
{
	struct kpx_service s[5], *d;
	static const char *const v6be[] = { "[fd00::5]:8080", "[fd00::6]:8080" };
	static const char *const one[] = { "10.244.9.9:81" };
	struct kpx_strbuf b = { 0 };
	struct kpx_ns_config c;
	struct kpx_dp *dp;
	char err[512];
	const char *rs;
	size_t n;
	int r;

	lister = nft_ctx_new(NFT_CTX_DEFAULT);
	nft_ctx_buffer_output(lister);
	nft_ctx_buffer_error(lister);

	/* Every kind of generated text accepted by the kernel (dry run). */
	s[0] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, two, 2);
	s[0].affinity_timeout = 30;
	s[0].flags = KPX_SVC_F_MASQ | KPX_SVC_F_CLUSTER_IP;
	s[1] = fx_service_str(AF_INET6, IPPROTO_SCTP, "fd00::10", 80, v6be, 2);
	strcpy(s[1].scheduler, "sh");
	s[1].flags = KPX_SVC_F_MASQ_NONLOCAL;
	s[2] = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.12", 53, NULL, 0);
	s[2].flags = KPX_SVC_F_CLUSTER_IP;
	c = fx_ns_config("10.244.0.0/16", "cbr0", NULL);
	kpx_nft_gen_table(&b, AF_INET);
	kpx_nft_gen_table(&b, AF_INET6);
	kpx_nft_gen_config(&b, AF_INET, &c, true);
	kpx_nft_gen_config(&b, AF_INET6, &c, true);
	for (int i = 0; i < 3; i++)
		kpx_nft_gen_service(&b, NULL, &s[i]);
	nft_ctx_set_dry_run(lister, true);
	r = nft_run_cmd_from_buffer(lister, b.s);
	nft_ctx_set_dry_run(lister, false);
	ok(r == 0, "dry run of table, config and 3 frontends: %s",
	   r ? nft_ctx_get_error_buffer(lister) : "accepted");
	ok(!strstr(ruleset(), "table"), "dry run left nothing");
	kpx_strbuf_free(&b);

	/* The ops, for real, in this namespace. */
	r = kpx_dp_nft.open(&dp, 0, err, sizeof(err));
	ok(r == 0, "open: %s", r ? err : "ok");
	if (r)
		return;
	dp->ops = &kpx_dp_nft;
	ok(kpx_dp_nft.set_config(dp, &c) == 0, "set_config");
	for (int i = 0; i < 3; i++)
		kpx_dp_nft.set_service(dp, &s[i]);
	r = kpx_dp_nft.commit(dp);
	ok(r == 0, "first commit: %s", r ? dp->errmsg : "ok");
	rs = ruleset();
	ok(strstr(rs, "table ip kpx") && strstr(rs, "table ip6 kpx"), "both tables created");
	ok(strstr(rs, "10.96.0.10 . tcp . 80 : goto svc-tcp-10.96.0.10-80") != NULL,
	   "service-ips holds the frontend");
	ok(strstr(rs, "10.96.0.12 . udp . 53 : goto reject-chain") != NULL,
	   "no-endpoint-services holds the empty one");
	ok(strstr(rs, "fd00::10 . sctp . 80 : goto svc-sctp-fd00--10-80") != NULL, "IPv6 frontend");
	ok(strstr(rs, "iifname \"cbr0\" return") != NULL, "config applied");
	ok(strstr(rs, "elements = { 10.96.0.10, 10.96.0.12 }") != NULL, "cluster-ips holds both ClusterIPs");

	/* Partial update: backend change + affinity timeout change, empty ->
	 * backends, delete, config change. */
	s[0] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, one, 1);
	s[0].affinity_timeout = 60;
	s[2] = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.12", 53, one, 1);
	s[0].flags = s[2].flags = KPX_SVC_F_CLUSTER_IP;
	s[4] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.12", 80, one, 1);
	s[4].flags = KPX_SVC_F_CLUSTER_IP;
	kpx_dp_nft.set_service(dp, &s[4]);
	kpx_dp_nft.set_service(dp, &s[0]);
	kpx_dp_nft.set_service(dp, &s[2]);
	kpx_dp_nft.del_service(dp, &s[1]);
	c.local_ifname[0] = '\0';
	kpx_dp_nft.set_config(dp, &c);
	r = kpx_dp_nft.commit(dp);
	ok(r == 0, "partial commit: %s", r ? dp->errmsg : "ok");
	rs = ruleset();
	ok(strstr(rs, "ep-tcp-10.96.0.10-80__10.244.9.9-81") && !strstr(rs, "10.244.1.5"),
	   "old backends' chains gone, new one there");
	ok(strstr(rs, "timeout 1m") != NULL && !strstr(rs, "timeout 30s"), "affinity sets recreated with the new timeout");
	ok(strstr(rs, "10.96.0.12 . udp . 53 : goto svc-udp-10.96.0.12-53") && !strstr(rs, "reject-chain }") &&
	   !strstr(rs, ": goto reject-chain"), "empty frontend moved to service-ips");
	ok(!strstr(rs, "fd00::10") && !strstr(rs, "svc-sctp"), "deleted frontend gone");
	ok(!strstr(rs, "cbr0"), "config change applied");

	/* A failing transaction changes nothing and is reported. */
	s[3] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.13", 80, one, 1);
	strcpy(s[3].scheduler, "rr");
	kpx_dp_nft.set_service(dp, &s[3]);
	kpx_dp_nft.del_service(dp, &s[0]);
	kpx_dp_nft.del_service(dp, &s[4]);
	ok(kpx_dp_nft.dump(dp, &d, &n) == 0 && n == 3, "dump before commit: 3 committed frontends");
	kpx_services_free(d, n);
	r = kpx_dp_nft.commit(dp);
	ok(r == 0, "rr frontend added, one deleted: %s", r ? dp->errmsg : "ok");
	rs = ruleset();
	ok(strstr(rs, "numgen inc mod 1") != NULL, "rr uses numgen inc");
	ok(strstr(rs, "elements = { 10.96.0.12 }") != NULL,
	   "cluster-ips: 10.96.0.10 gone with its last frontend, 10.96.0.12 kept (one of two left)");
	ok(kpx_dp_nft.dump(dp, &d, &n) == 0 && n == 2 && d[0].addr.v4.s_addr == htonl(0x0a60000d) && d[1].port == 53,
	   "dump: what was committed, sorted by key (tcp before udp)");
	kpx_services_free(d, n);

	/* Our table changed behind our back: the commit fails atomically, the
	 * mode forgets its state and the next commit recreates the tables. */
	r = nft_run_cmd_from_buffer(lister, "flush chain ip kpx svc-tcp-10.96.0.13-80\n"
				    "delete element ip kpx service-ips { 10.96.0.13 . tcp . 80 }\n"
				    "delete chain ip kpx svc-tcp-10.96.0.13-80\n");
	ok(r == 0, "removed a chain of ours behind the mode's back");
	s[3].nbackends = 0;
	kpx_dp_nft.set_service(dp, &s[3]);
	r = kpx_dp_nft.commit(dp);
	ok(r == -EIO && strstr(dp->errmsg, "nftables: "), "failed transaction: -EIO, \"%s\"", dp->errmsg);
	ok(strstr(ruleset(), "10.96.0.12 . udp . 53") != NULL, "failed transaction changed nothing");
	ok(kpx_dp_nft.dump(dp, &d, &n) == 0 && n == 0, "dump after a failure: nothing, the next sync rewrites all");
	kpx_services_free(d, n);
	s[3].nbackends = 1;
	kpx_dp_nft.set_service(dp, &s[3]);
	r = kpx_dp_nft.commit(dp);
	rs = ruleset();
	ok(r == 0 && strstr(rs, "svc-tcp-10.96.0.13-80") && !strstr(rs, "10.96.0.12 . udp . 53"),
	   "next commit recreated fresh tables: %s", r ? dp->errmsg : "ok");
	nft_run_cmd_from_buffer(lister, "delete table ip6 kpx");
	ok(kpx_dp_nft.dump(dp, &d, &n) == 0 && n == 0, "dump notices a vanished table: nothing");
	kpx_services_free(d, n);
	kpx_dp_nft.close(dp);

	/* A new agent's first commit replaces the table wholesale. */
	r = kpx_dp_nft.open(&dp, 0, err, sizeof(err));
	ok(r == 0 && kpx_dp_nft.commit(dp) == 0, "reopen and commit nothing");
	rs = ruleset();
	ok(strstr(rs, "table ip kpx") && !strstr(rs, "10.96.0.13"), "first commit started from an empty table");
	ok(kpx_dp_nft.cleanup(dp) == 0, "cleanup");
	ok(!strstr(ruleset(), "table"), "cleanup left no table");
	kpx_dp_nft.close(dp);
	r = kpx_dp_nft.open(&dp, KPX_DP_OPEN_CLEANUP, err, sizeof(err));
	ok(r == -ENOENT, "open for cleanup with nothing: -ENOENT (%s)", err);
	if (!r)
		kpx_dp_nft.close(dp);
	nft_ctx_free(lister);
}

int main(void)
{
	printf("TAP version 13\n");
	test_table();
	test_config();
	test_service();
	if (unshare(CLONE_NEWNET) == 0)
		test_kernel();
	else
		printf("# SKIP kernel checks: unshare(CLONE_NEWNET): %s\n", strerror(errno));
	return tap_done();
}
