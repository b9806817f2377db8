/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kube-proxy's health server on --healthz-bind-address: GET /healthz and
 * /livez answer 200 or 503 with kube-proxy's JSON body (its ProxyHealth,
 * pkg/proxy/healthcheck/proxy_health.go, as json.Marshal writes it):
 *   {"lastUpdated":"<RFC 3339>","currentTime":"<RFC 3339>",
 *    "nodeEligible":true,"healthy":true,
 *    "status":{"IPv4":{"lastUpdated":"<RFC 3339>","healthy":true},...}}
 * (/livez without nodeEligible; the top lastUpdated = currentTime when
 * healthy, each family's its last update; "healthy" is the proxy's health
 * without the Node; "status" lists the served families once updated, absent
 * before the first update), Content-Type application/json; the health rules
 * are in metrics.h.
 * Anything else is 404.
 */
#ifndef KPX_HEALTHZ_H
#define KPX_HEALTHZ_H

#include <stddef.h>
#include <stdint.h>
#include "http/httpd.h"
#include "http/metrics.h"

struct kpx_healthz {
	struct kpx_metrics *m;
	int64_t timeout_ms;	/* unhealthy when an update is pending longer */
};

/* The handler, exposed for tests; @ctx is a struct kpx_healthz. */
int kpx_healthz_handle(void *ctx, const char *path, struct kpx_http_reply *rep);

/* Serves @hz (which must outlive the server) on @bind.  As kpx_httpd_start(). */
struct kpx_httpd *kpx_healthz_start(const char *bind, struct kpx_healthz *hz,
				    char *err, size_t errlen);

#endif
