/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one diff of every sync, full or partial, in every proxy mode: the
 * desired frontends against the programmed ones, as the list of changes
 * to send; and those changes applied to the record of the programmed
 * state.  Pure: unit-tested without a kernel.
 */
#ifndef KPX_RECONCILE_H
#define KPX_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include "base/service.h"

enum kpx_op_type {
	KPX_OP_SET, /* create or replace: service points at the desired one */
	KPX_OP_DEL, /* delete: service points into actual */
};

struct kpx_op {
	enum kpx_op_type type;
	const struct kpx_service *service;
};

/* Where the desired state is read: the desired frontend with @key's key
 * (only its key fields are read), or NULL when none is desired. */
typedef const struct kpx_service *kpx_desired_fn(const void *src,
						 const struct kpx_service *key);

/*
 * The change that makes one key's programmed frontend @have (NULL: none)
 * the desired @want (NULL: none) into *op: a SET of @want when @have is
 * missing or differs (kpx_service_same_config()), a DEL of @have when
 * nothing is desired.  Returns false when @have is already right.
 */
bool kpx_reconcile_one(const struct kpx_service *want,
		       const struct kpx_service *have, struct kpx_op *op);

/*
 * The changes at @keys (sorted by kpx_service_key_cmp(), unique; key
 * fields only are read): kpx_reconcile_one() of @want(@src, key) and the
 * frontend with that key in @actual (sorted), in key order.  A partial
 * sync passes the keys its changed Services had or have, a full sync
 * every key desired or programmed (kpx_reconcile_keys()).  *ops malloc'd
 * (free(); NULL on failure).  O(nkeys log nactual) and the @want calls.
 * Returns the number of ops, or -ENOMEM.
 */
long kpx_reconcile(kpx_desired_fn *want, const void *src,
		   const struct kpx_service *keys, size_t nkeys,
		   const struct kpx_service *actual, size_t nactual,
		   struct kpx_op **ops);

/*
 * The keys of a full sync: those of @a and of @b (each sorted by
 * kpx_service_key_cmp()), once each, sorted, key fields only
 * (kpx_service_key()).  *keys malloc'd (free(); NULL when *n is 0).
 * O(na + nb).  Returns 0 or -ENOMEM.
 */
int kpx_reconcile_keys(const struct kpx_service *a, size_t na,
		       const struct kpx_service *b, size_t nb,
		       struct kpx_service **keys, size_t *n);

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
