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
#include <json-c/json.h>

#include "http/healthz.h"

int kpx_healthz_handle(void *ctx, const char *path, struct kpx_http_reply *rep)
{
	static const char *const fam[2] = { "IPv4", "IPv6" };
	struct kpx_healthz *hz = ctx;
	struct json_object *o, *st, *pf;
	char last[48], cur[48], flast[48];
	struct timespec lu, now;
	bool healthy, eligible, node, proxier;
	unsigned int families;
	int i;

	if (strcmp(path, "/healthz") && strcmp(path, "/livez")) {
		rep->status = 404;
		rep->content_type = "text/plain; charset=utf-8";
		rep->body = strdup("404 page not found\n");
		return rep->body ? 0 : -ENOMEM;
	}
	node = !strcmp(path, "/healthz");
	healthy = kpx_metrics_health(hz->m, node, hz->timeout_ms, &lu, &eligible,
				     &proxier, &families);
	clock_gettime(CLOCK_REALTIME, &now);
	/* each family's own last update (one sync updates them all) */
	kpx_metrics_rfc3339(&lu, flast, sizeof(flast));
	if (healthy)
		lu = now;	/* as kube-proxy: "recent" when healthy */
	kpx_metrics_rfc3339(&lu, last, sizeof(last));
	kpx_metrics_rfc3339(&now, cur, sizeof(cur));
	rep->status = healthy ? 200 : 503;
	rep->content_type = "application/json";
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "lastUpdated", json_object_new_string(last));
	json_object_object_add(o, "currentTime", json_object_new_string(cur));
	if (node)
		json_object_object_add(o, "nodeEligible", json_object_new_boolean(eligible));
	json_object_object_add(o, "healthy", json_object_new_boolean(proxier));
	/* no family has a status before its first update (omitempty) */
	st = strcmp(flast, "0001-01-01T00:00:00Z") ? json_object_new_object() : NULL;
	for (i = 0; st && i < 2; i++) {
		if (!(families & (1U << i)))
			continue;
		pf = json_object_new_object();
		json_object_object_add(pf, "lastUpdated", json_object_new_string(flast));
		json_object_object_add(pf, "healthy", json_object_new_boolean(proxier));
		json_object_object_add(st, fam[i], pf);
	}
	if (st)
		json_object_object_add(o, "status", st);
	rep->body = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	if (!rep->body)
		return -ENOMEM;
	rep->len = strlen(rep->body);
	return 0;
}

struct kpx_httpd *kpx_healthz_start(const char *bind, struct kpx_healthz *hz,
				    char *err, size_t errlen)
{
	return kpx_httpd_start(bind, kpx_healthz_handle, hz, err, errlen);
}
