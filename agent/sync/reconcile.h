/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Difference between desired and actual frontends, as the list of changes
 * to send.  Pure: unit-tested without a kernel.
 */
#ifndef KPX_RECONCILE_H
#define KPX_RECONCILE_H

#include <stddef.h>
#include "base/service.h"

enum kpx_op_type {
	KPX_OP_SET,	/* create or replace: service points into desired */
	KPX_OP_DEL,	/* delete: service points into actual */
};

struct kpx_op {
	enum kpx_op_type type;
	const struct kpx_service *service;
};

/*
 * Both inputs sorted by kpx_service_key_cmp().  Writes into *ops (malloc'd,
 * free()) the SETs for frontends missing or differing in actual and the DELs
 * for frontends not desired, in key order; a frontend that is already right
 * yields nothing.  Returns the number of ops, or -ENOMEM.
 */
long kpx_reconcile(const struct kpx_service *desired, size_t ndesired,
		   const struct kpx_service *actual, size_t nactual,
		   struct kpx_op **ops);

/*
 * Deep copy of @src into @dst (own backends and source ranges; @dst's old
 * contents are not freed).  Returns 0 or -ENOMEM (@dst then zeroed).
 */
int kpx_frontend_copy(struct kpx_service *dst, const struct kpx_service *src);

/*
 * Applies @ops (sorted by key, one per key, as kpx_reconcile()
 * writes them) to *actual (sorted by kpx_service_key_cmp()): a SET's
 * frontend is copied in (replacing the one with its key, or inserted), a
 * DEL removes its key.  O(nops log nactual) when no key comes or goes,
 * else O(nactual + nops).  On -ENOMEM *actual is unchanged.
 */
int kpx_reconcile_apply(struct kpx_service **actual, size_t *nactual,
			const struct kpx_op *ops, size_t nops);

#endif
