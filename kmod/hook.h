/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx NAT hook. */
#ifndef _KPX_HOOK_H
#define _KPX_HOOK_H

struct net;

int kpx_hooks_register(struct net *net);
void kpx_hooks_unregister(struct net *net);

#endif /* _KPX_HOOK_H */
