/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace conntrack cleanup for the proxy modes that do not do it
 * themselves (no KPX_DP_CAP_CT_CLEANUP: nftables, iptables, ipvs), through
 * ctnetlink with libnetfilter_conntrack.  The rules are kube-proxy's
 * (pkg/proxy/conntrack: stale UDP/SCTP flows after an endpoint or service
 * change) as the kpx module applies them in the kernel (kmod/ct.c, and the
 * KPX_CMD_DEL_SERVICE comment of uapi/linux/kpx.h); for a UDP or SCTP
 * frontend only (TCP is left to its own state machine):
 *
 *   backend removed   entries whose original destination is the VIP:port
 *                     and whose reply source is that backend's addr:port
 *                     (their next datagram is scheduled afresh);
 *   zero -> some      (or a new frontend with backends) entries to the
 *                     VIP:port that were not translated: reply source =
 *                     the VIP:port itself (traffic that met the refusal,
 *                     or a local socket, before the frontend had backends);
 *   frontend deleted  every entry to the VIP:port.
 *
 * Nothing else: an unchanged frontend, TCP, or (sync.c's business) a first
 * sync whose previous state is unknown.  "Translated" is read from the
 * tuples, not from IPS_DST_NAT, so that IPVS's conntrack entries (which it
 * rewrites with nf_conntrack_alter_reply() without that status) match too.
 *
 * The planning and matching are pure (unit-tested on the host); only
 * kpx_ctclean_apply() talks to the kernel.
 */
#ifndef KPX_CTCLEAN_H
#define KPX_CTCLEAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sync/reconcile.h"
#include "base/service.h"

enum kpx_ct_kind {
	KPX_CT_ALL,		/* every entry to the frontend */
	KPX_CT_BACKEND,		/* translated to backend be:be_port */
	KPX_CT_UNTRANSLATED,	/* reply source = the VIP:port */
};

union kpx_ct_addr {
	struct in_addr v4;
	struct in6_addr v6;
};

/* One deletion rule. */
struct kpx_ct_rule {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t protocol;	/* IPPROTO_UDP or IPPROTO_SCTP */
	union kpx_ct_addr vip;	/* network byte order, unused bytes zero */
	uint16_t port;		/* host byte order */
	enum kpx_ct_kind kind;
	union kpx_ct_addr be;	/* KPX_CT_BACKEND only, else zero */
	uint16_t be_port;	/* host byte order; KPX_CT_BACKEND only */
};

/* A growable list of rules; zero-initialize, free with kpx_ct_plan_free(). */
struct kpx_ct_plan {
	struct kpx_ct_rule *v;
	size_t n, cap;
	bool sorted;
};

/* What ctnetlink says about one entry, as kpx_ct_plan_match() needs it. */
struct kpx_ct_tuple {
	int family;
	uint8_t protocol;
	union kpx_ct_addr orig_dst;	/* network byte order */
	uint16_t orig_dport;		/* host byte order */
	union kpx_ct_addr reply_src;
	uint16_t reply_sport;
};

void kpx_ct_plan_free(struct kpx_ct_plan *p);

/*
 * Appends to @p the rules for one frontend change: @old is its state before
 * (NULL: it did not exist), @cur after (NULL: deleted); not both NULL,
 * same key when both given, backends sorted (kpx_service_normalize()).
 * Returns the number of rules added (0 for TCP or no change), or -ENOMEM.
 */
int kpx_ct_plan_change(struct kpx_ct_plan *p, const struct kpx_service *old,
		       const struct kpx_service *cur);

/*
 * The rules for one sync's changes: for each op with @applied[i] true (a
 * failed change deleted nothing), the old state is looked up in @actual
 * (the state before the sync, sorted by kpx_service_key_cmp()).  Returns
 * the number of rules added, or -ENOMEM.
 */
long kpx_ct_plan_ops(struct kpx_ct_plan *p, const struct kpx_op *ops,
		     size_t nops, const bool *applied,
		     const struct kpx_service *actual, size_t nactual);

/* Does a rule of @p ask for deleting @t?  Sorts @p on first use. */
bool kpx_ct_plan_match(struct kpx_ct_plan *p, const struct kpx_ct_tuple *t);

struct kpx_ctclean;

/* Opens the ctnetlink sockets; NULL with errno set on failure. */
struct kpx_ctclean *kpx_ctclean_new(void);
void kpx_ctclean_free(struct kpx_ctclean *c);

/*
 * Deletes the conntrack entries (of the caller's network namespace) that
 * @p matches: one filtered dump per address family in @p, each match
 * destroyed on a second socket (an entry already gone is not an error).
 * Returns the number deleted, or a negative errno when a dump failed.
 */
long kpx_ctclean_apply(struct kpx_ctclean *c, struct kpx_ct_plan *p);

/* As kpx_ctclean_apply(), for the entries of @family (AF_INET, AF_INET6) only. */
long kpx_ctclean_apply_family(struct kpx_ctclean *c, struct kpx_ct_plan *p,
			      int family);

#endif
