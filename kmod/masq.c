// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx masquerade.
 *
 * Which connections: a new connection that kpx DNATed to a backend of a
 * frontend with KPX_SVC_F_MASQ; or with KPX_SVC_F_MASQ_NONLOCAL whose
 * source is not local (kpx_nscfg_src_local()); or, whatever the flags,
 * whose backend is its own source (hairpin, else the backend would answer
 * itself directly and the client would drop the reply).  A connection from
 * a local source or from the node itself to a KPX_SVC_F_EXT_LOCAL frontend
 * was scheduled with the Service's ClusterIP frontend (hook.c): that
 * frontend's backends serve it, its masquerade flags do not apply (a local
 * pod keeps its source but for hairpin), and a connection from the node
 * itself is always masqueraded (its source may be the external address,
 * which the backend would answer directly; kube-proxy "masquerade LOCAL
 * traffic").
 *
 * Where: SNAT needs the outgoing interface, known only after routing, so
 * kpx registers a second NAT lookup function per family at POST_ROUTING
 * (one priority step before iptables' nat table) and calls the NAT core's
 * masquerade helper there, like the MASQUERADE target.
 *
 * How the decision gets from the DNAT to POST_ROUTING: it is recomputed
 * from the conntrack entry itself rather than stored in it.  The entry's
 * original tuple gives the frontend key and the client address, its reply
 * tuple the backend the DNAT chose; the entry is taken as kpx's only if it
 * has a DNAT binding, its original destination is a kpx frontend and its
 * reply source is one of that frontend's current backends (or of its
 * ClusterIP frontend's, KPX_SVC_F_EXT_LOCAL).  Nothing else
 * in the entry (mark, labels, status bits, extensions) is touched, so kpx
 * does not collide with other users of those.  The NAT core calls this
 * function once per entry, for the first packet, a few microseconds after
 * the DNAT in the same packet's path: a SET between the two can at worst
 * apply the new flags to that one connection.  The input interface is the
 * packet's (POST_ROUTING's state->in, i.e. the skb's device before output)
 * for forwarded packets; a locally generated packet has none.
 */
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/in.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_nat.h>
#include <net/netfilter/nf_nat_masquerade.h>
#include <linux/kpx.h>

#include "masq.h"
#include "nsconfig.h"
#include "svc.h"
#include "backend.h"

/**
 * kpx_masq_why - is a new connection kpx DNATed masqueraded, and why?
 * @kn: the namespace's state
 * @svc: the frontend its destination matched
 * @short_cut: it was scheduled with @svc's ClusterIP frontend (a local
 *	source or the node itself, KPX_SVC_F_EXT_LOCAL; see hook.c)
 * @node: it comes from the node itself (LOCAL_OUT)
 * @src: its source address
 * @be: the backend address it was DNATed to
 * @in: the interface it entered through, NULL from the node itself
 *
 * The one decision of kpx_masq_fn() and KPX_CMD_EXPLAIN.  A short-cut
 * local pod keeps its source: the ClusterIP frontend's KPX_SVC_F_MASQ
 * (--masquerade-all) matches only the ClusterIP as destination in
 * kube-proxy, whose external chain sends pod traffic straight to the
 * Service's endpoint chain (pkg/proxy/nftables/proxier.go, "short-circuit
 * pod traffic"); the node itself is masqueraded.  Call under
 * rcu_read_lock().
 *
 * Return: enum kpx_explain_masq; KPX_EXP_MASQ_NODE and above masquerade.
 */
u8 kpx_masq_why(struct kpx_net *kn, const struct kpx_svc *svc,
		bool short_cut, bool node, const union kpx_addr *src,
		const union kpx_addr *be, const struct net_device *in)
{
	u32 flags = short_cut ? 0 : READ_ONCE(svc->flags);

	if (short_cut && node)
		return KPX_EXP_MASQ_NODE;
	if (flags & KPX_SVC_F_MASQ)
		return KPX_EXP_MASQ_ALL;
	if (!memcmp(be, src, sizeof(*be)))
		return KPX_EXP_MASQ_HAIRPIN;
	if (flags & KPX_SVC_F_MASQ_NONLOCAL) {
		if (kpx_nscfg_src_local(rcu_dereference(kn->cfg),
					svc->key.family, src, in))
			return KPX_EXP_MASQ_NO_LOCAL;
		return KPX_EXP_MASQ_NONLOCAL;
	}
	return short_cut ? KPX_EXP_MASQ_NO_SHORT : KPX_EXP_MASQ_NO;
}

static unsigned int kpx_masq_fn(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	struct kpx_net *kn = kpx_net(state->net);
	const struct nf_conntrack_tuple *o, *r;
	struct nf_nat_range2 range = {};
	enum ip_conntrack_info ctinfo;
	const struct net_device *in;
	struct kpx_svc *svc, *csvc;
	union kpx_addr src, be;
	struct nf_conn *ct;
	struct kpx_key key;
	bool node, short_cut;

	ct = nf_ct_get(skb, &ctinfo);
	if (!ct || ctinfo != IP_CT_NEW || !(ct->status & IPS_DST_NAT) ||
	    nf_nat_initialized(ct, NF_NAT_MANIP_SRC))
		return NF_ACCEPT;
	o = &ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	r = &ct->tuplehash[IP_CT_DIR_REPLY].tuple;
	kpx_key_from_tuple(&key, o);
	svc = kpx_svc_lookup(kn, &key);
	if (!svc)
		return NF_ACCEPT;
	kpx_addr_from_nf(&be, key.family, &r->src.u3);
	kpx_addr_from_nf(&src, key.family, &o->src.u3);
	node = !skb->skb_iif;	/* locally generated: LOCAL_OUT in hook.c */
	in = node ? NULL : state->in;

	/* a backend of the frontend or of its ClusterIP frontend (hook.c) */
	csvc = kpx_svc_cluster(kn, svc);
	if (!kpx_bset_find(rcu_dereference(svc->bset), be.bytes,
			   r->src.u.all) &&
	    !(csvc && kpx_bset_find(rcu_dereference(csvc->bset), be.bytes,
				    r->src.u.all)))
		return NF_ACCEPT;
	/* the same choice as kpx_decide()'s (hook.c) */
	short_cut = csvc && (node ||
			     kpx_nscfg_src_local(rcu_dereference(kn->cfg),
						 key.family, &src, in));
	if (kpx_masq_why(kn, svc, short_cut, node, &src, &be, in) <
	    KPX_EXP_MASQ_NODE)
		return NF_ACCEPT;
	if (state->pf == NFPROTO_IPV4)
		return nf_nat_masquerade_ipv4(skb, state->hook, &range,
					      state->out);
	return nf_nat_masquerade_ipv6(skb, &range, state->out);
}

static const struct nf_hook_ops masq_ops4 = {
	.hook = kpx_masq_fn,
	.pf = NFPROTO_IPV4,
	.hooknum = NF_INET_POST_ROUTING,
	.priority = NF_IP_PRI_NAT_SRC - 1,
};

static const struct nf_hook_ops masq_ops6 = {
	.hook = kpx_masq_fn,
	.pf = NFPROTO_IPV6,
	.hooknum = NF_INET_POST_ROUTING,
	.priority = NF_IP6_PRI_NAT_SRC - 1,
};

/**
 * kpx_masq_register - start masquerading in @net
 * @net: the namespace; its conntrack references are already held (see
 *	kpx_hooks_register())
 *
 * Return: 0 or a negative errno; on error nothing is registered.
 */
int kpx_masq_register(struct net *net)
{
	int err;

	err = nf_nat_ipv4_register_fn(net, &masq_ops4);
	if (err)
		return err;
	err = nf_nat_ipv6_register_fn(net, &masq_ops6);
	if (err)
		nf_nat_ipv4_unregister_fn(net, &masq_ops4);
	return err;
}

/**
 * kpx_masq_unregister - stop masquerading in @net
 * @net: the namespace
 */
void kpx_masq_unregister(struct net *net)
{
	nf_nat_ipv6_unregister_fn(net, &masq_ops6);
	nf_nat_ipv4_unregister_fn(net, &masq_ops4);
}

/**
 * kpx_masq_init - module init: the NAT core's address-change notifiers,
 * which delete masqueraded entries of an address or interface that goes
 *
 * Return: 0 or a negative errno.
 */
int kpx_masq_init(void)
{
	return nf_nat_masquerade_inet_register_notifiers();
}

/** kpx_masq_exit - module exit: drops the notifiers' reference. */
void kpx_masq_exit(void)
{
	nf_nat_masquerade_inet_unregister_notifiers();
}
