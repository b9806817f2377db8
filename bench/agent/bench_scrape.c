// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_scrape [SERVICES [ENDPOINTS [CHANGES]]]: does a /metrics scrape
 * loop stall /healthz or an endpoint change?  In process, without an API
 * server or a kernel, with the agent's own threads: the event loop (this
 * thread: an EndpointSlice MODIFIED event of a random Service with one
 * endpoint moved, counted into the metrics as k8s.c does, then
 * kpx_sync_run() into the agent tests' fake data plane), the /healthz
 * server (kpx_healthz_start() on 127.0.0.1, fetched every 5 ms over HTTP
 * with libcurl by a client thread) and a scrape thread rendering /metrics
 * in a loop from a copy of the whole programmed state (SERVICES x
 * ENDPOINTS backends; the copy stands in for the module dump's
 * allocations: of the frontends only where the build dumps with
 * kpx_nl_dump_frontends(); the kernel's side of a dump is not in it).
 *
 * Three phases over the same model of SERVICES ClusterIP Services
 * (default 10,000) with ENDPOINTS ready endpoints each (default 100), each
 * of at least CHANGES changes (default 100) 20 ms apart and three scrapes:
 * "idle" (no scrape), "scrape" (per-frontend series, the default) and
 * "scrape_per_backend" (--metrics-per-backend).  Prints per phase the
 * /healthz latency p50 / p99 / max and the endpoint change latency (wall
 * time from the event to its SET in the data plane) p50 / p99 / max in
 * milliseconds, the scrapes done and their mean time and size.
 * Wall-clock times: on a shared host they include waiting for a CPU; the
 * load average is printed with them.  Links any libkpx.a with
 * kpx_metrics_render() (with or without its flags argument), so the same
 * file measures older builds (AGENT=dir).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <curl/curl.h>
#include <json-c/json.h>

#include "dp/dataplane.h"
#include "fakedp.h"
#include "http/healthz.h"
#include "base/log.h"
#include "http/metrics.h"
#include "k8s/decode.h"
#include "model/model.h"
#include "dp/kpx/nl.h"
#include "sync/sync.h"
#include "benchobj.h"

#define MAX_SAMPLES 200000

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* "p50_ms=.. p99_ms=.. max_ms=.." of @v (sorted in place) into @buf. */
static const char *pct(char *buf, size_t len, double *v, int n)
{
	if (!n) {
		snprintf(buf, len, "n=0");
		return buf;
	}
	qsort(v, n, sizeof(*v), dcmp);
	snprintf(buf, len, "n=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f", n, v[n / 2],
		 v[(n * 99 + 99) / 100 - 1], v[n - 1]);
	return buf;
}

struct shared {
	struct kpx_metrics *m;
	const struct kpx_service *state;	/* the programmed state */
	size_t nstate;
	atomic_int stop_scrape, stop_health, scraping;
	unsigned int flags;
	uint16_t hport;
	/* results */
	double *health;
	atomic_int nhealth;
	long scrapes;
	double scrape_ms;
	size_t scrape_bytes;
};

/*
 * A copy of @v as the metrics server's dump hands it one: deep, or with
 * @frontends_only the frontends with their backends counted, not stored
 * (kpx_nl_dump_frontends(), the default without --metrics-per-backend).
 */
static struct kpx_service *copy_state(const struct kpx_service *v, size_t n,
				      bool frontends_only)
{
	struct kpx_service *c = calloc(n ? n : 1, sizeof(*c));
	size_t i;

	if (!c)
		exit(2);
	for (i = 0; i < n; i++) {
		c[i] = v[i];
		c[i].source_ranges = NULL;
		c[i].nsource_ranges = 0;
		c[i].backends = NULL;
		if (frontends_only)
			continue;
		c[i].backends = malloc((v[i].nbackends ? v[i].nbackends : 1) * sizeof(*v[i].backends));
		if (!c[i].backends)
			exit(2);
		memcpy(c[i].backends, v[i].backends, v[i].nbackends * sizeof(*v[i].backends));
	}
	return c;
}

static void *scrape_thread(void *arg)
{
	struct shared *sh = arg;
	struct kpx_nl_stats st = { 0 };

	while (!atomic_load(&sh->stop_scrape)) {
		double t0 = mono_ms();
#ifdef KPX_METRICS_PER_BACKEND
		bool frontends_only = !(sh->flags & KPX_METRICS_PER_BACKEND);
#else
		bool frontends_only = false;	/* every scrape dumped every backend */
#endif
		struct kpx_service *v = copy_state(sh->state, sh->nstate, frontends_only);
		size_t len = 0;
		char *text;

		st.services = (uint32_t)sh->nstate;
#ifdef KPX_METRICS_PER_BACKEND
		text = kpx_metrics_render(sh->m, v, sh->nstate, &st, sh->flags, &len);
#else
		text = kpx_metrics_render(sh->m, v, sh->nstate, &st, &len);
#endif
		free(text);
		kpx_services_free(v, sh->nstate);
		sh->scrape_ms += mono_ms() - t0;
		sh->scrape_bytes += len;
		sh->scrapes++;
		atomic_store(&sh->scraping, 1);
	}
	return NULL;
}

static size_t discard(char *p, size_t sz, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return sz * n;
}

static void *health_thread(void *arg)
{
	struct shared *sh = arg;
	CURL *c = curl_easy_init();
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%u/healthz", sh->hport);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	while (!atomic_load(&sh->stop_health)) {
		double t0 = mono_ms();
		long code = 0;
		int i;

		if (curl_easy_perform(c) == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		i = atomic_fetch_add(&sh->nhealth, 1);
		if (i < MAX_SAMPLES)
			sh->health[i] = code == 200 ? mono_ms() - t0 : 1e9;
		usleep(5000);
	}
	curl_easy_cleanup(c);
	return NULL;
}

/* A free TCP port on 127.0.0.1. */
static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &l))
		exit(2);
	close(fd);
	return ntohs(a.sin_port);
}

int main(int argc, char **argv)
{
	int nsvc = argc > 1 ? atoi(argv[1]) : 10000;
	int neps = argc > 2 ? atoi(argv[2]) : 100;
	int nchg = argc > 3 ? atoi(argv[3]) : 100;
	static const char *const phase_name[3] = { "idle", "scrape", "scrape_per_backend" };
	struct kpx_metrics *mt = kpx_metrics_new();
	struct shared sh = { .m = mt };
	struct kpx_healthz hz = { .m = mt, .timeout_ms = 60000 };
	struct kpx_httpd *hd;
	struct kpx_fakedp f;
	struct kpx_model *m;
	struct kpx_sync *s;
	struct kpx_service *state;
	size_t nstate;
	double *lat, load[3] = { 0 };
	char bind[32], err[256], b1[128], b2[128];
	int i, ph, gen = 2, bad = 0;

	if (nsvc < 1 || nsvc > 64000 || neps < 1 || neps > 240 || nchg < 1 || !mt) {
		fprintf(stderr, "usage: bench_scrape [SERVICES<=64000 [ENDPOINTS<=240 [CHANGES]]]\n");
		return 2;
	}
	lat = calloc(MAX_SAMPLES, sizeof(*lat));
	sh.health = calloc(MAX_SAMPLES, sizeof(*sh.health));
	if (!lat || !sh.health)
		return 2;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	kpx_log_set_fd(-1);
	kpx_fakedp_init(&f, "bench", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	m = bench_model("bench_scrape", nsvc, neps);
	s = kpx_sync_new(m, &f.dp, 0, 3600 * 1000);
	kpx_sync_set_metrics(s, mt);
	if (kpx_sync_run(s) || f.sets != nsvc) {
		fprintf(stderr, "bench_scrape: initial sync failed (%ld sets)\n", f.sets);
		return 1;
	}
	if (kpx_model_desired(m, &state, &nstate)) {
		fprintf(stderr, "bench_scrape: desired state: out of memory\n");
		return 1;
	}
	sh.state = state;
	sh.nstate = nstate;
	sh.hport = free_port();
	snprintf(bind, sizeof(bind), "127.0.0.1:%u", sh.hport);
	hd = kpx_healthz_start(bind, &hz, err, sizeof(err));
	if (!hd) {
		fprintf(stderr, "bench_scrape: /healthz server: %s\n", err);
		return 1;
	}
	printf("bench scrape setup services=%d endpoints=%d frontends=%zu\n", nsvc,
	       nsvc * neps, nstate);
	srand(7);
	for (ph = 0; ph < 3; ph++) {
		pthread_t st, ht;
		int n = 0;

		atomic_store(&sh.stop_scrape, 0);
		atomic_store(&sh.stop_health, 0);
		atomic_store(&sh.scraping, 0);
		atomic_store(&sh.nhealth, 0);
		sh.scrapes = 0;
		sh.scrape_ms = 0;
		sh.scrape_bytes = 0;
		sh.flags = ph == 2 ? 1U : 0U;	/* KPX_METRICS_PER_BACKEND */
		if (ph && pthread_create(&st, NULL, scrape_thread, &sh))
			return 2;
		/* the first scrape under way before the changes are timed */
		while (ph && !atomic_load(&sh.scraping) && sh.scrapes < 1)
			usleep(10000);
		if (pthread_create(&ht, NULL, health_thread, &sh))
			return 2;
		while (n < MAX_SAMPLES && (n < nchg || (ph && sh.scrapes < 4))) {
			int svc = rand() % nsvc;
			struct json_object *o = bench_slice("bench_scrape", svc, neps,
							    rand() % neps, gen++);
			long sets0 = f.sets;
			double t0 = mono_ms();

			kpx_metrics_change(mt, KPX_KIND_ENDPOINTSLICE, true, 0);
			kpx_model_apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED, o);
			kpx_sync_run(s);
			lat[n++] = mono_ms() - t0;
			json_object_put(o);
			bad += f.sets - sets0 != 1;
			usleep(20000);
		}
		atomic_store(&sh.stop_health, 1);
		pthread_join(ht, NULL);
		if (ph) {
			atomic_store(&sh.stop_scrape, 1);
			pthread_join(st, NULL);
		}
		if (getloadavg(load, 3) < 0)
			load[0] = -1;
		i = atomic_load(&sh.nhealth);
		printf("bench scrape phase=%s healthz %s\n", phase_name[ph],
		       pct(b1, sizeof(b1), sh.health, i < MAX_SAMPLES ? i : MAX_SAMPLES));
		printf("bench scrape phase=%s endpoint_change %s\n", phase_name[ph],
		       pct(b2, sizeof(b2), lat, n));
		printf("bench scrape phase=%s scrapes=%ld scrape_mean_ms=%.1f scrape_mean_bytes=%zu loadavg=%.2f\n",
		       phase_name[ph], sh.scrapes, sh.scrapes ? sh.scrape_ms / sh.scrapes : 0,
		       sh.scrapes ? sh.scrape_bytes / sh.scrapes : 0, load[0]);
		fflush(stdout);
	}
	kpx_httpd_stop(hd);
	kpx_services_free(state, nstate);
	kpx_sync_free(s);
	kpx_model_free(m);
	kpx_metrics_free(mt);
	kpx_fakedp_free(&f);
	free(lat);
	free(sh.health);
	if (bad)
		fprintf(stderr, "bench_scrape: %d changes did not send exactly one set\n", bad);
	return bad ? 1 : 0;
}
