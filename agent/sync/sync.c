// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sync scheduling and the desired -> reconcile -> data plane step.  Both
 * kinds of sync diff with kpx_reconcile(): a full sync at every key
 * desired or dumped, a partial sync only at the frontends of the Services
 * that changed since the last sync (fecache.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"
#include "sync/ctclean.h"
#include "base/duration.h"
#include "sync/fecache.h"
#include "base/log.h"
#include "model/model_nolocal.h"
#include "sync/reconcile.h"
#include "sync/sync.h"
#include "sync/sync_priv.h"

void kpx_sync_set_healthchecks(struct kpx_sync *s, struct kpx_hc *hc,
			       int64_t health_timeout_ms)
{
	s->hc = hc;
	s->health_timeout = health_timeout_ms;
}

/* Sends the namespace settings when they changed; returns 0 or -errno. */
static int sync_ns_config(struct kpx_sync *s)
{
	struct kpx_ns_config nc;
	int r;

	kpx_model_ns_config(s->model, &nc);
	if (s->ns_sent && !memcmp(&nc, &s->ns_last, sizeof(nc)))
		return 0;
	if (!s->dp) {
		kpx_info("sync", "dry run: namespace config: %zu local prefixes, local interface \"%s\", prefix \"%s\"",
			 nc.nlocal_cidrs, nc.local_ifname, nc.local_ifprefix);
	} else {
		r = s->dp->ops->set_config(s->dp, &nc);
		if (r) {
			kpx_err("sync", "namespace config: %s%s%s", strerror(-r),
				*kpx_dp_errmsg(s->dp) ? ": " : "", kpx_dp_errmsg(s->dp));
			return r;
		} else {
			kpx_info("sync", "namespace config set: %zu local prefixes, local interface \"%s\", prefix \"%s\"",
				 nc.nlocal_cidrs, nc.local_ifname, nc.local_ifprefix);
		}
	}
	s->ns_last = nc;
	s->ns_sent = true;
	return 0;
}

/* Updates the health-check servers after a sync with @errors failures. */
static void sync_healthchecks(struct kpx_sync *s, unsigned int errors)
{
	char ips[32][INET6_ADDRSTRLEN];
	const char *ptrs[32];
	struct kpx_hc_service *v = NULL;
	size_t n, i;
	bool healthy = !errors;
	int r;

	if (!s->hc)
		return;
	n = kpx_model_nodeport_ips(s->model, ips, 32);
	for (i = 0; i < n; i++)
		ptrs[i] = ips[i];
	kpx_hc_set_addrs(s->hc, ptrs, n);
	if (kpx_fecache_healthchecks(s->fc, &v, &n)) {
		kpx_err("sync", "health checks: out of memory");
		return;
	}
	if (s->metrics)
		healthy = healthy && kpx_metrics_healthy(s->metrics, s->health_timeout);
	for (i = 0; i < n; i++)
		v[i].healthy = healthy;
	r = kpx_hc_sync(s->hc, v, n);
	if (r > 0)
		kpx_warn("sync", "%d health-check ports could not be opened, retried at the next sync", r);
	free(v);
}

void kpx_sync_set_metrics(struct kpx_sync *s, struct kpx_metrics *m)
{
	s->metrics = m;
}

/* CLOCK_MONOTONIC in seconds, for durations. */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The calling thread's CPU time in milliseconds: user and system, so the
 * kernel's handling of the netlink messages it sends (run in its context)
 * counts, time spent waiting for the CPU does not.
 */
static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct kpx_sync *kpx_sync_new(struct kpx_model *model, struct kpx_dp *dp,
			      int64_t min_period_ms, int64_t period_ms)
{
	struct kpx_sync *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fc = kpx_fecache_new();
	if (!s->fc) {
		free(s);
		return NULL;
	}
	s->model = model;
	s->dp = dp;
	s->min_period = min_period_ms;
	s->period = period_ms;
	s->ct_known = dp && (dp->ops->caps & KPX_DP_CAP_DUMP);
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void sync_refused_clear(struct refused *r)
{
	kpx_service_free(&r->fe);
	free(r->name);
	free(r->msg);
}

void kpx_sync_free(struct kpx_sync *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nrefused; i++)
		sync_refused_clear(&s->refused[i]);
	free(s->refused);
	kpx_services_free(s->actual, s->nactual);
	kpx_ctclean_free(s->ct);
	kpx_fecache_free(s->fc);
	kpx_status_list_free(&s->failed);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int64_t kpx_sync_next_at(bool synced_before, int64_t last, int64_t last_full,
			 bool dirty, int64_t min_period, int64_t period)
{
	int64_t periodic = last_full + period;

	if (!synced_before)
		return INT64_MIN;
	if (dirty && last + min_period < periodic)
		return last + min_period;
	return periodic;
}

int64_t kpx_sync_due(const struct kpx_sync *s)
{
	if (s->replaced)
		return INT64_MIN;
	return kpx_sync_next_at(s->synced, s->last, s->last_full,
				kpx_model_dirty(s->model) || s->need_full,
				s->min_period, s->period);
}

void kpx_sync_dp_replaced(struct kpx_sync *s)
{
	s->replaced = true;
	s->need_full = true;
	s->gen_ok = false;
	s->ns_sent = false;
}

/* Backend list bytes per log line: log.c truncates lines at 4 KiB. */
#define LOG_OP_CHUNK 3000

/*
 * "[dry run: ]set 10.96.0.10:80/tcp flags=0x0 backends=[10.244.1.2:8080@1
 * 10.244.2.3:8080@1]" or "[dry run: ]del KEY": info in a dry run, else
 * debug at --v 2 (the selftests read it in the proxy modes without a
 * kpxctl to show what was programmed: selftests/mode_lib.sh).  A list
 * longer than LOG_OP_CHUNK bytes goes on as "[dry run: ]set+ KEY
 * backends=[...]" lines, in order, right after the first.
 */
static void log_op(const struct kpx_op *op, bool dry)
{
	enum kpx_log_level lvl = dry ? KPX_LOG_INFO : KPX_LOG_DEBUG;
	const char *pre = dry ? "dry run: " : "";
	const struct kpx_service *svc = op->service;
	char key[KPX_SERVICE_STRLEN], be[KPX_HOSTPORT_STRLEN];
	char list[LOG_OP_CHUNK + KPX_HOSTPORT_STRLEN + 32];
	size_t i = 0, len;
	bool first = true;

	kpx_service_str(svc, key, sizeof(key));
	if (op->type == KPX_OP_DEL) {
		kpx_log(lvl, "sync", "%sdel %s", pre, key);
		return;
	}
	do {
		list[0] = '\0';
		for (len = 0; i < svc->nbackends && len < LOG_OP_CHUNK; i++)
			len += snprintf(list + len, sizeof(list) - len, "%s%s@%" PRIu32,
					len ? " " : "",
					kpx_hostport_str(svc->family, &svc->backends[i].addr,
							 svc->backends[i].port, be, sizeof(be)),
					svc->backends[i].weight);
		if (first)
			kpx_log(lvl, "sync", "%sset %s flags=0x%" PRIx32 " backends=[%s]",
				pre, key, svc->flags, list);
		else
			kpx_log(lvl, "sync", "%sset+ %s backends=[%s]", pre, key, list);
		first = false;
	} while (i < svc->nbackends);
}

/*
 * Sends one change (a SET after the data plane's check_service()); returns
 * 0 or the negative errno, the reason in dp->errmsg.  Not logged here.
 */
static int send_op(struct kpx_sync *s, const struct kpx_op *op)
{
	int r = 0;

	if (!s->dp) {
		log_op(op, true);
		return 0;
	}
	s->dp->errmsg[0] = '\0';
	if (op->type == KPX_OP_SET && s->dp->ops->check_service)
		r = s->dp->ops->check_service(s->dp, op->service);
	if (!r && op->type == KPX_OP_SET)
		r = s->dp->ops->set_service(s->dp, op->service);
	else if (!r)
		r = s->dp->ops->del_service(s->dp, op->service);
	if (!r && kpx_log_verbosity >= 2)
		log_op(op, false);
	return r;
}

/*
 * Records a failed change of this sync for kpx_sync_status(): "set: No
 * space left on device: <the data plane's message>" (@svc NULL: the sync
 * as a whole, keyed "-").  Without memory it is only logged.
 */
static void status_failed(struct kpx_sync *s, const struct kpx_service *svc,
			  const char *what, int r, const char *msg)
{
	char why[512];
	struct kpx_service none = { 0 };

	snprintf(why, sizeof(why), "%s: %s%s%s", what, strerror(-r), msg && *msg ? ": " : "",
		 msg ? msg : "");
	const char *name = svc ? svc->name : NULL;
	long i;

	/* a DEL carries the key alone: the name the data plane had */
	if (svc && !name && (i = kpx_service_find(s->actual, s->nactual, svc)) >= 0)
		name = s->actual[i].name;
	if (kpx_status_add(&s->failed, svc ? svc : &none, name, why))
		return;
	if (!svc)
		snprintf(s->failed.v[s->failed.n - 1].key, sizeof(s->failed.v[0].key), "-");
}

/* Logs a change that failed with @r (not a refusal). */
static void op_failed(struct kpx_sync *s, const struct kpx_op *op, int r)
{
	char key[KPX_SERVICE_STRLEN];
	const char *msg = kpx_dp_errmsg(s->dp);

	const char *name = op->service->name;
	char of[320] = "";

	/* the Service it belongs to, when the change says (a SET does) */
	if (name && *name)
		snprintf(of, sizeof(of), " (Service %s, %s)", name,
			 kpx_kind_name(op->service->kind));
	kpx_err("sync", "%s %s%s: %s%s%s", op->type == KPX_OP_SET ? "set" : "del",
		kpx_service_str(op->service, key, sizeof(key)), of, strerror(-r),
		*msg ? ": " : "", msg);
	status_failed(s, op->service, op->type == KPX_OP_SET ? "set" : "del", r, msg);
}

/*
 * Applies the queued changes (batching modes); on failure every change of
 * this sync counts as failed (the next sync is full and repairs them).
 */
static int commit(struct kpx_sync *s, long nops)
{
	const char *msg;
	int r;

	s->dp->errmsg[0] = '\0';
	r = s->dp->ops->commit(s->dp);
	if (!r)
		return 0;
	kpx_metrics_dp_failure(s->metrics);
	msg = kpx_dp_errmsg(s->dp);
	kpx_err("sync", "%s: applying %ld changes: %s%s%s", s->dp->ops->name,
		nops, strerror(-r), *msg ? ": " : "", msg);
	status_failed(s, NULL, "commit", r, msg);
	return r;
}

/*
 * For modes without KPX_DP_CAP_CT_CLEANUP, after a successful commit():
 * deletes the UDP/SCTP conntrack entries that the @applied changes made
 * stale (ctclean.h), against the state before this sync.  Not on the first
 * commit of a mode that cannot dump: its "previous state" is empty, every
 * frontend would look new (kube-proxy deletes nothing at a restart either).
 */
static void ct_cleanup(struct kpx_sync *s, const struct kpx_op *ops,
		       size_t nops, const bool *applied)
{
	static const int fams[2] = { AF_INET, AF_INET6 };
	struct kpx_ct_plan p = { 0 };
	bool known = s->ct_known, has[2] = { false, false };
	long r, d;
	size_t i;
	int f;

	s->ct_known = true;
	if (!known || (s->dp->ops->caps & KPX_DP_CAP_CT_CLEANUP))
		return;
	r = kpx_ct_plan_ops(&p, ops, nops, applied, s->actual, s->nactual);
	if (r > 0 && !s->ct && !(s->ct = kpx_ctclean_new()))
		r = -errno;
	for (i = 0; r > 0 && i < p.n; i++)
		has[p.v[i].family == AF_INET6] = true;
	/*
	 * One walk of each family with rules, timed and counted as
	 * kube-proxy's conntrack reconciler's (kubeproxy_conntrack_reconciler_*):
	 * a sync that made nothing stale walks nothing and observes nothing.
	 */
	for (f = 0, d = 0; r > 0 && f < 2; f++) {
		double t0 = mono_s();
		long n;

		if (!has[f])
			continue;
		n = kpx_ctclean_apply_family(s->ct, &p, fams[f]);
		kpx_metrics_conntrack(s->metrics, fams[f], mono_s() - t0,
				      n > 0 ? (unsigned long)n : 0);
		if (n < 0) {
			d = n;
			break;
		}
		d += n;
	}
	if (r > 0)
		r = d;
	if (r < 0)
		kpx_err("sync", "conntrack cleanup: %s", strerror((int)-r));
	else if (r > 0)
		kpx_info("sync", "conntrack cleanup: %ld stale entries deleted (%zu rules)", r, p.n);
	kpx_ct_plan_free(&p);
}

/* The last sync's summary for kpx_sync_status(). */
static void status_done(struct kpx_sync *s, double dur, bool full, unsigned int errors,
			unsigned int sets, unsigned int dels)
{
	s->last_dur = dur;
	s->last_was_full = full;
	s->last_errors = errors;
	s->last_sets = sets;
	s->last_dels = dels;
}

/* A sync that could not run: retry it, in full, after min-sync-period. */
static int sync_failed(struct kpx_sync *s, int64_t t0, int err, double t0s,
		       bool full)
{
	kpx_metrics_sync(s->metrics, mono_s() - t0s, full, 0, 1);
	status_failed(s, NULL, "sync", err, NULL);
	status_done(s, mono_s() - t0s, full, 1, 0, 0);
	s->synced = true;
	s->need_full = true;
	s->replaced = false;
	s->gen_ok = false;
	s->last = t0;
	return err;
}

/* The data plane's generation into *gen: false when it has none. */
static bool dp_generation(struct kpx_sync *s, uint32_t *gen)
{
	*gen = 0;
	return s->dp && s->dp->ops->generation &&
	       !s->dp->ops->generation(s->dp, gen) && *gen;
}

/*
 * Whether this sync must dump the data plane: the first sync, a repair after
 * errors, and each sync-period (@periodic); but where the data plane has a generation,
 * the periodic one only when the generation (@have_g0, @g0: read before
 * this sync) is not the one the last sync left, i.e. another writer changed
 * it.  Such a change also makes any other sync a full one.
 */
static bool wants_dump(struct kpx_sync *s, bool periodic, bool have_g0,
		       uint32_t g0)
{
	bool unchanged = have_g0 && s->gen_ok && g0 == s->gen;

	if (!s->synced || s->need_full)
		return true;
	if (have_g0 && s->gen_ok && !unchanged) {
		kpx_info("sync", "the %s data plane was changed by another writer (generation %u, this agent left %u): full sync",
			 s->dp->ops->name, g0, s->gen);
		return true;
	}
	return periodic && !unchanged;
}

static int service_qsort_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* The desired state, for kpx_reconcile(): the cache's winner of a key. */
static const struct kpx_service *desired_get(const void *fc,
					     const struct kpx_service *key)
{
	return kpx_fecache_get(fc, key);
}

/*
 * The changes of this sync into *ops, by the one diff (kpx_reconcile())
 * of the cache against s->actual: after a full recompute of the cache
 * (@full, or the model marked everything dirty; *all then true) at every
 * key desired or programmed, else at the keys of the Services that
 * changed.  Returns the number of ops or a negative errno (logged).
 */
static long plan(struct kpx_sync *s, bool full, bool *all, struct kpx_op **ops)
{
	struct kpx_service *keys, *want;
	size_t nkeys, nwant;
	long nops;
	int r;

	*ops = NULL;
	r = kpx_fecache_sync(s->fc, s->model, full, &keys, &nkeys);
	*all = r == 1;
	if (r == 1) {
		r = kpx_fecache_keys(s->fc, &want, &nwant);
		if (!r) {
			r = kpx_reconcile_keys(want, nwant, s->actual,
					       s->nactual, &keys, &nkeys);
			free(want);
		}
	}
	if (r) {
		kpx_err("sync", "computing the desired state: %s", strerror(-r));
		return r;
	}
	nops = kpx_reconcile(desired_get, s->fc, keys, nkeys, s->actual,
			     s->nactual, ops);
	free(keys);
	if (nops < 0)
		kpx_err("sync", "reconcile: %s", strerror((int)-nops));
	return nops;
}

static int sync_run(struct kpx_sync *s)
{
	int64_t t0 = kpx_now_ms();
	double t0s = mono_s(), cpu0 = thread_cpu_ms();
	uint32_t g0, g1;
	bool have_g0 = dp_generation(s, &g0);
	bool periodic = t0 - s->last_full >= s->period;
	bool full = wants_dump(s, periodic, have_g0, g0);
	size_t ndesired, nunexpected, i;
	struct kpx_op *ops = NULL, *done = NULL;
	bool *applied = NULL, all;
	unsigned int sets = 0, dels = 0, errors = 0, refusals = 0;
	unsigned int nserr;
	size_t ndone = 0;
	char b[8][24];
	long nops;
	int r;

	if (full && s->dp) {
		struct kpx_service *cur;
		size_t ncur;

		r = s->dp->ops->dump(s->dp, &cur, &ncur);
		if (r) {
			kpx_err("sync", "reading the %s data plane's state: %s",
				s->dp->ops->name, strerror(-r));
			return sync_failed(s, t0, r, t0s, full);
		}
		/* Table order (the module's: insertion) is not key order,
		 * and kpx_reconcile() looks keys up in sorted arrays. */
		qsort(cur, ncur, sizeof(*cur), service_qsort_cmp);
		kpx_services_free(s->actual, s->nactual);
		s->actual = cur;
		s->nactual = ncur;
	}
	nserr = sync_ns_config(s) ? 1 : 0;
	nops = plan(s, full, &all, &ops);
	if (nops >= 0 && s->dp) {
		long n = sync_refused_retry(s, &ops, nops, t0);

		if (n < 0) {
			kpx_err("sync", "planning the refused frontends' retries: %s", strerror(ENOMEM));
			free(ops);
		}
		nops = n;
	}
	if (nops < 0)
		return sync_failed(s, t0, (int)nops, t0s, full);
	applied = calloc(nops ? nops : 1, sizeof(*applied));
	done = malloc((nops ? nops : 1) * sizeof(*done));
	for (i = 0; i < (size_t)nops; i++) {
		if (s->dp && ops[i].type == KPX_OP_SET && sync_refused_hold(s, &ops[i], t0)) {
			continue;	/* refused as it is: not before sync-period */
		}
		r = send_op(s, &ops[i]);
		if (r && ops[i].type == KPX_OP_SET && kpx_dp_err_refused(r)) {
			refusals++;
			sync_refused_add(s, &ops[i], r, t0);
			continue;
		}
		if (r) {
			op_failed(s, &ops[i], r);
			errors++;
			continue;
		}
		if (ops[i].type == KPX_OP_SET)
			sets++;
		else
			dels++;
		if (applied)
			applied[i] = true;
		if (done)
			done[ndone++] = ops[i];
	}
	if (s->dp && (r = commit(s, nops))) {
		errors += sets + dels;
		sets = dels = 0;
		ndone = 0;
	} else if (s->dp && applied) {
		ct_cleanup(s, ops, nops, applied);
	}
	for (i = 0; s->dp && i < ndone; i++)
		sync_refused_done(s, &done[i]);
	free(applied);
	/*
	 * The data plane now holds the desired state, except where a change
	 * failed (repaired by the next sync, which is then full) or was
	 * refused (the data plane keeps what it had for that frontend): only
	 * the applied changes are recorded.
	 */
	if (!done || kpx_reconcile_apply(&s->actual, &s->nactual, done, ndone)) {
		kpx_err("sync", "recording the changes: %s", strerror(ENOMEM));
		errors++;	/* s->actual is stale: the next sync is full */
	}
	free(done);
	ndesired = kpx_fecache_count(s->fc);
	nunexpected = sync_refused_unexpected(s);
	if (nunexpected >= 2 && 2 * nunexpected > ndesired) {
		/* not one bad object: a data plane that takes none (a module
		 * of another version, say) fails every sync as before */
		if (refusals)
			kpx_err("sync", "the %s data plane refuses %zu of %zu frontends within its documented limits: the sync failed",
				s->dp->ops->name, nunexpected, ndesired);
		errors += refusals ? refusals : 1;
	}
	errors += nserr;
	s->refusals += refusals;
	kpx_metrics_sync(s->metrics, mono_s() - t0s, full, ndesired, errors);
	status_done(s, mono_s() - t0s, full, errors, sets, dels);
	kpx_metrics_refused(s->metrics, refusals, s->nrefused);
	if (s->metrics) {
		struct kpx_no_local nl;

		kpx_fecache_no_local(s->fc, &nl);
		kpx_metrics_no_local_endpoints(s->metrics, nl.internal - nl.internal6,
					       nl.external - nl.external6, nl.internal6,
					       nl.external6);
	}
	/* in a dry run s->actual is the desired state; unchanged if no op */
	if (!s->dp && s->metrics && (all || nops))
		kpx_metrics_set_frontends(s->metrics, s->actual, s->nactual);
	free(ops);
	s->synced = true;
	s->need_full = errors > 0;
	s->replaced = false;
	s->last = t0;
	if (full || periodic)	/* dumped, or checked by generation */
		s->last_full = t0;
	/* the data plane is s->actual if only this sync's changes moved it */
	s->gen_ok = have_g0 && !errors && dp_generation(s, &g1) &&
		    g1 - g0 == sets + dels;
	s->gen = s->gen_ok ? g1 : 0;
	sync_healthchecks(s, errors);

	snprintf(b[0], sizeof(b[0]), "%" PRId64, kpx_now_ms() - t0);
	snprintf(b[1], sizeof(b[1]), "%zu", ndesired);
	snprintf(b[2], sizeof(b[2]), "%u", sets);
	snprintf(b[3], sizeof(b[3]), "%u", dels);
	snprintf(b[4], sizeof(b[4]), "%u", errors);
	snprintf(b[5], sizeof(b[5]), "%.3f", thread_cpu_ms() - cpu0);
	snprintf(b[6], sizeof(b[6]), "%u", refusals);
	snprintf(b[7], sizeof(b[7]), "%zu", s->nrefused);
	/* In a real run the list ends before "dry_run". */
	/* each sync at V(2) as kube-proxy's "SyncProxyRules complete"; one with errors always */
	if (errors || kpx_log_verbosity >= 2)
		kpx_logkv_at(__FILE__, __LINE__, errors ? KPX_LOG_WARN : KPX_LOG_DEBUG,
			     errors ? 0 : 2, "sync", "sync done",
			     "duration_ms", b[0], "cpu_ms", b[5], "full", full ? "true" : "false",
			     "frontends", b[1], "sets", b[2], "dels", b[3], "errors", b[4],
			     "refused", b[6], "refused_now", b[7],
			     s->dp ? NULL : "dry_run", "true", NULL);
	return (int)errors;
}


int kpx_sync_run(struct kpx_sync *s)
{
	struct timespec ts;
	int r;

	pthread_mutex_lock(&s->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->last_wall_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	kpx_status_list_free(&s->failed);
	r = sync_run(s);
	pthread_mutex_unlock(&s->lock);
	return r;
}
