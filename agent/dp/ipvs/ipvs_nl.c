// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPVS generic-netlink client (see ipvs_nl.h).  Messages are built and
 * parsed with libnl's attribute helpers; each request gets its own nl_cb
 * whose handlers keep the kernel's exact errno (libnl's own mapping would
 * fold ESRCH and ENOENT together).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/ip_vs.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "dp/ipvs/ipvs_nl.h"

struct kpx_ipvs {
	struct nl_sock *sk;
	int family_id;
	char errmsg[256];
};

struct req {
	struct kpx_ipvs *v;
	int err;		/* kernel errno, negative */
	bool done;
	int (*parse)(struct nlmsghdr *nlh, void *arg);
	void *arg;
	int parse_err;
};

/* A growing array for dumps. */
struct vec {
	void *v;
	size_t n, cap, size;
};

static void *vec_push(struct vec *a)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		void *p = realloc(a->v, cap * a->size);

		if (!p)
			return NULL;
		a->v = p;
		a->cap = cap;
	}
	return memset((char *)a->v + a->n++ * a->size, 0, a->size);
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct req *r = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	int len = (int)nlh->nlmsg_len - NLMSG_HDRLEN, off;

	(void)who;
	r->err = e->error < 0 ? e->error : -e->error;
	r->done = true;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	off = (nlh->nlmsg_flags & NLM_F_CAPPED) ? (int)sizeof(*e) :
		(int)(sizeof(*e) - sizeof(e->msg) + NLMSG_ALIGN(e->msg.nlmsg_len));
	if (len - off > 0 &&
	    !nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)e + off),
		       len - off, NULL) && tb[NLMSGERR_ATTR_MSG])
		snprintf(r->v->errmsg, sizeof(r->v->errmsg), "%.*s",
			 (int)strnlen(nla_data(tb[NLMSGERR_ATTR_MSG]),
				      (size_t)nla_len(tb[NLMSGERR_ATTR_MSG])),
			 (const char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);

	r->done = true;
	if (nlh->nlmsg_type == NLMSG_DONE && nlmsg_datalen(nlh) >= (int)sizeof(int)) {
		int err = *(int *)nlmsg_data(nlh);

		if (err)
			r->err = err < 0 ? err : -err;
	}
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	int err;

	if (r->parse && !r->parse_err) {
		err = r->parse(nlmsg_hdr(msg), r->arg);
		if (err)
			r->parse_err = err;
	}
	return NL_SKIP;
}

/* Sends @msg (consumed), reads up to the ACK / error / end of dump. */
static int transact(struct kpx_ipvs *v, struct nl_msg *msg, struct req *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	r->v = v;
	v->errmsg[0] = '\0';
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);
	ret = nl_send_auto(v->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		ret = -EIO;
		goto out;
	}
	ret = 0;
	while (!r->done) {
		ret = nl_recvmsgs(v->sk, cb);
		if (r->err || ret < 0)
			break;
	}
	if (r->err)
		ret = r->err;
	else if (ret < 0)
		ret = ret == -NLE_NOMEM ? -ENOMEM : -EIO;
	else
		ret = r->parse_err;
out:
	nl_cb_put(cb);
	return ret;
}

static struct nl_msg *new_msg(struct kpx_ipvs *v, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, v->family_id, 0,
				flags | NLM_F_ACK, cmd, IPVS_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

int kpx_ipvs_open(struct kpx_ipvs **out)
{
	struct kpx_ipvs *v = calloc(1, sizeof(*v));
	int one = 1, ret;

	if (!v)
		return -ENOMEM;
	v->sk = nl_socket_alloc();
	if (!v->sk) {
		free(v);
		return -ENOMEM;
	}
	ret = genl_connect(v->sk);
	if (ret < 0) {
		ret = -EIO;
		goto fail;
	}
	setsockopt(nl_socket_get_fd(v->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(v->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	nl_socket_set_msg_buf_size(v->sk, 65536);
	ret = genl_ctrl_resolve(v->sk, IPVS_GENL_NAME);
	if (ret < 0) {
		ret = -ENOENT;
		goto fail;
	}
	v->family_id = ret;
	*out = v;
	return 0;
fail:
	nl_socket_free(v->sk);
	free(v);
	return ret;
}

void kpx_ipvs_close(struct kpx_ipvs *v)
{
	if (!v)
		return;
	nl_socket_free(v->sk);
	free(v);
}

const char *kpx_ipvs_errmsg(const struct kpx_ipvs *v)
{
	return v->errmsg;
}

/* The service's key (and with @full its settings) as IPVS_CMD_ATTR_SERVICE. */
static int put_svc(struct nl_msg *msg, const struct kpx_ipvs_svc *s, bool full)
{
	struct nlattr *nest = nla_nest_start(msg, IPVS_CMD_ATTR_SERVICE);
	struct ip_vs_flags fl = { .flags = s->flags, .mask = ~0U };
	unsigned char addr[16] = { 0 };

	if (!nest)
		return -EMSGSIZE;
	memcpy(addr, &s->addr, s->family == AF_INET ? 4 : 16);
	if (nla_put_u16(msg, IPVS_SVC_ATTR_AF, (uint16_t)s->family) ||
	    nla_put_u16(msg, IPVS_SVC_ATTR_PROTOCOL, s->protocol) ||
	    nla_put(msg, IPVS_SVC_ATTR_ADDR, sizeof(addr), addr) ||
	    nla_put_u16(msg, IPVS_SVC_ATTR_PORT, htons(s->port)))
		return -EMSGSIZE;
	/* netmask: a host mask for IPv4, a prefix length for IPv6 (persistence granularity) */
	if (full && (nla_put_string(msg, IPVS_SVC_ATTR_SCHED_NAME, s->sched) ||
		     nla_put(msg, IPVS_SVC_ATTR_FLAGS, sizeof(fl), &fl) ||
		     nla_put_u32(msg, IPVS_SVC_ATTR_TIMEOUT, s->timeout) ||
		     nla_put_u32(msg, IPVS_SVC_ATTR_NETMASK,
				 s->family == AF_INET ? 0xffffffffU : 128)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int put_dest(struct nl_msg *msg, int family, const struct kpx_ipvs_dest *d,
		    bool full)
{
	struct nlattr *nest = nla_nest_start(msg, IPVS_CMD_ATTR_DEST);
	unsigned char addr[16] = { 0 };

	if (!nest)
		return -EMSGSIZE;
	memcpy(addr, &d->addr, family == AF_INET ? 4 : 16);
	if (nla_put(msg, IPVS_DEST_ATTR_ADDR, sizeof(addr), addr) ||
	    nla_put_u16(msg, IPVS_DEST_ATTR_PORT, htons(d->port)) ||
	    nla_put_u16(msg, IPVS_DEST_ATTR_ADDR_FAMILY, (uint16_t)family))
		return -EMSGSIZE;
	if (full && (nla_put_u32(msg, IPVS_DEST_ATTR_FWD_METHOD, IP_VS_CONN_F_MASQ) ||
		     nla_put_u32(msg, IPVS_DEST_ATTR_WEIGHT, d->weight) ||
		     nla_put_u32(msg, IPVS_DEST_ATTR_U_THRESH, 0) ||
		     nla_put_u32(msg, IPVS_DEST_ATTR_L_THRESH, 0)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int svc_cmd(struct kpx_ipvs *v, uint8_t cmd, const struct kpx_ipvs_svc *s,
		   bool full)
{
	struct nl_msg *msg = new_msg(v, cmd, 0);
	struct req r = { 0 };

	if (!msg)
		return -ENOMEM;
	if (put_svc(msg, s, full)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return transact(v, msg, &r);
}

int kpx_ipvs_svc_put(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s, int create)
{
	return svc_cmd(v, create ? IPVS_CMD_NEW_SERVICE : IPVS_CMD_SET_SERVICE, s, true);
}

int kpx_ipvs_svc_del(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s)
{
	return svc_cmd(v, IPVS_CMD_DEL_SERVICE, s, false);
}

static int dest_cmd(struct kpx_ipvs *v, uint8_t cmd, const struct kpx_ipvs_svc *s,
		    const struct kpx_ipvs_dest *d, bool full)
{
	struct nl_msg *msg = new_msg(v, cmd, 0);
	struct req r = { 0 };

	if (!msg)
		return -ENOMEM;
	if (put_svc(msg, s, false) || put_dest(msg, s->family, d, full)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return transact(v, msg, &r);
}

int kpx_ipvs_dest_put(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s,
		      const struct kpx_ipvs_dest *d, int create)
{
	return dest_cmd(v, create ? IPVS_CMD_NEW_DEST : IPVS_CMD_SET_DEST, s, d, true);
}

int kpx_ipvs_dest_del(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s,
		      const struct kpx_ipvs_dest *d)
{
	return dest_cmd(v, IPVS_CMD_DEL_DEST, s, d, false);
}

/* The nest @type of a genl message, parsed into tb[0..max]. */
static int parse_nest(struct nlmsghdr *nlh, int type, struct nlattr **tb, int max)
{
	struct nlattr *top[IPVS_CMD_ATTR_MAX + 1];

	if (genlmsg_parse(nlh, 0, top, IPVS_CMD_ATTR_MAX, NULL) < 0 || !top[type])
		return -EBADMSG;
	if (nla_parse_nested(tb, max, top[type], NULL) < 0)
		return -EBADMSG;
	return 0;
}

static int parse_svc(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[IPVS_SVC_ATTR_MAX + 1];
	struct kpx_ipvs_svc *s;
	struct ip_vs_flags fl;
	size_t alen;
	int af;

	if (parse_nest(nlh, IPVS_CMD_ATTR_SERVICE, tb, IPVS_SVC_ATTR_MAX))
		return -EBADMSG;
	if (!tb[IPVS_SVC_ATTR_AF] || tb[IPVS_SVC_ATTR_FWMARK])
		return 0;
	if (!tb[IPVS_SVC_ATTR_PROTOCOL] || !tb[IPVS_SVC_ATTR_ADDR] ||
	    !tb[IPVS_SVC_ATTR_PORT])
		return -EBADMSG;
	af = nla_get_u16(tb[IPVS_SVC_ATTR_AF]);
	if (af != AF_INET && af != AF_INET6)
		return 0;
	alen = af == AF_INET ? 4 : 16;
	if ((size_t)nla_len(tb[IPVS_SVC_ATTR_ADDR]) < alen)
		return -EBADMSG;
	s = vec_push(arg);
	if (!s)
		return -ENOMEM;
	s->family = af;
	s->protocol = (uint8_t)nla_get_u16(tb[IPVS_SVC_ATTR_PROTOCOL]);
	memcpy(&s->addr, nla_data(tb[IPVS_SVC_ATTR_ADDR]), alen);
	s->port = ntohs(nla_get_u16(tb[IPVS_SVC_ATTR_PORT]));
	if (tb[IPVS_SVC_ATTR_SCHED_NAME])
		nla_strlcpy(s->sched, tb[IPVS_SVC_ATTR_SCHED_NAME], sizeof(s->sched));
	if (tb[IPVS_SVC_ATTR_FLAGS] &&
	    nla_len(tb[IPVS_SVC_ATTR_FLAGS]) >= (int)sizeof(fl)) {
		memcpy(&fl, nla_data(tb[IPVS_SVC_ATTR_FLAGS]), sizeof(fl));
		s->flags = fl.flags & ~IP_VS_SVC_F_HASHED;
	}
	if (tb[IPVS_SVC_ATTR_TIMEOUT])
		s->timeout = nla_get_u32(tb[IPVS_SVC_ATTR_TIMEOUT]);
	return 0;
}

struct dest_dump {
	struct vec vec;
	int family;
};

static int parse_dest(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[IPVS_DEST_ATTR_MAX + 1];
	struct dest_dump *dd = arg;
	struct kpx_ipvs_dest *d;
	size_t alen = dd->family == AF_INET ? 4 : 16;

	if (parse_nest(nlh, IPVS_CMD_ATTR_DEST, tb, IPVS_DEST_ATTR_MAX))
		return -EBADMSG;
	if (!tb[IPVS_DEST_ATTR_ADDR] || !tb[IPVS_DEST_ATTR_PORT] ||
	    (size_t)nla_len(tb[IPVS_DEST_ATTR_ADDR]) < alen)
		return -EBADMSG;
	d = vec_push(&dd->vec);
	if (!d)
		return -ENOMEM;
	memcpy(&d->addr, nla_data(tb[IPVS_DEST_ATTR_ADDR]), alen);
	d->port = ntohs(nla_get_u16(tb[IPVS_DEST_ATTR_PORT]));
	if (tb[IPVS_DEST_ATTR_WEIGHT])
		d->weight = nla_get_u32(tb[IPVS_DEST_ATTR_WEIGHT]);
	if (tb[IPVS_DEST_ATTR_ACTIVE_CONNS])
		d->active_conns = nla_get_u32(tb[IPVS_DEST_ATTR_ACTIVE_CONNS]);
	if (tb[IPVS_DEST_ATTR_INACT_CONNS])
		d->inact_conns = nla_get_u32(tb[IPVS_DEST_ATTR_INACT_CONNS]);
	return 0;
}

int kpx_ipvs_svc_dump(struct kpx_ipvs *v, struct kpx_ipvs_svc **out, size_t *n)
{
	struct vec vec = { .size = sizeof(struct kpx_ipvs_svc) };
	struct nl_msg *msg = new_msg(v, IPVS_CMD_GET_SERVICE, NLM_F_DUMP);
	struct req r = { .parse = parse_svc, .arg = &vec };
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = transact(v, msg, &r);
	if (ret) {
		free(vec.v);
		return ret;
	}
	*out = vec.v;
	*n = vec.n;
	return 0;
}

int kpx_ipvs_dest_dump(struct kpx_ipvs *v, const struct kpx_ipvs_svc *s,
		       struct kpx_ipvs_dest **out, size_t *n)
{
	struct dest_dump dd = { .vec.size = sizeof(struct kpx_ipvs_dest),
				.family = s->family };
	struct nl_msg *msg = new_msg(v, IPVS_CMD_GET_DEST, NLM_F_DUMP);
	struct req r = { .parse = parse_dest, .arg = &dd };
	int ret;

	if (!msg)
		return -ENOMEM;
	if (put_svc(msg, s, false)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = transact(v, msg, &r);
	if (ret) {
		free(dd.vec.v);
		return ret;
	}
	*out = dd.vec.v;
	*n = dd.vec.n;
	return 0;
}
