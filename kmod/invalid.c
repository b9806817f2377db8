// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx INVALID guard.
 *
 * A packet that conntrack cannot match to its entry's state (a TCP segment
 * outside the window, for one) is marked INVALID: conntrack detaches it
 * from the entry, and the NAT core then leaves it as it is.  A reply of a
 * flow kpx DNATed would leave the node with the backend's address as its
 * source; the client does not know that address and answers with a RST,
 * which reaches the backend untranslated and resets the real connection
 * (the connection-reset failure of busy Services).  kube-proxy's iptables
 * mode drops every INVALID packet in the forward path; that misses traffic
 * delivered to or sent by the node itself and drops traffic that is not
 * Service traffic at all (asymmetric routes, flows conntrack saw half of).
 *
 * kpx drops an INVALID packet only when it belongs to a flow kpx
 * translated: the conntrack entry its tuple names (in either direction)
 * has a destination NAT binding and its original destination is a kpx
 * frontend.  Every other INVALID packet is left to the rest of the
 * ruleset.  The hooks sit right after conntrack (NF_IP_PRI_CONNTRACK + 1)
 * at PRE_ROUTING and LOCAL_OUT, so forwarded, locally delivered, NodePort
 * and node-originated flows are all covered.  The cost for a tracked
 * packet is one test of skb->_nfct; for an untracked one a tuple parse,
 * one conntrack hash lookup and one frontend lookup, under RCU.  Drops are
 * counted in KPX_STATS_A_INVALID_DROPS.  With nf_conntrack_tcp_be_liberal
 * set, conntrack does not mark out-of-window segments INVALID and nothing
 * is dropped for that reason.
 *
 * The lookup is made in the packet's conntrack zone.  A zone comes with
 * the template the raw table attaches (iptables' CT --zone, nft's ct zone
 * set), and conntrack releases that template whatever its verdict, so an
 * INVALID packet leaves it with no trace of its zone.  A second hook right
 * before conntrack (NF_IP_PRI_CONNTRACK - 1) notes the zone of a packet
 * whose template names one other than the default, in a per-CPU slot
 * tagged with the packet; the guard uses it for that packet only, and the
 * default zone for every other.  The hooks of one packet run one after
 * the other, on one CPU but for a preempted LOCAL_OUT; a slot that names
 * another packet (the guard's packet was moved to another CPU in between,
 * or the packet noted was dropped by conntrack) is not used, and the slot
 * is written and taken with BHs off, so a softirq or another task on the
 * CPU never sees it half written.
 */
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/in.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_tuple.h>
#include <net/netfilter/nf_conntrack_zones.h>

#include "invalid.h"
#include "stats.h"
#include "svc.h"

/* The zone of the packet right before conntrack, when not the default. */
struct kpx_invalid_zone {
	const struct sk_buff *skb;
	struct nf_conntrack_zone zone;
};

static DEFINE_PER_CPU(struct kpx_invalid_zone, kpx_invalid_zone);

/**
 * kpx_invalid_note_zone - note the zone of @skb's conntrack template
 * @skb: a packet that conntrack has not seen yet in this hook
 *
 * Before conntrack, skb->_nfct holds the template the raw table attached,
 * if any.  Its zone (from the mark with NF_CT_FLAG_MARK) is noted for
 * kpx_invalid_zone_of() when it is not the default zone; otherwise a slot
 * left by another packet is cleared.
 */
void kpx_invalid_note_zone(const struct sk_buff *skb)
{
	const struct nf_conntrack_zone *zone = NULL;
	struct kpx_invalid_zone *slot;
	struct nf_conntrack_zone tmp;
	enum ip_conntrack_info ctinfo;
	struct nf_conn *tmpl;

	tmpl = nf_ct_get(skb, &ctinfo);
	if (tmpl && nf_ct_is_template(tmpl)) {
		zone = nf_ct_zone_tmpl(tmpl, skb, &tmp);
		if (zone->id == NF_CT_DEFAULT_ZONE_ID)
			zone = NULL;
	}
	if (!zone && likely(!this_cpu_read(kpx_invalid_zone.skb)))
		return;
	/* LOCAL_OUT may run preemptible: no task or softirq in between */
	local_bh_disable();
	slot = this_cpu_ptr(&kpx_invalid_zone);
	if (zone) {
		slot->zone = *zone;
		slot->skb = skb;
	} else {
		slot->skb = NULL;
	}
	local_bh_enable();
}

/**
 * kpx_invalid_zone_of - the conntrack zone to look @skb's flow up in
 * @skb: a packet conntrack has just seen
 * @tmp: storage for the zone returned
 *
 * Return: the zone kpx_invalid_note_zone() noted for @skb on this CPU
 * (the slot is then cleared), else the default zone.
 */
const struct nf_conntrack_zone *
kpx_invalid_zone_of(const struct sk_buff *skb, struct nf_conntrack_zone *tmp)
{
	const struct nf_conntrack_zone *zone = &nf_ct_zone_dflt;
	struct kpx_invalid_zone *slot;

	if (likely(this_cpu_read(kpx_invalid_zone.skb) != skb))
		return zone;
	local_bh_disable();
	slot = this_cpu_ptr(&kpx_invalid_zone);
	if (slot->skb == skb) {
		*tmp = slot->zone;
		slot->skb = NULL;
		zone = tmp;
	}
	local_bh_enable();
	return zone;
}

static unsigned int kpx_invalid_pre_fn(void *priv, struct sk_buff *skb,
				       const struct nf_hook_state *state)
{
	kpx_invalid_note_zone(skb);
	return NF_ACCEPT;
}

/* True when @ct is a flow kpx translated: DNATed, to a kpx frontend. */
static bool kpx_flow(struct kpx_net *kn, const struct nf_conn *ct)
{
	const struct nf_conntrack_tuple *t;
	struct kpx_key key;

	if (!test_bit(IPS_DST_NAT_BIT, &ct->status))
		return false;
	t = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	kpx_key_from_tuple(&key, t);
	return kpx_svc_lookup(kn, &key);
}

static unsigned int kpx_invalid_fn(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	const struct nf_conntrack_zone *zone;
	struct nf_conntrack_tuple_hash *h;
	struct nf_conntrack_tuple tuple;
	struct nf_conntrack_zone tmp;
	struct kpx_net *kn;
	struct nf_conn *ct;
	bool ours;

	/* tracked or untracked (IP_CT_UNTRACKED): not INVALID */
	if (skb_nfct(skb))
		return NF_ACCEPT;
	zone = kpx_invalid_zone_of(skb, &tmp);
	if (!nf_ct_get_tuplepr(skb, skb_network_offset(skb), state->pf,
			       state->net, &tuple))
		return NF_ACCEPT;
	switch (tuple.dst.protonum) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_SCTP:
		break;
	default:
		return NF_ACCEPT;
	}
	h = nf_conntrack_find_get(state->net, zone, &tuple);
	if (!h)
		return NF_ACCEPT;
	ct = nf_ct_tuplehash_to_ctrack(h);
	kn = kpx_net(state->net);
	/* Netfilter hooks run under rcu_read_lock(). */
	ours = kpx_flow(kn, ct);
	nf_ct_put(ct);
	if (!ours)
		return NF_ACCEPT;
	kpx_stat_inc(kn->stats, invalid);
	return NF_DROP;
}

#ifdef KPX_TEST_HOOKS
unsigned int kpx_test_invalid_hook(struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	return kpx_invalid_fn(NULL, skb, state);
}
#endif

static const struct nf_hook_ops kpx_invalid_ops[] = {
	{
		.hook = kpx_invalid_pre_fn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP_PRI_CONNTRACK - 1,
	},
	{
		.hook = kpx_invalid_pre_fn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP_PRI_CONNTRACK - 1,
	},
	{
		.hook = kpx_invalid_pre_fn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP6_PRI_CONNTRACK - 1,
	},
	{
		.hook = kpx_invalid_pre_fn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP6_PRI_CONNTRACK - 1,
	},
	{
		.hook = kpx_invalid_fn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP_PRI_CONNTRACK + 1,
	},
	{
		.hook = kpx_invalid_fn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP_PRI_CONNTRACK + 1,
	},
	{
		.hook = kpx_invalid_fn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP6_PRI_CONNTRACK + 1,
	},
	{
		.hook = kpx_invalid_fn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP6_PRI_CONNTRACK + 1,
	},
};

/**
 * kpx_invalid_register - start dropping INVALID packets of kpx's flows
 * @net: the namespace; its conntrack references are already held
 *
 * Return: 0 or a negative errno; on error nothing is registered.
 */
int kpx_invalid_register(struct net *net)
{
	return nf_register_net_hooks(net, kpx_invalid_ops,
				     ARRAY_SIZE(kpx_invalid_ops));
}

/**
 * kpx_invalid_unregister - undo kpx_invalid_register()
 * @net: the namespace
 *
 * The hook may still run on other CPUs until an RCU grace period ends.
 */
void kpx_invalid_unregister(struct net *net)
{
	nf_unregister_net_hooks(net, kpx_invalid_ops,
				ARRAY_SIZE(kpx_invalid_ops));
}
