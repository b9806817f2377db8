
// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kpx generic-netlink client (libnl-genl-3).
 *
 * One socket per struct kpx_nl, blocking, one request in flight at a time.
 * Every request gets a fresh nl_cb whose handlers record the kernel's errno
 * and extended-ack message in a struct kpx_nl_request; libnl's own error
 * codes are only used for failures that are not the kernel's (allocation,
 * socket I/O).  The SET message is built in nl_set.c, dumps are read in
 * nl_dump.c.
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
#include <netlink/genl/ctrl.h>

#include "base/addr.h"
#include "base/log.h"
#include "dp/kpx/nl.h"
#include "dp/kpx/nl_priv.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Socket buffers: a SET of KPX_BACKENDS_MAX IPv6 backends is ~2.6 MiB. */
#define KPX_NL_SNDBUF (4 << 20)
#define KPX_NL_RCVBUF (4 << 20)
/* First receive buffer; libnl peeks and grows it for larger messages. */
#define KPX_NL_MSGBUF (64 << 10)

/* libnl NLE_* to errno, for errors that did not come from the kernel. */
int kpx_nl_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case 0:			return 0;
	case NLE_INTR:		return -EINTR;
	case NLE_BAD_SOCK:	return -EBADF;
	case NLE_AGAIN:		return -EAGAIN;
	case NLE_NOMEM:		return -ENOMEM;
	case NLE_EXIST:		return -EEXIST;
	case NLE_INVAL:		return -EINVAL;
	case NLE_RANGE:		return -ERANGE;
	case NLE_MSGSIZE:	return -EMSGSIZE;
	case NLE_OPNOTSUPP:	return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:	return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:	return -ENOENT;
	case NLE_NOATTR:	return -ENOENT;
	case NLE_MISSING_ATTR:	return -EINVAL;
	case NLE_AF_MISMATCH:	return -EAFNOSUPPORT;
	case NLE_SEQ_MISMATCH:	return -EPROTO;
	case NLE_MSG_OVERFLOW:	return -ENOBUFS;
	case NLE_MSG_TRUNC:	return -EMSGSIZE;
	case NLE_NOADDR:	return -EADDRNOTAVAIL;
	case NLE_SRCRT_NOSUPPORT: return -EOPNOTSUPP;
	case NLE_MSG_TOOSHORT:	return -EBADMSG;
	case NLE_MSGTYPE_NOSUPPORT: return -EOPNOTSUPP;
	case NLE_OBJ_MISMATCH:	return -EINVAL;
	case NLE_NOCACHE:	return -ENOENT;
	case NLE_BUSY:		return -EBUSY;
	case NLE_PROTO_MISMATCH: return -EPROTONOSUPPORT;
	case NLE_NOACCESS:	return -EACCES;
	case NLE_PERM:		return -EPERM;
	case NLE_PKTLOC_FILE:	return -ENOENT;
	case NLE_PARSE_ERR:	return -EBADMSG;
	case NLE_NODEV:		return -ENODEV;
	case NLE_IMMUTABLE:	return -EROFS;
	case NLE_DUMP_INTR:	return -EINTR;
	case NLE_ATTRSIZE:	return -ERANGE;
	default:		return -EIO;
	}
}

/*
 * Copies the extended ack of a kernel error or NLMSG_DONE into nl->errmsg.
 * @tlvs/@len: the attributes after the fixed part of the message.
 */
static void save_extack(struct kpx_nl *nl, struct nlattr *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len, NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(nl->errmsg, sizeof(nl->errmsg), "%.*s",
			 (int)strnlen(nla_data(tb[NLMSGERR_ATTR_MSG]),
				      (size_t)nla_len(tb[NLMSGERR_ATTR_MSG])),
			 (const char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	else if (tb[NLMSGERR_ATTR_MISS_TYPE] &&
		 nla_len(tb[NLMSGERR_ATTR_MISS_TYPE]) >= 4)
		snprintf(nl->errmsg, sizeof(nl->errmsg),
			 "missing attribute %u",
			 nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
}

int kpx_nl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct kpx_nl_request *r = arg;
	/* libnl hands us the payload; the header sits right before it. */
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	int len = (int)nlh->nlmsg_len - NLMSG_HDRLEN;
	int off;

	r->err = e->error < 0 ? e->error : -e->error;
	r->done = true;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (nlh->nlmsg_flags & NLM_F_CAPPED)
			off = (int)sizeof(*e);
		else
			off = (int)(sizeof(*e) - sizeof(e->msg) +
				    NLMSG_ALIGN(e->msg.nlmsg_len));
		save_extack(r->nl, (struct nlattr *)((char *)e + off),
			    len - off);
	}
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct kpx_nl_request *r = arg;

	r->done = true;
	return NL_STOP;
}

/* NLMSG_DONE of a dump: carries the dump's error (int) and maybe extack. */
int kpx_nl_on_finish(struct nl_msg *msg, void *arg)
{
	struct kpx_nl_request *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int len = nlmsg_datalen(nlh);

	r->done = true;
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	if (len >= (int)sizeof(int)) {
		int err = *(int *)nlmsg_data(nlh);

		if (err) {
			r->err = err < 0 ? err : -err;
			if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
				save_extack(r->nl,
					    (struct nlattr *)((char *)nlmsg_data(nlh) +
							      NLA_ALIGN(sizeof(int))),
					    len - (int)NLA_ALIGN(sizeof(int)));
		}
	}
	return NL_STOP;
}

static int on_dump_intr(struct nl_msg *msg, void *arg)
{
	struct kpx_nl_request *r = arg;

	r->intr = true;
	return NL_OK;	/* keep reading up to NLMSG_DONE */
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct kpx_nl_request *r = arg;
	int err;

	if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	if (!r->parse || r->parse_err)
		return NL_SKIP;
	err = r->parse(nlmsg_hdr(msg), r->arg);
	if (err)
		r->parse_err = err;
	return NL_SKIP;
}

/*
 * Sends @msg (consumed) and reads replies until the ACK, the error or the
 * end of the dump.  Returns 0 or a negative errno (the kernel's, if any).
 */
int kpx_nl_transact(struct kpx_nl *nl, struct nl_msg *msg,
		    struct kpx_nl_request *r)
{
	struct nl_cb *cb;
	int ret;

	r->nl = nl;
	nl->errmsg[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, kpx_nl_on_error, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, kpx_nl_on_finish, r);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);

	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		ret = kpx_nl_errno(ret);
		goto out;
	}
	ret = 0;
	while (!r->done) {
		ret = nl_recvmsgs(nl->sk, cb);
		if (r->err)
			break;
		if (ret == -NLE_DUMP_INTR) {
			r->intr = true;
			ret = 0;
			break;
		}
		if (ret < 0) {
			ret = kpx_nl_errno(ret);
			break;
		}
	}
	if (r->err)
		ret = r->err;
	else if (!ret && r->parse_err)
		ret = r->parse_err;
out:
	nl_cb_put(cb);
	return ret;
}

/* A new message for @cmd, @size bytes of payload room; NULL on ENOMEM. */
struct nl_msg *kpx_nl_new_msg(struct kpx_nl *nl, uint8_t cmd, int flags,
			      size_t size)
{
	struct nl_msg *msg = nlmsg_alloc_size(size);

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family_id, 0,
			 flags, cmd, KPX_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Raises a socket buffer; root may exceed net.core.[rw]mem_max. */
static void force_buf(struct nl_sock *sk, int opt, int size)
{
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, opt, &size, sizeof(size));
}

int kpx_nl_open(struct kpx_nl **out)
{
	struct kpx_nl *nl;
	int one = 1, ret;

	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		free(nl);
		return -ENOMEM;
	}
	ret = genl_connect(nl->sk);
	if (ret < 0) {
		ret = kpx_nl_errno(ret);
		goto err;
	}
	ret = nl_socket_set_buffer_size(nl->sk, KPX_NL_RCVBUF, KPX_NL_SNDBUF);
	if (ret < 0)
		kpx_dbg(2, "nl", "socket buffers: %s", nl_geterror(ret));
	/* Best effort above the sysctl limits (needs CAP_NET_ADMIN). */
	force_buf(nl->sk, SO_SNDBUFFORCE, KPX_NL_SNDBUF);
	force_buf(nl->sk, SO_RCVBUFFORCE, KPX_NL_RCVBUF);
	nl_socket_set_msg_buf_size(nl->sk, KPX_NL_MSGBUF);
	/* A set buffer size disables peeking by default: keep it on. */
	nl_socket_enable_msg_peek(nl->sk);
	/* Error messages: the kernel's text, without the echoed request. */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));

	ret = genl_ctrl_resolve(nl->sk, KPX_GENL_NAME);
	if (ret < 0) {
		ret = kpx_nl_errno(ret);
		goto err;
	}
	nl->family_id = ret;
	*out = nl;
	return 0;
err:
	nl_socket_free(nl->sk);
	free(nl);
	return ret;
}

void kpx_nl_close(struct kpx_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

const char *kpx_nl_errmsg(const struct kpx_nl *nl)
{
	return nl ? nl->errmsg : "";
}

/* Puts the four key attributes of @s. */
int kpx_nl_set_service(struct kpx_nl *nl, const struct kpx_service *s)
{
	static bool warned;
	struct kpx_nl_request r = { 0 };
	struct kpx_service t;
	struct nl_msg *msg;
	int ret;

	nl->errmsg[0] = '\0';
	ret = kpx_nl_build_set(nl, s, &msg);
	if (ret)
		return ret;
	ret = kpx_nl_transact(nl, msg, &r);
	if (ret != -EINVAL ||
	    !(s->flags & (KPX_SVC_F_CLUSTER_IP | KPX_SVC_F_EXT_LOCAL)))
		return ret;
	t = *s;		/* shallow: the build only reads the backends */
	t.flags &= ~(uint32_t)(KPX_SVC_F_CLUSTER_IP | KPX_SVC_F_EXT_LOCAL);
	memset(&t.cluster_addr, 0, sizeof(t.cluster_addr));
	t.cluster_port = 0;
	if (kpx_nl_build_set(nl, &t, &msg))
		return ret;
	r = (struct kpx_nl_request){ 0 };
	if (kpx_nl_transact(nl, msg, &r))
		return ret;
	if (!warned)
		kpx_warn("nl", "kpx.ko predates KPX_SVC_F_CLUSTER_IP or KPX_SVC_F_EXT_LOCAL: undefined ClusterIP ports time out instead of being refused, pods reach eTP Local external addresses only through local endpoints; update the module");
	warned = true;
	return 0;
}

int kpx_nl_del_service(struct kpx_nl *nl, const struct kpx_service *key)
{
	struct kpx_nl_request r = { 0 };
	struct nlattr *svc;
	struct nl_msg *msg;

	nl->errmsg[0] = '\0';
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
	struct kpx_nl_request r = { 0 };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_FLUSH, 0, 64);

	nl->errmsg[0] = '\0';
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
	struct kpx_nl_request r = { 0 };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_CT_SYNC, 0, 64);
	int err;

	nl->errmsg[0] = '\0';
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
};

int kpx_nl_parse_stats(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *st[KPX_STATS_A_MAX + 1];
	struct kpx_nl_stats *out = arg;

	if (genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL) < 0 ||
	    !tb[KPX_A_STATS] ||
	    nla_parse_nested(st, KPX_STATS_A_MAX, tb[KPX_A_STATS],
			     stats_policy) < 0)
		return -EBADMSG;
	if (st[KPX_STATS_A_SERVICES])
		out->services = nla_get_u32(st[KPX_STATS_A_SERVICES]);
	if (st[KPX_STATS_A_BACKENDS])
		out->backends = nla_get_u32(st[KPX_STATS_A_BACKENDS]);
	if (st[KPX_STATS_A_CONNS])
		out->conns = nla_get_u64(st[KPX_STATS_A_CONNS]);
	if (st[KPX_STATS_A_REJECTS])
		out->rejects = nla_get_u64(st[KPX_STATS_A_REJECTS]);
	if (st[KPX_STATS_A_DROPS])
		out->drops = nla_get_u64(st[KPX_STATS_A_DROPS]);
	if (st[KPX_STATS_A_GENERATION])
		out->generation = nla_get_u32(st[KPX_STATS_A_GENERATION]);
	if (st[KPX_STATS_A_FILTERED])
		out->filtered = nla_get_u64(st[KPX_STATS_A_FILTERED]);
	return 0;
}

int kpx_nl_stats(struct kpx_nl *nl, struct kpx_nl_stats *st)
{
	struct kpx_nl_stats tmp = { 0 };
	struct kpx_nl_request r = { .parse = kpx_nl_parse_stats, .arg = &tmp };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_GET_STATS, 0, 64);
	int ret;

	nl->errmsg[0] = '\0';
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
	struct kpx_nl_request r = { 0 };
	struct nl_msg *msg;
	int ret;

	nl->errmsg[0] = '\0';
	ret = kpx_nl_build_config(nl, c, &msg);
	if (ret)
		return ret;
	return kpx_nl_transact(nl, msg, &r);
}

static int parse_config(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *ct[KPX_CFG_A_MAX + 1];
	struct kpx_ns_config *c = arg;
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
	return 0;
}

int kpx_nl_get_config(struct kpx_nl *nl, struct kpx_ns_config *c)
{
	struct kpx_ns_config tmp = { 0 };
	struct kpx_nl_request r = { .parse = parse_config, .arg = &tmp };
	struct nl_msg *msg = kpx_nl_new_msg(nl, KPX_CMD_GET_CONFIG, 0, 64);
	int ret;

	nl->errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	ret = kpx_nl_transact(nl, msg, &r);
	if (!ret)
		*c = tmp;
	return ret;
}

