// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx generic netlink family; uapi/linux/kpx.h is the specification.
 * Every request handler is here: it parses and validates its attributes,
 * calls the table (svc.c through pernet.c), the settings (nsconfig.c) or
 * the decision (explain.c) with a plain request, and writes the reply.
 *
 * Requests are validated strictly against one policy per nesting level,
 * then every semantic rule is checked and the whole backend list is parsed
 * into a new array before the table is touched, so a refused request
 * changes nothing.
 *
 * GET_SERVICE dumps frontends in table order.  A frontend whose backends do
 * not fit one message continues in the next ones: consecutive messages with
 * the same key (and the same flags and counters) each carry a further slice
 * of its backends, and userspace concatenates them.  The dump position is
 * (frontend, backend index) in cb->ctx (struct kpx_dump_ctx): the next
 * frontend's key, found again with one hash lookup, so a dump of n
 * frontends costs O(n), not O(n^2) over its messages; the namespace's
 * generation number flags a dump that raced with a change NLM_F_DUMP_INTR.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <linux/netdevice.h>
#include <linux/kpx.h>

#include "netlink.h"
#include "pernet.h"
#include "svc.h"
#include "backend.h"
#include "ranges.h"
#include "nsconfig.h"
#include "lb_nl.h"
#include "stats.h"
#include "ct.h"
#include "name.h"
#include "explain.h"
#include "hook.h"

static const struct nla_policy be_policy[KPX_BE_A_MAX + 1] = {
	/* Length checked in parse_backend(): the contract says EINVAL. */
	[KPX_BE_A_ADDR] = { .type = NLA_BINARY },
	[KPX_BE_A_PORT] = { .type = NLA_BE16 },
	/* Range checked in parse_backend(): the contract says EINVAL. */
	[KPX_BE_A_WEIGHT] = { .type = NLA_U32 },
};

static const struct nla_policy backends_policy[KPX_BACKENDS_A_MAX + 1] = {
	[KPX_BACKENDS_A_BACKEND] = NLA_POLICY_NESTED(be_policy),
};

static const struct nla_policy svc_policy[KPX_SVC_A_MAX + 1] = {
	[KPX_SVC_A_FAMILY] = { .type = NLA_U16 },
	[KPX_SVC_A_PROTOCOL] = { .type = NLA_U8 },
	[KPX_SVC_A_ADDR] = { .type = NLA_BINARY },	/* parse_key(): EINVAL */
	[KPX_SVC_A_PORT] = { .type = NLA_BE16 },
	[KPX_SVC_A_FLAGS] = NLA_POLICY_MASK(NLA_U32, KPX_SVC_F_SUPPORTED),
	[KPX_SVC_A_BACKENDS] = NLA_POLICY_NESTED(backends_policy),
	[KPX_SVC_A_SOURCE_RANGES] = NLA_POLICY_NESTED(kpx_cidrs_policy),
	/* scheduling (lb_nl.c checks the ranges) */
	[KPX_SVC_A_SCHEDULER] = { .type = NLA_NUL_STRING,
				  .len = KPX_SCHED_NAME_MAX - 1 },
	[KPX_SVC_A_MH_SIZE] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_TIMEOUT] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_MAX] = { .type = NLA_U32 },
	/* parse_cluster() checks the length and the flag */
	[KPX_SVC_A_CLUSTER_ADDR] = { .type = NLA_BINARY },
	[KPX_SVC_A_CLUSTER_PORT] = { .type = NLA_BE16 },
	/* kpx_name_parse() checks the characters and the kind's range */
	[KPX_SVC_A_NAME] = { .type = NLA_NUL_STRING,
			     .len = KPX_SVC_NAME_MAX - 1 },
	[KPX_SVC_A_KIND] = { .type = NLA_U8 },
};

static const struct nla_policy cfg_policy[KPX_CFG_A_MAX + 1] = {
	[KPX_CFG_A_LOCAL_CIDRS] = NLA_POLICY_NESTED(kpx_cidrs_policy),
	/* NUL-terminated: a longer name is EINVAL (NLA_STRING's is ERANGE) */
	[KPX_CFG_A_LOCAL_IFNAME] = { .type = NLA_NUL_STRING,
				     .len = IFNAMSIZ - 1 },
	[KPX_CFG_A_LOCAL_IFPREFIX] = { .type = NLA_NUL_STRING,
				       .len = IFNAMSIZ - 1 },
};

static const struct nla_policy explain_policy[KPX_EXP_A_MAX + 1] = {
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

static int parse_addr(struct nlattr **tb, int type, u8 family,
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
			       explain_policy, extack);
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
	err = parse_addr(tb, KPX_EXP_A_SRC_ADDR, f->family, &f->src, extack);
	if (!err)
		err = parse_addr(tb, KPX_EXP_A_DST_ADDR, f->family, &f->dst,
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

static const struct nla_policy kpx_policy[KPX_A_MAX + 1] = {
	[KPX_A_SERVICE] = NLA_POLICY_NESTED(svc_policy),
	[KPX_A_BACKENDS] = NLA_POLICY_NESTED(backends_policy),
	[KPX_A_CONFIG] = NLA_POLICY_NESTED(cfg_policy),
	[KPX_A_SOURCE_RANGES] = NLA_POLICY_NESTED(kpx_cidrs_policy),
	[KPX_A_EXPLAIN] = NLA_POLICY_NESTED(explain_policy),
};

static unsigned int addr_len(u16 family)
{
	return family == AF_INET ? 4 : 16;
}

/* Parses and checks the four key attributes of a KPX_A_SERVICE nest. */
static int parse_key(struct nlattr **tb, struct nlattr *nest,
		     struct kpx_key *key, struct netlink_ext_ack *extack)
{
	static const int need[] = {
		KPX_SVC_A_FAMILY, KPX_SVC_A_PROTOCOL,
		KPX_SVC_A_ADDR, KPX_SVC_A_PORT,
	};
	struct nlattr *a;
	u16 family;
	u8 proto;
	int i;

	for (i = 0; i < ARRAY_SIZE(need); i++) {
		if (!tb[need[i]]) {
			NL_SET_ERR_MSG_ATTR(extack, nest,
					    "missing frontend key attribute");
			NL_SET_ERR_ATTR_MISS(extack, nest, need[i]);
			return -EINVAL;
		}
	}

	a = tb[KPX_SVC_A_FAMILY];
	family = nla_get_u16(a);
	if (family != AF_INET && family != AF_INET6) {
		NL_SET_ERR_MSG_ATTR(extack, a,
				    "family must be AF_INET or AF_INET6");
		return -EINVAL;
	}
	a = tb[KPX_SVC_A_PROTOCOL];
	proto = nla_get_u8(a);
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
	    proto != IPPROTO_SCTP) {
		NL_SET_ERR_MSG_ATTR(extack, a,
				    "protocol must be TCP, UDP or SCTP");
		return -EINVAL;
	}
	a = tb[KPX_SVC_A_ADDR];
	if (nla_len(a) != addr_len(family)) {
		NL_SET_ERR_MSG_ATTR(extack, a,
				    "address length does not match family");
		return -EINVAL;
	}
	if (!nla_get_be16(tb[KPX_SVC_A_PORT])) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_SVC_A_PORT],
				    "port must not be 0");
		return -EINVAL;
	}
	kpx_key_init(key, family, proto, nla_data(a),
		     nla_get_be16(tb[KPX_SVC_A_PORT]));
	return 0;
}

/* Parses the KPX_A_SERVICE nest of @info into @tb and @key. */
static int parse_svc(struct genl_info *info, struct nlattr **tb,
		     struct kpx_key *key)
{
	struct nlattr *nest = info->attrs[KPX_A_SERVICE];
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KPX_A_SERVICE)) {
		NL_SET_ERR_MSG(info->extack, "missing KPX_A_SERVICE");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, KPX_SVC_A_MAX, nest, svc_policy,
			       info->extack);
	if (err)
		return err;
	return parse_key(tb, nest, key, info->extack);
}

static int parse_backend(struct nlattr *nest, u16 family,
			 struct kpx_be_cfg *cfg, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[KPX_BE_A_MAX + 1];
	int err;

	err = nla_parse_nested(tb, KPX_BE_A_MAX, nest, be_policy, extack);
	if (err)
		return err;
	if (!tb[KPX_BE_A_ADDR] || !tb[KPX_BE_A_PORT]) {
		NL_SET_ERR_MSG_ATTR(extack, nest,
				    "backend needs an address and a port");
		NL_SET_ERR_ATTR_MISS(extack, nest, tb[KPX_BE_A_ADDR] ?
				     KPX_BE_A_PORT : KPX_BE_A_ADDR);
		return -EINVAL;
	}
	if (nla_len(tb[KPX_BE_A_ADDR]) != addr_len(family)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_BE_A_ADDR],
				    "backend address length does not match family");
		return -EINVAL;
	}
	cfg->port = nla_get_be16(tb[KPX_BE_A_PORT]);
	if (!cfg->port) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_BE_A_PORT],
				    "backend port must not be 0");
		return -EINVAL;
	}
	memcpy(cfg->addr.bytes, nla_data(tb[KPX_BE_A_ADDR]), addr_len(family));
	cfg->weight = 1;
	if (tb[KPX_BE_A_WEIGHT])
		cfg->weight = nla_get_u32(tb[KPX_BE_A_WEIGHT]);
	if (!cfg->weight || cfg->weight > KPX_WEIGHT_MAX) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_BE_A_WEIGHT],
				    "backend weight must be 1..KPX_WEIGHT_MAX");
		return -EINVAL;
	}
	return 0;
}

/*
 * The lists of a SET, found in one pass over the message: the backend
 * lists (KPX_SVC_A_BACKENDS, then every top-level KPX_A_BACKENDS in order;
 * the genl core's info->attrs only keeps the last of a repeated attribute)
 * and the source range lists (KPX_SVC_A_SOURCE_RANGES, then every
 * top-level KPX_A_SOURCE_RANGES).
 */
struct set_lists {
	u32 nbe, nsr;
	const struct nlattr *be[KPX_BACKEND_LISTS_MAX + 1];
	const struct nlattr *sr[KPX_SOURCE_RANGE_LISTS_MAX + 1];
};

static int collect_lists(const struct genl_info *info, struct nlattr **tb,
			 struct set_lists *sl, struct netlink_ext_ack *extack)
{
	const struct nlattr *a;
	int rem;

	sl->nbe = sl->nsr = 0;
	if (tb[KPX_SVC_A_BACKENDS])
		sl->be[sl->nbe++] = tb[KPX_SVC_A_BACKENDS];
	if (tb[KPX_SVC_A_SOURCE_RANGES])
		sl->sr[sl->nsr++] = tb[KPX_SVC_A_SOURCE_RANGES];
	nla_for_each_attr(a, nlmsg_attrdata(info->nlhdr, GENL_HDRLEN),
			  nlmsg_attrlen(info->nlhdr, GENL_HDRLEN), rem) {
		switch (nla_type(a)) {
		case KPX_A_BACKENDS:
			if (!nla_len(a)) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "empty backend list");
				return -EINVAL;
			}
			if (sl->nbe - !!tb[KPX_SVC_A_BACKENDS] >=
			    KPX_BACKEND_LISTS_MAX) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "too many backend lists");
				return -EINVAL;
			}
			sl->be[sl->nbe++] = a;
			break;
		case KPX_A_SOURCE_RANGES:
			if (!nla_len(a)) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "empty source range list");
				return -EINVAL;
			}
			if (sl->nsr - !!tb[KPX_SVC_A_SOURCE_RANGES] >=
			    KPX_SOURCE_RANGE_LISTS_MAX) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "too many source range lists");
				return -EINVAL;
			}
			sl->sr[sl->nsr++] = a;
			break;
		}
	}
	return 0;
}

/* The backend at request position @n, to point an error at. */
static const struct nlattr *nth_backend(const struct set_lists *sl, u32 n)
{
	const struct nlattr *a;
	int rem;
	u32 i;

	for (i = 0; i < sl->nbe; i++)
		nla_for_each_nested(a, sl->be[i], rem)
			if (!n--)
				return a;
	return NULL;
}

/* Parsing and building reschedule every this many backends. */
#define PARSE_STEP	1024

/*
 * Parses the backend lists of @sl into a new sorted array; *cfgp is NULL
 * (and *np 0) if there is none.  The limit and the duplicate check apply
 * to the union.  Linear in the message (plus the sort).  The caller
 * kvfree()s *cfgp.
 */
static int parse_backends(const struct set_lists *sl, u16 family,
			  struct kpx_be_cfg **cfgp, u32 *np,
			  struct netlink_ext_ack *extack)
{
	struct kpx_be_cfg *cfg;
	struct nlattr *a;
	u32 i, n = 0, dup;
	int rem, err;

	*cfgp = NULL;
	*np = 0;
	for (i = 0; i < sl->nbe; i++) {
		nla_for_each_nested(a, sl->be[i], rem) {
			if (++n > KPX_BACKENDS_MAX) {
				NL_SET_ERR_MSG_ATTR(extack, sl->be[i],
						    "too many backends");
				return -EINVAL;
			}
		}
	}
	if (!n)
		return 0;
	cfg = kvcalloc(n, sizeof(*cfg), GFP_KERNEL_ACCOUNT);
	if (!cfg)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < sl->nbe; i++) {
		nla_for_each_nested(a, sl->be[i], rem) {
			cfg[n].pos = n;
			err = parse_backend(a, family, &cfg[n], extack);
			if (err)
				goto err;
			if (!(++n % PARSE_STEP))
				cond_resched();
		}
	}
	err = kpx_be_cfg_sort(cfg, n, &dup);
	if (err) {
		NL_SET_ERR_MSG_ATTR(extack, nth_backend(sl, dup),
				    "duplicate backend");
		goto err;
	}
	*cfgp = cfg;
	*np = n;
	return 0;
err:
	kvfree(cfg);
	return err;
}

/*
 * The ClusterIP frontend key of a KPX_SVC_F_EXT_LOCAL frontend @key: both
 * KPX_SVC_A_CLUSTER_* with the flag, neither without; same family and
 * protocol, not @key itself.  *@has says whether @cluster was filled.
 */
static int parse_cluster(struct nlattr **tb, struct nlattr *nest,
			 const struct kpx_key *key, u32 flags,
			 struct kpx_key *cluster, bool *has,
			 struct netlink_ext_ack *extack)
{
	struct nlattr *a = tb[KPX_SVC_A_CLUSTER_ADDR];
	struct nlattr *p = tb[KPX_SVC_A_CLUSTER_PORT];

	*has = false;
	if (!(flags & KPX_SVC_F_EXT_LOCAL)) {
		if (a || p) {
			NL_SET_ERR_MSG_ATTR(extack, a ? a : p,
					    "cluster frontend needs KPX_SVC_F_EXT_LOCAL");
			return -EINVAL;
		}
		return 0;
	}
	if (!a || !p) {
		NL_SET_ERR_MSG_ATTR(extack, nest,
				    "KPX_SVC_F_EXT_LOCAL needs the cluster frontend");
		NL_SET_ERR_ATTR_MISS(extack, nest, a ? KPX_SVC_A_CLUSTER_PORT :
				     KPX_SVC_A_CLUSTER_ADDR);
		return -EINVAL;
	}
	if (nla_len(a) != addr_len(key->family)) {
		NL_SET_ERR_MSG_ATTR(extack, a,
				    "cluster address length does not match family");
		return -EINVAL;
	}
	if (!nla_get_be16(p)) {
		NL_SET_ERR_MSG_ATTR(extack, p, "cluster port must not be 0");
		return -EINVAL;
	}
	kpx_key_init(cluster, key->family, key->protocol, nla_data(a),
		     nla_get_be16(p));
	if (!memcmp(cluster, key, sizeof(*key))) {
		NL_SET_ERR_MSG_ATTR(extack, a,
				    "cluster frontend is the frontend itself");
		return -EINVAL;
	}
	*has = true;
	return 0;
}

static int kpx_nl_set(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	struct nlattr *tb[KPX_SVC_A_MAX + 1];
	struct kpx_svc_req req = {};
	struct set_lists *sl;
	int err;

	err = parse_svc(info, tb, &req.key);
	if (err)
		return err;
	if (tb[KPX_SVC_A_FLAGS])
		req.flags = nla_get_u32(tb[KPX_SVC_A_FLAGS]);
	err = parse_cluster(tb, info->attrs[KPX_A_SERVICE], &req.key,
			    req.flags, &req.cluster, &req.has_cluster,
			    info->extack);
	if (!err)
		err = kpx_name_parse(tb, &req.name, info->extack);
	if (err)
		return err;
	sl = kmalloc(sizeof(*sl), GFP_KERNEL_ACCOUNT);
	if (!sl)
		return -ENOMEM;
	err = collect_lists(info, tb, sl, info->extack);
	if (!err)
		err = kpx_cidrs_parse(sl->sr, sl->nsr, req.key.family,
				      KPX_SOURCE_RANGES_MAX, &req.ranges,
				      info->extack);
	if (!err)
		err = parse_backends(sl, req.key.family, &req.cfg, &req.n,
				     info->extack);
	if (!err)
		err = kpx_sched_cfg_parse(tb, req.n, &req.scfg, info->extack);
	kfree(sl);
	if (err) {
		kpx_cidrs_free(req.ranges);
		kvfree(req.cfg);
		return err;
	}
	err = kpx_net_svc_set(kn, &req);
	if (err == -ENOSPC)
		NL_SET_ERR_MSG(info->extack,
			       "namespace limit reached (KPX_SERVICES_MAX frontends or KPX_NS_BACKENDS_MAX backends)");
	kvfree(req.cfg);
	return err;
}

static int kpx_nl_del(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	struct nlattr *tb[KPX_SVC_A_MAX + 1];
	struct kpx_key key;
	int err;

	err = parse_svc(info, tb, &key);
	if (err)
		return err;
	err = kpx_svc_del(kn, &key);
	if (err == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "no such frontend");
	return err;
}

static int kpx_nl_flush(struct sk_buff *skb, struct genl_info *info)
{
	kpx_svc_flush(kpx_net(genl_info_net(info)));
	return 0;
}

static int kpx_nl_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	struct nlattr *nest;
	struct sk_buff *msg;
	struct kpx_stats st;
	void *hdr;

	kpx_stats_sum(kn->stats, &st);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &kpx_family, 0, KPX_CMD_GET_STATS);
	if (!hdr)
		goto nospace;
	nest = nla_nest_start(msg, KPX_A_STATS);
	if (!nest ||
	    nla_put_u32(msg, KPX_STATS_A_SERVICES, READ_ONCE(kn->n_svcs)) ||
	    nla_put_u32(msg, KPX_STATS_A_BACKENDS,
			READ_ONCE(kn->n_backends)) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_CONNS,
			      st.conns, KPX_STATS_A_PAD) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_REJECTS,
			      st.rejects, KPX_STATS_A_PAD) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_DROPS,
			      st.drops, KPX_STATS_A_PAD) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_FILTERED,
			      st.filtered, KPX_STATS_A_PAD) ||
	    nla_put_u32(msg, KPX_STATS_A_GENERATION, READ_ONCE(kn->gen)) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_INVALID_DROPS,
			      st.invalid, KPX_STATS_A_PAD) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_CT_DELETED4,
			      atomic64_read(&kn->ct_deleted[0]),
			      KPX_STATS_A_PAD) ||
	    nla_put_u64_64bit(msg, KPX_STATS_A_CT_DELETED6,
			      atomic64_read(&kn->ct_deleted[1]),
			      KPX_STATS_A_PAD))
		goto nospace;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* KPX_SVC_A_CLUSTER_* of a KPX_SVC_F_EXT_LOCAL frontend, if it has them. */
static int put_cluster(struct sk_buff *skb, const struct kpx_svc *svc)
{
	const struct kpx_ckey *ck = rcu_dereference(svc->cluster);

	if (!ck)
		return 0;
	if (nla_put(skb, KPX_SVC_A_CLUSTER_ADDR, addr_len(ck->key.family),
		    &ck->key.addr) ||
	    nla_put_be16(skb, KPX_SVC_A_CLUSTER_PORT, ck->key.port))
		return -EMSGSIZE;
	return 0;
}

/**
 * kpx_nl_put_svc - a frontend's key, settings and counters, as dumped
 * @skb: the message
 * @svc: the frontend, under rcu_read_lock()
 *
 * Return: 0 or -EMSGSIZE.
 */
int kpx_nl_put_svc(struct sk_buff *skb, const struct kpx_svc *svc)
{
	const struct kpx_key *key = &svc->key;
	struct kpx_stats st;

	kpx_stats_sum(svc->stats, &st);
	if (nla_put_u16(skb, KPX_SVC_A_FAMILY, key->family) ||
	    nla_put_u8(skb, KPX_SVC_A_PROTOCOL, key->protocol) ||
	    nla_put(skb, KPX_SVC_A_ADDR, addr_len(key->family), &key->addr) ||
	    nla_put_be16(skb, KPX_SVC_A_PORT, key->port) ||
	    nla_put_u32(skb, KPX_SVC_A_FLAGS, READ_ONCE(svc->flags)) ||
	    nla_put_u64_64bit(skb, KPX_SVC_A_CONNS,
			      st.conns, KPX_SVC_A_PAD) ||
	    nla_put_u64_64bit(skb, KPX_SVC_A_REJECTS,
			      st.rejects, KPX_SVC_A_PAD) ||
	    nla_put_u64_64bit(skb, KPX_SVC_A_FILTERED,
			      st.filtered, KPX_SVC_A_PAD) ||
	    nla_put_u64_64bit(skb, KPX_SVC_A_DROPS,
			      st.drops, KPX_SVC_A_PAD) ||
	    kpx_sched_cfg_put(skb, svc) || put_cluster(skb, svc) ||
	    kpx_name_put(skb, svc))
		return -EMSGSIZE;
	return 0;
}

static int put_backend(struct sk_buff *skb, u16 family,
		       const struct kpx_bset *set, u32 i)
{
	const struct kpx_backend *be = set->be[i];
	struct nlattr *nest = nla_nest_start(skb, KPX_BACKENDS_A_BACKEND);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put(skb, KPX_BE_A_ADDR, addr_len(family), &be->addr) ||
	    nla_put_be16(skb, KPX_BE_A_PORT, be->port) ||
	    nla_put_u32(skb, KPX_BE_A_WEIGHT, kpx_bset_weight(set, i)) ||
	    nla_put_u64_64bit(skb, KPX_BE_A_CONNS,
			      kpx_be_stats_conns(be->conns), KPX_BE_A_PAD) ||
	    nla_put_u32(skb, KPX_BE_A_ACTIVE, kpx_be_active(be))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* A nest must stay below the 64 KiB an nlattr length can say. */
#define NEST_ROOM (U16_MAX - 256)

/* Where a frontend's dump stands: its first message, ranges, backends. */
struct svc_pos {
	u32 rpos;		/* source ranges done */
	u32 pos;		/* backends done */
	bool started;		/* its first message has been put */
};

/*
 * Puts one message for @svc: the source ranges from @p->rpos on, as many
 * as fit; once they are all out, the backends from @p->pos on, as many as
 * fit.  Advances @p.  Returns -EMSGSIZE, with nothing added, if the message
 * would carry nothing new (not even the frontend's first message fits).
 */
static int put_svc(struct sk_buff *skb, struct netlink_callback *cb,
		   const struct kpx_svc *svc, const struct kpx_bset *set,
		   struct svc_pos *p)
{
	const struct kpx_cidrs *ranges = rcu_dereference(svc->ranges);
	u32 count = set ? set->count : 0, i = p->pos;
	u32 nr = ranges ? ranges->count : 0, r = p->rpos;
	struct nlattr *snest, *bnest;
	void *hdr;

	if (r > nr)
		r = nr;		/* the list was replaced: NLM_F_DUMP_INTR */
	if (i > count)
		i = count;
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
			  cb->nlh->nlmsg_seq, &kpx_family, NLM_F_MULTI,
			  KPX_CMD_GET_SERVICE);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	snest = nla_nest_start(skb, KPX_A_SERVICE);
	if (!snest || kpx_nl_put_svc(skb, svc))
		goto cancel;
	/* The first message has the (maybe empty) ranges nest. */
	if (r < nr || !p->started) {
		if (kpx_cidrs_put_part(skb, KPX_SVC_A_SOURCE_RANGES, ranges,
				       &r, NEST_ROOM -
				       (skb_tail_pointer(skb) - (u8 *)snest)))
			goto cancel;
		if (r < nr)
			goto end;	/* backends in the next messages */
	}
	if (i < count) {
		bnest = nla_nest_start(skb, KPX_SVC_A_BACKENDS);
		if (!bnest)
			goto partial;
		for (; i < count; i++) {
			if (skb_tail_pointer(skb) - (u8 *)snest > NEST_ROOM ||
			    put_backend(skb, svc->key.family, set, i))
				break;
		}
		if (i == p->pos) {
			nla_nest_cancel(skb, bnest);
			goto partial;
		}
		nla_nest_end(skb, bnest);
	}
end:
	nla_nest_end(skb, snest);
	genlmsg_end(skb, hdr);
	p->rpos = r;
	p->pos = i;
	p->started = true;
	return 0;

partial:
	/* No backend fits: worth sending only if it carries ranges. */
	if (r != p->rpos || !p->started)
		goto end;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* Has @svc been dumped completely at @p? */
static bool svc_done(const struct kpx_svc *svc, const struct kpx_bset *set,
		     const struct svc_pos *p)
{
	const struct kpx_cidrs *ranges = rcu_dereference(svc->ranges);

	return p->started && p->rpos >= (ranges ? ranges->count : 0) &&
	       p->pos >= (set ? set->count : 0);
}

/*
 * Where a dump stopped, in cb->ctx.  @key names the frontend to resume at,
 * found again in O(1) through the hash table while the namespace's
 * generation is still @gen (no frontend came or went); after a change the
 * dump resumes by index (O(n) once, and its next message says
 * NLM_F_DUMP_INTR anyway).  A frontend in the table is always on the list
 * too (__kpx_svc_set() links it there first), so the walk can go on from it.
 */
struct kpx_dump_ctx {
	u32 idx;		/* frontends done, in list order */
	struct svc_pos p;	/* of the next frontend */
	u32 gen;		/* kn->gen when @key was taken; 0: no key */
	bool end;		/* every frontend has been put */
	struct kpx_key key;	/* the next frontend */
};

static_assert(sizeof(struct kpx_dump_ctx) <=
	      sizeof_field(struct netlink_callback, ctx));

/* The frontend to resume at, or NULL at the end of the list. */
static struct kpx_svc *dump_resume(struct kpx_net *kn,
				   struct kpx_dump_ctx *ctx)
{
	struct kpx_svc *svc;
	u32 idx = 0;

	if (ctx->end)
		return NULL;
	if (ctx->gen && ctx->gen == READ_ONCE(kn->gen)) {
		svc = kpx_svc_lookup(kn, &ctx->key);
		if (svc)
			return svc;
	}
	list_for_each_entry_rcu(svc, &kn->svc_list, list)
		if (idx++ == ctx->idx)
			return svc;
	return NULL;
}

static int kpx_nl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct kpx_net *kn = kpx_net(sock_net(skb->sk));
	struct kpx_dump_ctx *ctx = (struct kpx_dump_ctx *)cb->ctx;
	const struct kpx_bset *set;
	struct svc_pos p = ctx->p;
	struct kpx_svc *svc;
	bool more = false;
	int err = 0;

	rcu_read_lock();
	cb->seq = READ_ONCE(kn->gen);
	svc = dump_resume(kn, ctx);
	if (!svc)
		goto done;
	list_for_each_entry_from_rcu(svc, &kn->svc_list, list) {
		set = rcu_dereference(svc->bset);
		do {
			err = put_svc(skb, cb, svc, set, &p);
		} while (!err && !svc_done(svc, set, &p));
		if (err) {
			more = true;
			break;
		}
		p = (struct svc_pos){};
		ctx->idx++;
	}
	/* The next frontend (or this one, unfinished): O(1) to find again. */
	if (more) {
		ctx->key = svc->key;
		ctx->gen = cb->seq;
	} else {
		ctx->end = true;
	}
done:
	/* Lets the final NLMSG_DONE carry NLM_F_DUMP_INTR if needed. */
	if (!more)
		cb->seq = READ_ONCE(kn->gen);
	rcu_read_unlock();

	ctx->p = p;
	if (err && !skb->len)
		return err;
	return skb->len;
}

static int kpx_nl_ct_sync(struct sk_buff *skb, struct genl_info *info)
{
	kpx_ct_sync(kpx_net(genl_info_net(info)));
	return 0;
}

/* KPX_CMD_SET_CONFIG: absent settings keep their value. */
static int kpx_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	struct nlattr *tb[KPX_CFG_A_MAX + 1];
	struct kpx_nscfg_req req = {};
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KPX_A_CONFIG)) {
		NL_SET_ERR_MSG(info->extack, "missing KPX_A_CONFIG");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, KPX_CFG_A_MAX, info->attrs[KPX_A_CONFIG],
			       cfg_policy, info->extack);
	if (err)
		return err;
	if (tb[KPX_CFG_A_LOCAL_CIDRS]) {
		err = kpx_cidrs_parse((const struct nlattr *const *)
				      &tb[KPX_CFG_A_LOCAL_CIDRS], 1, 0,
				      KPX_CIDRS_MAX, &req.local, info->extack);
		if (err)
			return err;
		req.has_local = true;
	}
	if (tb[KPX_CFG_A_LOCAL_IFNAME]) {
		nla_strscpy(req.ifname, tb[KPX_CFG_A_LOCAL_IFNAME],
			    sizeof(req.ifname));
		req.has_ifname = true;
	}
	if (tb[KPX_CFG_A_LOCAL_IFPREFIX]) {
		nla_strscpy(req.ifprefix, tb[KPX_CFG_A_LOCAL_IFPREFIX],
			    sizeof(req.ifprefix));
		req.has_ifprefix = true;
	}
	return kpx_nscfg_set(kn, &req);
}

/*
 * KPX_CMD_GET_CONFIG: replies with KPX_A_CONFIG, every setting present
 * (empty list and "" when unset).
 */
static int kpx_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	const struct kpx_nscfg *cfg;
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;
	int err = -EMSGSIZE;

	/* a CIDR nest is at most 4 + 8 + 20 + 8 bytes; two names */
	msg = genlmsg_new(KPX_CIDRS_MAX * 40 + 2 * NLA_ALIGN(IFNAMSIZ) + 256,
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &kpx_family, 0, KPX_CMD_GET_CONFIG);
	if (!hdr)
		goto out;
	nest = nla_nest_start(msg, KPX_A_CONFIG);
	if (!nest)
		goto out;
	rcu_read_lock();
	cfg = rcu_dereference(kn->cfg);
	if (kpx_cidrs_put(msg, KPX_CFG_A_LOCAL_CIDRS, cfg ? cfg->local : NULL) ||
	    nla_put_string(msg, KPX_CFG_A_LOCAL_IFNAME, cfg ? cfg->ifname : "") ||
	    nla_put_string(msg, KPX_CFG_A_LOCAL_IFPREFIX,
			   cfg ? cfg->ifprefix : "")) {
		rcu_read_unlock();
		goto out;
	}
	rcu_read_unlock();
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
out:
	nlmsg_free(msg);
	return err;
}

/* KPX_CMD_EXPLAIN: the reply allocated here, filled by explain.c. */
static int kpx_nl_explain(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nlattr *tb[KPX_EXP_A_MAX + 1];
	struct kpx_net *kn = kpx_net(net);
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
	err = kpx_explain_fill(msg, kn, &f, dport);
	rcu_read_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static const struct genl_small_ops kpx_ops[] = {
	{
		.cmd = KPX_CMD_SET_SERVICE,
		.doit = kpx_nl_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_DEL_SERVICE,
		.doit = kpx_nl_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_GET_SERVICE,
		.dumpit = kpx_nl_dump,
	},
	{
		.cmd = KPX_CMD_GET_STATS,
		.doit = kpx_nl_stats,
	},
	{
		.cmd = KPX_CMD_FLUSH,
		.doit = kpx_nl_flush,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_SET_CONFIG,
		.doit = kpx_nl_set_config,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_GET_CONFIG,
		.doit = kpx_nl_get_config,
	},
	{
		.cmd = KPX_CMD_CT_SYNC,
		.doit = kpx_nl_ct_sync,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_EXPLAIN,	/* read-only: no privilege */
		.doit = kpx_nl_explain,
	},
};

struct genl_family kpx_family __ro_after_init = {
	.name = KPX_GENL_NAME,
	.version = KPX_GENL_VERSION,
	.maxattr = KPX_A_MAX,
	.policy = kpx_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.small_ops = kpx_ops,
	.n_small_ops = ARRAY_SIZE(kpx_ops),
};

int kpx_genl_init(void)
{
	return genl_register_family(&kpx_family);
}

void kpx_genl_exit(void)
{
	genl_unregister_family(&kpx_family);
}
