// SPDX-License-Identifier: GPL-2.0-only
/*
 * KPX_CMD_EXPLAIN from userspace: the request built from a struct
 * kpx_nl_explain_req, the answer read into a struct kpx_nl_explain.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/kpx.h>
#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>

#include "base/addr.h"
#include "dp/kpx/nl.h"
#include "dp/kpx/nl_priv.h"

static struct nla_policy exp_policy[KPX_EXP_A_MAX + 1] = {
	[KPX_EXP_A_VERDICT] = { .type = NLA_U8 },
	[KPX_EXP_A_FRONTEND] = { .type = NLA_NESTED },
	[KPX_EXP_A_SCHED_FRONTEND] = { .type = NLA_NESTED },
	[KPX_EXP_A_SHORT_CIRCUIT] = { .type = NLA_U8 },
	[KPX_EXP_A_SOURCE] = { .type = NLA_U8 },
	[KPX_EXP_A_SOURCE_RANGES] = { .type = NLA_U8 },
	[KPX_EXP_A_AFFINITY] = { .type = NLA_U8 },
	[KPX_EXP_A_AFFINITY_AGE] = { .type = NLA_U64 },
	[KPX_EXP_A_SCHEDULER] = { .type = NLA_STRING },
	[KPX_EXP_A_BACKENDS] = { .type = NLA_U32 },
	[KPX_EXP_A_PICK] = { .type = NLA_U8 },
	[KPX_EXP_A_BACKEND] = { .type = NLA_NESTED },
	[KPX_EXP_A_MASQ] = { .type = NLA_U8 },
	[KPX_EXP_A_COUNTERS] = { .type = NLA_U32 },
};

static uint64_t get_u64(struct nlattr *a)
{
	return a ? nla_get_u64(a) : 0;
}

static int parse_fe(struct nlattr *nest, struct kpx_nl_explain_fe *fe)
{
	struct nlattr *tb[KPX_SVC_A_MAX + 1];
	size_t alen;

	if (nla_parse_nested(tb, KPX_SVC_A_MAX, nest, kpx_nl_svc_policy) < 0 ||
	    !tb[KPX_SVC_A_FAMILY] || !tb[KPX_SVC_A_PROTOCOL] ||
	    !tb[KPX_SVC_A_ADDR] || !tb[KPX_SVC_A_PORT])
		return -EBADMSG;
	fe->family = nla_get_u16(tb[KPX_SVC_A_FAMILY]);
	alen = kpx_addr_len(fe->family);
	if (!alen || (size_t)nla_len(tb[KPX_SVC_A_ADDR]) != alen)
		return -EBADMSG;
	fe->present = true;
	fe->protocol = nla_get_u8(tb[KPX_SVC_A_PROTOCOL]);
	memcpy(&fe->addr, nla_data(tb[KPX_SVC_A_ADDR]), alen);
	fe->port = ntohs(nla_get_u16(tb[KPX_SVC_A_PORT]));
	fe->flags = tb[KPX_SVC_A_FLAGS] ? nla_get_u32(tb[KPX_SVC_A_FLAGS]) : 0;
	if (tb[KPX_SVC_A_NAME])
		nla_strlcpy(fe->name, tb[KPX_SVC_A_NAME], sizeof(fe->name));
	fe->kind = tb[KPX_SVC_A_KIND] ? nla_get_u8(tb[KPX_SVC_A_KIND]) : 0;
	if (tb[KPX_SVC_A_SCHEDULER])
		nla_strlcpy(fe->scheduler, tb[KPX_SVC_A_SCHEDULER],
			    sizeof(fe->scheduler));
	fe->affinity_timeout =
		tb[KPX_SVC_A_AFFINITY_TIMEOUT] ?
			nla_get_u32(tb[KPX_SVC_A_AFFINITY_TIMEOUT]) :
			0;
	fe->conns = get_u64(tb[KPX_SVC_A_CONNS]);
	fe->rejects = get_u64(tb[KPX_SVC_A_REJECTS]);
	fe->filtered = get_u64(tb[KPX_SVC_A_FILTERED]);
	return 0;
}

static int parse_be(struct nlattr *nest, int family, struct kpx_backend *be)
{
	struct nlattr *tb[KPX_BE_A_MAX + 1];
	size_t alen = kpx_addr_len(family);

	if (nla_parse_nested(tb, KPX_BE_A_MAX, nest, kpx_nl_be_policy) < 0 ||
	    !tb[KPX_BE_A_ADDR] || !tb[KPX_BE_A_PORT] || !alen ||
	    (size_t)nla_len(tb[KPX_BE_A_ADDR]) != alen)
		return -EBADMSG;
	memset(be, 0, sizeof(*be));
	memcpy(&be->addr, nla_data(tb[KPX_BE_A_ADDR]), alen);
	be->port = ntohs(nla_get_u16(tb[KPX_BE_A_PORT]));
	be->weight = tb[KPX_BE_A_WEIGHT] ? nla_get_u32(tb[KPX_BE_A_WEIGHT]) : 0;
	be->conns = get_u64(tb[KPX_BE_A_CONNS]);
	be->active = tb[KPX_BE_A_ACTIVE] ? nla_get_u32(tb[KPX_BE_A_ACTIVE]) : 0;
	return 0;
}

static int parse_explain(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *e[KPX_EXP_A_MAX + 1];
	struct kpx_nl_explain *out = arg;

	if (genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL) < 0 ||
	    !tb[KPX_A_EXPLAIN] ||
	    nla_parse_nested(e, KPX_EXP_A_MAX, tb[KPX_A_EXPLAIN], exp_policy) <
		    0 ||
	    !e[KPX_EXP_A_VERDICT])
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	out->verdict = nla_get_u8(e[KPX_EXP_A_VERDICT]);
	if (e[KPX_EXP_A_COUNTERS])
		out->counters = nla_get_u32(e[KPX_EXP_A_COUNTERS]);
	if (e[KPX_EXP_A_FRONTEND] && parse_fe(e[KPX_EXP_A_FRONTEND], &out->fe))
		return -EBADMSG;
	if (e[KPX_EXP_A_SCHED_FRONTEND] &&
	    parse_fe(e[KPX_EXP_A_SCHED_FRONTEND], &out->sfe))
		return -EBADMSG;
	if (e[KPX_EXP_A_SOURCE]) {
		out->has_source = true;
		out->source = nla_get_u8(e[KPX_EXP_A_SOURCE]);
	}
	if (e[KPX_EXP_A_SOURCE_RANGES])
		out->ranges = nla_get_u8(e[KPX_EXP_A_SOURCE_RANGES]);
	if (e[KPX_EXP_A_SHORT_CIRCUIT])
		out->short_circuit = nla_get_u8(e[KPX_EXP_A_SHORT_CIRCUIT]);
	if (e[KPX_EXP_A_SCHEDULER]) {
		out->has_sched = true;
		nla_strlcpy(out->scheduler, e[KPX_EXP_A_SCHEDULER],
			    sizeof(out->scheduler));
	}
	if (e[KPX_EXP_A_BACKENDS])
		out->nbackends = nla_get_u32(e[KPX_EXP_A_BACKENDS]);
	if (e[KPX_EXP_A_AFFINITY])
		out->affinity = nla_get_u8(e[KPX_EXP_A_AFFINITY]);
	out->affinity_age_ms = get_u64(e[KPX_EXP_A_AFFINITY_AGE]);
	if (e[KPX_EXP_A_PICK]) {
		out->has_pick = true;
		out->pick = nla_get_u8(e[KPX_EXP_A_PICK]);
	}
	if (e[KPX_EXP_A_BACKEND]) {
		if (parse_be(e[KPX_EXP_A_BACKEND], out->fe.family, &out->be))
			return -EBADMSG;
		out->has_backend = true;
	}
	if (e[KPX_EXP_A_MASQ]) {
		out->has_masq = true;
		out->masq = nla_get_u8(e[KPX_EXP_A_MASQ]);
	}
	return 0;
}

int kpx_nl_explain(struct kpx_nl *nl, const struct kpx_nl_explain_req *q,
		   struct kpx_nl_explain *out)
{
	struct kpx_genl_req r = { .parse = parse_explain, .arg = out };
	size_t alen = kpx_addr_len(q->family);
	struct nl_msg *msg;
	struct nlattr *nest;

	nl->g.errmsg[0] = '\0';
	if (!alen)
		return -EAFNOSUPPORT;
	msg = kpx_nl_new_msg(nl, KPX_CMD_EXPLAIN, 0, 256);
	if (!msg)
		return -ENOMEM;
	nest = nla_nest_start(msg, KPX_A_EXPLAIN);
	if (!nest ||
	    nla_put_u16(msg, KPX_EXP_A_FAMILY, (uint16_t)q->family) < 0 ||
	    nla_put_u8(msg, KPX_EXP_A_PROTOCOL, q->protocol) < 0 ||
	    nla_put(msg, KPX_EXP_A_SRC_ADDR, (int)alen, &q->src) < 0 ||
	    nla_put_u16(msg, KPX_EXP_A_SRC_PORT, htons(q->sport)) < 0 ||
	    nla_put(msg, KPX_EXP_A_DST_ADDR, (int)alen, &q->dst) < 0 ||
	    nla_put_u16(msg, KPX_EXP_A_DST_PORT, htons(q->dport)) < 0 ||
	    (q->iif && nla_put_u32(msg, KPX_EXP_A_IIF, q->iif) < 0) ||
	    (q->local_out && nla_put_flag(msg, KPX_EXP_A_LOCAL_OUT) < 0)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return kpx_nl_transact(nl, msg, &r);
}
