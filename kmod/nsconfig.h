/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx namespace settings (KPX_CMD_SET_CONFIG / KPX_CMD_GET_CONFIG). */
#ifndef _KPX_NSCONFIG_H
#define _KPX_NSCONFIG_H

#include <linux/if.h>
#include <linux/netdevice.h>
#include <linux/kpx.h>

#include "kpx.h"
#include "ranges.h"

/*
 * The namespace's settings: one immutable object, replaced as a whole with
 * rcu_assign_pointer() under kpx_net.lock and freed after a grace period.
 */
struct kpx_nscfg {
	struct rcu_head rcu;
	struct kpx_cidrs *local;	/* KPX_CFG_A_LOCAL_CIDRS, or NULL */
	char ifname[IFNAMSIZ];		/* KPX_CFG_A_LOCAL_IFNAME, "" = none */
	char ifprefix[IFNAMSIZ];	/* KPX_CFG_A_LOCAL_IFPREFIX, "" = none */
	size_t ifprefix_len;
};

/* A kpx_nscfg_src_why() answer that means "local". */
static inline bool kpx_nscfg_src_is_local(u8 why)
{
	return why == KPX_EXP_SRC_CIDR || why == KPX_EXP_SRC_IFNAME ||
	       why == KPX_EXP_SRC_IFPREFIX;
}

/* What a SET_CONFIG gives: each setting absent (kept) or given. */
struct kpx_nscfg_req {
	struct kpx_cidrs *local;	/* with @has_local: NULL clears */
	bool has_local, has_ifname, has_ifprefix;
	char ifname[IFNAMSIZ];
	char ifprefix[IFNAMSIZ];
};

int kpx_nscfg_set(struct kpx_net *kn, const struct kpx_nscfg_req *req);
bool kpx_nscfg_src_local(const struct kpx_nscfg *cfg, u8 family,
			 const union kpx_addr *src,
			 const struct net_device *in);
u8 kpx_nscfg_src_why(const struct kpx_nscfg *cfg, u8 family,
		     const union kpx_addr *src, const struct net_device *in);
void kpx_nscfg_destroy(struct kpx_net *kn);

#endif /* _KPX_NSCONFIG_H */
