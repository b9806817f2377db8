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
#include <dirent.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <json-c/json.h>

#include "base/addr.h"
#include "base/duration.h"
#include "base/sysctl.h"
#include "base/ctstat.h"
#include "http/metrics.h"
#include "base/buildinfo.h"
#include "http/metrics_svc.h"

/* kube-proxy's buckets: ExponentialBuckets(0.001, 2, 15). */
#define SYNC_NB 15
/* 0, 0.25, 0.5, 1..59, 60..115 step 5, 120..300 step 30. */
#define NETPROG_NB (3 + 59 + 12 + 7)
#define TRIGGERS_MAX 65536
/* client-go's rest_client buckets (component-base restclient/metrics.go). */
#define REST_NB 12
/* rest_client_requests_total series: (code, method) pairs kept. */
#define REST_CODES_MAX 32
#define REST_HOST_LEN 280

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
	unsigned int families;		/* KPX_METRICS_IPV4/6 */
	char mode[16];
	struct histo sync, sync_full, sync_partial;
	struct histo netprog[2];	/* [0] IPv4, [1] IPv6 */
	struct histo ct_sync[2];
	uint64_t ct_deleted[2];
	uint64_t dp_failures;		/* per family: each counts all */
	double last_sync_ts, last_queued_ts;
	uint64_t changes_total[KPX_KIND_MAX], changes_pending[KPX_KIND_MAX];
	double *triggers;		/* pending trigger times (realtime s) */
	unsigned char *trigger_fam;	/* their family index */
	size_t ntriggers;
	/* slice key -> the trigger time it last carried (a json-c object
	 * as a hash table; its values are doubles) */
	struct json_object *slice_triggers;

	/* component-base */
	char rest_host[REST_HOST_LEN];
	struct histo rest_latency, rest_ratelimit;	/* verb "GET" */
	struct {
		long code;
		char method[8];
		uint64_t n;
	} rest_codes[REST_CODES_MAX];
	size_t nrest_codes;

	/* kpx */
	uint64_t syncs, sync_errors, netlink_errors;
	uint64_t restarts[KPX_KIND_MAX], relists[KPX_KIND_MAX];
	size_t nfrontends;
	uint64_t refusals;		/* SETs refused */
	size_t refused;			/* frontends refused now */
	unsigned int no_local[2][2];	/* [IPv4, IPv6][internal, external] */
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
static const double rest_le[REST_NB] = {
	0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60
};
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
	m->eligible = false;	/* the Node is not known yet */
	m->families = KPX_METRICS_IPV4;
	if (!access("/proc/sys/net/ipv6", F_OK))
		m->families |= KPX_METRICS_IPV6;
	snprintf(m->mode, sizeof(m->mode), "kpx");
	m->slice_triggers = json_object_new_object();
	if (!m->slice_triggers ||
	    histo_init(&m->sync, sync_le, SYNC_NB) ||
	    histo_init(&m->sync_full, sync_le, SYNC_NB) ||
	    histo_init(&m->sync_partial, sync_le, SYNC_NB) ||
	    histo_init(&m->netprog[0], netprog_le, NETPROG_NB) ||
	    histo_init(&m->netprog[1], netprog_le, NETPROG_NB) ||
	    histo_init(&m->ct_sync[0], sync_le, SYNC_NB) ||
	    histo_init(&m->ct_sync[1], sync_le, SYNC_NB) ||
	    histo_init(&m->rest_latency, rest_le, REST_NB) ||
	    histo_init(&m->rest_ratelimit, rest_le, REST_NB)) {
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
	free(m->netprog[0].count);
	free(m->netprog[1].count);
	free(m->ct_sync[0].count);
	free(m->ct_sync[1].count);
	free(m->rest_latency.count);
	free(m->rest_ratelimit.count);
	free(m->triggers);
	free(m->trigger_fam);
	json_object_put(m->slice_triggers);
	if (m->dry && !--m->dry->ref)
		frontends_free(m->dry);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Under m->lock: counts one change of @kind, queues @trigger of family @fi. */
static void change_locked(struct kpx_metrics *m, enum kpx_kind kind,
			  bool queued, double trigger, int fi)
{
	double start;

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
		if (!m->trigger_fam)
			m->trigger_fam = malloc(TRIGGERS_MAX);
		if (m->triggers && m->trigger_fam && m->ntriggers < TRIGGERS_MAX) {
			m->trigger_fam[m->ntriggers] = (unsigned char)fi;
			m->triggers[m->ntriggers++] = trigger;
		}
	}
}

/* The index of the first served family: IPv4 unless IPv6 only. */
static int primary_fi(const struct kpx_metrics *m)
{
	return (m->families & KPX_METRICS_IPV4) ? 0 : 1;
}

void kpx_metrics_change(struct kpx_metrics *m, enum kpx_kind kind, bool queued,
			double trigger)
{
	if (!m || kind >= KPX_KIND_MAX)
		return;
	pthread_mutex_lock(&m->lock);
	change_locked(m, kind, queued, trigger, primary_fi(m));
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_change_slice(struct kpx_metrics *m, const char *key,
			      bool deleted, int family, bool queued,
			      double trigger)
{
	struct json_object *prev = NULL;
	int fi;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	fi = family == AF_INET6 ? 1 : family == AF_INET ? 0 : primary_fi(m);
	if (deleted) {
		json_object_object_del(m->slice_triggers, key);
		trigger = 0;	/* a deleted slice's last change was programmed */
	} else if (json_object_object_get_ex(m->slice_triggers, key, &prev) &&
		   json_object_get_double(prev) == trigger) {
		trigger = 0;	/* unchanged since it was last seen */
	} else if (trigger > 0) {
		json_object_object_add(m->slice_triggers, key,
				       json_object_new_double(trigger));
	}
	change_locked(m, KPX_KIND_ENDPOINTSLICE, queued, trigger, fi);
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_set_families(struct kpx_metrics *m, unsigned int families)
{
	if (!m || !(families & (KPX_METRICS_IPV4 | KPX_METRICS_IPV6)))
		return;
	pthread_mutex_lock(&m->lock);
	m->families = families & (KPX_METRICS_IPV4 | KPX_METRICS_IPV6);
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_set_mode(struct kpx_metrics *m, const char *mode)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	snprintf(m->mode, sizeof(m->mode), "%s", mode && *mode ? mode : "kpx");
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_dp_failure(struct kpx_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->dp_failures++;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_conntrack(struct kpx_metrics *m, int family, double seconds,
			   unsigned long deleted)
{
	int fi = family == AF_INET6 ? 1 : 0;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	histo_observe(&m->ct_sync[fi], seconds);
	m->ct_deleted[fi] += deleted;
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_rest_request(struct kpx_metrics *m, long code,
			      const char *method, const char *host,
			      double seconds)
{
	size_t i;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	snprintf(m->rest_host, sizeof(m->rest_host), "%s", host);
	for (i = 0; i < m->nrest_codes; i++)
		if (m->rest_codes[i].code == code &&
		    !strcmp(m->rest_codes[i].method, method))
			break;
	if (i == m->nrest_codes && i < REST_CODES_MAX) {
		m->rest_codes[i].code = code;
		snprintf(m->rest_codes[i].method, sizeof(m->rest_codes[i].method),
			 "%s", method);
		m->rest_codes[i].n = 0;
		m->nrest_codes++;
	}
	if (i < m->nrest_codes)
		m->rest_codes[i].n++;
	if (seconds >= 0)
		histo_observe(&m->rest_latency, seconds);
	pthread_mutex_unlock(&m->lock);
}

void kpx_metrics_rest_ratelimit(struct kpx_metrics *m, const char *method,
				const char *host, double seconds)
{
	(void)method;	/* the agent only GETs */
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	snprintf(m->rest_host, sizeof(m->rest_host), "%s", host);
	histo_observe(&m->rest_ratelimit, seconds);
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
			histo_observe(&m->netprog[m->trigger_fam[i]],
				      now > m->triggers[i] ? now - m->triggers[i] : 0);
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
				    unsigned int internal, unsigned int external,
				    unsigned int internal6, unsigned int external6)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->no_local[0][0] = internal;
	m->no_local[0][1] = external;
	m->no_local[1][0] = internal6;
	m->no_local[1][1] = external6;
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
		copy[i].name = NULL;	/* not shown in /metrics */
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
			bool *eligible, bool *proxier_healthy,
			unsigned int *families)
{
	bool healthy;

	pthread_mutex_lock(&m->lock);
	healthy = !m->last_updated.tv_sec || !m->pending_since ||
		  kpx_now_ms() - m->pending_since < timeout_ms;
	*proxier_healthy = healthy;
	*families = m->families;
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

void kpx_metrics_rfc3339(const struct timespec *ts, char *buf, size_t len)
{
	char date[40], frac[16] = "";
	struct tm tm;
	time_t t = ts->tv_sec;
	int n;

	if (!ts->tv_sec && !ts->tv_nsec) {
		snprintf(buf, len, "0001-01-01T00:00:00Z");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	if (ts->tv_nsec) {
		snprintf(frac, sizeof(frac), ".%09ld", ts->tv_nsec);
		for (n = (int)strlen(frac); frac[n - 1] == '0'; n--)
			frac[n - 1] = '\0';
	}
	snprintf(buf, len, "%s%sZ", date, frac);
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

/*
 * The samples of histogram @name with the labels @lab ("" or
 * 'k="v",...' without braces) before le.
 */
static void histo_samples(FILE *f, const char *name, const char *lab,
			  const struct histo *h)
{
	const char *sep = *lab ? "," : "";
	uint64_t cum = 0;
	int i;

	for (i = 0; i < h->nb; i++) {
		cum += h->count[i];
		fprintf(f, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, lab, sep,
			h->le[i], cum);
	}
	fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, lab, sep, h->total);
	if (*lab)
		fprintf(f, "%s_sum{%s} %.9g\n%s_count{%s} %" PRIu64 "\n", name, lab,
			h->sum, name, lab, h->total);
	else
		fprintf(f, "%s_sum %.9g\n%s_count %" PRIu64 "\n", name, h->sum, name,
			h->total);
}

static const char *const family_name[2] = { "IPv4", "IPv6" };

/*
 * Histogram @name with one ip_family series per served family: @h[fi],
 * or @h[0] for every family when @shared (one sync programs both).
 */
static void histo_fam(FILE *f, const struct kpx_metrics *m, const char *name,
		      const char *help, const struct histo *h, bool shared)
{
	char lab[32];
	int fi;

	head(f, name, "histogram", help);
	for (fi = 0; fi < 2; fi++) {
		if (!(m->families & (1U << fi)))
			continue;
		snprintf(lab, sizeof(lab), "ip_family=\"%s\"", family_name[fi]);
		histo_samples(f, name, lab, shared ? &h[0] : &h[fi]);
	}
}

/* A gauge or counter with one ip_family series per served family. */
static void value_fam(FILE *f, const struct kpx_metrics *m, const char *name,
		      const char *type, const char *help, const double *v,
		      bool shared)
{
	int fi;

	head(f, name, type, help);
	for (fi = 0; fi < 2; fi++)
		if (m->families & (1U << fi))
			fprintf(f, "%s{ip_family=\"%s\"} %.17g\n", name,
				family_name[fi], shared ? v[0] : v[fi]);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s %.17g\n", name, v);
}

/*
 * client_golang's process collector (Linux): CPU time, memory, file
 * descriptors and start time of this process from /proc/self and its
 * limits.  Metrics it cannot read are left out, as the collector does.
 */
static void process_metrics(FILE *f)
{
	unsigned long long utime, stime, start, vsize;
	long long rss;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	double btime = -1;
	char line[256], *p;
	struct rlimit rl;
	FILE *st;
	DIR *d;
	long nfd = 0;
	struct dirent *de;
	bool have = false;

	st = fopen("/proc/self/stat", "r");
	if (st) {
		/* comm may hold spaces: the fields after it follow the last ')' */
		char buf[1024];
		size_t n = fread(buf, 1, sizeof(buf) - 1, st);

		buf[n] = '\0';
		p = strrchr(buf, ')');
		have = p && sscanf(p + 2,
				   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
				   &utime, &stime, &start, &vsize, &rss) == 5;
		fclose(st);
	}
	st = fopen("/proc/stat", "r");
	while (st && fgets(line, sizeof(line), st))
		if (sscanf(line, "btime %lf", &btime) == 1)
			break;
	if (st)
		fclose(st);
	if (have && tck > 0) {
		head(f, "process_cpu_seconds_total", "counter",
		     "Total user and system CPU time spent in seconds.");
		fprintf(f, "process_cpu_seconds_total %.17g\n",
			(double)(utime + stime) / (double)tck);
	}
	d = opendir("/proc/self/fd");
	if (d) {
		while ((de = readdir(d)))
			nfd += de->d_name[0] != '.';
		closedir(d);
		gauge(f, "process_open_fds", "Number of open file descriptors.",
		      (double)(nfd - 1));	/* not the directory's own */
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		gauge(f, "process_max_fds", "Maximum number of open file descriptors.",
		      (double)rl.rlim_cur);
	if (have) {
		gauge(f, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
		      (double)vsize);
	}
	if (!getrlimit(RLIMIT_AS, &rl))
		gauge(f, "process_virtual_memory_max_bytes",
		      "Maximum amount of virtual memory available in bytes.",
		      (double)rl.rlim_cur);
	if (have && page > 0)
		gauge(f, "process_resident_memory_bytes", "Resident memory size in bytes.",
		      (double)rss * (double)page);
	if (have && tck > 0 && btime >= 0)
		gauge(f, "process_start_time_seconds",
		      "Start time of the process since unix epoch in seconds.",
		      btime + (double)start / (double)tck);
}

/*
 * component-base's kubernetes_build_info, with kpx's build (base/buildinfo.h):
 * git_version "v" and kpx's version, major and minor its first two parts,
 * the commit and tree state it was built from, the build date; compiler the
 * C compiler's name; go_version empty (no Go runtime).
 */
static void build_info(FILE *f)
{
	char major[16] = "", minor[16] = "";

	sscanf(kpx_build_version, "%15[0-9].%15[0-9]", major, minor);
	head(f, "kubernetes_build_info", "gauge",
	     "[BETA] A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.");
	fprintf(f, "kubernetes_build_info{build_date=\"%s\",compiler=\"%s\",git_commit=\"%s\",git_tree_state=\"%s\",git_version=\"v%s\",go_version=\"\",major=\"%s\",minor=\"%s\",platform=\"linux/%s\"} 1\n",
		kpx_build_date,
#if defined(__clang__)
		"clang",
#else
		"gcc",
#endif
		kpx_build_git_commit, kpx_build_git_tree_state, kpx_build_version, major, minor,
#if defined(__x86_64__)
		"amd64"
#elif defined(__aarch64__)
		"arm64"
#else
		"unknown"
#endif
		);
}

/* client-go's rest_client_* (component-base restclient/metrics.go). */
static void rest_metrics(FILE *f, const struct kpx_metrics *m)
{
	char lab[REST_HOST_LEN + 32];
	size_t i;

	head(f, "rest_client_requests_total", "counter",
	     "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.");
	for (i = 0; i < m->nrest_codes; i++) {
		if (m->rest_codes[i].code)
			snprintf(lab, sizeof(lab), "%ld", m->rest_codes[i].code);
		else
			snprintf(lab, sizeof(lab), "<error>");
		fprintf(f, "rest_client_requests_total{code=\"%s\",host=\"%s\",method=\"%s\"} %" PRIu64 "\n",
			lab, m->rest_host, m->rest_codes[i].method, m->rest_codes[i].n);
	}
	snprintf(lab, sizeof(lab), "host=\"%s\",verb=\"GET\"", m->rest_host);
	head(f, "rest_client_request_duration_seconds", "histogram",
	     "[ALPHA] Request latency in seconds. Broken down by verb, and host.");
	if (m->rest_latency.total)
		histo_samples(f, "rest_client_request_duration_seconds", lab,
			      &m->rest_latency);
	head(f, "rest_client_rate_limiter_duration_seconds", "histogram",
	     "[ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.");
	if (m->rest_ratelimit.total)
		histo_samples(f, "rest_client_rate_limiter_duration_seconds", lab,
			      &m->rest_ratelimit);
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
	uint64_t counts[10][NETPROG_NB + 1];
	double fv[2];
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
	histo_copy(&snap.netprog[0], &m->netprog[0], counts[3]);
	histo_copy(&snap.netprog[1], &m->netprog[1], counts[4]);
	histo_copy(&snap.ct_sync[0], &m->ct_sync[0], counts[5]);
	histo_copy(&snap.ct_sync[1], &m->ct_sync[1], counts[6]);
	histo_copy(&snap.rest_latency, &m->rest_latency, counts[7]);
	histo_copy(&snap.rest_ratelimit, &m->rest_ratelimit, counts[8]);
	dry = m->dry;
	if (dry)
		dry->ref++;
	pthread_mutex_unlock(&m->lock);
	snap.triggers = NULL;
	snap.trigger_fam = NULL;
	snap.slice_triggers = NULL;
	snap.dry = NULL;
	m = &snap;

	f = open_memstream(&buf, len);
	if (!f) {
		frontends_put_ref(orig, dry);
		return NULL;
	}
	/*
	 * One sync programs every family: the per-family sync series are
	 * the same (each family's rules took that sync), as a dual-stack
	 * kube-proxy's two proxiers each report their own.
	 */
	histo_fam(f, m, "kubeproxy_sync_proxy_rules_duration_seconds",
		  "[ALPHA] SyncProxyRules latency in seconds", &m->sync, true);
	histo_fam(f, m, "kubeproxy_sync_full_proxy_rules_duration_seconds",
		  "[ALPHA] SyncProxyRules latency in seconds for full resyncs",
		  &m->sync_full, true);
	histo_fam(f, m, "kubeproxy_sync_partial_proxy_rules_duration_seconds",
		  "[ALPHA] SyncProxyRules latency in seconds for partial resyncs",
		  &m->sync_partial, true);
	value_fam(f, m, "kubeproxy_sync_proxy_rules_last_timestamp_seconds", "gauge",
		  "[ALPHA] The last time proxy rules were successfully synced",
		  &m->last_sync_ts, true);
	value_fam(f, m, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds", "gauge",
		  "[ALPHA] The last time a sync of proxy rules was queued",
		  &m->last_queued_ts, true);
	histo_fam(f, m, "kubeproxy_network_programming_duration_seconds",
		  "[ALPHA] In Cluster Network Programming Latency in seconds",
		  m->netprog, false);
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
	/* each family's Service ports, as each of kube-proxy's proxiers */
	head(f, "kubeproxy_sync_proxy_rules_no_local_endpoints_total", "gauge",
	     "[ALPHA] Number of services with a Local traffic policy and no endpoints");
	for (k = 0; k < 2; k++) {
		if (!(m->families & (1U << k)))
			continue;
		fprintf(f, "kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"%s\",traffic_policy=\"external\"} %u\n",
			family_name[k], m->no_local[k][1]);
		fprintf(f, "kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family=\"%s\",traffic_policy=\"internal\"} %u\n",
			family_name[k], m->no_local[k][0]);
	}
	fv[0] = (double)m->dp_failures;
	if (!strcmp(m->mode, "iptables") || !strcmp(m->mode, "ipvs"))
		value_fam(f, m, "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
			  "counter", "[ALPHA] Cumulative proxy iptables restore failures",
			  fv, true);
	if (!strcmp(m->mode, "iptables")) {
		fv[0] = 0;	/* every restore is --noflush: none is "partial" */
		value_fam(f, m, "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
			  "counter", "[ALPHA] Cumulative proxy iptables partial restore failures",
			  fv, true);
	}
	if (!strcmp(m->mode, "nftables")) {
		value_fam(f, m, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
			  "counter", "[ALPHA] Cumulative proxy nftables sync failures",
			  fv, true);
		fv[0] = 0;	/* one transaction: no separate stale-chain cleanup */
		value_fam(f, m, "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
			  "counter", "[ALPHA] Cumulative proxy nftables cleanup failures",
			  fv, true);
	}
	if (strcmp(m->mode, "kpx")) {
		/* the agent's own conntrack cleanup (the module's in kpx mode) */
		histo_fam(f, m, "kubeproxy_conntrack_reconciler_sync_duration_seconds",
			  "[ALPHA] ReconcileConntrackFlowsLatency latency in seconds",
			  m->ct_sync, false);
		fv[0] = (double)m->ct_deleted[0];
		fv[1] = (double)m->ct_deleted[1];
		value_fam(f, m, "kubeproxy_conntrack_reconciler_deleted_entries_total",
			  "counter", "[ALPHA] Cumulative conntrack flows deleted by conntrack reconciler",
			  fv, false);
	} else if (st && st->ct_deleted_known) {
		/*
		 * kpx mode: the module deletes them, in batched walks off the
		 * sync (no sync duration to observe); its per-family counts
		 */
		fv[0] = (double)st->ct_deleted[0];
		fv[1] = (double)st->ct_deleted[1];
		value_fam(f, m, "kubeproxy_conntrack_reconciler_deleted_entries_total",
			  "counter", "[ALPHA] Cumulative conntrack flows deleted by conntrack reconciler",
			  fv, false);
	}
	head(f, "kubeproxy_proxy_healthz_total", "counter",
	     "[ALPHA] Cumulative proxy healthz HTTP status");
	fprintf(f, "kubeproxy_proxy_healthz_total{code=\"200\"} %" PRIu64 "\n", m->healthz[0]);
	fprintf(f, "kubeproxy_proxy_healthz_total{code=\"503\"} %" PRIu64 "\n", m->healthz[1]);
	head(f, "kubeproxy_proxy_livez_total", "counter",
	     "[ALPHA] Cumulative proxy livez HTTP status");
	fprintf(f, "kubeproxy_proxy_livez_total{code=\"200\"} %" PRIu64 "\n", m->livez[0]);
	fprintf(f, "kubeproxy_proxy_livez_total{code=\"503\"} %" PRIu64 "\n", m->livez[1]);

	rest_metrics(f, m);
	process_metrics(f);
	build_info(f);

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
	if (v) {
		frontends_put(f, v, n, flags & KPX_METRICS_PER_BACKEND);
		/* on -ENOMEM the per-Service series are left out this time */
		(void)kpx_metrics_services(f, v, n);
	} else if (dry)
		frontends_put(f, dry->v, dry->n, flags & KPX_METRICS_PER_BACKEND);
	if (fclose(f)) {
		free(buf);
		buf = NULL;
	}
	frontends_put_ref(orig, dry);
	return buf;
}
