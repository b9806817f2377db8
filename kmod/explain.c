// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx KPX_CMD_EXPLAIN: what the NAT hook would do with a new connection.
 *
 * The request names the connection (family, protocol, source and
 * destination, input interface or the node itself); the answer is
 * kpx_decide() (hook.c), the function the NAT hook calls, run with a
 * struct kpx_peek so that it changes nothing, and kpx_masq_why() (masq.c),
 * the masquerade hook's decision, for the backend it chose.  netlink.c
 * parses the request and allocates the reply before rcu_read_lock();
 * kpx_explain_fill() fills it under it without allocating: one frontend
 * lookup, at most two source-range searches, one affinity peek and one
 * pick, whatever the request.
 */
#include <linux/kernel.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "explain.h"
#include "netlink.h"
#include "hook.h"
#include "lb.h"
#include "lb_nl.h"
#include "masq.h"
#include "sched.h"
#include "stats.h"

static int put_frontend(struct sk_buff *msg, int type,
			const struct kpx_svc *svc)
{
	struct nlattr *nest = nla_nest_start(msg, type);

	if (!nest || kpx_nl_put_svc(msg, svc))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_backend(struct sk_buff *msg, const struct kpx_decision *d)
{
	const struct kpx_backend *be = d->be;
	unsigned int len = d->ssvc->key.family == AF_INET ? 4 : 16;
	struct nlattr *nest;
	u32 i, weight = 0;

	/* the set is sorted: a binary search would do, the count bounds it */
	for (i = 0; i < d->set->count; i++)
		if (d->set->be[i] == be)
			weight = kpx_bset_weight(d->set, i);
	nest = nla_nest_start(msg, KPX_EXP_A_BACKEND);
	if (!nest ||
	    nla_put(msg, KPX_BE_A_ADDR, len, &be->addr) ||
	    nla_put_be16(msg, KPX_BE_A_PORT, be->port) ||
	    nla_put_u32(msg, KPX_BE_A_WEIGHT, weight) ||
	    nla_put_u64_64bit(msg, KPX_BE_A_CONNS,
			      kpx_be_stats_conns(be->conns), KPX_BE_A_PAD) ||
	    nla_put_u32(msg, KPX_BE_A_ACTIVE, kpx_be_active(be)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/* The counters the NAT hook would bump for @d (KPX_EXP_C_*). */
static u32 counters(const struct kpx_decision *d)
{
	switch (d->verdict) {
	case KPX_EXP_V_UNDEFINED_PORT:
		return KPX_EXP_C_NS_REJECTS;
	case KPX_EXP_V_FILTERED:
		return KPX_EXP_C_SVC_FILTERED | KPX_EXP_C_NS_FILTERED;
	case KPX_EXP_V_REJECT:
		return KPX_EXP_C_SVC_REJECTS | KPX_EXP_C_NS_REJECTS;
	case KPX_EXP_V_DROP:
		return KPX_EXP_C_SVC_REJECTS | KPX_EXP_C_NS_DROPS;
	case KPX_EXP_V_DNAT:
		return KPX_EXP_C_SVC_CONNS | KPX_EXP_C_BE_CONNS |
		       KPX_EXP_C_NS_CONNS;
	}
	return 0;
}

static int put_decision(struct sk_buff *msg, struct kpx_net *kn,
			const struct kpx_flow *f,
			const struct kpx_decision *d,
			const struct kpx_peek *peek)
{
	const struct kpx_sched_data *sd;
	u8 masq;

	if (nla_put_u8(msg, KPX_EXP_A_VERDICT, d->verdict) ||
	    nla_put_u32(msg, KPX_EXP_A_COUNTERS, counters(d)))
		return -EMSGSIZE;
	if (!d->svc)
		return 0;
	if (put_frontend(msg, KPX_EXP_A_FRONTEND, d->svc) ||
	    nla_put_u8(msg, KPX_EXP_A_SOURCE, d->source) ||
	    nla_put_u8(msg, KPX_EXP_A_SOURCE_RANGES, d->ranges))
		return -EMSGSIZE;
	if (!d->ssvc)	/* filtered */
		return 0;
	if ((d->ssvc != d->svc &&
	     put_frontend(msg, KPX_EXP_A_SCHED_FRONTEND, d->ssvc)) ||
	    nla_put_u8(msg, KPX_EXP_A_SHORT_CIRCUIT, d->short_cut) ||
	    nla_put_u32(msg, KPX_EXP_A_BACKENDS,
			d->set ? d->set->count : 0))
		return -EMSGSIZE;
	sd = d->set ? d->set->sd : NULL;
	if (nla_put_string(msg, KPX_EXP_A_SCHEDULER,
			   kpx_sched_name(sd ? sd->id : KPX_SCHED_RANDOM)))
		return -EMSGSIZE;
	if (!d->be)
		return 0;
	if (nla_put_u8(msg, KPX_EXP_A_AFFINITY, peek->aff) ||
	    (peek->aff == KPX_EXP_AFF_HIT &&
	     nla_put_u64_64bit(msg, KPX_EXP_A_AFFINITY_AGE, peek->aff_age_ms,
			       KPX_EXP_A_PAD)) ||
	    nla_put_u8(msg, KPX_EXP_A_PICK, peek->pick))
		return -EMSGSIZE;
	if (peek->pick != KPX_EXP_PICK_RANDOM && put_backend(msg, d))
		return -EMSGSIZE;
	masq = kpx_masq_why(kn, d->svc, d->short_cut, f->node, &f->src,
			    peek->pick == KPX_EXP_PICK_RANDOM ? &f->dst :
			    &d->be->addr, f->node ? NULL : f->in);
	return nla_put_u8(msg, KPX_EXP_A_MASQ, masq);
}

/**
 * kpx_explain_fill - KPX_A_EXPLAIN's attributes: what the NAT hook and the
 * masquerade hook would do with the connection @f
 * @msg: the reply, its KPX_A_EXPLAIN nest open
 * @kn: the namespace's state
 * @f: the connection, @f->in resolved
 * @dport: its destination port
 *
 * Call under rcu_read_lock(); allocates nothing and changes nothing.
 *
 * Return: 0 or -EMSGSIZE.
 */
int kpx_explain_fill(struct sk_buff *msg, struct kpx_net *kn,
		     const struct kpx_flow *f, __be16 dport)
{
	struct kpx_peek peek = {};
	struct kpx_decision d;

	kpx_decide(kn, f, dport, &d, &peek);
	return put_decision(msg, kn, f, &d, &peek);
}
