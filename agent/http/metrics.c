// SPDX-License-Identifier: GPL-2.0-only
/*
 * Health and metrics state and its Prometheus text rendering (see metrics.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "base/addr.h"
#include "base/duration.h"
#include "base/sysctl.h"
#include "base/ctstat.h"
#include "http/metrics.h"

/* kube-proxy's buckets: ExponentialBuckets(0.001, 2, 15). */
#define SYNC_NB 15
/* 0, 0.25, 0.5, 1..59, 60..115 step 5, 120..300 step 30. */
#define NETPROG_NB (3 + 59 + 12 + 7)
#define TRIGGERS_MAX 65536

struct histo {
	int nb;
	const double *le;
	uint64_t *count;	/* per bucket (not cumulative) + 1 for +Inf */
	uint64_t total;
	double sum;
};

struct kpx_metrics {
	pthread_mutex_t lock;
	struct timespec start;		/* CLOCK_REALTIME at creation */
	int64_t start_mono;		/* kpx_now_ms() at creation */

	/* health */
	int64_t pending_since;		/* mono ms of the oldest queued update, 0 none */
	struct timespec last_updated;	/* realtime, zero before the first */
	bool eligible;
	uint64_t healthz[2], livez[2];	/* [0] 200, [1] 503 */

	/* kube-proxy metrics */
	struct histo sync, sync_full, sync_partial, netprog;
	double last_sync_ts, last_queued_ts;
	uint64_t changes_total[KPX_KIND_MAX], changes_pending[KPX_KIND_MAX];
	double *triggers;		/* pending trigger times (realtime s) */
	size_t ntriggers;

	/* kpx */
	uint64_t syncs, sync_errors, netlink_errors;
	uint64_t restarts[KPX_KIND_MAX], relists[KPX_KIND_MAX];
	size_t nfrontends;
	uint64_t refusals;		/* SETs refused */
	size_t refused;			/* frontends refused now */
	unsigned int no_local[2];	/* [0] internal, [1] external */
	struct frontends *dry;		/* dry-run frontends, or NULL */
};

/*
 * An immutable, reference-counted set of frontends (the dry-run ones), so
 * that a scrape renders them without holding the lock; @ref is changed
 * under kpx_metrics.lock only.
 */
struct frontends {
	unsigned int ref;
	struct kpx_service *v;
	size_t n;
};

static void frontends_free(struct frontends *fs)
{
	if (!fs)
		return;
	kpx_services_free(fs->v, fs->n);
	free(fs);
}

/* Drops a reference taken under @m's lock; frees the set at the last. */
static void frontends_put_ref(struct kpx_metrics *m, struct frontends *fs)
{
	bool last;

	if (!fs)
		return;
	pthread_mutex_lock(&m->lock);
	last = !--fs->ref;
	pthread_mutex_unlock(&m->lock);
	if (last)
		frontends_free(fs);
}

static double sync_le[SYNC_NB], netprog_le[NETPROG_NB];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void buckets_init(void)
{
	int i, n = 0;

	for (i = 0; i < SYNC_NB; i++)
		sync_le[i] = 0.001 * (double)(1 << i);
	netprog_le[n++] = 0;
	netprog_le[n++] = 0.25;
	netprog_le[n++] = 0.5;
	for (i = 1; i <= 59; i++)
		netprog_le[n++] = i;
	for (i = 0; i < 12; i++)
		netprog_le[n++] = 60 + 5 * i;
	for (i = 0; i < 7; i++)
		netprog_le[n++] = 120 + 30 * i;
}

static int histo_init(struct histo *h, const double *le, int nb)
{
	h->nb = nb;
	h->le = le;
	h->count = calloc(nb + 1, sizeof(*h->count));
	return h->count ? 0 : -ENOMEM;
}

static void histo_observe(struct histo *h, double v)
{
	int i;

	for (i = 0; i < h->nb && v > h->le[i]; i++)
		;
	h->count[i]++;
	h->total++;
	h->sum += v;
}

static double realtime_s(struct timespec *ts)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	if (ts)
		*ts = t;
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

struct kpx_metrics *kpx_metrics_new(void)
{
	struct kpx_metrics *m = calloc(1, sizeof(*m));

	pthread_once(&buckets_once, buckets_init);
	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	realtime_s(&m->start);
	m->start_mono = kpx_now_ms();
	m->eligible = true;
	if (histo_init(&m->sync, sync_le, SYNC_NB) ||
	    histo_init(&m->sync_full, sync_le, SYNC_NB) ||
	    histo_init(&m->sync_partial, sync_le, SYNC_NB) ||
	    histo_init(&m->netprog, netprog_le, NETPROG_NB)) {
		kpx_metrics_free(m);
		return NULL;
	}
	return m;
}

void kpx_metrics_free(struct kpx_metrics *m)
{
	if (!m)
		return;
	free(m->sync.count);
	free(m->sync_full.count);
	free(m->sync_partial.count);
	free(m->netprog.count);
	free(m->triggers);
	if (m->dry && !--m->dry->ref)
		frontends_free(m->dry);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void kpx_metrics_change(struct kpx_metrics *m, enum kpx_kind kind, bool queued,
			double trigger)
{
	double start;

	if (!m || kind >= KPX_KIND_MAX)
		return;
	pthread_mutex_lock(&m->lock);
	if (kind != KPX_KIND_NODE) {
		m->changes_total[kind]++;
		m->changes_pending[kind]++;
	}
	if (queued) {
		if (!m->pending_since)
			m->pending_since = kpx_now_ms() ?: 1;
		m->last_queued_ts = realtime_s(NULL);
	}
	start = (double)m->start.tv_sec + m->start.tv_nsec / 1e9;
	if (trigger > start) {
		if (!m->triggers)
			m->triggers = malloc(TRIGGERS_MAX * sizeof(*m->triggers));
		if (m->triggers && m->ntriggers < TRIGGERS_MAX)
			m->triggers[m->ntriggers++] = trigger;
	}
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_watch_restart(struct kpx_metrics *m, enum kpx_kind kind)
{
	if (!m || kind >= KPX_KIND_MAX)
		return;
	pthread_mutex_lock(&m->lock);
	m->restarts[kind]++;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_relist(struct kpx_metrics *m, enum kpx_kind kind)
{
	if (!m || kind >= KPX_KIND_MAX)
		return;
	pthread_mutex_lock(&m->lock);
	m->relists[kind]++;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_node_eligible(struct kpx_metrics *m, bool eligible)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->eligible = eligible;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_sync(struct kpx_metrics *m, double seconds, bool full,
		      size_t nfrontends, unsigned int errors)
{
	double now;
	size_t i;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->syncs++;
	m->nfrontends = nfrontends;
	histo_observe(&m->sync, seconds);
	histo_observe(full ? &m->sync_full : &m->sync_partial, seconds);
	if (errors) {
		m->sync_errors++;
		m->netlink_errors += errors;
	} else {
		now = realtime_s(&m->last_updated);
		m->last_sync_ts = now;
		m->pending_since = 0;
		memset(m->changes_pending, 0, sizeof(m->changes_pending));
		for (i = 0; i < m->ntriggers; i++)
			histo_observe(&m->netprog, now > m->triggers[i] ? now - m->triggers[i] : 0);
		m->ntriggers = 0;
	}
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_refused(struct kpx_metrics *m, unsigned int refusals,
			 size_t current)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->refusals += refusals;
	m->refused = current;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_no_local_endpoints(struct kpx_metrics *m,
				    unsigned int internal, unsigned int external)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->no_local[0] = internal;
	m->no_local[1] = external;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_set_frontends(struct kpx_metrics *m,
			       const struct kpx_service *v, size_t n)
{
	struct kpx_service *copy = n ? calloc(n, sizeof(*copy)) : NULL;
	struct frontends *fs = malloc(sizeof(*fs)), *old;
	size_t i;

	if (!m || (n && !copy) || !fs) {
		free(copy);
		free(fs);
		return;
	}
	for (i = 0; i < n; i++) {
		copy[i] = v[i];
		copy[i].backends = NULL;
		if (v[i].nbackends) {
			copy[i].backends = malloc(v[i].nbackends * sizeof(*v[i].backends));
			if (!copy[i].backends) {
				kpx_services_free(copy, i);
				free(fs);
				return;
			}
			memcpy(copy[i].backends, v[i].backends,
			       v[i].nbackends * sizeof(*v[i].backends));
		}
		copy[i].source_ranges = NULL;
		copy[i].nsource_ranges = 0;
	}
	fs->ref = 1;
	fs->v = copy;
	fs->n = n;
	pthread_mutex_lock(&m->lock);
	old = m->dry;
	m->dry = fs;
	if (old && --old->ref)
		old = NULL;	/* a scrape still renders it */
	pthread_mutex_unlock(&m->lock);
	frontends_free(old);
}

bool kpx_metrics_health(struct kpx_metrics *m, bool with_node,
			int64_t timeout_ms, struct timespec *last_updated,
			bool *eligible)
{
	bool healthy;

	pthread_mutex_lock(&m->lock);
	healthy = !m->last_updated.tv_sec || !m->pending_since ||
		  kpx_now_ms() - m->pending_since < timeout_ms;
	*eligible = m->eligible;
	if (with_node)
		healthy = healthy && m->eligible;
	*last_updated = m->last_updated;
	if (with_node)
		m->healthz[!healthy]++;
	else
		m->livez[!healthy]++;
	pthread_mutex_unlock(&m->lock);
	return healthy;
}

bool kpx_metrics_healthy(struct kpx_metrics *m, int64_t timeout_ms)
{
	bool healthy;

	pthread_mutex_lock(&m->lock);
	healthy = !m->last_updated.tv_sec || !m->pending_since ||
		  kpx_now_ms() - m->pending_since < timeout_ms;
	pthread_mutex_unlock(&m->lock);
	return healthy;
}

void kpx_metrics_gotime(const struct kpx_metrics *m, const struct timespec *ts,
			char *buf, size_t len)
{
	char date[40], frac[16] = "";
	struct tm tm;
	time_t t = ts->tv_sec;
	double mono;
	int n;

	if (!ts->tv_sec && !ts->tv_nsec) {
		snprintf(buf, len, "0001-01-01 00:00:00 +0000 UTC");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
	if (ts->tv_nsec) {
		snprintf(frac, sizeof(frac), ".%09ld", ts->tv_nsec);
		for (n = (int)strlen(frac); frac[n - 1] == '0'; n--)
			frac[n - 1] = '\0';
	}
	mono = (double)(ts->tv_sec - m->start.tv_sec) +
	       (ts->tv_nsec - m->start.tv_nsec) / 1e9;
	snprintf(buf, len, "%s%s +0000 UTC m=%c%.9f", date, frac,
		 mono < 0 ? '-' : '+', mono < 0 ? -mono : mono);
}

/* ---- rendering ------------------------------------------------------- */

static const char *const kind_label[KPX_KIND_MAX] = {
	[KPX_KIND_SERVICE] = "services",
	[KPX_KIND_ENDPOINTSLICE] = "endpointslices",
	[KPX_KIND_NODE] = "nodes",
};

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void histo_put(FILE *f, const char *name, const char *help,
		      const struct histo *h)
{
	uint64_t cum = 0;
	int i;

	head(f, name, "histogram", help);
	for (i = 0; i < h->nb; i++) {
		cum += h->count[i];
		fprintf(f, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, h->le[i], cum);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, h->total);
	fprintf(f, "%s_sum %.9g\n%s_count %" PRIu64 "\n", name, h->sum, name, h->total);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s %.3f\n", name, v);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void frontends_put(FILE *f, const struct kpx_service *v, size_t n,
			  bool per_backend)
{
	char vip[INET6_ADDRSTRLEN], be[INET6_ADDRSTRLEN];
	const struct kpx_nl_counter *c;
	size_t i, j;

	for (c = kpx_nl_frontend_counters; c->name; c++) {
		if (!c->metric)
			continue;
		head(f, c->metric, c->type, c->help);
		for (i = 0; i < n; i++) {
			inet_ntop(v[i].family, &v[i].addr, vip, sizeof(vip));
			fprintf(f, "%s{protocol=\"%s\",vip=\"%s\",port=\"%u\"} %" PRIu64 "\n",
				c->metric, kpx_proto_name(v[i].protocol), vip, v[i].port,
				kpx_nl_counter_get(c, &v[i]));
		}
	}
	head(f, "kpx_frontend_backends", "gauge", "Backends of a frontend");
	for (i = 0; i < n; i++) {
		inet_ntop(v[i].family, &v[i].addr, vip, sizeof(vip));
		fprintf(f, "kpx_frontend_backends{protocol=\"%s\",vip=\"%s\",port=\"%u\"} %zu\n",
			kpx_proto_name(v[i].protocol), vip, v[i].port, v[i].nbackends);
	}
	if (!per_backend)
		return;
	for (c = kpx_nl_backend_counters; c->name; c++) {
		if (!c->metric)
			continue;
		head(f, c->metric, c->type, c->help);
		for (i = 0; i < n; i++) {
			inet_ntop(v[i].family, &v[i].addr, vip, sizeof(vip));
			for (j = 0; j < v[i].nbackends; j++) {
				const struct kpx_backend *b = &v[i].backends[j];

				inet_ntop(v[i].family, &b->addr, be, sizeof(be));
				fprintf(f, "%s{protocol=\"%s\",vip=\"%s\",port=\"%u\",backend_ip=\"%s\",backend_port=\"%u\"} %" PRIu64 "\n",
					c->metric, kpx_proto_name(v[i].protocol), vip,
					v[i].port, be, b->port, kpx_nl_counter_get(c, b));
			}
		}
	}
}

/* A deep copy of @h into @to (its own counts, in @counts). */
static void histo_copy(struct histo *to, const struct histo *h, uint64_t *counts)
{
	*to = *h;
	memcpy(counts, h->count, (h->nb + 1) * sizeof(*counts));
	to->count = counts;
}

char *kpx_metrics_render(struct kpx_metrics *m, const struct kpx_service *v,
			 size_t n, const struct kpx_nl_stats *st,
			 unsigned int flags, size_t *len)
{
	uint64_t counts[4][NETPROG_NB + 1];
	struct kpx_metrics snap, *orig = m;
	const struct kpx_nl_counter *c;
	struct frontends *dry;
	char *buf = NULL;
	FILE *f;
	int k;

	/*
	 * A copy of the state (a few hundred bytes and the dry-run set's
	 * reference) is all that is taken under the lock: /healthz, the
	 * event loop and the syncer never wait for a scrape's rendering.
	 */
	pthread_mutex_lock(&m->lock);
	snap = *m;
	histo_copy(&snap.sync, &m->sync, counts[0]);
	histo_copy(&snap.sync_full, &m->sync_full, counts[1]);
	histo_copy(&snap.sync_partial, &m->sync_partial, counts[2]);
	histo_copy(&snap.netprog, &m->netprog, counts[3]);
	dry = m->dry;
	if (dry)
		dry->ref++;
	pthread_mutex_unlock(&m->lock);
	snap.triggers = NULL;
	snap.dry = NULL;
	m = &snap;

	f = open_memstream(&buf, len);
	if (!f) {
		frontends_put_ref(orig, dry);
		return NULL;
	}
	histo_put(f, "kubeproxy_sync_proxy_rules_duration_seconds",
		  "[ALPHA] SyncProxyRules latency in seconds", &m->sync);
	histo_put(f, "kubeproxy_sync_full_proxy_rules_duration_seconds",
		  "[ALPHA] SyncProxyRules latency in seconds for full resyncs", &m->sync_full);
	histo_put(f, "kubeproxy_sync_partial_proxy_rules_duration_seconds",
		  "[ALPHA] SyncProxyRules latency in seconds for partial resyncs", &m->sync_partial);
	gauge(f, "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
	      "[ALPHA] The last time proxy rules were successfully synced", m->last_sync_ts);
	gauge(f, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
	      "[ALPHA] The last time a sync of proxy rules was queued", m->last_queued_ts);
	histo_put(f, "kubeproxy_network_programming_duration_seconds",
		  "[ALPHA] In Cluster Network Programming Latency in seconds", &m->netprog);
	gauge(f, "kubeproxy_sync_proxy_rules_endpoint_changes_pending",
	      "[ALPHA] Pending proxy rules Endpoint changes",
	      (double)m->changes_pending[KPX_KIND_ENDPOINTSLICE]);
	counter(f, "kubeproxy_sync_proxy_rules_endpoint_changes_total",
		"[ALPHA] Cumulative proxy rules Endpoint changes",
		m->changes_total[KPX_KIND_ENDPOINTSLICE]);
	gauge(f, "kubeproxy_sync_proxy_rules_service_changes_pending",
	      "[ALPHA] Pending proxy rules Service changes",
	      (double)m->changes_pending[KPX_KIND_SERVICE]);
	counter(f, "kubeproxy_sync_proxy_rules_service_changes_total",
		"[ALPHA] Cumulative proxy rules Service changes",
		m->changes_total[KPX_KIND_SERVICE]);
	head(f, "kubeproxy_sync_proxy_rules_no_local_endpoints_total", "gauge",
	     "[ALPHA] Number of services with a Local traffic policy and no endpoints");
	fprintf(f, "kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy=\"external\"} %u\n",
		m->no_local[1]);
	fprintf(f, "kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy=\"internal\"} %u\n",
		m->no_local[0]);
	head(f, "kubeproxy_proxy_healthz_total", "counter",
	     "[ALPHA] Cumulative proxy healthz HTTP status");
	fprintf(f, "kubeproxy_proxy_healthz_total{code=\"200\"} %" PRIu64 "\n", m->healthz[0]);
	fprintf(f, "kubeproxy_proxy_healthz_total{code=\"503\"} %" PRIu64 "\n", m->healthz[1]);
	head(f, "kubeproxy_proxy_livez_total", "counter",
	     "[ALPHA] Cumulative proxy livez HTTP status");
	fprintf(f, "kubeproxy_proxy_livez_total{code=\"200\"} %" PRIu64 "\n", m->livez[0]);
	fprintf(f, "kubeproxy_proxy_livez_total{code=\"503\"} %" PRIu64 "\n", m->livez[1]);

	counter(f, "kpx_syncs_total", "Syncs of the module's state", m->syncs);
	counter(f, "kpx_sync_errors_total", "Syncs in which a change failed", m->sync_errors);
	counter(f, "kpx_netlink_errors_total", "Netlink changes the module refused or that failed",
		m->netlink_errors);
	head(f, "kpx_watch_restarts_total", "counter",
	     "Watches of the Kubernetes API that ended and were restarted");
	for (k = 0; k < KPX_KIND_MAX; k++)
		fprintf(f, "kpx_watch_restarts_total{resource=\"%s\"} %" PRIu64 "\n",
			kind_label[k], m->restarts[k]);
	head(f, "kpx_relists_total", "counter",
	     "Lists of the Kubernetes API after the first (410 Gone, errors)");
	for (k = 0; k < KPX_KIND_MAX; k++)
		fprintf(f, "kpx_relists_total{resource=\"%s\"} %" PRIu64 "\n",
			kind_label[k], m->relists[k]);
	gauge(f, "kpx_desired_frontends", "Frontends the last sync computed",
	      (double)m->nfrontends);
	counter(f, "kpx_sync_proxy_rules_frontend_refused_total",
		"Frontend changes the data plane refused (over its limits or invalid for it); each costs only its frontend",
		m->refusals);
	gauge(f, "kpx_sync_proxy_rules_frontends_refused",
	      "Frontends refused by the data plane and not programmed, retried every sync-period or when they change",
	      (double)m->refused);
	kpx_sysctl_metrics(f);
	kpx_ctstat_metrics(f, KPX_CTSTAT_PATH);
	for (c = kpx_nl_stats_counters; st && c->name; c++) {
		if (!c->metric)
			continue;
		if (!strcmp(c->type, "gauge"))
			gauge(f, c->metric, c->help, (double)kpx_nl_counter_get(c, st));
		else
			counter(f, c->metric, c->help, kpx_nl_counter_get(c, st));
	}
	if (v)
		frontends_put(f, v, n, flags & KPX_METRICS_PER_BACKEND);
	else if (dry)
		frontends_put(f, dry->v, dry->n, flags & KPX_METRICS_PER_BACKEND);
	if (fclose(f)) {
		free(buf);
		buf = NULL;
	}
	frontends_put_ref(orig, dry);
	return buf;
}
