/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx generic netlink family. */
#ifndef _KPX_NETLINK_H
#define _KPX_NETLINK_H

#include <net/genetlink.h>

struct kpx_svc;

extern struct genl_family kpx_family;

int kpx_nl_put_svc(struct sk_buff *skb, const struct kpx_svc *svc);
int kpx_genl_init(void);
void kpx_genl_exit(void);

#endif /* _KPX_NETLINK_H */
