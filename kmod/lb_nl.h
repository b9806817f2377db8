/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx netlink attributes of scheduling and affinity (lb_nl.c). */
#ifndef _KPX_LB_NL_H
#define _KPX_LB_NL_H

#include <net/netlink.h>
#include "kpx.h"

int kpx_sched_cfg_parse(struct nlattr **tb, u32 n, struct kpx_sched_cfg *scfg,
			struct netlink_ext_ack *extack);
int kpx_sched_cfg_put(struct sk_buff *skb, const struct kpx_svc *svc);
u32 kpx_be_active(const struct kpx_backend *be);

#endif /* _KPX_LB_NL_H */
