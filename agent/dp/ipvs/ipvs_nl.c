// SPDX-License-Identifier: GPL-2.0-only
/*
 * IPVS generic-netlink client (see ipvs_nl.h).  Messages are built and
 * parsed with libnl's attribute helpers and exchanged by the data planes'
 * one genl helper (dp/genl.h), which keeps the kernel's exact errno
 * (libnl's own mapping would fold ESRCH and ENOENT together).
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

#include "dp/genl.h"
#include "dp/ipvs/ipvs_nl.h"

struct kpx_ipvs {
	struct kpx_genl g;	/* the "IPVS" family */
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

/* Sends @msg (consumed), reads up to the ACK / error / end of dump. */
static int transact(struct kpx_ipvs *v, struct nl_msg *msg,
		    struct kpx_genl_req *r)
{
	return kpx_genl_transact(&v->g, msg, r);
}

static struct nl_msg *new_msg(struct kpx_ipvs *v, uint8_t cmd, int flags)
{
	return kpx_genl_msg(&v->g, cmd, flags | NLM_F_ACK, IPVS_GENL_VERSION, 0);
}

int kpx_ipvs_open(struct kpx_ipvs **out)
{
	struct kpx_ipvs *v = calloc(1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	ret = kpx_genl_open(&v->g, IPVS_GENL_NAME, 0);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	return 0;
}

void kpx_ipvs_close(struct kpx_ipvs *v)
{
	if (!v)
		return;
	kpx_genl_close(&v->g);
	free(v);
}

const char *kpx_ipvs_errmsg(const struct kpx_ipvs *v)
{
	return v->g.errmsg;
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
	struct kpx_genl_req r = { 0 };

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
	struct kpx_genl_req r = { 0 };

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
	struct kpx_genl_req r = { .parse = parse_svc, .arg = &vec };
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
	struct kpx_genl_req r = { .parse = parse_dest, .arg = &dd };
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

int kpx_ipvs_set_timeouts(struct kpx_ipvs *v, const struct kpx_ipvs_timeouts *t)
{
	struct nl_msg *msg;
	struct kpx_genl_req r = { 0 };

	if (!t->tcp && !t->tcpfin && !t->udp)
		return 0;
	msg = new_msg(v, IPVS_CMD_SET_CONFIG, 0);
	if (!msg)
		return -ENOMEM;
	/* an attribute left out keeps its value (0 would be taken as such too) */
	if ((t->tcp && nla_put_u32(msg, IPVS_CMD_ATTR_TIMEOUT_TCP, t->tcp)) ||
	    (t->tcpfin && nla_put_u32(msg, IPVS_CMD_ATTR_TIMEOUT_TCP_FIN, t->tcpfin)) ||
	    (t->udp && nla_put_u32(msg, IPVS_CMD_ATTR_TIMEOUT_UDP, t->udp))) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return transact(v, msg, &r);
}

static int parse_config(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[IPVS_CMD_ATTR_MAX + 1];
	struct kpx_ipvs_timeouts *t = arg;

	if (genlmsg_parse(nlh, 0, tb, IPVS_CMD_ATTR_MAX, NULL) < 0)
		return -EBADMSG;
	if (tb[IPVS_CMD_ATTR_TIMEOUT_TCP])
		t->tcp = nla_get_u32(tb[IPVS_CMD_ATTR_TIMEOUT_TCP]);
	if (tb[IPVS_CMD_ATTR_TIMEOUT_TCP_FIN])
		t->tcpfin = nla_get_u32(tb[IPVS_CMD_ATTR_TIMEOUT_TCP_FIN]);
	if (tb[IPVS_CMD_ATTR_TIMEOUT_UDP])
		t->udp = nla_get_u32(tb[IPVS_CMD_ATTR_TIMEOUT_UDP]);
	return 0;
}

int kpx_ipvs_get_timeouts(struct kpx_ipvs *v, struct kpx_ipvs_timeouts *t)
{
	struct nl_msg *msg = new_msg(v, IPVS_CMD_GET_CONFIG, 0);
	struct kpx_genl_req r = { .parse = parse_config, .arg = t };

	memset(t, 0, sizeof(*t));
	if (!msg)
		return -ENOMEM;
	return transact(v, msg, &r);
}
