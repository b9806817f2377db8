/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx masquerade (source NAT) of new connections kpx translated. */
#ifndef _KPX_MASQ_H
#define _KPX_MASQ_H

#include "kpx.h"

struct net;
struct net_device;

u8 kpx_masq_why(struct kpx_net *kn, const struct kpx_svc *svc,
		bool short_cut, bool node, const union kpx_addr *src,
		const union kpx_addr *be, const struct net_device *in);

int kpx_masq_register(struct net *net);
void kpx_masq_unregister(struct net *net);
int kpx_masq_init(void);
void kpx_masq_exit(void);

#endif /* _KPX_MASQ_H */
