/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx /proc/net/kpx files. */
#ifndef _KPX_PROC_H
#define _KPX_PROC_H

struct net;

int kpx_proc_init(struct net *net);
void kpx_proc_exit(struct net *net);

#endif /* _KPX_PROC_H */
