// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx NAT hook.
 *
 * kpx registers one NAT lookup function per family with the netfilter NAT
 * core, at PRE_ROUTING (traffic routed through the node) and LOCAL_OUT
 * (traffic from the node itself), one priority step before iptables' nat
 * table so that kpx binds first.  The NAT core calls it only for conntrack
 * entries without a destination binding and does the packet mangling and
 * the reply translation itself.  A new connection to a known frontend gets
 * a DNAT binding to one of its backends; with no backend it is refused with
 * ICMP/ICMPv6 port unreachable (or dropped, KPX_SVC_F_DROP_EMPTY).  A new
 * connection to a ClusterIP on a port or protocol no frontend has is
 * refused the same way (KPX_SVC_F_CLUSTER_IP).  A new connection from a
 * local source or from the node itself to a KPX_SVC_F_EXT_LOCAL frontend is
 * scheduled with the Service's ClusterIP frontend instead (eTP Local only
 * limits external clients).
 */
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/in.h>
#include <linux/netdevice.h>
#include <net/ipv6.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_nat.h>
#include <net/netfilter/ipv4/nf_reject.h>
#include <net/netfilter/ipv6/nf_reject.h>
#include <linux/kpx.h>

#include "hook.h"
#include "lb.h"
#include "svc.h"
#include "ranges.h"
#include "vip.h"
#include "nsconfig.h"
#include "stats.h"
#include "invalid.h"

/* Port unreachable for @skb; a local sender's call fails at once. */
static unsigned int send_unreach(struct kpx_net *kn, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	kpx_stat_inc(kn->stats, rejects);
	if (state->pf == NFPROTO_IPV4)
		nf_send_unreach(skb, ICMP_PORT_UNREACH, state->hook);
	else
		nf_send_unreach6(state->net, skb, ICMPV6_PORT_UNREACH,
				 state->hook);
	/*
	 * A local sender also gets the error straight from its send path:
	 * connect() fails at once with ECONNREFUSED (the ICMP error may
	 * arrive while the socket is still locked by connect() and then only
	 * counts as a soft error), and a UDP send() reports ECONNREFUSED
	 * instead of the EPERM of a plain drop.
	 */
	if (state->hook == NF_INET_LOCAL_OUT)
		return NF_DROP_ERR(-ECONNREFUSED);
	return NF_DROP;
}

static unsigned int refuse(struct kpx_net *kn, struct kpx_svc *svc,
			   struct sk_buff *skb,
			   const struct nf_hook_state *state)
{
	kpx_stat_inc(svc->stats, rejects);
	if (READ_ONCE(svc->flags) & KPX_SVC_F_DROP_EMPTY) {
		kpx_stat_inc2(svc->stats, kn->stats, drops);
		return NF_DROP;
	}
	return send_unreach(kn, skb, state);
}

/*
 * A loopback destination that arrives from outside (a neighbour routing
 * 127.0.0.1 to this node): with route_localnet, which NodePorts on
 * 127.0.0.1 need, routing would accept it.  Never translated, and dropped
 * as kube-proxy's KUBE-FIREWALL rule does (CVE-2020-8558).
 */
static bool martian_loopback(const struct kpx_flow *f)
{
	if (f->node || !f->in || (f->in->flags & IFF_LOOPBACK))
		return false;
	if (f->family == AF_INET)
		return ipv4_is_loopback(f->dst.ip);
	return ipv6_addr_loopback((const struct in6_addr *)f->dst.bytes);
}

/**
 * kpx_decide - what the packet path does with a new connection
 * @kn: the namespace's state
 * @f: the connection's first packet
 * @dport: its destination port, network order
 * @d: filled with the decision
 * @peek: NULL from the NAT hook; else (KPX_CMD_EXPLAIN) nothing may
 *	change, and kpx_schedule() describes its choice in @peek
 *
 * The one decision of the NAT hook and of KPX_CMD_EXPLAIN; it counts
 * nothing (the hook counts what it did).  With @peek, d->source is always
 * filled.  Call under rcu_read_lock().
 *
 * A new connection to a KPX_SVC_F_EXT_LOCAL frontend from a local source
 * (as for KPX_SVC_F_MASQ_NONLOCAL) or from the node itself is served by
 * the Service's ClusterIP frontend; kpx_masq_fn() makes the same choice
 * again.
 */
void kpx_decide(struct kpx_net *kn, const struct kpx_flow *f, __be16 dport,
		struct kpx_decision *d, struct kpx_peek *peek)
{
	struct kpx_svc *csvc;
	struct kpx_key key;

	memset(d, 0, sizeof(*d));
	if (martian_loopback(f)) {
		d->verdict = KPX_EXP_V_MARTIAN;
		return;
	}
	kpx_key_init(&key, f->family, f->protocol, f->dst.bytes, dport);
	d->svc = kpx_svc_lookup(kn, &key);
	if (!d->svc) {
		/* an undefined ClusterIP port: refused (kube-proxy's nftables) */
		if (kpx_vip_is_cluster_ip(kn, key.family, &key.addr))
			d->verdict = KPX_EXP_V_UNDEFINED_PORT;
		else
			d->verdict = KPX_EXP_V_ACCEPT;
		return;
	}
	d->source = KPX_EXP_SRC_EXTERNAL;
	csvc = kpx_svc_cluster(kn, d->svc);
	if (peek || (csvc && !f->node))
		d->source = kpx_nscfg_src_why(rcu_dereference(kn->cfg),
					      f->family, &f->src,
					      f->node ? NULL : f->in);
	d->ranges = kpx_svc_ranges(d->svc, &f->src);
	if (d->ranges == KPX_EXP_RANGES_DENIED) {
		d->verdict = KPX_EXP_V_FILTERED;
		return;
	}
	d->short_cut = csvc && (f->node || kpx_nscfg_src_is_local(d->source));
	d->ssvc = d->short_cut ? csvc : d->svc;
	d->set = rcu_dereference(d->ssvc->bset);
	d->be = kpx_schedule(d->ssvc, d->set, &f->src, peek);
	if (d->be)
		d->verdict = KPX_EXP_V_DNAT;
	else if (READ_ONCE(d->ssvc->flags) & KPX_SVC_F_DROP_EMPTY)
		d->verdict = KPX_EXP_V_DROP;
	else
		d->verdict = KPX_EXP_V_REJECT;
}

static unsigned int kpx_nat_fn(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	struct kpx_net *kn = kpx_net(state->net);
	const struct nf_conntrack_tuple *t;
	struct nf_nat_range2 range = {};
	enum ip_conntrack_info ctinfo;
	struct kpx_decision d;
	struct kpx_flow f;
	struct nf_conn *ct;
	unsigned int verdict;

	/*
	 * A confirmed entry without a destination binding (one that passed
	 * before the namespace had NAT hooks) cannot get one any more
	 * (nf_nat_setup_info() leaves it alone): it is not ours to schedule
	 * or count, for this packet or any later one.
	 */
	ct = nf_ct_get(skb, &ctinfo);
	if (!ct || ctinfo != IP_CT_NEW || nf_ct_is_confirmed(ct) ||
	    nf_nat_initialized(ct, NF_NAT_MANIP_DST))
		return NF_ACCEPT;

	t = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	switch (t->dst.protonum) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_SCTP:
		break;
	default:
		return NF_ACCEPT;
	}
	f.family = t->src.l3num;
	f.protocol = t->dst.protonum;
	f.node = state->hook == NF_INET_LOCAL_OUT;
	f.in = f.node ? NULL : state->in;
	kpx_addr_from_nf(&f.src, f.family, &t->src.u3);
	kpx_addr_from_nf(&f.dst, f.family, &t->dst.u3);

	/* Netfilter hooks run under rcu_read_lock(). */
	kpx_decide(kn, &f, t->dst.u.all, &d, NULL);
	switch (d.verdict) {
	case KPX_EXP_V_ACCEPT:
		return NF_ACCEPT;
	case KPX_EXP_V_MARTIAN:
		return NF_DROP;
	case KPX_EXP_V_UNDEFINED_PORT:
		return send_unreach(kn, skb, state);
	case KPX_EXP_V_FILTERED:	/* not in KPX_SVC_A_SOURCE_RANGES */
		kpx_stat_inc2(d.svc->stats, kn->stats, filtered);
		return NF_DROP;
	case KPX_EXP_V_REJECT:
	case KPX_EXP_V_DROP:
		return refuse(kn, d.ssvc, skb, state);
	}

	range.flags = NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED;
	memcpy(&range.min_addr, &d.be->addr, sizeof(range.min_addr));
	range.max_addr = range.min_addr;
	range.min_proto.all = d.be->port;
	range.max_proto.all = d.be->port;

	verdict = nf_nat_setup_info(ct, &range, NF_NAT_MANIP_DST);
	if (verdict == NF_ACCEPT) {
		kpx_be_stat_inc(d.be->conns);
		kpx_lb_connected(d.set, d.be);
		kpx_stat_inc2(d.svc->stats, kn->stats, conns);
	} else {
		kpx_stat_inc(kn->stats, drops);
	}
	return verdict;
}

static const struct nf_hook_ops kpx_ops4[] = {
	{
		.hook = kpx_nat_fn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP_PRI_NAT_DST - 1,
	},
	{
		.hook = kpx_nat_fn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP_PRI_NAT_DST - 1,
	},
};

static const struct nf_hook_ops kpx_ops6[] = {
	{
		.hook = kpx_nat_fn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP6_PRI_NAT_DST - 1,
	},
	{
		.hook = kpx_nat_fn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP6_PRI_NAT_DST - 1,
	},
};

static void unregister4(struct net *net, int n)
{
	while (n-- > 0)
		nf_nat_ipv4_unregister_fn(net, &kpx_ops4[n]);
}

static void unregister6(struct net *net, int n)
{
	while (n-- > 0)
		nf_nat_ipv6_unregister_fn(net, &kpx_ops6[n]);
}

/**
 * kpx_hooks_register - start translating in @net
 * @net: the namespace
 *
 * Takes the namespace's conntrack references (the NAT core does not) and
 * registers the NAT lookup functions and the INVALID guard (invalid.c).
 * The frontend table must be ready.
 *
 * Return: 0 or a negative errno; on error nothing is registered.
 */
int kpx_hooks_register(struct net *net)
{
	int err, i4 = 0, i6 = 0;

	err = nf_ct_netns_get(net, NFPROTO_IPV4);
	if (err)
		return err;
	err = nf_ct_netns_get(net, NFPROTO_IPV6);
	if (err)
		goto put4;
	for (; i4 < ARRAY_SIZE(kpx_ops4); i4++) {
		err = nf_nat_ipv4_register_fn(net, &kpx_ops4[i4]);
		if (err)
			goto unreg;
	}
	for (; i6 < ARRAY_SIZE(kpx_ops6); i6++) {
		err = nf_nat_ipv6_register_fn(net, &kpx_ops6[i6]);
		if (err)
			goto unreg;
	}
	err = kpx_invalid_register(net);
	if (err)
		goto unreg;
	return 0;

unreg:
	unregister6(net, i6);
	unregister4(net, i4);
	nf_ct_netns_put(net, NFPROTO_IPV6);
put4:
	nf_ct_netns_put(net, NFPROTO_IPV4);
	return err;
}

/**
 * kpx_hooks_unregister - stop translating in @net
 * @net: the namespace
 *
 * The function may still run on other CPUs until an RCU grace period ends.
 */
void kpx_hooks_unregister(struct net *net)
{
	kpx_invalid_unregister(net);
	unregister6(net, ARRAY_SIZE(kpx_ops6));
	unregister4(net, ARRAY_SIZE(kpx_ops4));
	nf_ct_netns_put(net, NFPROTO_IPV6);
	nf_ct_netns_put(net, NFPROTO_IPV4);
}
