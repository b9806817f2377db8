// SPDX-License-Identifier: GPL-2.0-only
/*
 * metrics.c, healthz.c, metricsd.c handlers: health rules (starting up,
 * pending update past the timeout, node eligibility), kube-proxy's /healthz
 * body, Prometheus rendering (histogram buckets, counters, per-frontend
 * and per-backend module counters), trigger-time parsing.  TAP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http/healthz.h"
#include "k8s/k8s.h"
#include "base/log.h"
#include "http/metrics.h"
#include "http/metricsd.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

static double wall(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void test_health(void)
{
	struct kpx_metrics *m = kpx_metrics_new();
	struct kpx_healthz hz = { .m = m, .timeout_ms = 50 };
	struct kpx_http_reply rep = { 0 };
	struct timespec lu;
	bool el;

	ok(kpx_metrics_health(m, true, 50, &lu, &el) && el && !lu.tv_sec,
	   "starting up: healthy, eligible, never updated");
	kpx_metrics_change(m, KPX_KIND_SERVICE, true, 0);
	usleep(80000);
	ok(kpx_metrics_health(m, true, 50, &lu, &el),
	   "pending before the first update: still healthy (starting up)");
	kpx_metrics_sync(m, 0.002, true, 3, 0);
	ok(kpx_metrics_health(m, true, 50, &lu, &el) && lu.tv_sec > 0, "after an update: healthy");
	kpx_metrics_change(m, KPX_KIND_ENDPOINTSLICE, true, 0);
	ok(kpx_metrics_health(m, true, 50, &lu, &el), "pending for < timeout: healthy");
	usleep(80000);
	ok(!kpx_metrics_health(m, true, 50, &lu, &el), "pending for > timeout: unhealthy");
	ok(!kpx_metrics_health(m, false, 50, &lu, &el), "livez: unhealthy too");
	ok(kpx_healthz_handle(&hz, "/healthz", &rep) == 0 && rep.status == 503 &&
	   !strcmp(rep.content_type, "application/json"), "GET /healthz: 503 application/json");
	ok(fx_matches("^\\{\"lastUpdated\": \"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}(\\.[0-9]+)? \\+0000 UTC m=\\+[0-9]+\\.[0-9]{9}\","
		   "\"currentTime\": \"[^\"]+\", \"nodeEligible\": true\\}$", rep.body),
	   "503 body shape: %s", rep.body);
	free(rep.body);
	kpx_metrics_sync(m, 0.001, false, 3, 2);
	ok(!kpx_metrics_health(m, true, 50, &lu, &el), "a sync with errors is not an update");
	kpx_metrics_sync(m, 0.001, false, 3, 0);
	ok(kpx_metrics_health(m, true, 50, &lu, &el), "a good sync clears it");
	memset(&rep, 0, sizeof(rep));
	ok(kpx_healthz_handle(&hz, "/livez", &rep) == 0 && rep.status == 200, "GET /livez: 200");
	ok(fx_matches("^\\{\"lastUpdated\": \"([^\"]+)\",\"currentTime\": \"\\1\"\\}$", rep.body),
	   "livez body: lastUpdated == currentTime when healthy: %s", rep.body);
	free(rep.body);
	kpx_metrics_node_eligible(m, false);
	ok(!kpx_metrics_health(m, true, 50, &lu, &el) && !el, "node tainted: /healthz unhealthy");
	ok(kpx_metrics_health(m, false, 50, &lu, &el), "node tainted: /livez healthy");
	memset(&rep, 0, sizeof(rep));
	kpx_healthz_handle(&hz, "/healthz", &rep);
	ok(rep.status == 503 && strstr(rep.body, "\"nodeEligible\": false}"),
	   "node tainted: 503 with nodeEligible false");
	free(rep.body);
	memset(&rep, 0, sizeof(rep));
	kpx_healthz_handle(&hz, "/other", &rep);
	ok(rep.status == 404, "other path: 404");
	free(rep.body);
	kpx_metrics_free(m);
}

static void test_gotime(void)
{
	struct kpx_metrics *m = kpx_metrics_new();
	struct timespec z = { 0 }, t = { .tv_sec = 1796020212, .tv_nsec = 120000000 };
	char buf[80];

	kpx_metrics_gotime(m, &z, buf, sizeof(buf));
	ok(!strcmp(buf, "0001-01-01 00:00:00 +0000 UTC"), "zero time as Go prints it");
	kpx_metrics_gotime(m, &t, buf, sizeof(buf));
	ok(fx_matches("^2026-11-30 06:30:12\\.12 \\+0000 UTC m=[-+][0-9]+\\.[0-9]{9}$", buf),
	   "fraction without trailing zeros: %s", buf);
	kpx_metrics_free(m);
}

static int count_lines(const char *text, const char *prefix)
{
	const char *p = text;
	int n = 0;

	while (p && *p) {
		if (!strncmp(p, prefix, strlen(prefix)))
			n++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

static void test_render(void)
{
	struct kpx_metrics *m = kpx_metrics_new();
	struct kpx_backend be[2] = { 0 };
	struct kpx_service svc = { 0 };
	struct kpx_nl_stats st = { .services = 1, .backends = 2, .conns = 60, .rejects = 1, .drops = 2,
				    .invalid_drops = 7 };
	char *text;
	size_t len;
	double now;

	svc.family = AF_INET;
	svc.protocol = IPPROTO_TCP;
	inet_pton(AF_INET, "10.96.0.10", &svc.addr);
	svc.port = 53;
	svc.conns = 60;
	svc.rejects = 1;
	svc.nbackends = 2;
	svc.backends = be;
	inet_pton(AF_INET, "10.244.0.3", &be[0].addr);
	be[0].port = 53;
	be[0].conns = 25;
	inet_pton(AF_INET, "10.244.0.4", &be[1].addr);
	be[1].port = 53;
	be[1].conns = 35;

	usleep(300000);
	now = wall();
	kpx_metrics_change(m, KPX_KIND_SERVICE, true, 0);
	kpx_metrics_change(m, KPX_KIND_SERVICE, true, 0);
	kpx_metrics_change(m, KPX_KIND_ENDPOINTSLICE, true, now - 0.2);	/* after start */
	kpx_metrics_change(m, KPX_KIND_ENDPOINTSLICE, true, 1000);	/* before start: skipped */
	kpx_metrics_change(m, KPX_KIND_NODE, false, 0);
	kpx_metrics_watch_restart(m, KPX_KIND_ENDPOINTSLICE);
	kpx_metrics_relist(m, KPX_KIND_SERVICE);
	text = kpx_metrics_render(m, NULL, 0, NULL, 0, &len);
	ok(text && strlen(text) == len, "render: %zu bytes", len);
	ok(strstr(text, "kubeproxy_sync_proxy_rules_service_changes_pending 2.000\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_endpoint_changes_pending 2.000\n"),
	   "pending changes before a sync");
	ok(strstr(text, "kubeproxy_sync_proxy_rules_last_timestamp_seconds 0.000\n") != NULL,
	   "never synced: last timestamp 0");
	free(text);

	kpx_metrics_sync(m, 0.003, true, 1, 0);
	kpx_metrics_sync(m, 0.0005, false, 1, 0);
	kpx_metrics_sync(m, 20, false, 1, 3);
	text = kpx_metrics_render(m, &svc, 1, &st, 0, &len);
	ok(text && strstr(text, "kpx_frontend_connections_total{protocol=\"tcp\",vip=\"10.96.0.10\",port=\"53\"} 60\n") &&
	   strstr(text, "kpx_frontend_backends{protocol=\"tcp\",vip=\"10.96.0.10\",port=\"53\"} 2\n") &&
	   !strstr(text, "kpx_backend_"),
	   "by default per-frontend series only, no kpx_backend_* (--metrics-per-backend off)");
	free(text);
	text = kpx_metrics_render(m, &svc, 1, &st, KPX_METRICS_PER_BACKEND, &len);
	ok(text != NULL, "render with a module dump, per backend");
	ok(strstr(text, "# TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram\n") &&
	   count_lines(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{") == 16,
	   "sync histogram: 15 buckets + +Inf");
	ok(strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{le=\"0.001\"} 1\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{le=\"0.004\"} 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{le=\"16.384\"} 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{le=\"+Inf\"} 3\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_count 3\n"),
	   "sync histogram: cumulative counts 0.5 ms, 3 ms, 20 s");
	ok(strstr(text, "kubeproxy_sync_full_proxy_rules_duration_seconds_count 1\n") &&
	   strstr(text, "kubeproxy_sync_partial_proxy_rules_duration_seconds_count 2\n"),
	   "full and partial histograms");
	ok(count_lines(text, "kubeproxy_network_programming_duration_seconds_bucket{") == 82 &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{le=\"0\"} 0\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{le=\"0.25\"} 1\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_count 1\n"),
	   "network programming: 81 buckets + +Inf, one 0.2 s observation, the pre-start trigger skipped");
	ok(strstr(text, "kubeproxy_sync_proxy_rules_service_changes_total 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_endpoint_changes_total 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_service_changes_pending 0.000\n"),
	   "changes: totals kept, pending cleared by the update");
	ok(fx_matches("^kubeproxy_sync_proxy_rules_last_timestamp_seconds [0-9]{10}\\.[0-9]{3}$", text) &&
	   fx_matches("^kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds [0-9]{10}\\.[0-9]{3}$", text),
	   "last and last-queued timestamps");
	ok(strstr(text, "kpx_netlink_errors_total 3\n") && strstr(text, "kpx_sync_errors_total 1\n") &&
	   strstr(text, "kpx_syncs_total 3\n"), "kpx sync counters");
	ok(strstr(text, "kpx_watch_restarts_total{resource=\"endpointslices\"} 1\n") &&
	   strstr(text, "kpx_watch_restarts_total{resource=\"services\"} 0\n") &&
	   strstr(text, "kpx_relists_total{resource=\"services\"} 1\n"), "watch restarts and relists by resource");
	ok(strstr(text, "kpx_frontend_connections_total{protocol=\"tcp\",vip=\"10.96.0.10\",port=\"53\"} 60\n") &&
	   strstr(text, "kpx_frontend_rejects_total{protocol=\"tcp\",vip=\"10.96.0.10\",port=\"53\"} 1\n"),
	   "per-frontend counters");
	ok(strstr(text, "kpx_backend_connections_total{protocol=\"tcp\",vip=\"10.96.0.10\",port=\"53\",backend_ip=\"10.244.0.3\",backend_port=\"53\"} 25\n") &&
	   strstr(text, "backend_ip=\"10.244.0.4\",backend_port=\"53\"} 35\n"), "per-backend counters");
	ok(strstr(text, "kpx_module_connections_total 60\n") && strstr(text, "kpx_module_drops_total 2\n"),
	   "module totals");
	ok(strstr(text, "# TYPE kpx_ct_state_invalid_dropped_packets_total counter\n") &&
	   strstr(text, "kpx_ct_state_invalid_dropped_packets_total 7\n"),
	   "INVALID packets of kpx flows dropped (KPX_STATS_A_INVALID_DROPS)");
	ok(!fx_matches("^[^#][^ ]* [^0-9+-]", text), "every sample line is NAME VALUE");
	free(text);

	/* The dry-run frontends stand in for a dump. */
	kpx_metrics_set_frontends(m, &svc, 1);
	text = kpx_metrics_render(m, NULL, 0, NULL, 0, &len);
	ok(strstr(text, "kpx_frontend_backends{protocol=\"tcp\",vip=\"10.96.0.10\",port=\"53\"} 2\n") != NULL,
	   "dry run: published frontends rendered");
	free(text);
	kpx_metrics_free(m);
}

static void test_metricsd(void)
{
	struct kpx_metrics *m = kpx_metrics_new();
	struct kpx_metricsd md = { .m = m, .dry_run = true };
	struct kpx_http_reply rep = { 0 };

	ok(!kpx_metricsd_handle(&md, "/metrics", &rep) && rep.status == 200 &&
	   !strncmp(rep.content_type, "text/plain; version=0.0.4", 25) &&
	   strstr(rep.body, "# HELP kubeproxy_sync_proxy_rules_duration_seconds"),
	   "GET /metrics: 200, Prometheus text 0.0.4");
	free(rep.body);
	memset(&rep, 0, sizeof(rep));
	ok(!kpx_metricsd_handle(&md, "/proxyMode", &rep) && !strcmp(rep.body, "kpx"), "GET /proxyMode: kpx");
	free(rep.body);
	memset(&rep, 0, sizeof(rep));
	ok(!kpx_metricsd_handle(&md, "/configz", &rep) && rep.status == 404,
	   "GET /configz without a configuration: 404");
	free(rep.body);
	{
		struct kpx_config c;

		kpx_config_defaults(&c);
		md.config = &c;
		memset(&rep, 0, sizeof(rep));
		ok(!kpx_metricsd_handle(&md, "/configz", &rep) && rep.status == 200 &&
		   !strcmp(rep.content_type, "application/json") &&
		   strstr(rep.body, "{\"kubeproxy.config.k8s.io\":{") &&
		   strstr(rep.body, "\"metricsBindAddress\":\"127.0.0.1:10249\""),
		   "GET /configz: 200, the configuration as JSON");
		free(rep.body);
		memset(&rep, 0, sizeof(rep));
		ok(!kpx_metricsd_handle(&md, "/flagz", &rep) && rep.status == 200 &&
		   strstr(rep.body, "\nmetrics-bind-address=127.0.0.1:10249\n"),
		   "GET /flagz: 200, name=value lines");
		free(rep.body);
		kpx_config_free(&c);
	}
	kpx_metrics_free(m);
}

static void test_time(void)
{
	double t;

	ok(!kpx_k8s_parse_time("2026-11-30T06:30:12Z", &t) && t == 1796020212,
	   "RFC 3339 Z");
	ok(!kpx_k8s_parse_time("2026-11-30T06:30:12.25Z", &t) && t == 1796020212.25,
	   "RFC 3339 with fraction");
	ok(!kpx_k8s_parse_time("2026-11-30T08:30:12+02:00", &t) && t == 1796020212,
	   "RFC 3339 with offset");
	ok(kpx_k8s_parse_time("2026-11-30 06:30:12", &t) == -EINVAL, "no T/zone rejected");
	ok(kpx_k8s_parse_time("2026-11-30T06:30:12Zjunk", &t) == -EINVAL, "trailing junk rejected");
}

int main(void)
{
	kpx_log_set_fd(open("/dev/null", O_WRONLY));
	printf("TAP version 13\n");
	test_health();
	test_gotime();
	test_render();
	test_metricsd();
	test_time();
	return tap_done();
}
