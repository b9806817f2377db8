// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx generic netlink family; uapi/linux/kpx.h is the specification.
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
#include <linux/kpx.h>

#include "netlink.h"
#include "pernet.h"
#include "svc.h"
#include "backend.h"
#include "ranges.h"
#include "nsconfig.h"
#include "lb_nl.h"
#include "stats.h"

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
	[KPX_SVC_A_SOURCE_RANGES] = { .type = NLA_NESTED },
	/* issue 4 (lb_nl.c checks the ranges) */
	[KPX_SVC_A_SCHEDULER] = { .type = NLA_NUL_STRING,
				  .len = KPX_SCHED_NAME_MAX - 1 },
	[KPX_SVC_A_MH_SIZE] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_TIMEOUT] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_MAX] = { .type = NLA_U32 },
	/* issue 3: parse_cluster() checks the length and the flag */
	[KPX_SVC_A_CLUSTER_ADDR] = { .type = NLA_BINARY },
	[KPX_SVC_A_CLUSTER_PORT] = { .type = NLA_BE16 },
};

static const struct nla_policy kpx_policy[KPX_A_MAX + 1] = {
	[KPX_A_SERVICE] = NLA_POLICY_NESTED(svc_policy),
	[KPX_A_BACKENDS] = NLA_POLICY_NESTED(backends_policy),
	[KPX_A_CONFIG] = NLA_POLICY_NESTED(kpx_cfg_policy),
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
 * The backend lists of a SET: KPX_SVC_A_BACKENDS (@list, may be NULL), then
 * every top-level KPX_A_BACKENDS of the message in order (the genl core's
 * info->attrs only keeps the last of a repeated attribute).  Call with
 * @i = 0, 1, ... and the same @off (message offset of the last list
 * returned); returns the next list, NULL at the end.
 */
static const struct nlattr *next_list(const struct genl_info *info,
				      const struct nlattr *list, int i,
				      int *off)
{
	const struct nlattr *a;
	int rem;

	if (i == 0 && list)
		return list;
	nla_for_each_attr(a, nlmsg_attrdata(info->nlhdr, GENL_HDRLEN),
			  nlmsg_attrlen(info->nlhdr, GENL_HDRLEN), rem) {
		int here = (const u8 *)a - (const u8 *)info->nlhdr;

		if (nla_type(a) == KPX_A_BACKENDS && here > *off) {
			*off = here;
			return a;
		}
	}
	return NULL;
}

#define for_each_be_list(l, info, list, i, off)				\
	for (i = 0, off = 0, l = next_list(info, list, 0, &off); l;	\
	     l = next_list(info, list, ++i, &off))

/* The backend at request position @n, to point an error at. */
static const struct nlattr *nth_backend(const struct genl_info *info,
					const struct nlattr *list, u32 n)
{
	const struct nlattr *l, *a;
	int i, off, rem;

	for_each_be_list(l, info, list, i, off)
		nla_for_each_nested(a, l, rem)
			if (!n--)
				return a;
	return NULL;
}

/*
 * Parses the backend lists (KPX_SVC_A_BACKENDS @list and the top-level
 * KPX_A_BACKENDS) into a new sorted array; *cfgp is NULL (and *np 0) if
 * there is none.  The limit and the duplicate check apply to the union.
 * The caller kvfree()s *cfgp.
 */
static int parse_backends(const struct genl_info *info,
			  const struct nlattr *list, u16 family,
			  struct kpx_be_cfg **cfgp, u32 *np,
			  struct netlink_ext_ack *extack)
{
	const struct nlattr *l;
	struct kpx_be_cfg *cfg;
	struct nlattr *a;
	u32 n = 0, dup;
	int i, off, rem, err;

	*cfgp = NULL;
	*np = 0;
	for_each_be_list(l, info, list, i, off) {
		nla_for_each_nested(a, l, rem)
			n++;
		if (n > KPX_BACKENDS_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, l, "too many backends");
			return -EINVAL;
		}
	}
	if (!n)
		return 0;
	cfg = kvcalloc(n, sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	n = 0;
	for_each_be_list(l, info, list, i, off) {
		nla_for_each_nested(a, l, rem) {
			cfg[n].pos = n;
			err = parse_backend(a, family, &cfg[n], extack);
			if (err)
				goto err;
			n++;
		}
	}
	err = kpx_be_cfg_sort(cfg, n, &dup);
	if (err) {
		NL_SET_ERR_MSG_ATTR(extack, nth_backend(info, list, dup),
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
	struct kpx_cidrs *ranges;
	struct kpx_sched_cfg scfg;
	struct kpx_key key, cluster;
	struct kpx_be_cfg *cfg;
	bool has_cluster;
	u32 n, flags;
	int err;

	err = parse_svc(info, tb, &key);
	if (err)
		return err;
	flags = 0;
	if (tb[KPX_SVC_A_FLAGS])
		flags = nla_get_u32(tb[KPX_SVC_A_FLAGS]);
	err = parse_cluster(tb, info->attrs[KPX_A_SERVICE], &key, flags,
			    &cluster, &has_cluster, info->extack);
	if (err)
		return err;
	err = kpx_cidrs_parse(tb[KPX_SVC_A_SOURCE_RANGES], key.family,
			      &ranges, info->extack);
	if (err)
		return err;
	err = parse_backends(info, tb[KPX_SVC_A_BACKENDS], key.family, &cfg,
			     &n, info->extack);
	if (err) {
		kfree(ranges);
		return err;
	}
	err = kpx_sched_cfg_parse(tb, n, &scfg, info->extack);
	if (!err)
		err = kpx_svc_set(kn, &key, flags, cfg, n, ranges, &scfg,
				  has_cluster ? &cluster : NULL);
	else
		kfree(ranges);
	kvfree(cfg);
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
	    nla_put_u32(msg, KPX_STATS_A_GENERATION, READ_ONCE(kn->gen)))
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

static int put_key(struct sk_buff *skb, const struct kpx_svc *svc)
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
	    kpx_cidrs_put(skb, KPX_SVC_A_SOURCE_RANGES,
			  rcu_dereference(svc->ranges)) ||
	    kpx_sched_cfg_put(skb, svc) || put_cluster(skb, svc))
		return -EMSGSIZE;
	return 0;
}

static int put_backend(struct sk_buff *skb, u16 family,
		       const struct kpx_backend *be)
{
	struct nlattr *nest = nla_nest_start(skb, KPX_BACKENDS_A_BACKEND);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put(skb, KPX_BE_A_ADDR, addr_len(family), &be->addr) ||
	    nla_put_be16(skb, KPX_BE_A_PORT, be->port) ||
	    nla_put_u32(skb, KPX_BE_A_WEIGHT, READ_ONCE(be->weight)) ||
	    nla_put_u64_64bit(skb, KPX_BE_A_CONNS,
			      atomic64_read(&be->conns), KPX_BE_A_PAD) ||
	    nla_put_u32(skb, KPX_BE_A_ACTIVE, kpx_be_active(be))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* A nest must stay below the 64 KiB an nlattr length can say. */
#define NEST_ROOM (U16_MAX - 256)

/*
 * Puts one message for @svc with backends from *@pos on, as many as fit;
 * advances *@pos.  Returns -EMSGSIZE, with nothing added, if not even one
 * further backend (or, without backends, the frontend) fits.
 */
static int put_svc(struct sk_buff *skb, struct netlink_callback *cb,
		   const struct kpx_svc *svc, const struct kpx_bset *set,
		   u32 *pos)
{
	u32 count = set ? set->count : 0, i = *pos;
	struct nlattr *snest, *bnest;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
			  cb->nlh->nlmsg_seq, &kpx_family, NLM_F_MULTI,
			  KPX_CMD_GET_SERVICE);
	if (!hdr)
		return -EMSGSIZE;
	genl_dump_check_consistent(cb, hdr);
	snest = nla_nest_start(skb, KPX_A_SERVICE);
	if (!snest || put_key(skb, svc))
		goto cancel;
	if (count) {
		bnest = nla_nest_start(skb, KPX_SVC_A_BACKENDS);
		if (!bnest)
			goto cancel;
		for (; i < count; i++) {
			if (skb_tail_pointer(skb) - (u8 *)snest > NEST_ROOM ||
			    put_backend(skb, svc->key.family, set->be[i]))
				break;
		}
		if (i == *pos)
			goto cancel;
		nla_nest_end(skb, bnest);
	}
	nla_nest_end(skb, snest);
	genlmsg_end(skb, hdr);
	*pos = i;
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * Where a dump stopped, in cb->ctx.  @key names the frontend to resume at,
 * found again in O(1) through the hash table while the namespace's
 * generation is still @gen (no frontend came or went); after a change the
 * dump resumes by index (O(n) once, and its next message says
 * NLM_F_DUMP_INTR anyway).
 */
struct kpx_dump_ctx {
	u32 idx;		/* frontends done, in list order */
	u32 pos;		/* backends of the next frontend done */
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
	struct kpx_svc *svc;
	u32 pos = ctx->pos;
	bool more = false;
	int err = 0;

	rcu_read_lock();
	cb->seq = READ_ONCE(kn->gen);
	svc = dump_resume(kn, ctx);
	if (!svc)
		goto done;
	list_for_each_entry_from_rcu(svc, &kn->svc_list, list) {
		set = rcu_dereference(svc->bset);
		if (set && pos >= set->count)
			pos = 0;	/* the set shrank meanwhile */
		err = put_svc(skb, cb, svc, set, &pos);
		if (err || (set && pos < set->count)) {
			more = true;
			break;
		}
		pos = 0;
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

	ctx->pos = pos;
	if (err && !skb->len)
		return err;
	return skb->len;
}

static const struct genl_small_ops kpx_ops[] = {
	{
		.cmd = KPX_CMD_SET_SERVICE,
		.doit = kpx_nl_set,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_DEL_SERVICE,
		.doit = kpx_nl_del,
		.flags = GENL_UNS_ADMIN_PERM,
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
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_SET_CONFIG,
		.doit = kpx_nl_set_config,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = KPX_CMD_GET_CONFIG,
		.doit = kpx_nl_get_config,
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

int __init kpx_genl_init(void)
{
	return genl_register_family(&kpx_family);
}

void kpx_genl_exit(void)
{
	genl_unregister_family(&kpx_family);
}
