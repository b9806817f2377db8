/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internals of nl.c, shared only with tests/test_nl.c so that message
 * building and parsing can be unit-tested without a kernel.  Everything else
 * uses nl.h.  Errors are negative errno values, as in nl.h.
 */
#ifndef KPX_NL_PRIV_H
#define KPX_NL_PRIV_H

#include <stdbool.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <linux/kpx.h>
#include "dp/genl.h"
#include "dp/kpx/nl.h"

struct kpx_nl {
	struct kpx_genl g;	/* the "kpx" family */
};

/* Frontends collected by a dump. */
struct kpx_nl_dumpbuf {
	struct kpx_service *v;
	size_t n, cap;
	bool count_backends;	/* only count them: nbackends, backends NULL */
};

/*
 * Builds the KPX_CMD_SET_SERVICE message for @s (backends sent in the given
 * order, weight left out when 1 or 0).  Backends fill KPX_SVC_A_BACKENDS
 * while KPX_A_SERVICE stays within 65535 bytes (nla_len is 16 bits); the
 * rest follow in top-level KPX_A_BACKENDS nests, each within 65535 bytes,
 * in the same message, whose buffer is sized for all of them.  Any number
 * of backends is accepted (the kernel rejects more than KPX_BACKENDS_MAX
 * with EINVAL).  -EAFNOSUPPORT for a bad family, -ENOMEM, or -EMSGSIZE
 * (nl->g.errmsg set) if the buffer turned out too small, which is a bug.
 */
int kpx_nl_build_set(struct kpx_nl *nl, const struct kpx_service *s,
		     struct nl_msg **out);

/*
 * Parses one KPX_CMD_GET_SERVICE reply into @arg (a struct
 * kpx_nl_dumpbuf); a frontend with the key of the previous one continues it,
 * and top-level KPX_A_BACKENDS nests extend its backend list.
 * -EBADMSG for a malformed message, -ENOMEM.
 */
int kpx_nl_parse_service(struct nlmsghdr *nlh, void *arg);
/* Frees what a dumpbuf holds and empties it. */
void kpx_nl_dump_reset(struct kpx_nl_dumpbuf *d);

/*
 * Builds the KPX_CMD_SET_CONFIG message for @c (all three settings).
 * -EINVAL for too many prefixes, -EAFNOSUPPORT for a bad family, -ENOMEM,
 * -EMSGSIZE.
 */
int kpx_nl_build_config(struct kpx_nl *nl, const struct kpx_ns_config *c,
			struct nl_msg **out);

/*
 * Parses a nest of KPX_CIDRS_A_CIDR (source ranges, local prefixes) into a
 * malloc'd array (NULL when empty).  -EBADMSG when malformed, -ENOMEM.
 */
int kpx_nl_parse_cidrs(struct nlattr *list, struct kpx_cidr **out, size_t *n);

/* Parses a KPX_CMD_GET_STATS reply into @arg (struct kpx_nl_stats). */
int kpx_nl_parse_stats(struct nlmsghdr *nlh, void *arg);

/* Sends @msg (consumed) and receives until its ACK, error or NLMSG_DONE,
 * each reply through @r->parse; the kernel's errno, -errno, or 0. */
int kpx_nl_transact(struct kpx_nl *nl, struct nl_msg *msg, struct kpx_genl_req *r);
/* A request for @cmd with room for @size bytes; NULL on ENOMEM. */
struct nl_msg *kpx_nl_new_msg(struct kpx_nl *nl, uint8_t cmd, int flags, size_t size);
/* The frontend key attributes of @s (family, protocol, address, port). */
int kpx_nl_put_key(struct nl_msg *msg, const struct kpx_service *s);
/* A KPX_CIDRS_A_CIDR list of @n prefixes as attribute @type. */
int kpx_nl_put_cidrs(struct nl_msg *msg, int type, const struct kpx_cidr *v, size_t n);

/*
 * The attribute policies of a frontend (KPX_A_SERVICE) and of a backend
 * (KPX_BE_A_*) as the module puts them in replies: dumps and explain.
 */
extern struct nla_policy kpx_nl_svc_policy[KPX_SVC_A_MAX + 1];
extern struct nla_policy kpx_nl_be_policy[KPX_BE_A_MAX + 1];

#endif
