/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx NAT hook and its decision. */
#ifndef _KPX_HOOK_H
#define _KPX_HOOK_H

#include "kpx.h"
#include "lb.h"

struct net;
struct net_device;

/* The first packet of a new connection, as the decision sees it. */
struct kpx_flow {
	u8 family;		/* AF_INET or AF_INET6 */
	u8 protocol;		/* IPPROTO_TCP, IPPROTO_UDP or IPPROTO_SCTP */
	bool node;		/* sent by the node itself (LOCAL_OUT) */
	union kpx_addr src;	/* network order */
	union kpx_addr dst;
	const struct net_device *in;	/* PRE_ROUTING's, NULL: none */
};

/*
 * What the packet path does with it (kpx_decide()).  @svc, @ssvc, @set and
 * @be are RCU-protected: valid until the caller's rcu_read_unlock().
 */
struct kpx_decision {
	u8 verdict;		/* enum kpx_explain_verdict */
	u8 ranges;		/* enum kpx_explain_ranges */
	u8 source;		/* enum kpx_explain_source (explain, or eTP Local) */
	bool short_cut;		/* served by @svc's ClusterIP frontend */
	struct kpx_svc *svc;	/* the frontend matched, or NULL */
	struct kpx_svc *ssvc;	/* the frontend whose backends serve it */
	const struct kpx_bset *set;	/* @ssvc's set */
	struct kpx_backend *be;	/* KPX_EXP_V_DNAT: the backend */
};

void kpx_decide(struct kpx_net *kn, const struct kpx_flow *f, __be16 dport,
		struct kpx_decision *d, struct kpx_peek *peek);
int kpx_hooks_register(struct net *net);
void kpx_hooks_unregister(struct net *net);

#endif /* _KPX_HOOK_H */
