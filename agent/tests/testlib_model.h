/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the model tests (tests/test_model*.c): TAP (lib/tap.h),
 * compact inline JSON, loading case files step by step, and the desired
 * state rendered as text.  Header-only (static): each test is one .c file.
 */
#ifndef KPX_TESTLIB_MODEL_H
#define KPX_TESTLIB_MODEL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "config/config.h"
#include "k8s/decode.h"
#include "model/model.h"
#include "dp/kpx/nl.h"
#include "base/service.h"
#include "lib/tap.h"

/* Not every test uses every helper. */
#pragma GCC diagnostic ignored "-Wunused-function"

/* Compares two strings; on a difference prints both as TAP comments. */
static void ok_str(const char *got, const char *want, const char *desc)
{
	ok(!strcmp(got, want), "%s", desc);
	if (strcmp(got, want))
		printf("# want:\n%s# got:\n%s", want, got);
}

/*
 * Parses JSON written with ' for " (to keep the inline objects readable),
 * after printf-formatting.  Aborts on a syntax error: a bug in the test.
 */
static struct json_object * __attribute__((format(printf, 1, 2)))
J(const char *fmt, ...)
{
	static char buf[1 << 16];
	struct json_object *o;
	va_list ap;
	char *p;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	o = json_tokener_parse(buf);
	if (!o) {
		fprintf(stderr, "bad test JSON: %s\n", buf);
		abort();
	}
	return o;
}

static int apply(struct kpx_model *m, enum kpx_kind kind, enum kpx_event ev,
		 struct json_object *o)
{
	int ret = kpx_model_apply(m, kind, ev, o);

	json_object_put(o);
	return ret;
}

/* The step of a case object (cases.kpr.test/step), 0 when it has none. */
static int obj_step(struct json_object *it)
{
	struct json_object *md, *an, *st;

	if (!json_object_object_get_ex(it, "metadata", &md) ||
	    !json_object_object_get_ex(md, "annotations", &an) ||
	    !json_object_object_get_ex(an, "cases.kpr.test/step", &st))
		return 0;
	return atoi(json_object_get_string(st));
}

static enum kpx_kind kind_of(struct json_object *it, const char *list)
{
	struct json_object *k;
	const char *kind = json_object_object_get_ex(it, "kind", &k) ?
			   json_object_get_string(k) : list;

	if (!strcmp(kind, "Service"))
		return KPX_KIND_SERVICE;
	if (!strncmp(kind, "EndpointSlice", 13))
		return KPX_KIND_ENDPOINTSLICE;
	if (!strcmp(kind, "Node"))
		return KPX_KIND_NODE;
	return KPX_KIND_MAX;
}

/*
 * Applies the objects of a file (a List, an EndpointSliceList or one
 * object) whose step is @step (-1: all, in file order), as ADDED.  Returns
 * the number of objects rejected, or -1 if the file cannot be read.
 */
static int load_step(struct kpx_model *m, const char *path, int step)
{
	struct json_object *doc = json_object_from_file(path), *items, *it, *k;
	const char *list;
	size_t i, n;
	int bad = 0;

	if (!doc) {
		printf("# cannot read %s (run from agent/)\n", path);
		return -1;
	}
	list = json_object_object_get_ex(doc, "kind", &k) ?
	       json_object_get_string(k) : "";
	items = json_object_object_get(doc, "items");
	n = items ? json_object_array_length(items) : 1;
	for (i = 0; i < n; i++) {
		it = items ? json_object_array_get_idx(items, i) : doc;
		if (step >= 0 && obj_step(it) != step)
			continue;
		bad += kpx_model_apply(m, kind_of(it, list), KPX_EV_ADDED, it) != 0;
	}
	json_object_put(doc);
	return bad;
}

static int load(struct kpx_model *m, const char *path)
{
	return load_step(m, path, -1);
}

static void cidr(struct kpx_cidr *c, const char *s)
{
	if (kpx_parse_cidr(s, c) < 0) {
		fprintf(stderr, "bad test CIDR %s\n", s);
		abort();
	}
}

/*
 * The configuration of the case tests: kube-proxy's defaults for what kpx
 * uses (--detect-local-mode=ClusterCIDR with the cases' --cluster-cidr
 * 10.244.0.0/16, --nodeport-addresses primary) as node @host.
 */
static void case_config(struct kpx_config *c, const char *host)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->hostname, sizeof(c->hostname), "%s", host);
	c->detect_local = KPX_DETECT_LOCAL_CLUSTER_CIDR;
	cidr(&c->cluster_cidrs[0], "10.244.0.0/16");
	c->n_cluster_cidrs = 1;
	c->nodeport_primary = true;
}

/*
 * --nodeport-addresses @list ("0.0.0.0/0,::/0": comma separated CIDRs, at
 * most KPX_CONFIG_CIDRS_MAX) instead of primary.
 */
static void case_nodeport_cidrs(struct kpx_config *c, const char *list)
{
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	c->n_nodeport_cidrs = 0;
	for (tok = strtok_r(buf, ",", &save); tok && c->n_nodeport_cidrs < KPX_CONFIG_CIDRS_MAX;
	     tok = strtok_r(NULL, ",", &save))
		cidr(&c->nodeport_cidrs[c->n_nodeport_cidrs++], tok);
	c->nodeport_primary = false;
}

static void set_node(struct kpx_model *m, const char *host)
{
	struct kpx_config c;

	case_config(&c, host);
	kpx_model_set_config(m, &c);
}

static const char *cidr_str(const struct kpx_cidr *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(c->family, &c->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, c->len);
	return buf;
}

/*
 * The desired state as text, one frontend a line in output order:
 * "10.96.0.10:53/udp [masqnl] -> 10.244.0.3:53 10.244.0.4:53", flags in
 * brackets (drop = KPX_SVC_F_DROP_EMPTY, masqnl = KPX_SVC_F_MASQ_NONLOCAL,
 * masq = KPX_SVC_F_MASQ), source ranges as "from=CIDR,CIDR".  A weight other
 * than 1, an unsorted frontend or backend list or nonzero counters show up
 * in it.  With @only (a substring), only the lines holding it.
 */
static char *render_only(struct kpx_model *m, const char *only)
{
	struct kpx_service *v;
	size_t n, i, j, len;
	char *buf, fe[KPX_SERVICE_STRLEN], be[KPX_HOSTPORT_STRLEN], c[64];
	char line[1 << 16];
	FILE *f;

	if (kpx_model_desired(m, &v, &n))
		return strdup("ENOMEM");
	f = open_memstream(&buf, &len);
	for (i = 0; i < n; i++) {
		FILE *l = fmemopen(line, sizeof(line), "w");

		if (i && kpx_service_key_cmp(&v[i - 1], &v[i]) >= 0)
			fprintf(l, "UNSORTED ");
		fprintf(l, "%s", kpx_service_str(&v[i], fe, sizeof(fe)));
		/* KPX_SVC_F_CLUSTER_IP (every ClusterIP frontend) and
		 * KPX_SVC_F_EXT_LOCAL (every eTP Local external one) are
		 * not rendered; test_model_policy checks them. */
		if (v[i].flags & ~(uint32_t)(KPX_SVC_F_CLUSTER_IP |
					     KPX_SVC_F_EXT_LOCAL))
			fprintf(l, " [%s%s%s%s]",
				v[i].flags & KPX_SVC_F_DROP_EMPTY ? "drop" : "",
				(v[i].flags & KPX_SVC_F_DROP_EMPTY) &&
				(v[i].flags & (KPX_SVC_F_MASQ_NONLOCAL | KPX_SVC_F_MASQ)) ? "," : "",
				v[i].flags & KPX_SVC_F_MASQ_NONLOCAL ? "masqnl" : "",
				v[i].flags & KPX_SVC_F_MASQ ? "masq" : "");
		for (j = 0; j < v[i].nsource_ranges; j++)
			fprintf(l, "%s%s", j ? "," : " from=",
				cidr_str(&v[i].source_ranges[j], c, sizeof(c)));
		fprintf(l, " ->");
		if (v[i].conns || v[i].rejects)
			fprintf(l, " COUNTERS");
		for (j = 0; j < v[i].nbackends; j++) {
			const struct kpx_backend *b = &v[i].backends[j];

			if (j && kpx_backend_cmp(&b[-1], b) >= 0)
				fprintf(l, " UNSORTED");
			fprintf(l, " %s", kpx_hostport_str(v[i].family, &b->addr,
							   b->port, be, sizeof(be)));
			if (b->weight != 1 || b->conns)
				fprintf(l, "@%u", b->weight);
		}
		fputc('\n', l);
		fputc(0, l);
		fclose(l);
		if (!only || strstr(line, only))
			fputs(line, f);
	}
	fclose(f);
	kpx_services_free(v, n);
	return buf;
}

static char *render(struct kpx_model *m)
{
	return render_only(m, NULL);
}

static void ok_state(struct kpx_model *m, const char *want, const char *desc)
{
	char *got = render(m);

	ok_str(got, want, desc);
	free(got);
}

static void ok_state_only(struct kpx_model *m, const char *only,
			  const char *want, const char *desc)
{
	char *got = render_only(m, only);

	ok_str(got, want, desc);
	free(got);
}

/* The health checks as text: "shop/storefront:32100 local=2 healthy\n". */
static char *render_hc(struct kpx_model *m)
{
	struct kpx_hc_service *v;
	size_t n, i, len;
	char *buf;
	FILE *f;

	if (kpx_model_healthchecks(m, &v, &n))
		return strdup("ENOMEM");
	f = open_memstream(&buf, &len);
	for (i = 0; i < n; i++)
		fprintf(f, "%s/%s:%u local=%u%s\n", v[i].namespace, v[i].name,
			v[i].port, v[i].local_endpoints,
			v[i].healthy ? " healthy" : "");
	fclose(f);
	free(v);
	return buf;
}

static void ok_hc(struct kpx_model *m, const char *want, const char *desc)
{
	char *got = render_hc(m);

	ok_str(got, want, desc);
	free(got);
}

#endif
