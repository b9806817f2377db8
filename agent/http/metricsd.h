/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kube-proxy's metrics server on --metrics-bind-address: GET /metrics
 * (Prometheus text format 0.0.4, see metrics.h), /healthz ("ok", as
 * kube-proxy's metrics mux), /proxyMode ("kpx"), /configz and /flagz
 * (config.h: kpx_config_configz(), kpx_config_flagz()), /statusz (kpx's:
 * the agent against the module, statusz.h; kpxctl status).  With a module, each
 * scrape dumps it on the server's own netlink socket for fresh counters,
 * in the server's thread: the module's dump runs under RCU, the agent's
 * state is copied under its lock and rendered outside it (metrics.h), so
 * a scrape delays neither /healthz nor a sync.
 */
#ifndef KPX_METRICSD_H
#define KPX_METRICSD_H

#include <stdbool.h>
#include <stddef.h>
#include "config/config.h"
#include "http/httpd.h"
#include "http/metrics.h"
#include "http/statusz.h"
#include "dp/kpx/nl.h"

struct kpx_metricsd {
	struct kpx_metrics *m;
	struct kpx_nl *nl;	/* kpx mode only; NULL otherwise and in dry run */
	bool dry_run;
	const char *mode;	/* the proxy mode in use, for /proxyMode; NULL = "kpx" */
	bool per_backend;	/* --metrics-per-backend: KPX_METRICS_PER_BACKEND */
	const struct kpx_config *config;	/* for /configz and /flagz; NULL: 404 */
	/*
	 * For /statusz (NULL: 404): the agent's report against @dp, the
	 * module's frontends sorted by key (@have_dp false outside kpx mode
	 * or in a dry run: nothing compared); main.c wires kpx_sync_status().
	 */
	int (*status)(void *ctx, const struct kpx_service *dp, size_t ndp, bool have_dp,
		      struct kpx_status *st);
	void *status_ctx;
};

/* The handler, exposed for tests; @ctx is a struct kpx_metricsd. */
int kpx_metricsd_handle(void *ctx, const char *path, struct kpx_http_reply *rep);

/*
 * Serves @md on @bind; unless @md->dry_run, opens md->nl (closed by
 * kpx_metricsd_stop()).  As kpx_httpd_start().
 */
struct kpx_httpd *kpx_metricsd_start(const char *bind, struct kpx_metricsd *md,
				     char *err, size_t errlen);
void kpx_metricsd_stop(struct kpx_httpd *d, struct kpx_metricsd *md);

#endif
