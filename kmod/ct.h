/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx conntrack hygiene for connectionless frontends (UDP, SCTP). */
#ifndef _KPX_CT_H
#define _KPX_CT_H

#include "kpx.h"

void kpx_ct_after_set(struct net *net, const struct kpx_key *key,
		      const struct kpx_bset *old, const struct kpx_bset *set,
		      bool created);
void kpx_ct_after_del(struct net *net, struct kpx_key *keys, u32 n);
bool kpx_ct_wants_cleanup(const struct kpx_key *key);
void kpx_ct_net_exit(struct kpx_net *kn);
void kpx_ct_sync(struct kpx_net *kn);

#ifdef KPX_TEST_HOOKS
/* Test builds only (kmod/tests/Kbuild): see ct.c. */
int kpx_test_ct_lookup_cost(const struct kpx_key *keys, u32 n,
			    const struct kpx_key *probe, u32 np, u32 *max_cmps);
u32 kpx_test_ct_pending(struct kpx_net *kn);
#endif

#endif /* _KPX_CT_H */
