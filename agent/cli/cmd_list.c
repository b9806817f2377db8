// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl list: the frontends with their backends and counters, as a
 * table or JSON.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/cidr.h"
#include "base/service.h"
#include "cli/kpxctl.h"
#include "cli/mode.h"
#include "dp/kpx/nl.h"

static const char *family_name(int family)
{
	return family == AF_INET6 ? "inet6" : "inet";
}

static void upper(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = (char)toupper((unsigned char)src[i]);
	dst[i] = '\0';
}

/* ---- list ---- */

static int svc_qsort_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* The name of flag @bit ("cluster-ip"), "bit-N" for one without. */
static const char *flag_str(unsigned int bit, char *buf, size_t len)
{
	const char *name = kpx_flag_name(bit);

	if (name)
		return name;
	snprintf(buf, len, "bit-%u", bit);
	return buf;
}

/* The flags by name, in bit order. */
static struct json_object *flags_json(uint32_t flags)
{
	struct json_object *a = json_object_new_array();
	char buf[16];

	for (unsigned int bit = 0; bit < 32; bit++)
		if (flags & (1U << bit))
			json_object_array_add(a, json_object_new_string(
						      flag_str(bit, buf, sizeof(buf))));
	return a;
}

/* The table's Flags: the names joined by ",", "-" for none. */
static void flags_text(uint32_t flags, char *out, size_t len)
{
	size_t at = 0;
	char buf[16];

	snprintf(out, len, "-");
	for (unsigned int bit = 0; bit < 32; bit++)
		if (flags & (1U << bit) && at < len)
			at += (size_t)snprintf(out + at, len - at, "%s%s", at ? "," : "",
					       flag_str(bit, buf, sizeof(buf)));
}

/* The name's JSON: the string, null for none (or a module without names). */
static struct json_object *name_json(const struct kpx_service *s)
{
	return s->name && *s->name ? json_object_new_string(s->name) : NULL;
}

/* The kind's JSON: its uapi name, null for none. */
static struct json_object *kind_json(const struct kpx_service *s)
{
	return s->kind ? json_object_new_string(kpx_kind_name(s->kind)) : NULL;
}

/* "scheduler", "mh_size" (mh only), "affinity" {"timeout",
 * "max", "evictions"} (only when on). */
static void sched_json(struct json_object *o, const struct kpx_service *s)
{
	struct json_object *a;

	json_object_object_add(o, "scheduler", json_object_new_string(
				       s->scheduler[0] ? s->scheduler : "random"));
	if (!strcmp(s->scheduler, "mh"))
		json_object_object_add(o, "mh_size",
				       json_object_new_uint64(s->mh_size));
	if (!s->affinity_timeout)
		return;
	a = json_object_new_object();
	json_object_object_add(a, "timeout",
			       json_object_new_uint64(s->affinity_timeout));
	json_object_object_add(a, "max",
			       json_object_new_uint64(s->affinity_max));
	json_object_object_add(a, "evictions",
			       json_object_new_uint64(s->affinity_evictions));
	json_object_object_add(o, "affinity", a);
}

/* The counters of @obj, one member each (kpx_nl_*_counters[], nl.h). */
static void counters_json(struct json_object *o,
			  const struct kpx_nl_counter *c, const void *obj)
{
	for (; c->name; c++)
		json_object_object_add(o, c->name, json_object_new_uint64(
					       kpx_nl_counter_get(c, obj)));
}

/* The table's counter columns of @obj (or their headers, @obj NULL),
 * each after a space. */
static void counters_row(const struct kpx_nl_counter *c, const void *obj)
{
	for (; c->name; c++) {
		if (!c->column)
			continue;
		if (obj)
			printf(" %*llu", c->width,
			       (unsigned long long)kpx_nl_counter_get(c, obj));
		else
			printf(" %*s", c->width, c->column);
	}
}

static void list_json(const struct kpx_service *v, size_t n, const char *mode)
{
	struct json_object *root = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	char host[INET6_ADDRSTRLEN], hp[KPX_HOSTPORT_STRLEN];

	for (size_t i = 0; i < n; i++) {
		const struct kpx_service *s = &v[i];
		struct json_object *o = json_object_new_object();
		struct json_object *bes = json_object_new_array();

		inet_ntop(s->family, &s->addr, host, sizeof(host));
		json_object_object_add(o, "family",
				       json_object_new_string(family_name(s->family)));
		json_object_object_add(o, "protocol",
				       json_object_new_string(kpx_proto_name(s->protocol)));
		json_object_object_add(o, "vip", json_object_new_string(host));
		json_object_object_add(o, "port", json_object_new_int(s->port));
		json_object_object_add(o, "flags", flags_json(s->flags));
		json_object_object_add(o, "service", name_json(s));
		json_object_object_add(o, "kind", kind_json(s));
		json_object_object_add(o, "source_ranges",
				       cidrs_json(s->source_ranges,
						  s->nsource_ranges));
		counters_json(o, kpx_nl_frontend_counters, s);
		sched_json(o, s);
		/* "cluster": the ClusterIP frontend of ext-local */
		if (s->cluster_port)
			json_object_object_add(o, "cluster", json_object_new_string(
					kpx_hostport_str(s->family, &s->cluster_addr,
							 s->cluster_port, hp,
							 sizeof(hp))));
		for (size_t j = 0; j < s->nbackends; j++) {
			const struct kpx_backend *b = &s->backends[j];
			struct json_object *bo = json_object_new_object();

			inet_ntop(s->family, &b->addr, host, sizeof(host));
			json_object_object_add(bo, "addr",
					       json_object_new_string(host));
			json_object_object_add(bo, "port",
					       json_object_new_int(b->port));
			json_object_object_add(bo, "weight",
					       json_object_new_uint64(b->weight));
			counters_json(bo, kpx_nl_backend_counters, b);
			json_object_array_add(bes, bo);
		}
		json_object_object_add(o, "backends", bes);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "mode", json_object_new_string(mode));
	json_object_object_add(root, "services", arr);
	print_json(root);
	json_object_put(root);
}

/* Column layout shared by the headers and the rows; the counters'
 * columns (counters_row()) between. */
#define SVC_FMT "%-4s %-30s %-24s"
#define BE_FMT  "  -> %-30s %-24s"

static void list_table(const struct kpx_service *v, size_t n)
{
	char hp[KPX_HOSTPORT_STRLEN], proto[16];

	printf(SVC_FMT, "Prot", "LocalAddress:Port", "Flags");
	counters_row(kpx_nl_frontend_counters, NULL);
	printf("  %-12s  %s\n", "Scheduler", "Service");
	printf(BE_FMT, "RemoteAddress:Port", "Weight");
	counters_row(kpx_nl_backend_counters, NULL);
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		const struct kpx_service *s = &v[i];
		char flags[128], sched[64 + KPX_HOSTPORT_STRLEN];

		/* ipvsadm style: "rr", "mh 65537", "sh affinity 10800" */
		snprintf(sched, sizeof(sched), "%s",
			 s->scheduler[0] ? s->scheduler : "random");
		if (!strcmp(s->scheduler, "mh"))
			snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
				 " %u", s->mh_size);
		if (s->affinity_timeout)
			snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
				 " affinity %u", s->affinity_timeout);
		/* the ClusterIP frontend of an ext-local one */
		if (s->cluster_port)
			snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
				 " cluster %s",
				 kpx_hostport_str(s->family, &s->cluster_addr,
						  s->cluster_port, hp, sizeof(hp)));
		upper(proto, kpx_proto_name(s->protocol), sizeof(proto));
		flags_text(s->flags, flags, sizeof(flags));
		printf(SVC_FMT, proto,
		       kpx_hostport_str(s->family, &s->addr, s->port, hp,
					sizeof(hp)),
		       flags);
		counters_row(kpx_nl_frontend_counters, s);
		/* "namespace/name:port kind", "-" for what it has not */
		printf("  %-12s  %s %s\n", sched,
		       s->name && *s->name ? s->name : "-", kpx_kind_name(s->kind));
		for (size_t j = 0; j < s->nbackends; j++) {
			const struct kpx_backend *b = &s->backends[j];
			char w[16];

			snprintf(w, sizeof(w), "%u", b->weight);
			printf(BE_FMT,
			       kpx_hostport_str(s->family, &b->addr, b->port,
						hp, sizeof(hp)),
			       w);
			counters_row(kpx_nl_backend_counters, b);
			printf("\n");
		}
	}
}

int cmd_list(const struct cmd *cmd, int argc, char **argv)
{
	const char *mode, *used;
	struct kpx_service *v;
	size_t n;
	int json;

	if (mode_flag(cmd, &argc, argv, &mode))
		return EXIT_USAGE;
	json = parse_json_flag(cmd, argc, argv);
	if (json < 0)
		return EXIT_USAGE;
	if (mode_frontends(mode, "list", &v, &n, &used))
		return 1;
	if (n)
		qsort(v, n, sizeof(*v), svc_qsort_cmp);
	if (json)
		list_json(v, n, used);
	else
		list_table(v, n);
	kpx_services_free(v, n);
	return 0;
}
