/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx: packets of translated flows that conntrack calls INVALID. */
#ifndef _KPX_INVALID_H
#define _KPX_INVALID_H

struct net;

int kpx_invalid_register(struct net *net);
void kpx_invalid_unregister(struct net *net);

#endif /* _KPX_INVALID_H */
