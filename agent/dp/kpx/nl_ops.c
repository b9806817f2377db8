// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kpx generic-netlink client's other requests (nl.c holds the socket,
 * the exchange and SET): DEL, FLUSH, CT_SYNC, GET_STATS, SET_CONFIG,
 * GET_CONFIG.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * Copies the extended ack of a kernel error or NLMSG_DONE into nl->g.errmsg.
 * @tlvs/@len: the attributes after the fixed part of the message.
 */

int kpx_nl_del_service(struct kpx_nl *nl, const struct kpx_service *key)
{
	struct kpx_genl_req r = { 0 };
	struct nlattr *svc;
	struct nl_msg *msg;

	nl->g.errmsg[0] = '\0';
	if (!kpx_addr_len(key->family))
		return -EAFNOSUPPORT;
	msg = kpx_nl_new_msg(nl, KPX_CMD_DEL_SERVICE, 0, 512);
	if (!msg)
		return -ENOMEM;
	svc = nla_nest_start(msg, KPX_A_SERVICE);
	if (!svc || kpx_nl_put_key(msg, key) < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, svc);
	return kpx_nl_transact(nl, msg, &r);
}

int kpx_nl_flush(struct kpx_nl *nl)
{
	struct kpx_genl_req r = { 0 };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_FLUSH, 0, 64);

	nl->g.errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	return kpx_nl_transact(nl, msg, &r);
}

/*
 * KPX_CMD_CT_SYNC: waits for the conntrack cleanups of earlier changes;
 * 0 also from a module without it (EOPNOTSUPP: its cleanups are done by
 * the time a change is answered).
 */
int kpx_nl_ct_sync(struct kpx_nl *nl)
{
	struct kpx_genl_req r = { 0 };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_CT_SYNC, 0, 64);
	int err;

	nl->g.errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	err = kpx_nl_transact(nl, msg, &r);
	return err == -EOPNOTSUPP ? 0 : err;
}

/* ---- stats ---- */

static struct nla_policy stats_policy[KPX_STATS_A_MAX + 1] = {
	[KPX_STATS_A_SERVICES] = { .type = NLA_U32 },
	[KPX_STATS_A_BACKENDS] = { .type = NLA_U32 },
	[KPX_STATS_A_CONNS] = { .type = NLA_U64 },
	[KPX_STATS_A_REJECTS] = { .type = NLA_U64 },
	[KPX_STATS_A_DROPS] = { .type = NLA_U64 },
	[KPX_STATS_A_GENERATION] = { .type = NLA_U32 },
	[KPX_STATS_A_FILTERED] = { .type = NLA_U64 },
	[KPX_STATS_A_INVALID_DROPS] = { .type = NLA_U64 },
	[KPX_STATS_A_CT_DELETED4] = { .type = NLA_U64 },
	[KPX_STATS_A_CT_DELETED6] = { .type = NLA_U64 },
};

int kpx_nl_parse_stats(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *st[KPX_STATS_A_MAX + 1];
	struct kpx_nl_stats *out = arg;
	const struct kpx_nl_counter *c;

	if (genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL) < 0 ||
	    !tb[KPX_A_STATS] ||
	    nla_parse_nested(st, KPX_STATS_A_MAX, tb[KPX_A_STATS],
			     stats_policy) < 0)
		return -EBADMSG;
	for (c = kpx_nl_stats_counters; c->name; c++)
		if (st[c->attr])
			kpx_nl_counter_parse(c, out, st[c->attr]);
	out->ct_deleted_known = st[KPX_STATS_A_CT_DELETED4] && st[KPX_STATS_A_CT_DELETED6];
	return 0;
}

int kpx_nl_stats(struct kpx_nl *nl, struct kpx_nl_stats *st)
{
	struct kpx_nl_stats tmp = { 0 };
	struct kpx_genl_req r = { .parse = kpx_nl_parse_stats, .arg = &tmp };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_GET_STATS, 0, 64);
	int ret;

	nl->g.errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	ret = kpx_nl_transact(nl, msg, &r);
	if (!ret)
		*st = tmp;
	return ret;
}

/* ---- namespace settings ---- */

int kpx_nl_build_config(struct kpx_nl *nl, const struct kpx_ns_config *c,
			struct nl_msg **out)
{
	struct nl_msg *msg;
	struct nlattr *cfg;
	size_t n = c->nlocal_cidrs;

	if (n > KPX_CIDRS_MAX || n > KPX_CONFIG_CIDRS_MAX)
		return -EINVAL;
	msg = kpx_nl_new_msg(nl, KPX_CMD_SET_CONFIG, 0, 1024 + n * 48);
	if (!msg)
		return -ENOMEM;
	cfg = nla_nest_start(msg, KPX_A_CONFIG);
	/* every setting is sent: "" and an empty list clear the old ones */
	if (!cfg || kpx_nl_put_cidrs(msg, KPX_CFG_A_LOCAL_CIDRS, c->local_cidrs, n) < 0 ||
	    nla_put_string(msg, KPX_CFG_A_LOCAL_IFNAME, c->local_ifname) < 0 ||
	    nla_put_string(msg, KPX_CFG_A_LOCAL_IFPREFIX, c->local_ifprefix) < 0 ||
	    nla_nest_end(msg, cfg) < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	*out = msg;
	return 0;
}

int kpx_nl_set_config(struct kpx_nl *nl, const struct kpx_ns_config *c)
{
	struct kpx_genl_req r = { 0 };
	struct nl_msg *msg;
	int ret;

	nl->g.errmsg[0] = '\0';
	ret = kpx_nl_build_config(nl, c, &msg);
	if (ret)
		return ret;
	return kpx_nl_transact(nl, msg, &r);
}

/* GET_CONFIG's answer as read: the settings, and whether they came. */
struct config_reply {
	struct kpx_ns_config c;
	bool seen;
};

static int parse_config(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *ct[KPX_CFG_A_MAX + 1];
	struct config_reply *reply = arg;
	struct kpx_ns_config *c = &reply->c;
	struct kpx_cidr *v = NULL;
	size_t n = 0;
	int err;

	if (genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL) < 0 || !tb[KPX_A_CONFIG] ||
	    nla_parse_nested(ct, KPX_CFG_A_MAX, tb[KPX_A_CONFIG], NULL) < 0)
		return -EBADMSG;
	if (ct[KPX_CFG_A_LOCAL_CIDRS]) {
		err = kpx_nl_parse_cidrs(ct[KPX_CFG_A_LOCAL_CIDRS], &v, &n);
		if (err)
			return err;
	}
	if (n > KPX_CONFIG_CIDRS_MAX) {
		free(v);
		return -EBADMSG;
	}
	memcpy(c->local_cidrs, v, n * sizeof(*v));
	c->nlocal_cidrs = n;
	free(v);
	if (ct[KPX_CFG_A_LOCAL_IFNAME])
		snprintf(c->local_ifname, sizeof(c->local_ifname), "%s",
			 nla_get_string(ct[KPX_CFG_A_LOCAL_IFNAME]));
	if (ct[KPX_CFG_A_LOCAL_IFPREFIX])
		snprintf(c->local_ifprefix, sizeof(c->local_ifprefix), "%s",
			 nla_get_string(ct[KPX_CFG_A_LOCAL_IFPREFIX]));
	reply->seen = true;
	return 0;
}

int kpx_nl_get_config(struct kpx_nl *nl, struct kpx_ns_config *c)
{
	struct config_reply tmp = { 0 };
	struct kpx_genl_req r = { .parse = parse_config, .arg = &tmp };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_GET_CONFIG, 0, 64);
	int ret;

	nl->g.errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	ret = kpx_nl_transact(nl, msg, &r);
	if (!ret && !tmp.seen)
		ret = -EBADMSG;	/* an ACK without the settings */
	if (!ret)
		*c = tmp.c;
	return ret;
}


