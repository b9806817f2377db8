/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx per-network-namespace state. */
#ifndef _KPX_PERNET_H
#define _KPX_PERNET_H

#include "kpx.h"

struct kpx_svc_req;

int kpx_net_svc_set(struct kpx_net *kn, const struct kpx_svc_req *req);
int kpx_pernet_init(void);
void kpx_pernet_exit(void);

#endif /* _KPX_PERNET_H */
