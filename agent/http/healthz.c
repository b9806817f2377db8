// SPDX-License-Identifier: GPL-2.0-only
/*
 * /healthz and /livez with kube-proxy's semantics and body (see healthz.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/healthz.h"

int kpx_healthz_handle(void *ctx, const char *path, struct kpx_http_reply *rep)
{
	struct kpx_healthz *hz = ctx;
	char last[80], cur[80];
	struct timespec lu, now;
	bool healthy, eligible, node;
	int n;

	if (strcmp(path, "/healthz") && strcmp(path, "/livez")) {
		rep->status = 404;
		rep->content_type = "text/plain; charset=utf-8";
		rep->body = strdup("404 page not found\n");
		return rep->body ? 0 : -ENOMEM;
	}
	node = !strcmp(path, "/healthz");
	healthy = kpx_metrics_health(hz->m, node, hz->timeout_ms, &lu, &eligible);
	clock_gettime(CLOCK_REALTIME, &now);
	if (healthy)
		lu = now;	/* as kube-proxy: "recent" when healthy */
	kpx_metrics_gotime(hz->m, &lu, last, sizeof(last));
	kpx_metrics_gotime(hz->m, &now, cur, sizeof(cur));
	rep->status = healthy ? 200 : 503;
	rep->content_type = "application/json";
	if (node)
		n = asprintf(&rep->body, "{\"lastUpdated\": \"%s\",\"currentTime\": \"%s\", \"nodeEligible\": %s}",
			     last, cur, eligible ? "true" : "false");
	else
		n = asprintf(&rep->body, "{\"lastUpdated\": \"%s\",\"currentTime\": \"%s\"}",
			     last, cur);
	if (n < 0) {
		rep->body = NULL;
		return -ENOMEM;
	}
	rep->len = (size_t)n;
	return 0;
}

struct kpx_httpd *kpx_healthz_start(const char *bind, struct kpx_healthz *hz,
				    char *err, size_t errlen)
{
	return kpx_httpd_start(bind, kpx_healthz_handle, hz, err, errlen);
}
