// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kpx generic-netlink client (libnl-genl-3).
 *
 * One socket per struct kpx_nl, blocking, one request in flight at a time.
 * Every request gets a fresh nl_cb whose handlers record the kernel's errno
 * and extended-ack message in a struct kpx_nl_request; libnl's own error
 * codes are only used for failures that are not the kernel's (allocation,
 * socket I/O).
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
/* Attempts of a dump before giving up on a table that keeps changing. */
#define KPX_NL_DUMP_TRIES 8

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
static int transact(struct kpx_nl *nl, struct nl_msg *msg,
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
static struct nl_msg *new_msg(struct kpx_nl *nl, uint8_t cmd, int flags,
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
static int put_key(struct nl_msg *msg, const struct kpx_service *s)
{
	size_t alen = kpx_addr_len(s->family);

	if (!alen)
		return -EAFNOSUPPORT;
	if (nla_put_u16(msg, KPX_SVC_A_FAMILY, (uint16_t)s->family) < 0 ||
	    nla_put_u8(msg, KPX_SVC_A_PROTOCOL, s->protocol) < 0 ||
	    nla_put(msg, KPX_SVC_A_ADDR, (int)alen, &s->addr) < 0 ||
	    nla_put_u16(msg, KPX_SVC_A_PORT, htons(s->port)) < 0)
		return -EMSGSIZE;
	return 0;
}

/* Largest nla_len: a netlink attribute, nest included, holds < 64 KiB. */
#define KPX_NL_ATTR_MAX 0xffff

/* Bytes of one KPX_BACKENDS_A_BACKEND nest for @b, padding included. */
static size_t backend_size(const struct kpx_backend *b, size_t alen)
{
	return (size_t)nla_total_size((int)(nla_total_size((int)alen) +
					    nla_total_size(2) +
					    (b->weight > 1 ? nla_total_size(4) : 0)));
}

/*
 * Message buffer for a SET of @s: headers and key with slack, every
 * backend, and one nest header per KPX_A_BACKENDS (each of those holds at
 * least KPX_NL_ATTR_MAX minus one backend and its header).
 */
static size_t set_size(const struct kpx_service *s)
{
	size_t alen = kpx_addr_len(s->family), total = 0;

	for (size_t i = 0; i < s->nbackends; i++)
		total += backend_size(&s->backends[i], alen);
	/* a source range: nest + family + addr + prefix length, padded */
	total += s->nsource_ranges * 48;
	return 4096 + total +
	       (total / (KPX_NL_ATTR_MAX / 2) + 2) * NLA_HDRLEN;
}

/*
 * Puts the CIDR list @v (@n entries) as nest @type of KPX_CIDRS_A_CIDR
 * nests (an empty nest when @n is 0).  -EMSGSIZE if it does not fit.
 */
static int put_cidrs(struct nl_msg *msg, int type, const struct kpx_cidr *v,
		     size_t n)
{
	struct nlattr *list, *c;

	/*
	 * An empty list means "clear"; libnl's nla_nest_end() would drop an
	 * empty nest, so put the empty attribute directly.
	 */
	if (!n)
		return nla_put(msg, type | NLA_F_NESTED, 0, NULL) < 0 ?
		       -EMSGSIZE : 0;
	list = nla_nest_start(msg, type);
	if (!list)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		size_t alen = kpx_addr_len(v[i].family);

		if (!alen)
			return -EAFNOSUPPORT;
		c = nla_nest_start(msg, KPX_CIDRS_A_CIDR);
		if (!c ||
		    nla_put_u16(msg, KPX_CIDR_A_FAMILY, (uint16_t)v[i].family) < 0 ||
		    nla_put(msg, KPX_CIDR_A_ADDR, (int)alen, &v[i].addr) < 0 ||
		    nla_put_u8(msg, KPX_CIDR_A_PREFIXLEN, v[i].len) < 0 ||
		    nla_nest_end(msg, c) < 0)
			return -EMSGSIZE;
	}
	return nla_nest_end(msg, list) < 0 ? -EMSGSIZE : 0;
}

/* Room one source range entry takes at most (IPv6: 4 + 8 + 20 + 8). */
#define KPX_NL_CIDR_ROOM 40

/*
 * Puts source ranges *next, *next + 1, ... of @s as nest @type while the
 * outermost open nest @outer stays within KPX_NL_ATTR_MAX bytes (less
 * @reserve); advances *next past them.  0 or -EMSGSIZE.
 */
static int put_ranges_part(struct nl_msg *msg, const struct nlattr *outer,
			   int type, const struct kpx_service *s,
			   size_t reserve, size_t *next)
{
	struct nlattr *list = nla_nest_start(msg, type), *c;

	if (!list)
		return -EMSGSIZE;
	for (; *next < s->nsource_ranges; (*next)++) {
		const struct kpx_cidr *v = &s->source_ranges[*next];
		size_t used = (size_t)((char *)nlmsg_tail(nlmsg_hdr(msg)) -
				       (const char *)outer);
		size_t alen = kpx_addr_len(v->family);

		if (!alen)
			return -EAFNOSUPPORT;
		if (used + KPX_NL_CIDR_ROOM + reserve > KPX_NL_ATTR_MAX)
			break;
		c = nla_nest_start(msg, KPX_CIDRS_A_CIDR);
		if (!c ||
		    nla_put_u16(msg, KPX_CIDR_A_FAMILY, (uint16_t)v->family) < 0 ||
		    nla_put(msg, KPX_CIDR_A_ADDR, (int)alen, &v->addr) < 0 ||
		    nla_put_u8(msg, KPX_CIDR_A_PREFIXLEN, v->len) < 0 ||
		    nla_nest_end(msg, c) < 0)
			return -EMSGSIZE;
	}
	return nla_nest_end(msg, list) < 0 ? -EMSGSIZE : 0;
}

/* Puts one KPX_BACKENDS_A_BACKEND nest; weight left out when 0 or 1. */
/* Issue 4: scheduler and affinity, each only when not the default. */
static int put_sched(struct nl_msg *msg, const struct kpx_service *s)
{
	if (s->scheduler[0] &&
	    nla_put_string(msg, KPX_SVC_A_SCHEDULER, s->scheduler) < 0)
		return -EMSGSIZE;
	if (s->mh_size && nla_put_u32(msg, KPX_SVC_A_MH_SIZE, s->mh_size) < 0)
		return -EMSGSIZE;
	if (s->affinity_timeout &&
	    nla_put_u32(msg, KPX_SVC_A_AFFINITY_TIMEOUT,
			s->affinity_timeout) < 0)
		return -EMSGSIZE;
	if (s->affinity_max &&
	    nla_put_u32(msg, KPX_SVC_A_AFFINITY_MAX, s->affinity_max) < 0)
		return -EMSGSIZE;
	return 0;
}

static int put_backend(struct nl_msg *msg, const struct kpx_backend *b,
		       size_t alen)
{
	struct nlattr *be = nla_nest_start(msg, KPX_BACKENDS_A_BACKEND);

	if (!be ||
	    nla_put(msg, KPX_BE_A_ADDR, (int)alen, &b->addr) < 0 ||
	    nla_put_u16(msg, KPX_BE_A_PORT, htons(b->port)) < 0)
		return -EMSGSIZE;
	/* Weight 1 is the default: leave it out, saving room. */
	if (b->weight > 1 && nla_put_u32(msg, KPX_BE_A_WEIGHT, b->weight) < 0)
		return -EMSGSIZE;
	return nla_nest_end(msg, be) < 0 ? -EMSGSIZE : 0;
}

/*
 * Puts backends *next, *next + 1, ... of @s while the outermost open nest
 * @outer stays within KPX_NL_ATTR_MAX bytes; advances *next past them.
 * 0 or -EMSGSIZE (message buffer exhausted: a sizing bug).
 */
static int put_backends(struct nl_msg *msg, const struct nlattr *outer,
			const struct kpx_service *s, size_t alen, size_t *next)
{
	for (; *next < s->nbackends; (*next)++) {
		const struct kpx_backend *b = &s->backends[*next];
		size_t used = (size_t)((char *)nlmsg_tail(nlmsg_hdr(msg)) -
				       (const char *)outer);
		int ret;

		if (used + backend_size(b, alen) > KPX_NL_ATTR_MAX)
			break;
		ret = put_backend(msg, b, alen);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Builds the KPX_CMD_SET_SERVICE message for @s into *out.  The backends go
 * into KPX_SVC_A_BACKENDS as far as KPX_A_SERVICE stays below 64 KiB, the
 * rest into as many top-level KPX_A_BACKENDS as needed, all in order; the
 * source ranges likewise into KPX_SVC_A_SOURCE_RANGES (up to half of
 * KPX_A_SERVICE) and top-level KPX_A_SOURCE_RANGES.  The set size is not
 * checked here: the kernel enforces KPX_BACKENDS_MAX.
 */
int kpx_nl_build_set(struct kpx_nl *nl, const struct kpx_service *s,
		     struct nl_msg **out)
{
	struct nlattr *svc, *list;
	struct nl_msg *msg;
	size_t alen = kpx_addr_len(s->family), next = 0, rnext = 0;

	if (!alen)
		return -EAFNOSUPPORT;
	msg = new_msg(nl, KPX_CMD_SET_SERVICE, 0, set_size(s));
	if (!msg)
		return -ENOMEM;
	svc = nla_nest_start(msg, KPX_A_SERVICE);
	if (!svc || put_key(msg, s) < 0 ||
	    nla_put_u32(msg, KPX_SVC_A_FLAGS, s->flags) < 0)
		goto err;
	if (put_sched(msg, s) < 0)
		goto err;
	/* issue 3: the ClusterIP frontend of an eTP Local external one */
	if ((s->flags & KPX_SVC_F_EXT_LOCAL) &&
	    (nla_put(msg, KPX_SVC_A_CLUSTER_ADDR, (int)alen,
		     &s->cluster_addr) < 0 ||
	     nla_put_u16(msg, KPX_SVC_A_CLUSTER_PORT,
			 htons(s->cluster_port)) < 0))
		goto err;
	/*
	 * Only when set: a SET without it leaves the frontend unfiltered.
	 * As many as fit KPX_A_SERVICE with room left for a first slice of
	 * backends; the rest in top-level KPX_A_SOURCE_RANGES.
	 */
	if (s->nsource_ranges &&
	    put_ranges_part(msg, svc, KPX_SVC_A_SOURCE_RANGES, s,
			    KPX_NL_ATTR_MAX / 2, &rnext) < 0)
		goto err;
	if (s->nbackends) {
		list = nla_nest_start(msg, KPX_SVC_A_BACKENDS);
		if (!list || put_backends(msg, svc, s, alen, &next) < 0 ||
		    nla_nest_end(msg, list) < 0)
			goto err;
	}
	if (nla_nest_end(msg, svc) < 0)
		goto err;
	while (next < s->nbackends) {
		size_t first = next;

		list = nla_nest_start(msg, KPX_A_BACKENDS);
		if (!list || put_backends(msg, list, s, alen, &next) < 0 ||
		    next == first || nla_nest_end(msg, list) < 0)
			goto err;
	}
	while (rnext < s->nsource_ranges) {
		size_t first = rnext;
		/* the nest header is where the list will start */
		const struct nlattr *here =
			(const struct nlattr *)nlmsg_tail(nlmsg_hdr(msg));

		if (put_ranges_part(msg, here, KPX_A_SOURCE_RANGES, s, 0,
				    &rnext) < 0 || rnext == first)
			goto err;
	}
	*out = msg;
	return 0;
err:
	snprintf(nl->errmsg, sizeof(nl->errmsg),
		 "SET of %zu backends: netlink message buffer too small",
		 s->nbackends);
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/*
 * SET; a module older than KPX_SVC_F_CLUSTER_IP or KPX_SVC_F_EXT_LOCAL
 * rejects those bits with EINVAL (unknown flags are refused): the frontend
 * is then sent again without them (and without the cluster frontend key),
 * so the Service still works; only its undefined ports time out instead of
 * being refused, and in-cluster clients of an eTP Local external address
 * are limited to local endpoints (logged once).
 */
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
	ret = transact(nl, msg, &r);
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
	if (transact(nl, msg, &r))
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
	msg = new_msg(nl, KPX_CMD_DEL_SERVICE, 0, 512);
	if (!msg)
		return -ENOMEM;
	svc = nla_nest_start(msg, KPX_A_SERVICE);
	if (!svc || put_key(msg, key) < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, svc);
	return transact(nl, msg, &r);
}

int kpx_nl_flush(struct kpx_nl *nl)
{
	struct kpx_nl_request r = { 0 };
	struct nl_msg *msg = new_msg(nl, KPX_CMD_FLUSH, 0, 64);

	nl->errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	return transact(nl, msg, &r);
}

/*
 * KPX_CMD_CT_SYNC: waits for the conntrack cleanups of earlier changes;
 * 0 also from a module without it (EOPNOTSUPP: its cleanups are done by
 * the time a change is answered).
 */
int kpx_nl_ct_sync(struct kpx_nl *nl)
{
	struct kpx_nl_request r = { 0 };
	struct nl_msg *msg = new_msg(nl, KPX_CMD_CT_SYNC, 0, 64);
	int err;

	nl->errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	err = transact(nl, msg, &r);
	return err == -EOPNOTSUPP ? 0 : err;
}

/* ---- dump ---- */

static struct nla_policy svc_policy[KPX_SVC_A_MAX + 1] = {
	[KPX_SVC_A_FAMILY] = { .type = NLA_U16 },
	[KPX_SVC_A_PROTOCOL] = { .type = NLA_U8 },
	[KPX_SVC_A_ADDR] = { .type = NLA_UNSPEC, .minlen = 4, .maxlen = 16 },
	[KPX_SVC_A_PORT] = { .type = NLA_U16 },
	[KPX_SVC_A_FLAGS] = { .type = NLA_U32 },
	[KPX_SVC_A_BACKENDS] = { .type = NLA_NESTED },
	[KPX_SVC_A_CONNS] = { .type = NLA_U64 },
	[KPX_SVC_A_REJECTS] = { .type = NLA_U64 },
	[KPX_SVC_A_SOURCE_RANGES] = { .type = NLA_NESTED },
	[KPX_SVC_A_SCHEDULER] = { .type = NLA_STRING },
	[KPX_SVC_A_MH_SIZE] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_TIMEOUT] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_MAX] = { .type = NLA_U32 },
	[KPX_SVC_A_AFFINITY_EVICTIONS] = { .type = NLA_U64 },
	[KPX_SVC_A_CLUSTER_ADDR] = { .type = NLA_UNSPEC, .minlen = 4,
				     .maxlen = 16 },
	[KPX_SVC_A_CLUSTER_PORT] = { .type = NLA_U16 },
};

static struct nla_policy cidr_policy[KPX_CIDR_A_MAX + 1] = {
	[KPX_CIDR_A_FAMILY] = { .type = NLA_U16 },
	[KPX_CIDR_A_ADDR] = { .type = NLA_UNSPEC, .minlen = 4, .maxlen = 16 },
	[KPX_CIDR_A_PREFIXLEN] = { .type = NLA_U8 },
};

int kpx_nl_parse_cidrs(struct nlattr *list, struct kpx_cidr **out, size_t *n)
{
	struct kpx_cidr *v;
	struct nlattr *a;
	size_t cnt = 0;
	int rem;

	*out = NULL;
	*n = 0;
	nla_for_each_nested(a, list, rem)
		cnt++;
	if (!cnt)
		return 0;
	v = calloc(cnt, sizeof(*v));
	if (!v)
		return -ENOMEM;
	nla_for_each_nested(a, list, rem) {
		struct nlattr *tb[KPX_CIDR_A_MAX + 1];
		struct kpx_cidr *c = &v[*n];
		size_t alen;

		if (nla_type(a) != KPX_CIDRS_A_CIDR)
			continue;
		if (nla_parse_nested(tb, KPX_CIDR_A_MAX, a, cidr_policy) < 0 ||
		    !tb[KPX_CIDR_A_FAMILY] || !tb[KPX_CIDR_A_ADDR] ||
		    !tb[KPX_CIDR_A_PREFIXLEN])
			goto bad;
		c->family = nla_get_u16(tb[KPX_CIDR_A_FAMILY]);
		alen = kpx_addr_len(c->family);
		if (!alen || (size_t)nla_len(tb[KPX_CIDR_A_ADDR]) != alen ||
		    nla_get_u8(tb[KPX_CIDR_A_PREFIXLEN]) > alen * 8)
			goto bad;
		memcpy(&c->addr, nla_data(tb[KPX_CIDR_A_ADDR]), alen);
		c->len = nla_get_u8(tb[KPX_CIDR_A_PREFIXLEN]);
		(*n)++;
	}
	*out = v;
	return 0;
bad:
	free(v);
	*n = 0;
	return -EBADMSG;
}

static struct nla_policy be_policy[KPX_BE_A_MAX + 1] = {
	[KPX_BE_A_ADDR] = { .type = NLA_UNSPEC, .minlen = 4, .maxlen = 16 },
	[KPX_BE_A_PORT] = { .type = NLA_U16 },
	[KPX_BE_A_WEIGHT] = { .type = NLA_U32 },
	[KPX_BE_A_CONNS] = { .type = NLA_U64 },
	[KPX_BE_A_ACTIVE] = { .type = NLA_U32 },
};

void kpx_nl_dump_reset(struct kpx_nl_dumpbuf *d)
{
	kpx_services_free(d->v, d->n);
	memset(d, 0, sizeof(*d));
}

/*
 * Appends the backends of nest @list to @s, or with @count_only adds their
 * number to s->nbackends (s->backends stays NULL).  -EBADMSG if malformed.
 */
static int parse_backends(struct kpx_service *s, struct nlattr *list,
			  bool count_only)
{
	size_t alen = kpx_addr_len(s->family), cnt = 0;
	struct kpx_backend *v;
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, list, rem)
		cnt += !count_only || nla_type(a) == KPX_BACKENDS_A_BACKEND;
	if (count_only) {
		s->nbackends += cnt;
		return 0;
	}
	if (!cnt)
		return 0;
	v = realloc(s->backends, (s->nbackends + cnt) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->backends = v;
	nla_for_each_nested(a, list, rem) {
		struct nlattr *tb[KPX_BE_A_MAX + 1];
		struct kpx_backend *b = &s->backends[s->nbackends];

		if (nla_type(a) != KPX_BACKENDS_A_BACKEND)
			continue;
		if (nla_parse_nested(tb, KPX_BE_A_MAX, a, be_policy) < 0 ||
		    !tb[KPX_BE_A_ADDR] || !tb[KPX_BE_A_PORT] ||
		    (size_t)nla_len(tb[KPX_BE_A_ADDR]) != alen)
			return -EBADMSG;
		memset(b, 0, sizeof(*b));
		memcpy(&b->addr, nla_data(tb[KPX_BE_A_ADDR]), alen);
		b->port = ntohs(nla_get_u16(tb[KPX_BE_A_PORT]));
		b->weight = tb[KPX_BE_A_WEIGHT] ?
			    nla_get_u32(tb[KPX_BE_A_WEIGHT]) : 1;
		if (tb[KPX_BE_A_CONNS])
			b->conns = nla_get_u64(tb[KPX_BE_A_CONNS]);
		if (tb[KPX_BE_A_ACTIVE])
			b->active = nla_get_u32(tb[KPX_BE_A_ACTIVE]);
		s->nbackends++;
	}
	return 0;
}

/*
 * One dumped frontend.  A frontend repeated in the next message (same key)
 * is taken as a continuation carrying more backends, so a module that splits
 * a large backend set over several messages is read correctly.  Backends in
 * top-level KPX_A_BACKENDS nests (the SET layout) are appended too.
 */
int kpx_nl_parse_service(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *stb[KPX_SVC_A_MAX + 1];
	struct kpx_nl_dumpbuf *d = arg;
	struct kpx_service s = { 0 }, *cur;
	struct nlattr *a;
	size_t alen;
	int ret, rem;

	ret = genlmsg_parse(nlh, 0, tb, KPX_A_MAX, NULL);
	if (ret < 0)
		return -EBADMSG;
	if (!tb[KPX_A_SERVICE])
		return 0;
	if (nla_parse_nested(stb, KPX_SVC_A_MAX, tb[KPX_A_SERVICE],
			     svc_policy) < 0)
		return -EBADMSG;
	if (!stb[KPX_SVC_A_FAMILY] || !stb[KPX_SVC_A_PROTOCOL] ||
	    !stb[KPX_SVC_A_ADDR] || !stb[KPX_SVC_A_PORT])
		return -EBADMSG;
	s.family = nla_get_u16(stb[KPX_SVC_A_FAMILY]);
	alen = kpx_addr_len(s.family);
	if (!alen || (size_t)nla_len(stb[KPX_SVC_A_ADDR]) != alen)
		return -EBADMSG;
	s.protocol = nla_get_u8(stb[KPX_SVC_A_PROTOCOL]);
	memcpy(&s.addr, nla_data(stb[KPX_SVC_A_ADDR]), alen);
	s.port = ntohs(nla_get_u16(stb[KPX_SVC_A_PORT]));
	if (stb[KPX_SVC_A_FLAGS])
		s.flags = nla_get_u32(stb[KPX_SVC_A_FLAGS]);
	if (stb[KPX_SVC_A_CONNS])
		s.conns = nla_get_u64(stb[KPX_SVC_A_CONNS]);
	if (stb[KPX_SVC_A_REJECTS])
		s.rejects = nla_get_u64(stb[KPX_SVC_A_REJECTS]);
	if (stb[KPX_SVC_A_SCHEDULER])
		nla_strlcpy(s.scheduler, stb[KPX_SVC_A_SCHEDULER],
			    sizeof(s.scheduler));
	if (stb[KPX_SVC_A_MH_SIZE])
		s.mh_size = nla_get_u32(stb[KPX_SVC_A_MH_SIZE]);
	if (stb[KPX_SVC_A_AFFINITY_TIMEOUT])
		s.affinity_timeout = nla_get_u32(stb[KPX_SVC_A_AFFINITY_TIMEOUT]);
	if (stb[KPX_SVC_A_AFFINITY_MAX])
		s.affinity_max = nla_get_u32(stb[KPX_SVC_A_AFFINITY_MAX]);
	if (stb[KPX_SVC_A_AFFINITY_EVICTIONS])
		s.affinity_evictions =
			nla_get_u64(stb[KPX_SVC_A_AFFINITY_EVICTIONS]);
	if (stb[KPX_SVC_A_CLUSTER_ADDR] && stb[KPX_SVC_A_CLUSTER_PORT]) {
		if ((size_t)nla_len(stb[KPX_SVC_A_CLUSTER_ADDR]) != alen)
			return -EBADMSG;
		memcpy(&s.cluster_addr, nla_data(stb[KPX_SVC_A_CLUSTER_ADDR]),
		       alen);
		s.cluster_port = ntohs(nla_get_u16(stb[KPX_SVC_A_CLUSTER_PORT]));
	}

	if (d->n && !kpx_service_key_cmp(&d->v[d->n - 1], &s)) {
		cur = &d->v[d->n - 1];
	} else {
		if (d->n == d->cap) {
			size_t cap = d->cap ? d->cap * 2 : 16;
			struct kpx_service *v = realloc(d->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			d->v = v;
			d->cap = cap;
		}
		cur = &d->v[d->n++];
		*cur = s;
	}
	/*
	 * The module sends a long range list over several messages, before
	 * any backend: they extend the list.  Ranges in a message that
	 * follows backends repeat the list (modules that put all of it in
	 * every message) and are skipped.
	 */
	if (stb[KPX_SVC_A_SOURCE_RANGES] && !cur->nbackends) {
		struct kpx_cidr *more, *v;
		size_t nmore;

		ret = kpx_nl_parse_cidrs(stb[KPX_SVC_A_SOURCE_RANGES], &more,
					 &nmore);
		if (ret)
			return ret;
		if (!cur->source_ranges) {
			cur->source_ranges = more;
			cur->nsource_ranges = nmore;
		} else if (nmore) {
			v = realloc(cur->source_ranges,
				    (cur->nsource_ranges + nmore) * sizeof(*v));
			if (!v) {
				free(more);
				return -ENOMEM;
			}
			memcpy(v + cur->nsource_ranges, more,
			       nmore * sizeof(*v));
			cur->source_ranges = v;
			cur->nsource_ranges += nmore;
			free(more);
		} else {
			free(more);
		}
	}
	if (stb[KPX_SVC_A_BACKENDS]) {
		ret = parse_backends(cur, stb[KPX_SVC_A_BACKENDS],
				     d->count_backends);
		if (ret)
			return ret;
	}
	/* Top-level KPX_A_BACKENDS extend the list, as in a SET. */
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlh), 0),
			  genlmsg_attrlen(nlmsg_data(nlh), 0), rem) {
		if (nla_type(a) != KPX_A_BACKENDS)
			continue;
		ret = parse_backends(cur, a, d->count_backends);
		if (ret)
			return ret;
	}
	return 0;
}

static int dump(struct kpx_nl *nl, struct kpx_service **out, size_t *n,
		bool count_backends)
{
	struct kpx_nl_dumpbuf d = { .count_backends = count_backends };
	int ret = -EAGAIN;

	nl->errmsg[0] = '\0';
	for (int tries = 0; tries < KPX_NL_DUMP_TRIES; tries++) {
		struct kpx_nl_request r = { .parse = kpx_nl_parse_service, .arg = &d };
		struct nl_msg *msg = new_msg(nl, KPX_CMD_GET_SERVICE,
					     NLM_F_DUMP, 64);

		if (!msg) {
			ret = -ENOMEM;
			break;
		}
		ret = transact(nl, msg, &r);
		if (!ret && r.intr) {
			kpx_dbg(2, "nl", "dump interrupted, retrying (%d)",
				tries + 1);
			kpx_nl_dump_reset(&d);
			d.count_backends = count_backends;
			ret = -EAGAIN;
			continue;
		}
		break;
	}
	if (ret) {
		kpx_nl_dump_reset(&d);
		return ret;
	}
	for (size_t i = 0; i < d.n && !count_backends; i++)
		kpx_service_normalize(&d.v[i], kpx_addr_len(d.v[i].family));
	*out = d.v;
	*n = d.n;
	return 0;
}

int kpx_nl_dump(struct kpx_nl *nl, struct kpx_service **out, size_t *n)
{
	return dump(nl, out, n, false);
}

int kpx_nl_dump_frontends(struct kpx_nl *nl, struct kpx_service **out,
			  size_t *n)
{
	return dump(nl, out, n, true);
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
	struct nl_msg *msg = new_msg(nl, KPX_CMD_GET_STATS, 0, 64);
	int ret;

	nl->errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	ret = transact(nl, msg, &r);
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
	msg = new_msg(nl, KPX_CMD_SET_CONFIG, 0, 1024 + n * 48);
	if (!msg)
		return -ENOMEM;
	cfg = nla_nest_start(msg, KPX_A_CONFIG);
	/* every setting is sent: "" and an empty list clear the old ones */
	if (!cfg || put_cidrs(msg, KPX_CFG_A_LOCAL_CIDRS, c->local_cidrs, n) < 0 ||
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
	return transact(nl, msg, &r);
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
	struct nl_msg *msg = new_msg(nl, KPX_CMD_GET_CONFIG, 0, 64);
	int ret;

	nl->errmsg[0] = '\0';
	if (!msg)
		return -ENOMEM;
	ret = transact(nl, msg, &r);
	if (!ret)
		*c = tmp;
	return ret;
}
