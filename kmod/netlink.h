/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx generic netlink family. */
#ifndef _KPX_NETLINK_H
#define _KPX_NETLINK_H

#include <net/genetlink.h>

extern struct genl_family kpx_family;

int kpx_genl_init(void);
void kpx_genl_exit(void);

#endif /* _KPX_NETLINK_H */
