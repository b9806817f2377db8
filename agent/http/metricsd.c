// SPDX-License-Identifier: GPL-2.0-only
/*
 * The /metrics server (see metricsd.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "http/metricsd.h"

/* Appends kpx_proxy_mode{mode="..."} 1. */
static int mode_gauge(const struct kpx_metricsd *md, struct kpx_http_reply *rep)
{
	char *body;
	int len;

	len = asprintf(&body, "%s# HELP kpx_proxy_mode The proxy mode in use (--proxy-mode)\n"
		       "# TYPE kpx_proxy_mode gauge\nkpx_proxy_mode{mode=\"%s\"} 1\n",
		       rep->body, md->mode ? md->mode : "kpx");
	free(rep->body);
	rep->body = len < 0 ? NULL : body;
	rep->len = len < 0 ? 0 : (size_t)len;
	return rep->body ? 0 : -ENOMEM;
}

static int dump_module(struct kpx_metricsd *md, struct kpx_service **v, size_t *n)
{
	return md->per_backend ? kpx_nl_dump(md->nl, v, n) :
				 kpx_nl_dump_frontends(md->nl, v, n);
}

static int svc_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* /statusz: the module dumped on the server's socket, then the agent's report. */
static int statusz(struct kpx_metricsd *md, struct kpx_http_reply *rep)
{
	struct kpx_service *v = NULL;
	struct kpx_status st;
	size_t n = 0;
	bool have = false;
	int r;

	if (md->nl) {
		r = kpx_nl_dump(md->nl, &v, &n);
		if (r && r != -ENOMEM && !kpx_nl_reopen(&md->nl))
			r = kpx_nl_dump(md->nl, &v, &n);
		if (r)
			kpx_warn("metrics", "/statusz: dumping the module: %s", strerror(-r));
		have = !r;
		if (have)
			qsort(v, n, sizeof(*v), svc_cmp);
	}
	r = md->status(md->status_ctx, v, n, have, &st);
	kpx_services_free(v, n);
	if (r)
		return r;
	rep->content_type = "application/json";
	rep->body = kpx_statusz_json(&st, md->mode);
	kpx_status_free(&st);
	return rep->body ? 0 : -ENOMEM;
}

int kpx_metricsd_handle(void *ctx, const char *path, struct kpx_http_reply *rep)
{
	struct kpx_metricsd *md = ctx;
	struct kpx_service *v = NULL;
	struct kpx_nl_stats st, *stp = NULL;
	size_t n = 0;
	int r;

	rep->status = 200;
	rep->content_type = "text/plain; charset=utf-8";
	if (!strcmp(path, "/healthz")) {
		rep->body = strdup("ok");
		return rep->body ? 0 : -ENOMEM;
	}
	if (!strcmp(path, "/proxyMode")) {
		rep->body = strdup(md->mode ? md->mode : "kpx");
		return rep->body ? 0 : -ENOMEM;
	}
	if (md->config && !strcmp(path, "/configz")) {
		rep->content_type = "application/json";
		rep->body = kpx_config_configz(md->config);
		return rep->body ? 0 : -ENOMEM;
	}
	if (md->config && !strcmp(path, "/flagz")) {
		rep->body = kpx_config_flagz(md->config);
		return rep->body ? 0 : -ENOMEM;
	}
	if (md->status && !strcmp(path, "/statusz"))
		return statusz(md, rep);
	if (strcmp(path, "/metrics")) {
		rep->status = 404;
		rep->body = strdup("404 page not found\n");
		return rep->body ? 0 : -ENOMEM;
	}
	if (md->nl) {
		r = dump_module(md, &v, &n);
		if (r && r != -ENOMEM && !kpx_nl_reopen(&md->nl))
			r = dump_module(md, &v, &n);
		if (r) {
			kpx_warn("metrics", "dumping the module: %s", strerror(-r));
			v = NULL;
			n = 0;
		}
		if (md->nl && !kpx_nl_stats(md->nl, &st))
			stp = &st;
	}
	rep->content_type = "text/plain; version=0.0.4; charset=utf-8";
	rep->body = kpx_metrics_render(md->m, v, n, stp,
				       md->per_backend ? KPX_METRICS_PER_BACKEND : 0,
				       &rep->len);
	kpx_services_free(v, n);
	return rep->body ? mode_gauge(md, rep) : -ENOMEM;
}

struct kpx_httpd *kpx_metricsd_start(const char *bind, struct kpx_metricsd *md,
				     char *err, size_t errlen)
{
	struct kpx_httpd *d;
	int r;

	if (!md->dry_run && !md->nl && (!md->mode || !strcmp(md->mode, "kpx"))) {
		r = kpx_nl_open(&md->nl);
		if (r) {
			snprintf(err, errlen, "netlink: %s", strerror(-r));
			errno = -r;
			return NULL;
		}
	}
	d = kpx_httpd_start(bind, kpx_metricsd_handle, md, err, errlen);
	if (!d && md->nl) {
		kpx_nl_close(md->nl);
		md->nl = NULL;
	}
	return d;
}

void kpx_metricsd_stop(struct kpx_httpd *d, struct kpx_metricsd *md)
{
	kpx_httpd_stop(d);
	if (md->nl)
		kpx_nl_close(md->nl);
	md->nl = NULL;
}
