/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared only by the syncer's files: sync.c (when and how to sync) and
 * refused.c (the frontends the data plane refused).
 */
#ifndef KPX_SYNC_PRIV_H
#define KPX_SYNC_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#include "base/service.h"
#include "base/status.h"
#include "dp/dataplane.h"
#include "sync/fecache.h"
#include "sync/reconcile.h"
#include "sync/sync.h"

struct kpx_sync {
	struct kpx_model *model;
	struct kpx_dp *dp;		/* NULL: dry run */
	int64_t min_period, period;	/* ms */
	bool synced;			/* a sync has run */
	bool need_full;			/* the last sync had errors */
	bool replaced;			/* kpx_sync_dp_replaced(): sync now */
	int64_t last, last_full;	/* monotonic ms */
	struct kpx_service *actual;	/* last known module state, sorted */
	size_t nactual;
	struct kpx_metrics *metrics;	/* or NULL */
	struct kpx_hc *hc;		/* or NULL */
	int64_t health_timeout;		/* ms */
	bool ns_sent;			/* ns_last is in the module */
	struct kpx_ns_config ns_last;
	struct kpx_ctclean *ct;		/* conntrack cleanup, opened on first use */
	bool ct_known;			/* actual is a real previous state */
	struct kpx_fecache *fc;		/* desired frontends per Service */
	bool gen_ok;			/* actual is the data plane at gen */
	uint32_t gen;			/* dp->ops->generation() */
	struct refused *refused;	/* sorted by key (sync.h) */
	size_t nrefused, caprefused;
	uint64_t refusals;		/* SETs refused, since the start */
	/* for kpx_sync_status(): the last sync, under @lock */
	pthread_mutex_t lock;		/* held by kpx_sync_run() throughout */
	int64_t last_wall_ms;		/* CLOCK_REALTIME of its start */
	double last_dur;		/* seconds */
	bool last_was_full;
	unsigned int last_errors, last_sets, last_dels;
	struct kpx_status_list failed;	/* its failed changes */
};

/*
 * A frontend the data plane refused (sync.h): the desired value it refused
 * (a deep copy), which Service it is, when it was last tried and why not.
 */
struct refused {
	struct kpx_service fe;
	char *name;			/* "namespace/name" */
	int64_t at;			/* monotonic ms of the last attempt */
	int err;
	char *msg;			/* the data plane's reason, or NULL */
};

/* sync.c */
void sync_refused_clear(struct refused *r);

/* refused.c */
bool sync_refused_hold(const struct kpx_sync *s, const struct kpx_op *op, int64_t now);
void sync_refused_add(struct kpx_sync *s, const struct kpx_op *op, int err, int64_t now);
size_t sync_refused_unexpected(struct kpx_sync *s);
void sync_refused_done(struct kpx_sync *s, const struct kpx_op *op);
long sync_refused_retry(struct kpx_sync *s, struct kpx_op **ops, long nops, int64_t now);

#endif
