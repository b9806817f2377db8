// SPDX-License-Identifier: GPL-2.0-only
/*
 * One generic-netlink exchange (genl.h): every request gets a fresh nl_cb
 * whose handlers record the kernel's errno and extended-ACK message in a
 * struct kpx_genl_req.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "base/log.h"
#include "dp/genl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* First receive buffer; libnl peeks and grows it for larger messages. */
#define KPX_GENL_MSGBUF (64 << 10)

/* libnl NLE_* to errno, for errors that did not come from the kernel. */
int kpx_genl_errno(int nle)
{
	/* clang-format off */
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
	/* clang-format on */
}

static void save_extack(struct kpx_genl *g, struct nlattr *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len, NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(g->errmsg, sizeof(g->errmsg), "%.*s",
			 (int)strnlen(nla_data(tb[NLMSGERR_ATTR_MSG]),
				      (size_t)nla_len(tb[NLMSGERR_ATTR_MSG])),
			 (const char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	else if (tb[NLMSGERR_ATTR_MISS_TYPE] &&
		 nla_len(tb[NLMSGERR_ATTR_MISS_TYPE]) >= 4)
		snprintf(g->errmsg, sizeof(g->errmsg), "missing attribute %u",
			 nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
}

int kpx_genl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct kpx_genl_req *r = arg;
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
		save_extack(r->g, (struct nlattr *)((char *)e + off),
			    len - off);
	}
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct kpx_genl_req *r = arg;

	r->done = true;
	return NL_STOP;
}

/* NLMSG_DONE of a dump: carries the dump's error (int) and maybe extack. */
int kpx_genl_on_finish(struct nl_msg *msg, void *arg)
{
	struct kpx_genl_req *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int len = nlmsg_datalen(nlh);

	r->done = true;
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	if (len >= (int)sizeof(int)) {
		int err = *(int *)nlmsg_data(nlh);
		int off = (int)NLA_ALIGN(sizeof(int));
		char *tlvs = (char *)nlmsg_data(nlh) + off;

		if (err) {
			r->err = err < 0 ? err : -err;
			if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
				save_extack(r->g, (struct nlattr *)tlvs,
					    len - off);
		}
	}
	return NL_STOP;
}

static int on_dump_intr(struct nl_msg *msg, void *arg)
{
	struct kpx_genl_req *r = arg;

	r->intr = true;
	return NL_OK; /* keep reading up to NLMSG_DONE */
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct kpx_genl_req *r = arg;
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

int kpx_genl_transact(struct kpx_genl *g, struct nl_msg *msg,
		      struct kpx_genl_req *r)
{
	struct nl_cb *cb;
	int ret;

	r->g = g;
	g->errmsg[0] = '\0';
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, kpx_genl_on_error, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, kpx_genl_on_finish, r);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);

	ret = nl_send_auto(g->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		ret = kpx_genl_errno(ret);
		goto out;
	}
	ret = 0;
	while (!r->done) {
		ret = nl_recvmsgs(g->sk, cb);
		if (r->err)
			break;
		if (ret == -NLE_DUMP_INTR) {
			r->intr = true;
			ret = 0;
			break;
		}
		if (ret < 0) {
			ret = kpx_genl_errno(ret);
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

struct nl_msg *kpx_genl_msg(const struct kpx_genl *g, uint8_t cmd, int flags,
			    uint8_t version, size_t size)
{
	struct nl_msg *msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, g->family_id, 0, flags,
			 cmd, version)) {
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

int kpx_genl_open(struct kpx_genl *g, const char *family, int bufsize)
{
	int one = 1, ret;

	memset(g, 0, sizeof(*g));
	g->sk = nl_socket_alloc();
	if (!g->sk)
		return -ENOMEM;
	ret = genl_connect(g->sk);
	if (ret < 0)
		goto err;
	if (bufsize > 0) {
		/* Best effort: the forced sizes need CAP_NET_ADMIN. */
		ret = nl_socket_set_buffer_size(g->sk, bufsize, bufsize);
		if (ret < 0)
			kpx_dbg(2, "genl", "%s socket buffers: %s", family,
				nl_geterror(ret));
		force_buf(g->sk, SO_SNDBUFFORCE, bufsize);
		force_buf(g->sk, SO_RCVBUFFORCE, bufsize);
	}
	nl_socket_set_msg_buf_size(g->sk, KPX_GENL_MSGBUF);
	/* A set buffer size disables peeking by default: keep it on. */
	nl_socket_enable_msg_peek(g->sk);
	/* Error messages: the kernel's text, without the echoed request. */
	setsockopt(nl_socket_get_fd(g->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	setsockopt(nl_socket_get_fd(g->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one,
		   sizeof(one));
	ret = genl_ctrl_resolve(g->sk, family);
	if (ret < 0)
		goto err;
	g->family_id = ret;
	return 0;
err:
	nl_socket_free(g->sk);
	g->sk = NULL;
	return kpx_genl_errno(ret);
}

void kpx_genl_close(struct kpx_genl *g)
{
	if (g->sk)
		nl_socket_free(g->sk);
	g->sk = NULL;
}
