// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_kpx [SERVICES [ENDPOINTS [STEP]]]: the first full sync of
 * kpx-agent --proxy-mode kpx against the real module, without an API
 * server.  Builds the model of bench_sync.c (SERVICES ClusterIP Services,
 * default 10,000, one EndpointSlice of ENDPOINTS ready endpoints each,
 * default 100), flushes the module's table, and runs kpx_sync_run() through
 * the kpx data plane (dp_kpx.c, nl.c: one SET per frontend).  Prints:
 *   - "bench kpx_first_sync": wall and thread CPU ms (user + system: the
 *     module's SET handler runs in the sending thread) of that sync, then
 *     its phases: the dump, the plan (model to changes), the SETs, the rest;
 *   - "bench kpx_sets": the wall ms of each further STEP SETs (default
 *     1000), so that a cost growing with the table size shows up as
 *     growing steps;
 *   - "bench kpx_noop_sync": a second full sync (dump + reconcile, no SET);
 *   - "bench kpx_flush": the flush of the table.
 * With KPX_BENCH_STOP set, stops itself (SIGSTOP) after building the model,
 * so that a profiler can be started for the syncs alone.
 * Programs the kernel: refuses to run outside the test VM (/etc/kpx-guest).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "dp/dataplane.h"
#include "base/log.h"
#include "k8s/decode.h"
#include "model/model.h"
#include "sync/sync.h"
#include "benchobj.h"

static struct kpx_dp *real;
static long sets, step = 1000;
static double t_last;
/* phases of the last sync: dump start / end, first SET start, last SET end */
static double t_dump0, t_dump1, t_set0, t_set1;

static double clock_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* The wrapper data plane: the real one, timing every @step SETs. */
static int w_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
{
	int r;

	t_dump0 = wall_ms();
	r = real->ops->dump(real, out, n);
	t_dump1 = t_set0 = t_set1 = wall_ms();
	return r;
}

static int w_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	return real->ops->set_config(real, c);
}

static int w_set(struct kpx_dp *dp, const struct kpx_service *s)
{
	int r;

	if (!sets)
		t_set0 = t_last = wall_ms();
	r = real->ops->set_service(real, s);
	t_set1 = wall_ms();
	if (r)
		snprintf(dp->errmsg, sizeof(dp->errmsg), "%s", real->errmsg);
	if (!r && ++sets % step == 0) {
		double t = wall_ms();

		printf("bench kpx_sets upto=%ld ms=%.1f\n", sets, t - t_last);
		t_last = t;
	}
	return r;
}

static int w_del(struct kpx_dp *dp, const struct kpx_service *s)
{
	return real->ops->del_service(real, s);
}

static int w_commit(struct kpx_dp *dp)
{
	return real->ops->commit(real);
}

static const struct kpx_dp_ops wrap_ops = {
	.name = "kpx",
	.caps = KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP,
	.dump = w_dump,
	.set_config = w_set_config,
	.set_service = w_set,
	.del_service = w_del,
	.commit = w_commit,
};

/* The phases of the last sync, after its "bench" line. */
static void phases(const char *what, double end)
{
	printf("bench %s_phases dump_ms=%.1f plan_ms=%.1f sets_ms=%.1f after_ms=%.1f\n",
	       what, t_dump1 - t_dump0, t_set0 - t_dump1, t_set1 - t_set0,
	       end - t_set1);
}

int main(int argc, char **argv)
{
	int nsvc = argc > 1 ? atoi(argv[1]) : 10000;
	int neps = argc > 2 ? atoi(argv[2]) : 100;
	struct kpx_dp dp = { .ops = &wrap_ops };
	struct kpx_model *m;
	struct kpx_sync *s;
	double w0, c0, t1;
	char err[256];
	int r;

	if (argc > 3)
		step = atol(argv[3]);
	if (nsvc < 1 || nsvc > 60000 || neps < 1 || neps > 250 || step < 1) {
		fprintf(stderr, "usage: bench_kpx [SERVICES<=60000 [ENDPOINTS<=250 [STEP]]]\n");
		return 2;
	}
	if (access("/etc/kpx-guest", F_OK)) {
		fprintf(stderr, "bench_kpx: programs the kpx module: only in the test VM (/etc/kpx-guest)\n");
		return 2;
	}
	kpx_log_set_fd(-1);	/* no log lines in the timings */
	r = kpx_dp_open("kpx", &real, err, sizeof(err));
	if (r) {
		fprintf(stderr, "bench_kpx: %s\n", err);
		return 1;
	}
	if (real->ops->cleanup(real)) {
		fprintf(stderr, "bench_kpx: flush: %s\n", real->errmsg);
		return 1;
	}
	m = bench_model("bench_kpx", nsvc, neps);
	/* period 0: every kpx_sync_run() is a full one */
	s = kpx_sync_new(m, &dp, 0, 0);
	/* KPX_BENCH_STOP: wait for a SIGCONT (kpx_vm.sh starts perf) */
	if (getenv("KPX_BENCH_STOP"))
		raise(SIGSTOP);
	w0 = wall_ms();
	c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	r = kpx_sync_run(s);
	t1 = wall_ms();
	printf("bench kpx_first_sync services=%d endpoints=%d sets=%ld errors=%d wall_ms=%.1f cpu_ms=%.1f\n",
	       nsvc, nsvc * neps, sets, r, t1 - w0,
	       clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0);
	phases("kpx_first_sync", t1);
	if (r || sets != nsvc)
		return 1;
	sets = 0;
	w0 = wall_ms();
	c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	r = kpx_sync_run(s);
	t1 = wall_ms();
	printf("bench kpx_noop_sync services=%d sets=%ld errors=%d wall_ms=%.1f cpu_ms=%.1f\n",
	       nsvc, sets, r, t1 - w0, clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0);
	phases("kpx_noop_sync", t1);
	w0 = wall_ms();
	if (real->ops->cleanup(real))
		r = 1;
	printf("bench kpx_flush services=%d wall_ms=%.1f\n", nsvc, wall_ms() - w0);
	kpx_sync_free(s);
	kpx_model_free(m);
	real->ops->close(real);
	return r || sets ? 1 : 0;
}
