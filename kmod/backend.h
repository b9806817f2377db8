/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx backend objects and immutable backend sets. */
#ifndef _KPX_BACKEND_H
#define _KPX_BACKEND_H

#include "kpx.h"

int kpx_be_cfg_sort(struct kpx_be_cfg *cfg, u32 n, u32 *dup_pos);
struct kpx_bset *kpx_bset_build(const struct kpx_bset *old,
				const struct kpx_be_cfg *cfg, u32 n);
struct kpx_backend *kpx_bset_find(const struct kpx_bset *set,
				  const u8 *addr16, __be16 port);
void kpx_bset_free(struct kpx_bset *set);
int kpx_free_wq_init(void);
void kpx_free_wq_exit(void);
void kpx_free_after_rcu(struct rcu_work *rwork, work_func_t fn);

#endif /* _KPX_BACKEND_H */
