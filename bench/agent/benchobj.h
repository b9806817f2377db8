/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Kubernetes objects the in-process benchmarks feed the agent's model
 * (bench_sync.c, bench_scrape.c, bench_kpx.c): JSON parsed with json-c,
 * Services numbered from 0; bench_model() the model holding them.
 */
#ifndef KPX_BENCHOBJ_H
#define KPX_BENCHOBJ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "k8s/decode.h"
#include "model/model.h"

/* @s parsed; exits with status 2 (a bug in the benchmark) when it is not JSON. */
static inline struct json_object *bench_parse(const char *prog, const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	if (!o) {
		fprintf(stderr, "%s: bad JSON: %.200s\n", prog, s);
		exit(2);
	}
	return o;
}

/* Service bench/svc@i: ClusterIP 10.96.(i / 250).(1 + i % 250):80/TCP -> 8080. */
static inline struct json_object *bench_service(const char *prog, int i)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"svc%d\","
		 "\"namespace\":\"bench\",\"uid\":\"u%d\",\"resourceVersion\":\"1\"},"
		 "\"spec\":{\"type\":\"ClusterIP\",\"clusterIP\":\"10.96.%d.%d\","
		 "\"clusterIPs\":[\"10.96.%d.%d\"],\"ports\":[{\"name\":\"http\","
		 "\"protocol\":\"TCP\",\"port\":80,\"targetPort\":8080}]}}",
		 i, i, i / 250, 1 + i % 250, i / 250, 1 + i % 250);
	return bench_parse(prog, buf);
}

/*
 * Service @i's slice, resourceVersion @gen: @neps ready endpoints
 * 10.(i / 256, skipping 96: the ClusterIPs' range).(i % 256).(1..neps) on
 * node-0..7 (valid for every i < 64,000); endpoint @moved (-1: none) has
 * address .250 instead of its own.
 */
static inline struct json_object *bench_slice(const char *prog, int i, int neps,
					      int moved, int gen)
{
	size_t cap = 512 + (size_t)neps * 96, n;
	char *buf = malloc(cap);
	struct json_object *o;
	int e, o2 = i / 256 >= 96 ? i / 256 + 1 : i / 256;

	if (!buf)
		exit(2);
	n = snprintf(buf, cap,
		     "{\"apiVersion\":\"discovery.k8s.io/v1\",\"kind\":\"EndpointSlice\","
		     "\"metadata\":{\"name\":\"svc%d-1\",\"namespace\":\"bench\",\"uid\":\"e%d\","
		     "\"resourceVersion\":\"%d\",\"labels\":{\"kubernetes.io/service-name\":\"svc%d\"}},"
		     "\"addressType\":\"IPv4\",\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\","
		     "\"port\":8080}],\"endpoints\":[", i, i, gen, i);
	for (e = 0; e < neps; e++)
		n += snprintf(buf + n, cap - n,
			      "%s{\"addresses\":[\"10.%d.%d.%d\"],\"nodeName\":\"node-%d\","
			      "\"conditions\":{\"ready\":true}}", e ? "," : "",
			      o2, i % 256, e == moved ? 250 : e + 1, e % 8);
	snprintf(buf + n, cap - n, "]}");
	o = bench_parse(prog, buf);
	free(buf);
	return o;
}

/*
 * A new model as node-0 (every other setting zero) holding Services 0 ..
 * @nsvc - 1 and their slices of @neps endpoints each (resourceVersion 1).
 * Exits with status 2 when out of memory.
 */
static inline struct kpx_model *bench_model(const char *prog, int nsvc, int neps)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_config cfg;
	int i;

	if (!m) {
		fprintf(stderr, "%s: model: out of memory\n", prog);
		exit(2);
	}
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.hostname, sizeof(cfg.hostname), "node-0");
	kpx_model_set_config(m, &cfg);
	for (i = 0; i < nsvc; i++) {
		struct json_object *o = bench_service(prog, i);

		kpx_model_apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, o);
		json_object_put(o);
		o = bench_slice(prog, i, neps, -1, 1);
		kpx_model_apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, o);
		json_object_put(o);
	}
	return m;
}

#endif
