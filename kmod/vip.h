/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx ClusterIP address set (KPX_SVC_F_CLUSTER_IP). */
#ifndef _KPX_VIP_H
#define _KPX_VIP_H

#include "kpx.h"

int kpx_vip_table_init(struct kpx_net *kn);
void kpx_vip_table_destroy(struct kpx_net *kn);
int kpx_vip_get(struct kpx_net *kn, const struct kpx_key *key);
void kpx_vip_put(struct kpx_net *kn, const struct kpx_key *key);
bool kpx_vip_is_cluster_ip(struct kpx_net *kn, u8 family,
			   const union kpx_addr *addr);

#endif /* _KPX_VIP_H */
