// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite kpx_invalid: the INVALID guard (invalid.c) looks a packet's
 * flow up in the packet's conntrack zone.
 *
 * - The zone a template names before conntrack (nf_ct_tmpl_alloc(), as
 *   iptables' CT --zone and nft's ct zone set make it; NF_CT_FLAG_MARK:
 *   from the packet's mark) is the one the guard uses for that packet,
 *   once; any other packet, and a template of the default zone, get the
 *   default zone.
 * - A conntrack entry in zone 7, DNATed to a kpx frontend: a reply of it
 *   that conntrack left without an entry (INVALID) is dropped and counted
 *   when its template named zone 7, and left alone when it named none
 *   (no such flow in the default zone) or zone 8; once the frontend is
 *   deleted, left alone in zone 7 too.
 * A kernel without CONFIG_NF_CONNTRACK_ZONES has one zone: the first is
 * skipped, and in the second every reply is of the default zone's entry.
 */
#include <kunit/test.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/netfilter.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_zones.h>

#include "kpx.h"
#include "invalid.h"
#include "lb.h"
#include "pernet.h"
#include "sched.h"
#include "stats.h"
#include "svc.h"
#include "kunit_env.h"

#define CLIENT	0x0af40114	/* 10.244.1.20 */
#define CPORT	40000
#define VIP	0x0a60091e	/* 10.96.9.30 */
#define VPORT	80
#define BACKEND	0x0af40201	/* 10.244.2.1 */
#define BPORT	8080

/* A TCP segment SADDR:SPORT -> DADDR:DPORT with no conntrack entry. */
static struct sk_buff *segment(struct kunit *test, u32 saddr, u16 sport,
			       u32 daddr, u16 dport)
{
	struct sk_buff *skb;
	struct tcphdr *th;
	struct iphdr *iph;

	skb = alloc_skb(LL_MAX_HEADER + sizeof(*iph) + sizeof(*th), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, LL_MAX_HEADER);
	skb_reset_network_header(skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->tot_len = htons(sizeof(*iph) + sizeof(*th));
	iph->saddr = htonl(saddr);
	iph->daddr = htonl(daddr);
	skb_set_transport_header(skb, sizeof(*iph));
	th = skb_put_zero(skb, sizeof(*th));
	th->source = htons(sport);
	th->dest = htons(dport);
	th->doff = sizeof(*th) / 4;
	th->ack = 1;
	th->seq = htonl(1U << 30);
	skb->protocol = htons(ETH_P_IP);
	return skb;
}

/* A template of @zone, as the raw table's CT --zone makes it. */
static struct nf_conn *template(struct kunit *test,
				const struct nf_conntrack_zone *zone)
{
	struct nf_conn *tmpl;

	tmpl = nf_ct_tmpl_alloc(&init_net, zone, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tmpl);
	__set_bit(IPS_CONFIRMED_BIT, &tmpl->status);
	return tmpl;
}

/*
 * The packet reaches the hooks with @tmpl attached (NULL: none): the zone
 * is noted before conntrack, which then releases the template.  Called
 * with BHs off, as the hooks run.
 */
static void note_zone(struct sk_buff *skb, struct nf_conn *tmpl)
{
	if (tmpl) {
		nf_conntrack_get(&tmpl->ct_general);
		nf_ct_set(skb, tmpl, IP_CT_NEW);
	}
	kpx_invalid_note_zone(skb);
	nf_reset_ct(skb);
}

static void invalid_zone_of_test(struct kunit *test)
{
	struct nf_conntrack_zone z, tmp;
	const struct nf_conntrack_zone *got;
	struct nf_conn *t7, *tmark, *t0;
	struct sk_buff *a, *b;
	u16 id7, id_mark, again;

	if (!IS_ENABLED(CONFIG_NF_CONNTRACK_ZONES))
		kunit_skip(test, "CONFIG_NF_CONNTRACK_ZONES not set: every template names the default zone");
	nf_ct_zone_init(&z, 7, NF_CT_DEFAULT_ZONE_DIR, 0);
	t7 = template(test, &z);
	nf_ct_zone_init(&z, 0, NF_CT_DEFAULT_ZONE_DIR, NF_CT_FLAG_MARK);
	tmark = template(test, &z);
	nf_ct_zone_init(&z, 0, NF_CT_DEFAULT_ZONE_DIR, 0);
	t0 = template(test, &z);
	a = segment(test, BACKEND, BPORT, CLIENT, CPORT);
	b = segment(test, BACKEND, BPORT, CLIENT, CPORT);
	a->mark = 9;

	local_bh_disable();
	/* no template */
	note_zone(a, NULL);
	KUNIT_EXPECT_PTR_EQ(test, kpx_invalid_zone_of(a, &tmp), &nf_ct_zone_dflt);

	/* zone 7: for this packet, once; never for another */
	note_zone(a, t7);
	KUNIT_EXPECT_PTR_EQ(test, kpx_invalid_zone_of(b, &tmp), &nf_ct_zone_dflt);
	got = kpx_invalid_zone_of(a, &tmp);
	id7 = got->id;
	again = kpx_invalid_zone_of(a, &tmp)->id;

	/* a packet without a template after one with: the slot is cleared */
	note_zone(a, t7);
	note_zone(b, NULL);
	KUNIT_EXPECT_PTR_EQ(test, kpx_invalid_zone_of(a, &tmp), &nf_ct_zone_dflt);

	/* the default zone's template */
	note_zone(a, t0);
	KUNIT_EXPECT_PTR_EQ(test, kpx_invalid_zone_of(a, &tmp), &nf_ct_zone_dflt);

	/* NF_CT_FLAG_MARK: the zone is the packet's mark */
	note_zone(a, tmark);
	id_mark = kpx_invalid_zone_of(a, &tmp)->id;
	local_bh_enable();

	KUNIT_EXPECT_EQ(test, id7, 7);
	KUNIT_EXPECT_EQ(test, again, NF_CT_DEFAULT_ZONE_ID);
	KUNIT_EXPECT_EQ(test, id_mark, 9);
	kfree_skb(a);
	kfree_skb(b);
	nf_ct_put(t7);
	nf_ct_put(tmark);
	nf_ct_put(t0);
}

/* A confirmed entry CLIENT -> VIP, DNATed to BACKEND, in @zone. */
static struct nf_conn *dnat_entry(struct kunit *test,
				  const struct nf_conntrack_zone *zone)
{
	struct nf_conntrack_tuple orig = {}, repl = {};
	struct nf_conn *ct;

	orig.src.l3num = AF_INET;
	orig.src.u3.ip = htonl(CLIENT);
	orig.src.u.tcp.port = htons(CPORT);
	orig.dst.u3.ip = htonl(VIP);
	orig.dst.u.tcp.port = htons(VPORT);
	orig.dst.protonum = IPPROTO_TCP;
	orig.dst.dir = IP_CT_DIR_ORIGINAL;
	repl.src.l3num = AF_INET;
	repl.src.u3.ip = htonl(BACKEND);
	repl.src.u.tcp.port = htons(BPORT);
	repl.dst.u3.ip = htonl(CLIENT);
	repl.dst.u.tcp.port = htons(CPORT);
	repl.dst.protonum = IPPROTO_TCP;
	repl.dst.dir = IP_CT_DIR_REPLY;
	ct = nf_conntrack_alloc(&init_net, zone, &orig, &repl, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ct));
	ct->timeout = nfct_time_stamp + 600 * HZ;
	ct->status |= IPS_CONFIRMED | IPS_DST_NAT | IPS_DST_NAT_DONE;
	KUNIT_ASSERT_EQ(test, nf_conntrack_hash_check_insert(ct), 0);
	return ct;
}

static u64 invalid_drops(struct kpx_net *kn)
{
	struct kpx_stats st;

	kpx_stats_sum(kn->stats, &st);
	return st.invalid;
}

/* The guard's verdict on a stray reply that came with @tmpl (or none). */
static unsigned int stray_verdict(struct kunit *test, struct nf_conn *tmpl)
{
	struct nf_hook_state state = {
		.hook = NF_INET_PRE_ROUTING,
		.pf = NFPROTO_IPV4,
		.net = &init_net,
	};
	struct sk_buff *skb;
	unsigned int v;

	skb = segment(test, BACKEND, BPORT, CLIENT, CPORT);
	rcu_read_lock();
	local_bh_disable();
	note_zone(skb, tmpl);
	v = kpx_test_invalid_hook(skb, &state);
	local_bh_enable();
	rcu_read_unlock();
	kfree_skb(skb);
	return v;
}

static void invalid_zone_guard_test(struct kunit *test)
{
	struct kpx_net *kn = kpx_net(&init_net);
	struct nf_conntrack_zone z;
	struct kpx_svc_req req;
	struct kpx_be_cfg be = {};
	struct nf_conn *ct, *t7, *t8;
	__be32 vip = htonl(VIP);
	struct kpx_key key;
	u64 d0;

	nf_ct_zone_init(&z, 8, NF_CT_DEFAULT_ZONE_DIR, 0);
	t8 = template(test, &z);
	nf_ct_zone_init(&z, 7, NF_CT_DEFAULT_ZONE_DIR, 0);
	t7 = template(test, &z);
	kpx_key_init(&key, AF_INET, IPPROTO_TCP, &vip, htons(VPORT));
	*(__be32 *)be.addr.bytes = htonl(BACKEND);
	be.port = htons(BPORT);
	be.weight = 1;
	kpx_test_req(&req, &key, &be, 1);
	KUNIT_ASSERT_EQ(test, kpx_net_svc_set(kn, &req), 0);
	ct = dnat_entry(test, &z);

	d0 = invalid_drops(kn);
	if (IS_ENABLED(CONFIG_NF_CONNTRACK_ZONES)) {
		KUNIT_EXPECT_EQ(test, stray_verdict(test, NULL), NF_ACCEPT);
		KUNIT_EXPECT_EQ(test, stray_verdict(test, t8), NF_ACCEPT);
		KUNIT_EXPECT_EQ(test, invalid_drops(kn), d0);
	} else {
		/* one zone for all: found without a template too */
		kunit_info(test, "CONFIG_NF_CONNTRACK_ZONES not set: zones 7 and 8 are the default zone");
		KUNIT_EXPECT_EQ(test, stray_verdict(test, NULL), NF_DROP);
		d0++;
	}
	KUNIT_EXPECT_EQ(test, stray_verdict(test, t7), NF_DROP);
	KUNIT_EXPECT_EQ(test, invalid_drops(kn), d0 + 1);

	/* not kpx's frontend any more: left alone in its zone too */
	KUNIT_EXPECT_EQ(test, kpx_svc_del(kn, &key), 0);
	KUNIT_EXPECT_EQ(test, stray_verdict(test, t7), NF_ACCEPT);
	KUNIT_EXPECT_EQ(test, invalid_drops(kn), d0 + 1);

	nf_ct_delete(ct, 0, 0);
	nf_ct_put(ct);
	nf_ct_put(t7);
	nf_ct_put(t8);
}

static struct kunit_case invalid_cases[] = {
	KUNIT_CASE(invalid_zone_of_test),
	KUNIT_CASE(invalid_zone_guard_test),
	{}
};

static struct kunit_suite invalid_suite = {
	.name = "kpx_invalid",
	.suite_init = kpx_test_suite_init,
	.suite_exit = kpx_test_suite_exit,
	.test_cases = invalid_cases,
};

kunit_test_suites(&invalid_suite);
