/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx Maglev lookup table (pure). */
#ifndef _KPX_MAGLEV_H
#define _KPX_MAGLEV_H

#include "pure.h"

/* Fixed seeds: every node builds the same table for the same backends. */
#define KPX_MH_SEED_OFFSET	0x6b70782d6d682d31ULL
#define KPX_MH_SEED_SKIP	0x6b70782d6d682d32ULL
#define KPX_MH_SEED_CLIENT	0x6b70782d6d682d33ULL

/* Table slots are u16 backend indexes: at most this many backends. */
#define KPX_MH_BACKENDS_MAX	65535U
/* Table size target: more than this many slots per backend (the paper). */
#define KPX_MH_SLOTS_PER_BE	100U

u64 kpx_be_ident(const u8 *addr16, u16 port_be);
bool kpx_is_prime(u32 n);
u32 kpx_mh_size_for(u32 n, u32 max);
size_t kpx_mh_scratch_size(u32 n);
int kpx_mh_build(u16 *table, u32 size, const u64 *ident, const u32 *weight,
		 u32 n, void *scratch);
u32 kpx_mh_lookup(const u16 *table, u32 size, const u8 *client16);

#endif /* _KPX_MAGLEV_H */
