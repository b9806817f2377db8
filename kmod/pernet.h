/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx per-network-namespace state. */
#ifndef _KPX_PERNET_H
#define _KPX_PERNET_H

#include "kpx.h"

struct kpx_name_req;

int kpx_net_svc_set(struct kpx_net *kn, const struct kpx_key *key,
		    u32 flags, struct kpx_be_cfg *cfg, u32 n,
		    struct kpx_cidrs *ranges, const struct kpx_sched_cfg *scfg,
		    const struct kpx_key *cluster,
		    const struct kpx_name_req *nreq);
int kpx_pernet_init(void);
void kpx_pernet_exit(void);

#endif /* _KPX_PERNET_H */
