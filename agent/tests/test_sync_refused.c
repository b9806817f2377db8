// SPDX-License-Identifier: GPL-2.0-only
/*
 * One frontend the data plane refuses costs only that frontend (sync.h),
 * through the recording fake (fakedp.h) taught to refuse one key as the
 * kpx module refuses one (-E2BIG with an extack message):
 *
 *  - the first sync programs every other frontend, logs the refused one
 *    once with its Service's namespace/name, its key and the reason, counts
 *    it (kpx_sync_proxy_rules_frontend_refused_total, ..._frontends_refused)
 *    and is an update: /healthz's pending time is cleared, another
 *    Service's healthCheckNodePort answers 200 with serviceProxyHealthy
 *    true and its local endpoint count;
 *  - a Service created afterwards is programmed at the next sync, which is
 *    partial (no dump) and does not send the refused frontend again;
 *  - the refused frontend is sent again only after sync-period, and is not
 *    logged again;
 *  - a changed value of it is sent at once and, accepted, programmed;
 *  - a failure that is not a refusal (a failed commit) still makes the
 *    sync failed and the proxy unhealthy, as before, and so does a data
 *    plane that refuses most frontends;
 *  - the kpx mode's check_service() refuses, before sending, a frontend
 *    over the limits of uapi/linux/kpx.h (read from the header, so that
 *    this keeps testing whatever the limits are), by name, and the sync
 *    goes on with the others.
 *
 * Uses 127.0.0.1 and a port the kernel picks for the health check.  TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curl/curl.h>

#include "dp/dataplane.h"
#include "base/duration.h"
#include "fakedp.h"
#include "lib/fixtures.h"
#include "http/healthcheck.h"
#include "base/log.h"
#include "http/metrics.h"
#include "sync/sync.h"
#include "testlib_model.h"

extern const struct kpx_dp_ops kpx_dp_kpx;

#define PERIOD_MS 2000

static uint16_t hc_port;

/* J() without its 64 KiB bound, for the large slice. */
static struct json_object * __attribute__((format(printf, 1, 2)))
JL(const char *fmt, ...)
{
	struct json_object *o;
	va_list ap;
	char *buf, *p;

	va_start(ap, fmt);
	if (vasprintf(&buf, fmt, ap) < 0)
		abort();
	va_end(ap);
	for (p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	o = json_tokener_parse(buf);
	free(buf);
	if (!o)
		abort();
	return o;
}

/* The LoadBalancer Service "default/lb" with eTP Local and a health check. */
static struct json_object *lb_service(void)
{
	return J("{'metadata':{'name':'lb','namespace':'default','resourceVersion':'1'},"
		 "'spec':{'type':'LoadBalancer','clusterIPs':['10.96.0.40'],'ipFamilies':['IPv4'],"
		 "'externalTrafficPolicy':'Local','healthCheckNodePort':%u,"
		 "'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080,'nodePort':30040}]},"
		 "'status':{'loadBalancer':{'ingress':[{'ip':'198.51.100.40'}]}}}", hc_port);
}

/* The fake's refusal: the frontend 10.96.0.20:80/tcp while refuse_arg is set. */
static int refuse_big(struct kpx_fakedp *f, const struct kpx_service *s)
{
	char key[KPX_SERVICE_STRLEN];

	if (!f->refuse_arg)
		return 0;
	kpx_service_str(s, key, sizeof(key));
	return strcmp(key, "10.96.0.20:80/tcp") ? 0 : -E2BIG;
}

static int refuse_all(struct kpx_fakedp *f, const struct kpx_service *s)
{
	return -EINVAL;
}

static int check_all_over(struct kpx_dp *dp, const struct kpx_service *s)
{
	return kpx_dp_fail(dp, -E2BIG, "fake: over a documented limit");
}

static bool in_table(const struct kpx_fakedp *f, const char *want)
{
	char key[KPX_SERVICE_STRLEN];
	size_t i;

	for (i = 0; i < f->ntable; i++)
		if (!strcmp(kpx_service_str(&f->table[i], key, sizeof(key)), want))
			return true;
	return false;
}

/* The value of the sample @name (a line "name value") in @text, or -1. */
static double sample(const char *text, const char *name)
{
	char pat[160];
	const char *p;

	snprintf(pat, sizeof(pat), "\n%s ", name);
	p = strstr(text, pat);
	return p ? atof(p + strlen(pat)) : -1;
}

static double metric(struct kpx_metrics *m, const char *name)
{
	size_t len;
	char *text = kpx_metrics_render(m, NULL, 0, NULL, 0, &len);
	double v = text ? sample(text, name) : -1;

	free(text);
	return v;
}

/* Occurrences of @needle in the log written so far to @f. */
static int log_count(FILE *f, const char *needle)
{
	static char buf[1 << 18];
	const char *p = buf;
	size_t n;
	int c = 0;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fseek(f, 0, SEEK_END);
	while ((p = strstr(p, needle))) {
		c++;
		p++;
	}
	return c;
}

/* GET http://127.0.0.1:@port/ into @body (@size bytes); the status, or 0. */
static long hc_get(uint16_t port, char *body, size_t size)
{
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", port);
	return fx_http_get(url, body, size);
}

/* Whether an update is pending for longer than 0 ms: /healthz's test. */
static bool healthy_now(struct kpx_metrics *m)
{
	return kpx_metrics_healthy(m, 0);
}

static void test_refused(FILE *logf)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_metrics *met = kpx_metrics_new();
	const char *lo[] = { "127.0.0.1" };
	struct kpx_hc *hc = kpx_hc_new(lo, 1);
	struct kpx_fakedp f;
	struct kpx_sync *s;
	char body[1024];
	long sets, status;
	int r;

	kpx_fakedp_init(&f, "fake", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	f.hold = true;
	f.has_generation = true;
	f.refuse = refuse_big;
	f.refuse_arg = &f;
	s = kpx_sync_new(m, &f.dp, 0, PERIOD_MS);
	kpx_sync_set_metrics(s, met);
	kpx_sync_set_healthchecks(s, hc, 0);
	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(FX_NODE));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "web", 1, "10.96.0.10"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "web", "web", FX_EP("10.244.1.2")));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "big", 1, "10.96.0.20"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "big", "big", FX_EP("10.244.1.3")));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, lb_service());
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J(FX_EPS, "lb", "lb", FX_EP("10.244.1.4") "," FX_EP("10.244.1.5")));
	kpx_metrics_change(met, KPX_KIND_SERVICE, true, 0);

	r = kpx_sync_run(s);
	ok(r == 0, "sync with one refused frontend: no failed change (%d)", r);
	ok(f.refused == 1 && !in_table(&f, "10.96.0.20:80/tcp"),
	   "the refused frontend was sent once and is not programmed (refused %ld)", f.refused);
	ok(in_table(&f, "10.96.0.10:80/tcp") && in_table(&f, "10.96.0.40:80/tcp") &&
	   in_table(&f, "198.51.100.40:80/tcp"),
	   "every other frontend of the same sync is programmed (%zu in the table)", f.ntable);
	ok(log_count(logf, "Service default/big: frontend 10.96.0.20:80/tcp refused by the fake data plane: "
			   "Argument list too long: fake: refused: 10.96.0.20:80/tcp") == 1,
	   "logged once with the Service's namespace/name, the frontend and the reason");
	ok(metric(met, "kpx_sync_proxy_rules_frontend_refused_total") == 1 &&
	   metric(met, "kpx_sync_proxy_rules_frontends_refused") == 1 &&
	   metric(met, "kpx_sync_errors_total") == 0,
	   "metrics: refused_total 1, frontends_refused 1, sync errors 0 (%g %g %g)",
	   metric(met, "kpx_sync_proxy_rules_frontend_refused_total"),
	   metric(met, "kpx_sync_proxy_rules_frontends_refused"),
	   metric(met, "kpx_sync_errors_total"));
	ok(healthy_now(met), "the sync is an update: nothing pending, /healthz healthy even with a 0 ms timeout");
	status = hc_get(hc_port, body, sizeof(body));
	ok(status == 200 && strstr(body, "\"localEndpoints\": 2") &&
	   strstr(body, "\"serviceProxyHealthy\": true"),
	   "default/lb's healthCheckNodePort answers 200, 2 local endpoints, serviceProxyHealthy true (%ld)",
	   status);

	/* a Service created afterwards: programmed, the refused one not resent */
	sets = f.sets;
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "new", 1, "10.96.0.30"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "new", "new", FX_EP("10.244.1.6")));
	ok(kpx_sync_due(s) <= kpx_now_ms(), "the new Service makes a sync due");
	r = kpx_sync_run(s);
	ok(r == 0 && in_table(&f, "10.96.0.30:80/tcp") && f.sets == sets + 1 && f.refused == 1,
	   "a Service created afterwards is programmed by one set; the refused one is not resent (sets +%ld, refused %ld)",
	   f.sets - sets, f.refused);
	ok(f.dumps == 1, "no full sync after the refusal (dumps %ld)", f.dumps);
	ok(kpx_sync_due(s) > kpx_now_ms() + PERIOD_MS / 2,
	   "the next sync is the periodic one, not in min-sync-period (due in %lld ms)",
	   (long long)(kpx_sync_due(s) - kpx_now_ms()));
	r = kpx_sync_run(s);
	ok(r == 0 && f.sets == sets + 1 && f.refused == 1 && f.dumps == 1,
	   "a sync within sync-period sends nothing (sets +%ld, refused %ld)", f.sets - sets, f.refused);

	/* sync-period later: sent once more, refused again, not logged again */
	usleep((PERIOD_MS + 100) * 1000);
	r = kpx_sync_run(s);
	ok(r == 0 && f.refused == 2 && f.sets == sets + 2,
	   "after sync-period the refused frontend is sent once more (refused %ld)", f.refused);
	ok(log_count(logf, "Service default/big: frontend 10.96.0.20:80/tcp refused") == 1,
	   "the same refusal is not logged again");
	ok(metric(met, "kpx_sync_proxy_rules_frontend_refused_total") == 2 &&
	   metric(met, "kpx_sync_proxy_rules_frontends_refused") == 1,
	   "refused_total 2, still 1 frontend refused");
	ok(f.dumps == 1, "still no dump (dumps %ld)", f.dumps);

	/* the Service changes and the data plane takes the new value at once */
	f.refuse_arg = NULL;
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
	      J(FX_EPS, "big", "big", FX_EP("10.244.1.3") "," FX_EP("10.244.1.7")));
	r = kpx_sync_run(s);
	ok(r == 0 && in_table(&f, "10.96.0.20:80/tcp") &&
	   metric(met, "kpx_sync_proxy_rules_frontends_refused") == 0,
	   "a changed value is sent at once; accepted, no frontend is refused any more");
	ok(log_count(logf, "Service default/big: frontend 10.96.0.20:80/tcp programmed (no longer refused)") == 1,
	   "its being programmed is logged");

	/* a failure that is not a refusal: as before, failed and unhealthy */
	f.refuse = NULL;
	f.fail_commits = 1;
	apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED, J(FX_SVC, "new", 1, "10.96.0.30"));
	kpx_metrics_change(met, KPX_KIND_SERVICE, true, 0);
	r = kpx_sync_run(s);
	ok(r > 0 && !healthy_now(met) && metric(met, "kpx_sync_errors_total") == 1,
	   "a failed commit still fails the sync (%d) and the update stays pending", r);
	status = hc_get(hc_port, body, sizeof(body));
	ok(status == 503 && strstr(body, "\"serviceProxyHealthy\": false"),
	   "and the health check answers 503, serviceProxyHealthy false (%ld)", status);
	ok(kpx_sync_due(s) <= kpx_now_ms(), "the repair is due at once (min-sync-period 0)");
	r = kpx_sync_run(s);
	ok(r == 0 && f.dumps == 2 && !in_table(&f, "10.96.0.30:80/tcp") && healthy_now(met),
	   "the next sync is full and repairs it (dumps %ld)", f.dumps);

	kpx_sync_free(s);
	kpx_hc_free(hc);

	/* a data plane that refuses every frontend fails the sync */
	{
		struct kpx_metrics *met2 = kpx_metrics_new();
		struct kpx_fakedp g;
		char want[96];

		kpx_fakedp_init(&g, "fake-none", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
		g.hold = true;
		g.refuse = refuse_all;
		s = kpx_sync_new(m, &g.dp, 0, PERIOD_MS);
		kpx_sync_set_metrics(s, met2);
		kpx_metrics_change(met2, KPX_KIND_SERVICE, true, 0);
		r = kpx_sync_run(s);
		ok(r > 1 && r == g.refused && !g.ntable &&
		   metric(met2, "kpx_sync_errors_total") == 1 &&
		   metric(met2, "kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"}") == 0,
		   "every frontend refused: the sync fails with %d failed changes, no update recorded",
		   r);
		ok(kpx_sync_due(s) <= kpx_now_ms(), "and the repair is due at min-sync-period");
		r = kpx_sync_run(s);
		ok(r > 0 && g.refused == 5 && metric(met2, "kpx_sync_errors_total") == 2 &&
		   metric(met2, "kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"}") == 0,
		   "the next sync, sending nothing before sync-period, fails too (%d)", r);
		snprintf(want, sizeof(want), "data plane refuses %ld of %ld frontends within its documented limits: the sync failed",
			 g.refused, g.refused);
		ok(log_count(logf, want) == 1, "and says so (\"%s\")", want);
		kpx_sync_free(s);
		kpx_fakedp_free(&g);
		kpx_metrics_free(met2);
	}

	/*
	 * every frontend over a documented limit (refused by check_service()
	 * before sending): those Services' problem, not the data plane's, so
	 * the sync is an update even when they are most of a small cluster
	 */
	{
		struct kpx_metrics *met3 = kpx_metrics_new();
		struct kpx_fakedp g;

		kpx_fakedp_init(&g, "fake-limits", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
		g.ops.check_service = check_all_over;
		s = kpx_sync_new(m, &g.dp, 0, PERIOD_MS);
		kpx_sync_set_metrics(s, met3);
		kpx_metrics_change(met3, KPX_KIND_SERVICE, true, 0);
		r = kpx_sync_run(s);
		ok(r == 0 && !g.ntable && metric(met3, "kpx_sync_errors_total") == 0 &&
		   metric(met3, "kpx_sync_proxy_rules_frontends_refused") > 1 && healthy_now(met3),
		   "every frontend over a documented limit: refused, the sync is an update (%d, %g refused)",
		   r, metric(met3, "kpx_sync_proxy_rules_frontends_refused"));
		kpx_sync_free(s);
		kpx_fakedp_free(&g);
		kpx_metrics_free(met3);
	}
	kpx_fakedp_free(&f);
	kpx_metrics_free(met);
	kpx_model_free(m);
}

/* The limits of uapi/linux/kpx.h the kpx mode checks before sending. */
#if defined(KPX_SOURCE_RANGES_MAX)
#define RANGES_MAX KPX_SOURCE_RANGES_MAX
#elif defined(KPX_CIDRS_MAX)
#define RANGES_MAX KPX_CIDRS_MAX
#endif

static void test_precheck(FILE *logf)
{
#if defined(RANGES_MAX) && defined(KPX_BACKENDS_MAX)
	struct kpx_model *m = kpx_model_new();
	struct kpx_fakedp f;
	struct kpx_sync *s;
	struct kpx_service one = { .family = AF_INET, .protocol = IPPROTO_TCP };
	struct kpx_dp plain = { .ops = &kpx_dp_kpx };
	size_t len = 0, i;
	char *ranges = malloc((size_t)(RANGES_MAX + 1) * 24), *eps;
	int r;

	/* check_service() alone: at the limit fine, over it -E2BIG */
	one.nsource_ranges = RANGES_MAX;
	one.nbackends = KPX_BACKENDS_MAX;
	ok(kpx_dp_kpx.check_service && kpx_dp_kpx.check_service(&plain, &one) == 0,
	   "kpx check_service: %d source ranges and %d backends are taken", RANGES_MAX, KPX_BACKENDS_MAX);
	one.nsource_ranges = RANGES_MAX + 1;
	r = kpx_dp_kpx.check_service(&plain, &one);
	ok(r == -E2BIG && strstr(plain.errmsg, "source ranges"),
	   "%d source ranges: %d \"%s\"", RANGES_MAX + 1, r, plain.errmsg);
	one.nsource_ranges = 0;
	one.nbackends = KPX_BACKENDS_MAX + 1;
	r = kpx_dp_kpx.check_service(&plain, &one);
	ok(r == -E2BIG && strstr(plain.errmsg, "backends"),
	   "%d backends: %d \"%s\"", KPX_BACKENDS_MAX + 1, r, plain.errmsg);

	/* through sync.c: a LoadBalancer Service with one range too many */
	kpx_fakedp_init(&f, "fake-kpx", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	f.hold = true;
	f.ops.check_service = kpx_dp_kpx.check_service;
	s = kpx_sync_new(m, &f.dp, 0, PERIOD_MS);
	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(FX_NODE));
	for (i = 0; i < RANGES_MAX + 1; i++)
		len += sprintf(ranges + len, "%s'%zu.%zu.%zu.0/24'", i ? "," : "",
			       10 + i / 65536, i / 256 % 256, i % 256);
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      JL("{'metadata':{'name':'ranges','namespace':'edge','resourceVersion':'1'},"
		"'spec':{'type':'LoadBalancer','clusterIPs':['10.96.0.50'],'ipFamilies':['IPv4'],"
		"'loadBalancerSourceRanges':[%s],"
		"'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080,'nodePort':30050}]},"
		"'status':{'loadBalancer':{'ingress':[{'ip':'203.0.113.51'}]}}}", ranges));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'ranges-1','namespace':'edge','resourceVersion':'1',"
		"'labels':{'kubernetes.io/service-name':'ranges'}},'addressType':'IPv4',"
		"'endpoints':[" FX_EP("10.244.1.8") "],'ports':[{'name':'http','protocol':'TCP','port':8080}]}"));
	/* and one Service with one ready endpoint too many */
	eps = malloc((size_t)(KPX_BACKENDS_MAX + 1) * 96);
	len = 0;
	for (i = 0; i < (size_t)KPX_BACKENDS_MAX + 1; i++)
		len += sprintf(eps + len, "%s{'addresses':['10.%zu.%zu.%zu'],'conditions':{'ready':true}}",
			       i ? "," : "", 100 + i / 65536, i / 256 % 256, i % 256);
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "wide", 1, "10.96.0.60"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, JL(FX_EPS, "wide", "wide", eps));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "web", 1, "10.96.0.10"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "web", "web", FX_EP("10.244.1.2")));
	r = kpx_sync_run(s);
	ok(r == 0 && !in_table(&f, "203.0.113.51:80/tcp") && !in_table(&f, "10.96.0.60:80/tcp"),
	   "pre-check: the LB frontend with %d ranges and the frontend with %d backends are not sent (%d)",
	   RANGES_MAX + 1, KPX_BACKENDS_MAX + 1, r);
	ok(in_table(&f, "10.96.0.50:80/tcp") && in_table(&f, "10.96.0.10:80/tcp"),
	   "pre-check: the others (the ClusterIP of the same Service, another Service) are programmed");
	ok(log_count(logf, "Service edge/ranges: frontend 203.0.113.51:80/tcp refused by the fake-kpx data plane: "
			   "Argument list too long: ") == 1 &&
	   log_count(logf, "source ranges, the kpx module takes at most") >= 1,
	   "pre-check: logged by name with the limit");
	ok(log_count(logf, "Service default/wide: frontend 10.96.0.60:80/tcp refused by the fake-kpx data plane: ") == 1,
	   "pre-check: the backend limit logged by name");
	free(ranges);
	free(eps);
	kpx_sync_free(s);
	kpx_fakedp_free(&f);
	kpx_model_free(m);
#else
	(void)logf;
	ok(1, "pre-check # SKIP uapi/linux/kpx.h names no source range or backend limit");
#endif
}

/* A TCP port free on 127.0.0.1 now (the kernel's pick), for the health check. */
static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &l))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port ? port : (uint16_t)(40000 + getpid() % 20000);
}

int main(void)
{
	FILE *logf = tmpfile();

	printf("TAP version 13\n");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	hc_port = free_port();
	kpx_log_set_fd(fileno(logf));
	test_refused(logf);
	test_precheck(logf);
	kpx_log_set_fd(2);
	fclose(logf);
	return tap_done();
}
