/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx masquerade (source NAT) of new connections kpx translated. */
#ifndef _KPX_MASQ_H
#define _KPX_MASQ_H

struct net;

int kpx_masq_register(struct net *net);
void kpx_masq_unregister(struct net *net);
int kpx_masq_init(void);
void kpx_masq_exit(void);

#endif /* _KPX_MASQ_H */
