// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl flows: the live conntrack entries destination-NATed for a
 * frontend of the module or of a fallback mode (mode.h), read through
 * ctnetlink (libnetfilter_conntrack), by frontend and backend (flows.c
 * groups them), with state, age and timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <json-c/json.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "base/addr.h"
#include "base/service.h"
#include "cli/flows.h"
#include "cli/kpxctl.h"
#include "cli/mode.h"
#include "dp/kpx/nl.h"

#define TS_SYSCTL "/proc/sys/net/netfilter/nf_conntrack_timestamp"

struct collect {
	const struct kpx_service *v;
	size_t n;
	const struct kpx_flow_filter *f;
	struct kpx_flow *flows;
	size_t nflows, cap;
	size_t nstamped; /* entries with a start time */
	int err;
};

static void read_entry(const struct nf_conntrack *ct, struct kpx_flow *fl)
{
	memset(fl, 0, sizeof(*fl));
	fl->family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	fl->protocol = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	fl->sport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC));
	fl->dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
	fl->be_port = ntohs(nfct_get_attr_u16(ct, ATTR_REPL_PORT_SRC));
	if (fl->family == AF_INET) {
		fl->src.v4.s_addr = nfct_get_attr_u32(ct, ATTR_ORIG_IPV4_SRC);
		fl->dst.v4.s_addr = nfct_get_attr_u32(ct, ATTR_ORIG_IPV4_DST);
		fl->be.v4.s_addr = nfct_get_attr_u32(ct, ATTR_REPL_IPV4_SRC);
	} else if (fl->family == AF_INET6) {
		memcpy(&fl->src.v6, nfct_get_attr(ct, ATTR_ORIG_IPV6_SRC), 16);
		memcpy(&fl->dst.v6, nfct_get_attr(ct, ATTR_ORIG_IPV6_DST), 16);
		memcpy(&fl->be.v6, nfct_get_attr(ct, ATTR_REPL_IPV6_SRC), 16);
	}
	fl->status = nfct_get_attr_u32(ct, ATTR_STATUS);
	fl->timeout = nfct_get_attr_u32(ct, ATTR_TIMEOUT);
	fl->state = -1;
	if (fl->protocol == IPPROTO_TCP &&
	    nfct_attr_is_set(ct, ATTR_TCP_STATE) > 0)
		fl->state = nfct_get_attr_u8(ct, ATTR_TCP_STATE);
	else if (fl->protocol == IPPROTO_SCTP &&
		 nfct_attr_is_set(ct, ATTR_SCTP_STATE) > 0)
		fl->state = nfct_get_attr_u8(ct, ATTR_SCTP_STATE);
	if (nfct_attr_is_set(ct, ATTR_TIMESTAMP_START) > 0)
		fl->start_ns = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_START);
}

/* Keeps the entries of the frontends asked for: memory in kpx's entries. */
static int collect_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
		      void *data)
{
	struct collect *c = data;
	const struct kpx_service *fe;
	struct kpx_flow fl;

	read_entry(ct, &fl);
	fe = kpx_flow_frontend(c->v, c->n, &fl);
	if (!fe || !kpx_flow_filter_match(c->f, fe))
		return NFCT_CB_CONTINUE;
	if (c->nflows == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct kpx_flow *v = realloc(c->flows, cap * sizeof(*v));

		if (!v) {
			c->err = -ENOMEM;
			return NFCT_CB_STOP;
		}
		c->flows = v;
		c->cap = cap;
	}
	c->flows[c->nflows++] = fl;
	if (fl.start_ns)
		c->nstamped++;
	return NFCT_CB_CONTINUE;
}

static int dump_conntrack(struct collect *c)
{
	struct nfct_handle *h = nfct_open(CONNTRACK, 0);
	uint32_t family = AF_UNSPEC;
	int r;

	if (!h)
		return -errno;
	nfct_callback_register(h, NFCT_T_ALL, collect_cb, c);
	r = nfct_query(h, NFCT_Q_DUMP, &family);
	if (r < 0)
		r = -errno;
	nfct_close(h);
	return c->err ? c->err : r < 0 ? r : 0;
}

/*
 * Why there is no age when no entry has a start time: "" when the sysctl
 * is 1 (entries older than its setting have none) or cannot be read.
 */
static const char *age_note(size_t nflows, size_t nstamped)
{
	FILE *f;
	int v = -1;

	if (!nflows || nstamped == nflows)
		return NULL;
	f = fopen(TS_SYSCTL, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	if (v == 0)
		return "not recorded: net.netfilter.nf_conntrack_timestamp is 0 "
		       "(set it to 1: entries created after that carry their start)";
	if (v < 0)
		return "not recorded: conntrack timestamps unavailable (" TS_SYSCTL
		       " unreadable)";
	return "not recorded for entries created before "
	       "net.netfilter.nf_conntrack_timestamp was set to 1";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Seconds since @fl was created, -1 without a start time. */
static long long flow_age(const struct kpx_flow *fl, uint64_t now)
{
	if (!fl->start_ns)
		return -1;
	return now > fl->start_ns ?
		       (long long)((now - fl->start_ns) / 1000000000ULL) :
		       0;
}

static void flows_json(const struct kpx_flow_group *g, size_t ng,
		       const char *note, const char *mode)
{
	struct json_object *root = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	char host[INET6_ADDRSTRLEN];
	uint64_t now = now_ns();

	for (size_t i = 0; i < ng; i++) {
		const struct kpx_service *s = g[i].fe;
		struct json_object *o = json_object_new_object();
		struct json_object *bes = json_object_new_array();
		size_t total = 0;

		inet_ntop(s->family, &s->addr, host, sizeof(host));
		json_object_object_add(
			o, "protocol",
			json_object_new_string(kpx_proto_name(s->protocol)));
		json_object_object_add(o, "vip", json_object_new_string(host));
		json_object_object_add(o, "port", json_object_new_int(s->port));
		json_object_object_add(o, "service",
				       s->name && *s->name ?
					       json_object_new_string(s->name) :
					       NULL);
		json_object_object_add(
			o, "kind",
			s->kind ?
				json_object_new_string(kpx_kind_name(s->kind)) :
				NULL);
		for (size_t j = 0; j < g[i].nbackends; j++) {
			const struct kpx_flow_backend *b = &g[i].backends[j];
			struct json_object *bo = json_object_new_object();
			struct json_object *fa = json_object_new_array();

			inet_ntop(s->family, &b->addr, host, sizeof(host));
			json_object_object_add(bo, "addr",
					       json_object_new_string(host));
			json_object_object_add(bo, "port",
					       json_object_new_int(b->port));
			json_object_object_add(
				bo, "current",
				json_object_new_boolean(b->current));
			for (size_t k = 0; k < b->nflows; k++) {
				const struct kpx_flow *fl = b->flows[k];
				struct json_object *fo =
					json_object_new_object();
				long long age = flow_age(fl, now);

				inet_ntop(fl->family, &fl->src, host,
					  sizeof(host));
				json_object_object_add(
					fo, "client",
					json_object_new_string(host));
				json_object_object_add(
					fo, "client_port",
					json_object_new_int(fl->sport));
				json_object_object_add(
					fo, "state",
					json_object_new_string(
						kpx_flow_state(fl)));
				json_object_object_add(
					fo, "assured",
					json_object_new_boolean(
						!!(fl->status & IPS_ASSURED)));
				json_object_object_add(
					fo, "timeout",
					json_object_new_uint64(fl->timeout));
				json_object_object_add(
					fo, "age",
					age < 0 ? NULL :
						  json_object_new_int64(age));
				json_object_array_add(fa, fo);
			}
			total += b->nflows;
			json_object_object_add(bo, "flows", fa);
			json_object_array_add(bes, bo);
		}
		json_object_object_add(o, "flows",
				       json_object_new_uint64(total));
		json_object_object_add(o, "backends", bes);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "mode", json_object_new_string(mode));
	json_object_object_add(root, "frontends", arr);
	if (note)
		json_object_object_add(root, "age_note",
				       json_object_new_string(note));
	print_json(root);
	json_object_put(root);
}

#define FE_FMT "%-4s %-30s %s\n"
#define BE_FMT "  -> %-30s %s%s\n"
#define FL_FMT "       %-30s %-12s %8s %8s\n"

static void flows_table(const struct kpx_flow_group *g, size_t ng,
			const char *note)
{
	char hp[KPX_HOSTPORT_STRLEN], proto[16], svc[320], n[24];
	uint64_t now = now_ns();

	printf(FE_FMT, "Prot", "LocalAddress:Port", "Service");
	printf(BE_FMT, "RemoteAddress:Port", "Flows", "");
	printf(FL_FMT, "Client:Port", "State", "Age", "Timeout");
	for (size_t i = 0; i < ng; i++) {
		const struct kpx_service *s = g[i].fe;
		size_t c;

		for (c = 0;
		     c + 1 < sizeof(proto) && kpx_proto_name(s->protocol)[c];
		     c++)
			proto[c] =
				(char)(kpx_proto_name(s->protocol)[c] & ~0x20);
		proto[c] = '\0';
		snprintf(svc, sizeof(svc), "%s %s",
			 s->name && *s->name ? s->name : "-",
			 kpx_kind_name(s->kind));
		printf(FE_FMT, proto,
		       kpx_hostport_str(s->family, &s->addr, s->port, hp,
					sizeof(hp)),
		       svc);
		for (size_t j = 0; j < g[i].nbackends; j++) {
			const struct kpx_flow_backend *b = &g[i].backends[j];

			snprintf(n, sizeof(n), "%zu", b->nflows);
			printf(BE_FMT,
			       kpx_hostport_str(s->family, &b->addr, b->port,
						hp, sizeof(hp)),
			       n, b->current ? "" : "  (not a backend now)");
			for (size_t k = 0; k < b->nflows; k++) {
				const struct kpx_flow *fl = b->flows[k];
				long long age = flow_age(fl, now);
				char a[24], t[24];

				if (age < 0)
					snprintf(a, sizeof(a), "-");
				else
					snprintf(a, sizeof(a), "%llds", age);
				snprintf(t, sizeof(t), "%us", fl->timeout);
				printf(FL_FMT,
				       kpx_hostport_str(fl->family, &fl->src,
							fl->sport, hp,
							sizeof(hp)),
				       kpx_flow_state(fl), a, t);
			}
		}
	}
	if (note)
		printf("Age: %s\n", note);
}

static int svc_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

int cmd_flows(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_flow_filter f;
	struct kpx_flow_group *g;
	struct collect c = { 0 };
	const char *what = NULL, *note, *mode, *used;
	struct kpx_service *v;
	size_t n, ng;
	int json = 0, err;

	if (mode_flag(cmd, &argc, argv, &mode))
		return EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] != '-' && !what)
			what = argv[i];
		else
			return usage_error(cmd, "unexpected argument '%s'",
					   argv[i]);
	}
	if (kpx_flow_filter_parse(what, &f))
		return usage_error(
			cmd,
			"'%s' is neither NAMESPACE/NAME[:PORT] nor VIP:PORT",
			what);
	if (mode_frontends(mode, "flows", &v, &n, &used))
		return 1;
	if (n)
		qsort(v, n, sizeof(*v), svc_cmp);
	c.v = v;
	c.n = n;
	c.f = &f;
	err = dump_conntrack(&c);
	if (err) {
		fprintf(stderr, "kpxctl: flows: dumping conntrack: %s%s\n",
			strerror(-err),
			err == -EPERM ? " (ctnetlink needs CAP_NET_ADMIN)" :
					"");
		free(c.flows);
		kpx_services_free(v, n);
		return 1;
	}
	err = kpx_flow_group(v, n, c.flows, c.nflows, &f, &g, &ng);
	if (err) {
		fprintf(stderr, "kpxctl: flows: %s\n", strerror(-err));
	} else {
		if (what && !ng)
			fprintf(stderr,
				"kpxctl: flows: no frontend of %s in proxy mode %s\n",
				what, used);
		note = age_note(c.nflows, c.nstamped);
		if (json)
			flows_json(g, ng, note, used);
		else
			flows_table(g, ng, note);
		kpx_flow_groups_free(g, ng);
	}
	free(c.flows);
	kpx_services_free(v, n);
	return err ? 1 : (what && !ng) ? 1 : 0;
}
