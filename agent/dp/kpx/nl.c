// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kpx generic-netlink client (libnl-genl-3).
 *
 * One socket per struct kpx_nl, blocking, one request in flight at a time.
 * Every request gets a fresh nl_cb whose handlers record the kernel's errno
 * and extended-ack message in a struct kpx_nl_request; libnl's own error
 * codes are only used for failures that are not the kernel's (allocation,
 * socket I/O).  Here: the socket, one exchange, and SET with its message
 * (the change of a frontend, the agent's hot path); the other requests are
 * in nl_ops.c, dumps are read in nl_dump.c.
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

/* ---- the SET message ---- */

int kpx_nl_put_key(struct nl_msg *msg, const struct kpx_service *s)
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
int kpx_nl_put_cidrs(struct nl_msg *msg, int type, const struct kpx_cidr *v,
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
/* Scheduler and affinity, each only when not the default. */
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
	msg = kpx_nl_new_msg(nl, KPX_CMD_SET_SERVICE, 0, set_size(s));
	if (!msg)
		return -ENOMEM;
	svc = nla_nest_start(msg, KPX_A_SERVICE);
	if (!svc || kpx_nl_put_key(msg, s) < 0 ||
	    nla_put_u32(msg, KPX_SVC_A_FLAGS, s->flags) < 0)
		goto err;
	if (put_sched(msg, s) < 0)
		goto err;
	/* the ClusterIP frontend of an eTP Local external one */
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
