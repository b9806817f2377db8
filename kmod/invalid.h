/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx: packets of translated flows that conntrack calls INVALID. */
#ifndef _KPX_INVALID_H
#define _KPX_INVALID_H

struct net;
struct sk_buff;
struct nf_conntrack_zone;

void kpx_invalid_note_zone(const struct sk_buff *skb);
const struct nf_conntrack_zone *
kpx_invalid_zone_of(const struct sk_buff *skb, struct nf_conntrack_zone *tmp);
#ifdef KPX_TEST_HOOKS
struct nf_hook_state;
/* Test builds only (kmod/tests/Kbuild): the guard's hook function. */
unsigned int kpx_test_invalid_hook(struct sk_buff *skb,
				   const struct nf_hook_state *state);
#endif

int kpx_invalid_register(struct net *net);
void kpx_invalid_unregister(struct net *net);

#endif /* _KPX_INVALID_H */
