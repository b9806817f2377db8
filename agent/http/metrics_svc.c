// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-Service series of /metrics (metrics_svc.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "http/metrics_svc.h"

/* One Service port: its name's parts and its frontends' sums. */
struct svc_sum {
	const char *name; /* "namespace/name:port", not owned */
	uint64_t conns, refused, no_endpoints, source_range;
};

static int sum_cmp(const void *a, const void *b)
{
	return strcmp(((const struct svc_sum *)a)->name,
		      ((const struct svc_sum *)b)->name);
}

/* @len bytes of @p as a label value: '"' and '\\' escaped (the module
 * admits visible ASCII). */
static void label_value(FILE *f, const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%s%c", strchr("\"\\", p[i]) ? "\\" : "", p[i]);
}

/* One sample: NAME{namespace="..",service="..",port=".."[,reason=".."]} V */
static void sample(FILE *f, const char *metric, const char *name,
		   const char *reason, uint64_t v)
{
	const char *slash = strchr(name, '/');
	const char *svc = slash ? slash + 1 : name;
	const char *colon = strchr(svc, ':');

	fprintf(f, "%s{namespace=\"", metric);
	label_value(f, name, slash ? (size_t)(slash - name) : 0);
	fputs("\",service=\"", f);
	label_value(f, svc, colon ? (size_t)(colon - svc) : strlen(svc));
	fputs("\",port=\"", f);
	if (colon)
		label_value(f, colon + 1, strlen(colon + 1));
	fputc('"', f);
	if (reason)
		fprintf(f, ",reason=\"%s\"", reason);
	fprintf(f, "} %" PRIu64 "\n", v);
}

int kpx_metrics_services(FILE *f, const struct kpx_service *v, size_t n)
{
	struct svc_sum *s;
	size_t i, k = 0;

	s = calloc(n ? n : 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!v[i].name || !v[i].name[0])
			continue;
		s[k].name = v[i].name;
		s[k].conns = v[i].conns;
		/* drops are counted in rejects too (KPX_SVC_A_DROPS) */
		s[k].refused = v[i].rejects >= v[i].drops ?
				       v[i].rejects - v[i].drops :
				       0;
		s[k].no_endpoints = v[i].drops;
		s[k].source_range = v[i].filtered;
		k++;
	}
	qsort(s, k, sizeof(*s), sum_cmp);
	/* fold each run of one name into its first entry */
	n = 0;
	for (i = 0; i < k; i++) {
		if (n && !strcmp(s[n - 1].name, s[i].name)) {
			s[n - 1].conns += s[i].conns;
			s[n - 1].refused += s[i].refused;
			s[n - 1].no_endpoints += s[i].no_endpoints;
			s[n - 1].source_range += s[i].source_range;
			continue;
		}
		s[n++] = s[i];
	}

	fputs("# HELP kpx_service_connections_total New connections the kpx module scheduled for a Service port, all its frontends\n"
	      "# TYPE kpx_service_connections_total counter\n",
	      f);
	for (i = 0; i < n; i++)
		sample(f, "kpx_service_connections_total", s[i].name, NULL,
		       s[i].conns);
	fputs("# HELP kpx_service_rejects_total New connections to a Service port the kpx module refused for want of an endpoint\n"
	      "# TYPE kpx_service_rejects_total counter\n",
	      f);
	for (i = 0; i < n; i++)
		sample(f, "kpx_service_rejects_total", s[i].name, NULL,
		       s[i].refused);
	fputs("# HELP kpx_service_drops_total New connections to a Service port the kpx module dropped, by reason\n"
	      "# TYPE kpx_service_drops_total counter\n",
	      f);
	for (i = 0; i < n; i++) {
		sample(f, "kpx_service_drops_total", s[i].name, "no_endpoints",
		       s[i].no_endpoints);
		sample(f, "kpx_service_drops_total", s[i].name, "source_range",
		       s[i].source_range);
	}
	free(s);
	return 0;
}
