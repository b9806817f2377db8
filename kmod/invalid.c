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
	struct nf_conntrack_tuple_hash *h;
	struct nf_conntrack_tuple tuple;
	struct kpx_net *kn;
	struct nf_conn *ct;
	bool ours;

	/* tracked or untracked (IP_CT_UNTRACKED): not INVALID */
	if (skb_nfct(skb))
		return NF_ACCEPT;
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
	h = nf_conntrack_find_get(state->net, &nf_ct_zone_dflt, &tuple);
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

static const struct nf_hook_ops kpx_invalid_ops[] = {
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
