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
#include "base/buildinfo.h"
#include "http/metricsd.h"
#include "http/metrics_svc.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

static double wall(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static bool health(struct kpx_metrics *m, bool node, struct timespec *lu,
		   bool *el)
{
	unsigned int fams;
	bool ph;

	return kpx_metrics_health(m, node, 50, lu, el, &ph, &fams);
}

static void test_health(void)
{
	struct kpx_metrics *m = kpx_metrics_new();
	struct kpx_healthz hz = { .m = m, .timeout_ms = 50 };
	struct kpx_http_reply rep = { 0 };
	struct timespec lu;
	unsigned int fams;
	bool el, ph;

	kpx_metrics_set_families(m, KPX_METRICS_IPV4 | KPX_METRICS_IPV6);
	ok(!health(m, true, &lu, &el) && !el && !lu.tv_sec,
	   "Node not known yet: /healthz not eligible, unhealthy");
	ok(health(m, false, &lu, &el), "Node not known yet: /livez healthy (starting up)");
	kpx_healthz_handle(&hz, "/healthz", &rep);
	ok(rep.status == 503 &&
	   fx_matches("^\\{\"lastUpdated\":\"0001-01-01T00:00:00Z\",\"currentTime\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}(\\.[0-9]+)?Z\","
		      "\"nodeEligible\":false,\"healthy\":true\\}$", rep.body),
	   "unknown Node: 503, zero lastUpdated, no status before the first update: %s", rep.body);
	free(rep.body);
	kpx_metrics_node_eligible(m, true);
	ok(health(m, true, &lu, &el) && el && !lu.tv_sec,
	   "Node known, starting up: healthy, eligible, never updated");
	kpx_metrics_change(m, KPX_KIND_SERVICE, true, 0);
	usleep(80000);
	ok(health(m, true, &lu, &el),
	   "pending before the first update: still healthy (starting up)");
	kpx_metrics_sync(m, 0.002, true, 3, 0);
	ok(health(m, true, &lu, &el) && lu.tv_sec > 0, "after an update: healthy");
	kpx_metrics_change(m, KPX_KIND_ENDPOINTSLICE, true, 0);
	ok(health(m, true, &lu, &el), "pending for < timeout: healthy");
	usleep(80000);
	ok(!health(m, true, &lu, &el), "pending for > timeout: unhealthy");
	ok(!kpx_metrics_health(m, false, 50, &lu, &el, &ph, &fams) && !ph &&
	   fams == (KPX_METRICS_IPV4 | KPX_METRICS_IPV6), "livez: unhealthy too, both families");
	memset(&rep, 0, sizeof(rep));
	ok(kpx_healthz_handle(&hz, "/healthz", &rep) == 0 && rep.status == 503 &&
	   !strcmp(rep.content_type, "application/json"), "GET /healthz: 503 application/json");
	ok(fx_matches("^\\{\"lastUpdated\":\"([0-9T:.-]+Z)\",\"currentTime\":\"[^\"]+\",\"nodeEligible\":true,\"healthy\":false,"
		      "\"status\":\\{\"IPv4\":\\{\"lastUpdated\":\"\\1\",\"healthy\":false\\},"
		      "\"IPv6\":\\{\"lastUpdated\":\"\\1\",\"healthy\":false\\}\\}\\}$", rep.body),
	   "503 body: the last update, per-family status unhealthy: %s", rep.body);
	free(rep.body);
	kpx_metrics_sync(m, 0.001, false, 3, 2);
	ok(!health(m, true, &lu, &el), "a sync with errors is not an update");
	kpx_metrics_sync(m, 0.001, false, 3, 0);
	ok(health(m, true, &lu, &el), "a good sync clears it");
	memset(&rep, 0, sizeof(rep));
	kpx_metrics_set_families(m, KPX_METRICS_IPV4);
	ok(kpx_healthz_handle(&hz, "/livez", &rep) == 0 && rep.status == 200, "GET /livez: 200");
	ok(fx_matches("^\\{\"lastUpdated\":\"([^\"]+)\",\"currentTime\":\"\\1\",\"healthy\":true,"
		      "\"status\":\\{\"IPv4\":\\{\"lastUpdated\":\"[^\"]+Z\",\"healthy\":true\\}\\}\\}$", rep.body),
	   "livez body: lastUpdated == currentTime when healthy, no nodeEligible, IPv4 only: %s", rep.body);
	free(rep.body);
	kpx_metrics_node_eligible(m, false);
	ok(!health(m, true, &lu, &el) && !el, "node tainted: /healthz unhealthy");
	ok(health(m, false, &lu, &el), "node tainted: /livez healthy");
	memset(&rep, 0, sizeof(rep));
	kpx_healthz_handle(&hz, "/healthz", &rep);
	ok(rep.status == 503 && strstr(rep.body, "\"nodeEligible\":false,\"healthy\":true,"),
	   "node tainted: 503 with nodeEligible false, the proxy itself healthy");
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
	kpx_metrics_rfc3339(&z, buf, sizeof(buf));
	ok(!strcmp(buf, "0001-01-01T00:00:00Z"), "zero time as Go's MarshalJSON writes it");
	kpx_metrics_rfc3339(&t, buf, sizeof(buf));
	ok(!strcmp(buf, "2026-11-30T06:30:12.12Z"), "RFC 3339, fraction without trailing zeros: %s", buf);
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

	kpx_metrics_set_families(m, KPX_METRICS_IPV4);
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
	ok(strstr(text, "kubeproxy_sync_proxy_rules_service_changes_pending 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_endpoint_changes_pending 2\n"),
	   "pending changes before a sync");
	ok(strstr(text, "kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"} 0\n") &&
	   !strstr(text, "IPv6"),
	   "never synced: last timestamp 0; IPv4 only: no IPv6 series");
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
	ok(strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.001\"} 1\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.004\"} 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"16.384\"} 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family=\"IPv4\",le=\"+Inf\"} 3\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"} 3\n"),
	   "sync histogram: cumulative counts 0.5 ms, 3 ms, 20 s");
	ok(strstr(text, "kubeproxy_sync_full_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"} 1\n") &&
	   strstr(text, "kubeproxy_sync_partial_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"} 2\n"),
	   "full and partial histograms");
	ok(count_lines(text, "kubeproxy_network_programming_duration_seconds_bucket{") == 82 &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0\"} 0\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.25\"} 1\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv4\"} 1\n"),
	   "network programming: 81 buckets + +Inf, one 0.2 s observation, the pre-start trigger skipped");
	ok(strstr(text, "kubeproxy_sync_proxy_rules_service_changes_total 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_endpoint_changes_total 2\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_service_changes_pending 0\n"),
	   "changes: totals kept, pending cleared by the update");
	ok(fx_matches("^kubeproxy_sync_proxy_rules_last_timestamp_seconds\\{ip_family=\"IPv4\"\\} [0-9]{10}(\\.[0-9]+)?$", text) &&
	   fx_matches("^kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds\\{ip_family=\"IPv4\"\\} [0-9]{10}(\\.[0-9]+)?$", text),
	   "last and last-queued timestamps");
	ok(fx_matches("^process_start_time_seconds [0-9]{10}(\\.[0-9]+)?$", text) &&
	   fx_matches("^process_resident_memory_bytes [1-9][0-9]*$", text) &&
	   fx_matches("^process_open_fds [1-9][0-9]*$", text) &&
	   strstr(text, "# TYPE process_cpu_seconds_total counter\n"),
	   "process_* of this process");
	{
		char want[512], head_sha[64] = "", ver[32] = "";
		FILE *g = popen("git -C .. rev-parse HEAD 2>/dev/null", "r");
		FILE *d = fopen("../dkms.conf", "r");
		char line[128];

		if (g && !fgets(head_sha, sizeof(head_sha), g))
			head_sha[0] = '\0';
		if (g)
			pclose(g);
		head_sha[strcspn(head_sha, "\n")] = '\0';
		while (d && fgets(line, sizeof(line), d))
			sscanf(line, "PACKAGE_VERSION=\"%31[^\"]\"", ver);
		if (d)
			fclose(d);
		snprintf(want, sizeof(want), "kubernetes_build_info{build_date=\"%s\",compiler=\"gcc\",git_commit=\"%s\",git_tree_state=\"%s\",git_version=\"v%s\",go_version=\"\",major=\"0\",minor=\"1\",platform=\"linux/amd64\"} 1\n",
			 kpx_build_date, kpx_build_git_commit, kpx_build_git_tree_state, ver);
		ok(strstr(text, want) != NULL, "kubernetes_build_info: kpx's version (dkms.conf: %s), the build's commit, state, date", ver);
		ok(fx_matches("^kubernetes_build_info\\{build_date=\"20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-9:]{8}Z\",", text),
		   "build_date RFC 3339 UTC (%s)", kpx_build_date);
		ok(!head_sha[0] || (!strcmp(kpx_build_git_commit, head_sha) &&
				    (!strcmp(kpx_build_git_tree_state, "clean") ||
				     !strcmp(kpx_build_git_tree_state, "dirty"))),
		   "git_commit is the checkout's HEAD (%s = %s), tree state %s", kpx_build_git_commit,
		   head_sha[0] ? head_sha : "no checkout", kpx_build_git_tree_state);
	}
	ok(!strstr(text, "kubeproxy_conntrack_reconciler") && !strstr(text, "restore_failures") &&
	   !strstr(text, "nftables_sync_failures"),
	   "kpx mode, a module without its conntrack counts: no conntrack reconciler series, no fallback failure counters");
	free(text);
	st.ct_deleted[0] = 4;
	st.ct_deleted[1] = 9;
	st.ct_deleted_known = true;
	text = kpx_metrics_render(m, &svc, 1, &st, KPX_METRICS_PER_BACKEND, &len);
	ok(strstr(text, "# TYPE kubeproxy_conntrack_reconciler_deleted_entries_total counter\n") &&
	   strstr(text, "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"} 4\n") &&
	   !strstr(text, "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv6\"}") &&
	   !strstr(text, "kubeproxy_conntrack_reconciler_sync_duration_seconds"),
	   "kpx mode: the module's IPv4 deletions in deleted_entries_total (IPv4 served only), no sync duration");
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

	/* slices: only a changed trigger time queues a sample; per family */
	kpx_metrics_set_families(m, KPX_METRICS_IPV4 | KPX_METRICS_IPV6);
	now = wall();
	kpx_metrics_change_slice(m, "ns/a", false, AF_INET6, true, now - 0.1);
	kpx_metrics_change_slice(m, "ns/a", false, AF_INET6, true, now - 0.1);	/* resent */
	kpx_metrics_change_slice(m, "ns/b", false, AF_INET, true, now - 0.28);
	kpx_metrics_sync(m, 0.001, false, 1, 0);
	kpx_metrics_change_slice(m, "ns/a", false, AF_INET6, true, now - 0.1);	/* relisted */
	kpx_metrics_change_slice(m, "ns/b", false, AF_INET, true, now - 0.28);
	kpx_metrics_sync(m, 0.001, false, 1, 0);
	kpx_metrics_change_slice(m, "ns/a", true, AF_INET6, true, now - 0.1);	/* deleted */
	kpx_metrics_change_slice(m, "ns/a", false, AF_INET6, true, now - 0.1);	/* recreated */
	kpx_metrics_sync(m, 0.001, false, 1, 0);
	kpx_metrics_set_mode(m, "nftables");
	kpx_metrics_dp_failure(m);
	kpx_metrics_conntrack(m, AF_INET6, 0.002, 3);
	kpx_metrics_rest_request(m, 200, "GET", "10.0.0.1:6443", 0.03);
	kpx_metrics_rest_request(m, 200, "GET", "10.0.0.1:6443", -1);
	kpx_metrics_rest_request(m, 0, "GET", "10.0.0.1:6443", 2);
	kpx_metrics_rest_ratelimit(m, "GET", "10.0.0.1:6443", 0.3);
	text = kpx_metrics_render(m, NULL, 0, NULL, 0, &len);
	ok(strstr(text, "kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv6\"} 2\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{ip_family=\"IPv6\",le=\"0.25\"} 2\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv4\"} 2\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.25\"} 1\n") &&
	   strstr(text, "kubeproxy_network_programming_duration_seconds_bucket{ip_family=\"IPv4\",le=\"0.5\"} 2\n"),
	   "network programming per slice family; a resent or relisted unchanged slice adds nothing, a recreated one does");
	ok(strstr(text, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv4\"} 1\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total{ip_family=\"IPv6\"} 1\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total{ip_family=\"IPv4\"} 0\n") &&
	   !strstr(text, "iptables_restore_failures"),
	   "nftables mode: its sync failure counter per family");
	ok(strstr(text, "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv6\"} 3\n") &&
	   strstr(text, "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"} 0\n") &&
	   strstr(text, "kubeproxy_conntrack_reconciler_sync_duration_seconds_bucket{ip_family=\"IPv6\",le=\"0.002\"} 1\n") &&
	   strstr(text, "kubeproxy_conntrack_reconciler_sync_duration_seconds_count{ip_family=\"IPv4\"} 0\n"),
	   "conntrack reconciler: duration and deletions per family");
	ok(strstr(text, "rest_client_requests_total{code=\"200\",host=\"10.0.0.1:6443\",method=\"GET\"} 2\n") &&
	   strstr(text, "rest_client_requests_total{code=\"<error>\",host=\"10.0.0.1:6443\",method=\"GET\"} 1\n") &&
	   strstr(text, "rest_client_request_duration_seconds_bucket{host=\"10.0.0.1:6443\",verb=\"GET\",le=\"0.005\"} 0\n") &&
	   strstr(text, "rest_client_request_duration_seconds_bucket{host=\"10.0.0.1:6443\",verb=\"GET\",le=\"0.1\"} 1\n") &&
	   strstr(text, "rest_client_request_duration_seconds_count{host=\"10.0.0.1:6443\",verb=\"GET\"} 2\n") &&
	   strstr(text, "rest_client_rate_limiter_duration_seconds_bucket{host=\"10.0.0.1:6443\",verb=\"GET\",le=\"0.25\"} 0\n") &&
	   strstr(text, "rest_client_rate_limiter_duration_seconds_count{host=\"10.0.0.1:6443\",verb=\"GET\"} 1\n"),
	   "rest_client_*: codes (no response: <error>), list latencies only, rate limiter waits");
	free(text);
	kpx_metrics_set_mode(m, "iptables");
	text = kpx_metrics_render(m, NULL, 0, NULL, 0, &len);
	ok(strstr(text, "kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family=\"IPv6\"} 1\n") &&
	   strstr(text, "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total{ip_family=\"IPv4\"} 0\n") &&
	   !strstr(text, "nftables_sync_failures"),
	   "iptables mode: its restore failure counters");
	free(text);
	kpx_metrics_set_mode(m, "kpx");

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

/* Per-Service sums over the frontends of one Service port, by name. */
static void test_services(void)
{
	struct kpx_service v[6] = {
		{ .name = (char *)"default/web:http", .conns = 10, .rejects = 3 },
		{ .name = (char *)"default/web:http", .conns = 5, .rejects = 4, .drops = 4 },
		{ .name = (char *)"kube-system/dns", .conns = 2 },
		{ .name = (char *)"default/web:http", .conns = 1, .filtered = 7 },
		{ .conns = 100, .rejects = 100 },
		{ .name = (char *)"", .conns = 100 },
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ok(f && !kpx_metrics_services(f, v, 6) && !fclose(f), "per-Service series rendered");
	ok(text && strstr(text, "# TYPE kpx_service_connections_total counter\n") &&
	   strstr(text, "kpx_service_connections_total{namespace=\"default\",service=\"web\",port=\"http\"} 16\n") &&
	   strstr(text, "kpx_service_connections_total{namespace=\"kube-system\",service=\"dns\",port=\"\"} 2\n"),
	   "connections summed over the three frontends of default/web:http; an unnamed port's label is empty");
	ok(text && strstr(text, "kpx_service_rejects_total{namespace=\"default\",service=\"web\",port=\"http\"} 3\n") &&
	   strstr(text, "kpx_service_drops_total{namespace=\"default\",service=\"web\",port=\"http\",reason=\"no_endpoints\"} 4\n") &&
	   strstr(text, "kpx_service_drops_total{namespace=\"default\",service=\"web\",port=\"http\",reason=\"source_range\"} 7\n"),
	   "rejects are the refused ones (7 rejects, 4 of them dropped); drops by reason");
	ok(text && count_lines(text, "kpx_service_connections_total{") == 2 && !strstr(text, "} 100\n"),
	   "one series per named Service port; unnamed frontends left out");
	free(text);

	/* the module admits '"' and '\\' in a name: escaped in the labels */
	struct kpx_service q = { .name = (char *)"a\"b/c\\d:e", .conns = 3 };

	text = NULL;
	f = open_memstream(&text, &len);
	ok(f && !kpx_metrics_services(f, &q, 1) && !fclose(f) &&
	   strstr(text, "kpx_service_connections_total{namespace=\"a\\\"b\",service=\"c\\\\d\",port=\"e\"} 3\n"),
	   "a quote and a backslash in a name are escaped as the text format wants");
	free(text);
}

int main(void)
{
	kpx_log_set_fd(open("/dev/null", O_WRONLY));
	printf("TAP version 13\n");
	test_health();
	test_gotime();
	test_render();
	test_services();
	test_metricsd();
	test_time();
	return tap_done();
}
