// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx KPX_CMD_EXPLAIN: what the NAT hook would do with a new connection.
 *
 * The request names the connection (family, protocol, source and
 * destination, input interface or the node itself); the answer is
 * kpx_decide() (hook.c), the function the NAT hook calls, run with a
 * struct kpx_peek so that it changes nothing, and kpx_masq_why() (masq.c),
 * the masquerade hook's decision, for the backend it chose.  The reply is
 * allocated before rcu_read_lock() and filled under it without allocating:
 * one frontend lookup, at most two source-range searches, one affinity
 * peek and one pick, whatever the request.
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

const struct nla_policy kpx_explain_policy[KPX_EXP_A_MAX + 1] = {
	[KPX_EXP_A_FAMILY] = { .type = NLA_U16 },
	[KPX_EXP_A_PROTOCOL] = { .type = NLA_U8 },
	/* lengths checked in parse_flow(): the contract says EINVAL */
	[KPX_EXP_A_SRC_ADDR] = { .type = NLA_BINARY },
	[KPX_EXP_A_SRC_PORT] = { .type = NLA_BE16 },
	[KPX_EXP_A_DST_ADDR] = { .type = NLA_BINARY },
	[KPX_EXP_A_DST_PORT] = { .type = NLA_BE16 },
	[KPX_EXP_A_IIF] = { .type = NLA_U32 },
	[KPX_EXP_A_LOCAL_OUT] = { .type = NLA_FLAG },
};

static int get_addr(struct nlattr **tb, int type, u8 family,
		    union kpx_addr *addr, struct netlink_ext_ack *extack)
{
	unsigned int len = family == AF_INET ? 4 : 16;

	if (!tb[type] || nla_len(tb[type]) != len) {
		NL_SET_ERR_MSG_ATTR(extack, tb[type],
				    "address missing or not of the family's length");
		return -EINVAL;
	}
	memset(addr, 0, sizeof(*addr));
	nla_memcpy(addr->bytes, tb[type], len);
	return 0;
}

/* The request's connection; @f->in is set later, under RCU. */
static int parse_flow(struct genl_info *info, struct nlattr **tb,
		      struct kpx_flow *f, __be16 *dport, u32 *iif)
{
	struct netlink_ext_ack *extack = info->extack;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KPX_A_EXPLAIN)) {
		NL_SET_ERR_MSG(extack, "missing KPX_A_EXPLAIN");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, KPX_EXP_A_MAX, info->attrs[KPX_A_EXPLAIN],
			       kpx_explain_policy, extack);
	if (err)
		return err;
	memset(f, 0, sizeof(*f));
	if (!tb[KPX_EXP_A_FAMILY] || !tb[KPX_EXP_A_PROTOCOL] ||
	    !tb[KPX_EXP_A_SRC_PORT] || !tb[KPX_EXP_A_DST_PORT]) {
		NL_SET_ERR_MSG(extack,
			       "family, protocol and both ports are required");
		return -EINVAL;
	}
	switch (nla_get_u16(tb[KPX_EXP_A_FAMILY])) {
	case AF_INET:
		f->family = AF_INET;
		break;
	case AF_INET6:
		f->family = AF_INET6;
		break;
	default:
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_EXP_A_FAMILY],
				    "family must be AF_INET or AF_INET6");
		return -EINVAL;
	}
	f->protocol = nla_get_u8(tb[KPX_EXP_A_PROTOCOL]);
	if (f->protocol != IPPROTO_TCP && f->protocol != IPPROTO_UDP &&
	    f->protocol != IPPROTO_SCTP) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_EXP_A_PROTOCOL],
				    "protocol must be TCP, UDP or SCTP");
		return -EINVAL;
	}
	*dport = nla_get_be16(tb[KPX_EXP_A_DST_PORT]);
	if (!*dport || !nla_get_be16(tb[KPX_EXP_A_SRC_PORT])) {
		NL_SET_ERR_MSG(extack, "ports must not be 0");
		return -EINVAL;
	}
	err = get_addr(tb, KPX_EXP_A_SRC_ADDR, f->family, &f->src, extack);
	if (!err)
		err = get_addr(tb, KPX_EXP_A_DST_ADDR, f->family, &f->dst,
			       extack);
	if (err)
		return err;
	f->node = nla_get_flag(tb[KPX_EXP_A_LOCAL_OUT]);
	*iif = tb[KPX_EXP_A_IIF] ? nla_get_u32(tb[KPX_EXP_A_IIF]) : 0;
	if (tb[KPX_EXP_A_IIF] && (f->node || !*iif)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_EXP_A_IIF],
				    "an input interface (not 0), or LOCAL_OUT, not both");
		return -EINVAL;
	}
	return 0;
}

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
 * kpx_nl_explain - KPX_CMD_EXPLAIN doit
 * @skb: the request
 * @info: its attributes; KPX_A_EXPLAIN is required
 *
 * Return: 0 (the reply sent), -EINVAL (extack set), -ENODEV, -ENOMEM or
 * -EMSGSIZE.
 */
int kpx_nl_explain(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nlattr *tb[KPX_EXP_A_MAX + 1];
	struct kpx_net *kn = kpx_net(net);
	struct kpx_peek peek = {};
	struct kpx_decision d;
	struct nlattr *nest;
	struct sk_buff *msg;
	struct kpx_flow f;
	__be16 dport;
	void *hdr;
	int err;
	u32 iif;

	err = parse_flow(info, tb, &f, &dport, &iif);
	if (err)
		return err;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &kpx_family, 0, KPX_CMD_EXPLAIN);
	nest = hdr ? nla_nest_start(msg, KPX_A_EXPLAIN) : NULL;
	if (!nest) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	rcu_read_lock();
	if (iif) {
		f.in = dev_get_by_index_rcu(net, iif);
		if (!f.in) {
			rcu_read_unlock();
			nlmsg_free(msg);
			NL_SET_ERR_MSG_ATTR(info->extack, tb[KPX_EXP_A_IIF],
					    "no such interface");
			return -ENODEV;
		}
	}
	kpx_decide(kn, &f, dport, &d, &peek);
	err = put_decision(msg, kn, &f, &d, &peek);
	rcu_read_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}
