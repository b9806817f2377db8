// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_sync [SERVICES [ENDPOINTS [CHANGES]]]: the agent time of
 * one endpoint change at scale, in process, without an API server or a
 * kernel.  Builds a model of SERVICES ClusterIP Services (default 10,000)
 * with one EndpointSlice of ENDPOINTS ready endpoints each (default 100),
 * syncs it once (full sync) into the agent tests' fake data plane
 * (agent/tests/fakedp.h; by default it only counts and holds nothing), then
 * applies CHANGES (default 100) single-endpoint changes, each an
 * EndpointSlice MODIFIED event of a random Service with one endpoint's
 * address changed, each followed by a sync (kpx_sync_run(); partial).
 * Prints the CPU time (CLOCK_THREAD_CPUTIME_ID: the agent is single-threaded; not
 * skewed by other load) of the initial sync and p50 / p99 / max of the event
 * apply (kpx_model_apply(): decoding the slice), of the sync, and of both,
 * in milliseconds, plus the SETs sent per change.  Last, the periodic
 * re-check with nothing changed (a syncer whose --sync-period is 0, over a
 * fake that holds what was committed), p50 / max over 10: "_dump" without
 * a data plane generation (a dump of the fake, a recompute, a compare of
 * everything: the fallback modes' agent side), "_generation" with one (the
 * kpx module's: one read, no dump; sync.h).
 * Metrics are on, as in
 * a real agent (per-sync metrics, no-local-endpoints gauge).  Only the agent's public
 * API is used (the fake too: dataplane.h, service.h, nl.h), so the same file
 * measures any version of libkpx.a since the data-plane interface.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "dp/dataplane.h"
#include "fakedp.h"
#include "base/log.h"
#include "http/metrics.h"
#include "k8s/decode.h"
#include "model/model.h"
#include "sync/sync.h"
#include "benchobj.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p50, p99 and max of @v (sorted in place). */
static void report(const char *what, double *v, int n)
{
	qsort(v, n, sizeof(*v), dcmp);
	printf("bench one_endpoint_change %s p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
	       what, v[n / 2], v[(n * 99 + 99) / 100 - 1], v[n - 1]);
}

int main(int argc, char **argv)
{
	int nsvc = argc > 1 ? atoi(argv[1]) : 10000;
	int neps = argc > 2 ? atoi(argv[2]) : 100;
	int nchg = argc > 3 ? atoi(argv[3]) : 100;
	struct kpx_fakedp f;
	double *ta = calloc(nchg > 10 ? nchg : 10, sizeof(double)), *ts = calloc(nchg, sizeof(double));
	double *tt = calloc(nchg, sizeof(double)), t0, t1, t2;
	struct kpx_metrics *mt = kpx_metrics_new();
	struct kpx_model *m;
	struct kpx_sync *s;
	long sets0;
	int i, g, bad = 0;

	if (nsvc < 1 || nsvc > 64000 || neps < 1 || neps > 240 || nchg < 1 ||
	    !ta || !ts || !tt || !mt) {
		fprintf(stderr, "usage: bench_sync [SERVICES<=64000 [ENDPOINTS<=240 [CHANGES]]]\n");
		return 2;
	}
	kpx_log_set_fd(-1);	/* no log lines in the timings */
	/* CT_CLEANUP: never touch the host's conntrack table. */
	kpx_fakedp_init(&f, "bench", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	m = bench_model("bench_sync", nsvc, neps);
	s = kpx_sync_new(m, &f.dp, 0, 3600 * 1000);
	kpx_sync_set_metrics(s, mt);
	t0 = now_ms();
	if (kpx_sync_run(s) || f.sets != nsvc) {
		fprintf(stderr, "bench_sync: initial sync failed (%ld sets)\n", f.sets);
		return 1;
	}
	printf("bench initial_sync services=%d endpoints=%d frontends=%ld ms=%.1f\n",
	       nsvc, nsvc * neps, f.sets, now_ms() - t0);
	srand(7);
	for (i = 0; i < nchg; i++) {
		int svc = rand() % nsvc;
		struct json_object *o = bench_slice("bench_sync", svc, neps, rand() % neps, 2 + i);

		sets0 = f.sets;
		t0 = now_ms();
		kpx_model_apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED, o);
		t1 = now_ms();
		kpx_sync_run(s);
		t2 = now_ms();
		json_object_put(o);
		ta[i] = t1 - t0;
		ts[i] = t2 - t1;
		tt[i] = t2 - t0;
		bad += f.sets - sets0 != 1;
		/* back to the original slice, not timed */
		o = bench_slice("bench_sync", svc, neps, -1, 1);
		kpx_model_apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED, o);
		json_object_put(o);
		kpx_sync_run(s);
	}
	printf("bench one_endpoint_change services=%d endpoints=%d changes=%d changes_not_one_set=%d dels=%ld\n",
	       nsvc, nsvc * neps, nchg, bad, f.dels);
	report("apply", ta, nchg);
	report("sync", ts, nchg);
	report("total", tt, nchg);
	kpx_sync_free(s);
	for (g = 0; g < 2; g++) {
		kpx_fakedp_free(&f);
		kpx_fakedp_init(&f, "bench", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
		f.hold = true;
		f.has_generation = g;	/* the kpx module's generation */
		s = kpx_sync_new(m, &f.dp, 0, 0);	/* every sync periodic */
		kpx_sync_set_metrics(s, mt);
		kpx_sync_run(s);	/* programs everything */
		sets0 = f.sets + f.dels;
		for (i = 0; i < 10; i++) {
			t0 = now_ms();
			kpx_sync_run(s);
			ta[i] = now_ms() - t0;
		}
		qsort(ta, 10, sizeof(*ta), dcmp);
		printf("bench periodic_resync%s services=%d endpoints=%d p50_ms=%.3f max_ms=%.3f dumps=%ld changes_sent=%ld\n",
		       g ? "_generation" : "_dump", nsvc, nsvc * neps, ta[5], ta[9],
		       f.dumps - 1, f.sets + f.dels - sets0);
		bad += f.sets + f.dels != sets0 || (g && f.dumps != 1) ||
		       (!g && f.dumps != 11);
		kpx_sync_free(s);
	}
	kpx_model_free(m);
	kpx_metrics_free(mt);
	kpx_fakedp_free(&f);
	free(ta);
	free(ts);
	free(tt);
	return bad ? 1 : 0;
}
