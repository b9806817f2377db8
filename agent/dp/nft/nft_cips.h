/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --proxy-mode nftables: the cluster-ips set (addresses of the
 * KPX_SVC_F_CLUSTER_IP frontends, see nft_rules.h) with a count of
 * frontends per address, so that an element is added when its first
 * frontend appears and deleted with its last one.  Changes are staged per
 * commit and applied only when the transaction succeeded.
 */
#ifndef KPX_NFT_CIPS_H
#define KPX_NFT_CIPS_H

#include <stddef.h>
#include "dp/nft/nft_rules.h"
#include "base/service.h"

struct kpx_nft_cip;

struct kpx_nft_cips {
	struct kpx_nft_cip *v;		/* committed: sorted, counts > 0 */
	size_t n;
	struct kpx_nft_cip *d;		/* staged count changes */
	size_t nd, capd;
};

/*
 * Stages the change of one frontend from @old to @new (either NULL): -1
 * for @old's address if it has KPX_SVC_F_CLUSTER_IP, +1 for @new's.
 * Returns 0 or -ENOMEM.
 */
int kpx_nft_cips_stage(struct kpx_nft_cips *c, const struct kpx_service *old,
		       const struct kpx_service *new);
/*
 * Writes the element additions and deletions the staged changes need into
 * @b (sorted by address).  Returns 0 or -ENOMEM.
 */
int kpx_nft_cips_gen(struct kpx_nft_cips *c, struct kpx_strbuf *b);
/* The transaction succeeded: the staged changes become committed. */
int kpx_nft_cips_apply(struct kpx_nft_cips *c);
/* Drops the staged changes (failed transaction). */
void kpx_nft_cips_unstage(struct kpx_nft_cips *c);
/* Forgets everything (the tables are recreated empty); frees memory. */
void kpx_nft_cips_clear(struct kpx_nft_cips *c);

#endif
