// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kpx generic-netlink client (libnl-genl-3).
 *
 * One socket per struct kpx_nl, blocking, one request in flight at a time,
 * each exchanged by the data planes' one genl helper (dp/genl.h): the
 * kernel's errno and extended-ack message are kept.  Here: the socket, one
 * exchange, and SET with its message
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

/* Socket buffers: a SET of KPX_BACKENDS_MAX IPv6 backends is ~2.6 MiB. */
#define KPX_NL_SOCKBUF (4 << 20)

int kpx_nl_transact(struct kpx_nl *nl, struct nl_msg *msg,
		    struct kpx_genl_req *r)
{
	return kpx_genl_transact(&nl->g, msg, r);
}

/* A new message for @cmd, @size bytes of payload room; NULL on ENOMEM. */
struct nl_msg *kpx_nl_new_msg(struct kpx_nl *nl, uint8_t cmd, int flags,
			      size_t size)
{
	return kpx_genl_msg(&nl->g, cmd, flags, KPX_GENL_VERSION, size);
}

int kpx_nl_open(struct kpx_nl **out)
{
	struct kpx_nl *nl = calloc(1, sizeof(*nl));
	int ret;

	if (!nl)
		return -ENOMEM;
	ret = kpx_genl_open(&nl->g, KPX_GENL_NAME, KPX_NL_SOCKBUF);
	if (ret) {
		free(nl);
		return ret;
	}
	*out = nl;
	return 0;
}

void kpx_nl_close(struct kpx_nl *nl)
{
	if (!nl)
		return;
	kpx_genl_close(&nl->g);
	free(nl);
}

int kpx_nl_reopen(struct kpx_nl **nl)
{
	struct kpx_nl *n;
	int r = kpx_nl_open(&n);

	if (r)
		return r;
	kpx_nl_close(*nl);
	*nl = n;
	return 0;
}

const char *kpx_nl_errmsg(const struct kpx_nl *nl)
{
	return nl ? nl->g.errmsg : "";
}

/* Puts the four key attributes of @s. */
int kpx_nl_set_service(struct kpx_nl *nl, const struct kpx_service *s)
{
	static bool warned;
	struct kpx_genl_req r = { 0 };
	struct kpx_service t;
	struct nl_msg *msg;
	int ret;

	nl->g.errmsg[0] = '\0';
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
	r = (struct kpx_genl_req){ 0 };
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
	/* the Service's name and kind: absent, the module keeps its own */
	if (s->name && nla_put_string(msg, KPX_SVC_A_NAME, s->name) < 0)
		goto err;
	if ((s->kind || s->clear_kind) &&
	    nla_put_u8(msg, KPX_SVC_A_KIND, s->kind) < 0)
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
	snprintf(nl->g.errmsg, sizeof(nl->g.errmsg),
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
