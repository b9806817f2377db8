/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The desired frontends kept per Service between syncs, so that a
 * partial sync costs O(changed Services x their endpoints), not O(all).
 *
 * The cache holds each Service's frontends (kpx_model_service_frontends())
 * and, per frontend key, the Services claiming it.  The winner of a key
 * is the claimant first by "namespace/name", as in kpx_model_desired(); when
 * it goes, the next claimant takes the key.  kpx_fecache_sync() recomputes
 * the Services the model marked dirty (kpx_model_take_dirty()), or all of
 * them, and tells which keys may have changed; the sync's one diff
 * (kpx_reconcile(), reconcile.h) reads the desired frontend of each key
 * from kpx_fecache_get().
 *
 * Per Service it also keeps what is published after each sync: the
 * no-local-endpoints counts (model_nolocal.h) and the health-check server
 * (kpx_model_healthchecks()), so that those too cost O(changes) per sync,
 * not a walk over every Service.  Pure: no I/O.
 */
#ifndef KPX_FECACHE_H
#define KPX_FECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include "model/model.h"
#include "model/model_nolocal.h"
#include "base/service.h"

struct kpx_fecache;

/* An empty cache (invalid: the first kpx_fecache_sync() rebuilds it), or
 * NULL on allocation failure. */
struct kpx_fecache *kpx_fecache_new(void);
void kpx_fecache_free(struct kpx_fecache *c);

/*
 * Brings @c up to date with @m.  With @full, when the model marked
 * everything dirty, or when @c is not valid (new, or after an error), every
 * Service is recomputed: returns 1, *keys NULL.  Else only the Services
 * marked dirty are, and *keys (malloc'd, free(); NULL when *nkeys is 0)
 * gets the keys of their frontends before and after, sorted by
 * kpx_service_key_cmp() and unique (key fields only, no backends): the
 * only frontends whose desired value may differ; returns 0.  Consumes the
 * model's marks either way.  Returns -ENOMEM on failure: @c is then invalid
 * (the next call rebuilds it).
 */
int kpx_fecache_sync(struct kpx_fecache *c, struct kpx_model *m, bool full,
		     struct kpx_service **keys, size_t *nkeys);

/* The desired frontend with @key's key (the winning Service's), or NULL.
 * Valid until the next kpx_fecache_sync(). */
const struct kpx_service *kpx_fecache_get(const struct kpx_fecache *c,
					  const struct kpx_service *key);

/*
 * The "namespace/name" of the Service whose frontend wins @key's key (the
 * one kpx_fecache_get() returns), or NULL when no Service claims it.
 * Valid until the next kpx_fecache_sync().
 */
const char *kpx_fecache_owner(const struct kpx_fecache *c,
			      const struct kpx_service *key);

/* The number of desired frontends (distinct keys). */
size_t kpx_fecache_count(const struct kpx_fecache *c);

/*
 * kpx_model_no_local_endpoints() of the model as of the last
 * kpx_fecache_sync(), summed per Service as it was recomputed.  O(1).
 */
void kpx_fecache_no_local(const struct kpx_fecache *c,
			  struct kpx_no_local *out);

/*
 * kpx_model_healthchecks() of the model as of the last kpx_fecache_sync():
 * the same sorted, malloc'd vector (NULL when *n is 0).  O(h log h) in the
 * h Services that want a server.  Returns 0 or -ENOMEM.
 */
int kpx_fecache_healthchecks(const struct kpx_fecache *c,
			     struct kpx_hc_service **out, size_t *n);

/*
 * The key of every desired frontend (key fields only), sorted by
 * kpx_service_key_cmp(), for a full sync's diff: *out malloc'd (free();
 * NULL when *n is 0).  O(k log k).  Returns 0 or -ENOMEM.
 */
int kpx_fecache_keys(const struct kpx_fecache *c, struct kpx_service **out,
		     size_t *n);

#endif
