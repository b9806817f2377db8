/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx per-network-namespace state. */
#ifndef _KPX_PERNET_H
#define _KPX_PERNET_H

#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "kpx.h"

extern unsigned int kpx_net_id;

static inline struct kpx_net *kpx_net(const struct net *net)
{
	return net_generic(net, kpx_net_id);
}

int kpx_net_hooks_enable(struct kpx_net *kn);
int kpx_pernet_init(void);
void kpx_pernet_exit(void);

#endif /* _KPX_PERNET_H */
