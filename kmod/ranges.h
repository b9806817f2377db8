/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx CIDR lists (source ranges, local prefixes). */
#ifndef _KPX_RANGES_H
#define _KPX_RANGES_H

#include <linux/types.h>
#include <linux/rcupdate.h>
#include <net/netlink.h>

#include "kpx.h"

/* One prefix; @addr has every bit past @plen zero, @mask is its netmask. */
struct kpx_cidr {
	u8 family;		/* AF_INET or AF_INET6 */
	u8 plen;		/* 0..32 or 0..128 */
	union kpx_addr addr;	/* network order */
	union kpx_addr mask;	/* network order */
};

/* An immutable CIDR list, replaced as a whole and freed after RCU. */
struct kpx_cidrs {
	struct rcu_head rcu;
	u32 count;
	struct kpx_cidr c[] __counted_by(count);
};

int kpx_cidrs_parse(const struct nlattr *list, int family,
		    struct kpx_cidrs **out, struct netlink_ext_ack *extack);
int kpx_cidrs_put(struct sk_buff *skb, int type, const struct kpx_cidrs *l);
bool kpx_cidrs_match(const struct kpx_cidrs *l, u8 family,
		     const union kpx_addr *addr);
void kpx_cidrs_free_rcu(struct kpx_cidrs *l);
bool kpx_svc_filtered(struct kpx_net *kn, struct kpx_svc *svc,
		      const void *src);

#endif /* _KPX_RANGES_H */
