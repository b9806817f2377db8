/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's status report (/statusz on the metrics server, kpxctl
 * status) as plain data: the last sync, the refused frontends and the
 * differences between what the agent wants and what the data plane holds.
 * sync/ fills it (kpx_sync_status()), http/ renders it as JSON.
 */
#ifndef KPX_STATUS_H
#define KPX_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/service.h"

/* One frontend in a list of the report: its key, its Service, why. */
struct kpx_status_fe {
	char key[KPX_SERVICE_STRLEN]; /* kpx_service_str(): "10.96.0.10:80/tcp" */
	char *name;		      /* "namespace/name[:port]", NULL: none */
	uint8_t kind;		      /* enum kpx_svc_kind */
	char *reason;		      /* malloc'd, NULL: none */
};

struct kpx_status_list {
	size_t n;     /* entries listed */
	size_t total; /* entries found (more than @n when capped) */
	struct kpx_status_fe *v;
};

/* At most this many entries per list: a report stays one screen's worth. */
#define KPX_STATUS_LIST_MAX 100

struct kpx_status {
	bool synced;	      /* a sync has run */
	int64_t last_sync_ms; /* CLOCK_REALTIME ms of its start */
	double last_duration_s;
	bool last_full;
	unsigned int last_errors, last_sets, last_dels;
	size_t desired;	   /* frontends the agent wants */
	bool compared;	   /* the data plane was read for the lists below */
	size_t programmed; /* frontends the data plane holds */
	struct kpx_status_list failed; /* the last sync's failed changes */
	struct kpx_status_list
		refused; /* refused now, with the data plane's reason */
	struct kpx_status_list missing;	   /* wanted, not in the data plane */
	struct kpx_status_list differ;	   /* wanted, held otherwise */
	struct kpx_status_list unexpected; /* held, not wanted */
};

/*
 * Appends an entry for frontend @s (its key, and @name, or @s's own name
 * when NULL) with @reason (copied; NULL: none) to @l; past
 * KPX_STATUS_LIST_MAX only counted.  0 or -ENOMEM.
 */
int kpx_status_add(struct kpx_status_list *l, const struct kpx_service *s,
		   const char *name, const char *reason);
void kpx_status_list_free(struct kpx_status_list *l);
/* Frees the lists, not @st itself. */
void kpx_status_free(struct kpx_status *st);

#endif
