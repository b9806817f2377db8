/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx CIDR lists (source ranges, local prefixes). */
#ifndef _KPX_RANGES_H
#define _KPX_RANGES_H

#include <linux/types.h>
#include <linux/rcupdate.h>
#include <net/netlink.h>

#include <linux/kpx.h>

#include "kpx.h"

/* One prefix; @addr has every bit past @plen zero, @mask is its netmask. */
struct kpx_cidr {
	u8 family;		/* AF_INET or AF_INET6 */
	u8 plen;		/* 0..32 or 0..128 */
	union kpx_addr addr;	/* network order */
	union kpx_addr mask;	/* network order */
};

/*
 * The address space of one family's prefixes as an inclusive interval of
 * 128-bit numbers (IPv4 in the low 32 bits), host order, [0] the high word.
 */
struct kpx_cidr_iv {
	u64 lo[2];
	u64 hi[2];
	u8 family;
};

/*
 * An immutable CIDR list, replaced as a whole and freed after RCU: c[] as
 * given (dumps), iv[] the union of their addresses as niv disjoint
 * intervals sorted by (family, lo) (matching), in the same allocation.
 */
struct kpx_cidrs {
	struct rcu_head rcu;
	struct kpx_cidr_iv *iv;
	u32 niv;
	u32 count;
	struct kpx_cidr c[] __counted_by(count);
};

extern const struct nla_policy kpx_cidrs_policy[KPX_CIDRS_A_MAX + 1];

int kpx_cidrs_parse(const struct nlattr *const *lists, u32 nlists,
		    int family, u32 max, struct kpx_cidrs **out,
		    struct netlink_ext_ack *extack);
struct kpx_cidrs *kpx_cidrs_dup(const struct kpx_cidrs *l);
void kpx_cidrs_free(struct kpx_cidrs *l);
int kpx_cidrs_put(struct sk_buff *skb, int type, const struct kpx_cidrs *l);
int kpx_cidrs_put_part(struct sk_buff *skb, int type,
		       const struct kpx_cidrs *l, u32 *pos, u32 room);
bool kpx_cidrs_match(const struct kpx_cidrs *l, u8 family,
		     const union kpx_addr *addr);
void kpx_cidrs_free_rcu(struct kpx_cidrs *l);
u8 kpx_svc_ranges(const struct kpx_svc *svc, const union kpx_addr *src);

#endif /* _KPX_RANGES_H */
