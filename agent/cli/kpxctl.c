// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl: inspect and program the kpx module of the caller's network
 * namespace, in the manner of ipvsadm.
 *
 * Exit status: 0 success, 1 runtime error (message on stderr, with the
 * kernel's extended-ack text when there is one), 2 usage error.
 */
#include <ctype.h>
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
#include "dp/kpx/nl.h"
#include "dp/kpx/nl_priv.h"
#include <netlink/genl/genl.h>
#include "base/service.h"

#ifndef KPX_VERSION
#define KPX_VERSION "0.1.0"
#endif

#define EXIT_USAGE 2

struct cmd {
	const char *name;
	int (*fn)(const struct cmd *cmd, int argc, char **argv);
	const char *usage;	/* after "kpxctl " */
	const char *help;
};

static int usage_error(const struct cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const struct cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("kpxctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: kpxctl %s\n", cmd->usage);
	return EXIT_USAGE;
}

/* "kpxctl: <what>: <strerror>[: <kernel extack msg>]", returns 1. */
static int runtime_error(struct kpx_nl *nl, const char *what, int err)
{
	const char *msg = kpx_nl_errmsg(nl);

	if (*msg)
		fprintf(stderr, "kpxctl: %s: %s: %s\n", what, strerror(-err),
			msg);
	else
		fprintf(stderr, "kpxctl: %s: %s\n", what, strerror(-err));
	return 1;
}

static int open_nl(struct kpx_nl **nl)
{
	int err = kpx_nl_open(nl);

	if (err == -ENOENT) {
		fprintf(stderr, "kpxctl: kpx module not loaded "
			"(generic netlink family \"" KPX_GENL_NAME
			"\" not found)\n");
		return 1;
	}
	if (err)
		return runtime_error(NULL, "netlink", err);
	return 0;
}

static void print_cmd_help(const struct cmd *cmd)
{
	printf("usage: kpxctl %s\n\n%s\n", cmd->usage, cmd->help);
}

/* Handles "--help" anywhere in argv; returns 1 if it was there. */
static int wants_help(const struct cmd *cmd, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			print_cmd_help(cmd);
			return 1;
		}
	}
	return 0;
}

/* Parses "[--json]" for list and stats; -1 on a usage error. */
static int parse_json_flag(const struct cmd *cmd, int argc, char **argv)
{
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			return usage_error(cmd, "unexpected argument '%s'",
					   argv[i]), -1;
	}
	return json;
}

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

static struct json_object *flags_json(uint32_t flags)
{
	struct json_object *a = json_object_new_array();

	if (flags & KPX_SVC_F_DROP_EMPTY)
		json_object_array_add(a, json_object_new_string("drop-empty"));
	if (flags & KPX_SVC_F_MASQ_NONLOCAL)
		json_object_array_add(a, json_object_new_string("masq-nonlocal"));
	if (flags & KPX_SVC_F_MASQ)
		json_object_array_add(a, json_object_new_string("masq"));
	if (flags & KPX_SVC_F_CLUSTER_IP)
		json_object_array_add(a, json_object_new_string("cluster-ip"));
	if (flags & KPX_SVC_F_EXT_LOCAL)
		json_object_array_add(a, json_object_new_string("ext-local"));
	for (int bit = 0; bit < 32; bit++) {
		char name[16];

		if (!(flags & ~(uint32_t)__KPX_SVC_F_ALL & (1U << bit)))
			continue;
		snprintf(name, sizeof(name), "bit-%d", bit);
		json_object_array_add(a, json_object_new_string(name));
	}
	return a;
}

/* A CIDR list as a JSON array of "ADDR/LEN" strings. */
static struct json_object *cidrs_json(const struct kpx_cidr *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	char host[INET6_ADDRSTRLEN], buf[INET6_ADDRSTRLEN + 8];

	for (size_t i = 0; i < n; i++) {
		inet_ntop(v[i].family, &v[i].addr, host, sizeof(host));
		snprintf(buf, sizeof(buf), "%s/%u", host, v[i].len);
		json_object_array_add(a, json_object_new_string(buf));
	}
	return a;
}

static void print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Issue 4: "scheduler", "mh_size" (mh only), "affinity" {"timeout",
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

static void list_json(const struct kpx_service *v, size_t n)
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
		json_object_object_add(o, "source_ranges",
				       cidrs_json(s->source_ranges,
						  s->nsource_ranges));
		json_object_object_add(o, "conns",
				       json_object_new_uint64(s->conns));
		json_object_object_add(o, "rejects",
				       json_object_new_uint64(s->rejects));
		sched_json(o, s);
		/* issue 3: "cluster": the ClusterIP frontend of ext-local */
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
			json_object_object_add(bo, "conns",
					       json_object_new_uint64(b->conns));
			json_object_object_add(bo, "active",
					       json_object_new_uint64(b->active));
			json_object_array_add(bes, bo);
		}
		json_object_object_add(o, "backends", bes);
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "services", arr);
	print_json(root);
	json_object_put(root);
}

/* Column layout shared by the headers and the rows. */
#define SVC_FMT "%-4s %-30s %-10s %12s %10s  %s\n"
#define BE_FMT  "  -> %-30s %-10s %12s\n"

static void list_table(const struct kpx_service *v, size_t n)
{
	char hp[KPX_HOSTPORT_STRLEN], proto[16], c1[24], c2[24];

	printf(SVC_FMT, "Prot", "LocalAddress:Port", "Flags", "Conns",
	       "Rejects", "Scheduler");
	printf(BE_FMT, "RemoteAddress:Port", "Weight", "Conns");
	for (size_t i = 0; i < n; i++) {
		const struct kpx_service *s = &v[i];
		char flags[32], sched[64 + KPX_HOSTPORT_STRLEN];

		/* Issue 4, ipvsadm style: "rr", "mh 65537", "sh affinity 10800" */
		snprintf(sched, sizeof(sched), "%s",
			 s->scheduler[0] ? s->scheduler : "random");
		if (!strcmp(s->scheduler, "mh"))
			snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
				 " %u", s->mh_size);
		if (s->affinity_timeout)
			snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
				 " affinity %u", s->affinity_timeout);
		/* issue 3: the ClusterIP frontend of an ext-local one */
		if (s->cluster_port)
			snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
				 " cluster %s",
				 kpx_hostport_str(s->family, &s->cluster_addr,
						  s->cluster_port, hp, sizeof(hp)));
		upper(proto, kpx_proto_name(s->protocol), sizeof(proto));
		if (!s->flags)
			snprintf(flags, sizeof(flags), "-");
		else if (s->flags == KPX_SVC_F_DROP_EMPTY)
			snprintf(flags, sizeof(flags), "drop-empty");
		else
			snprintf(flags, sizeof(flags), "0x%x", s->flags);
		snprintf(c1, sizeof(c1), "%llu", (unsigned long long)s->conns);
		snprintf(c2, sizeof(c2), "%llu",
			 (unsigned long long)s->rejects);
		printf(SVC_FMT, proto,
		       kpx_hostport_str(s->family, &s->addr, s->port, hp,
					sizeof(hp)),
		       flags, c1, c2, sched);
		for (size_t j = 0; j < s->nbackends; j++) {
			const struct kpx_backend *b = &s->backends[j];
			char w[16];

			snprintf(w, sizeof(w), "%u", b->weight);
			snprintf(c1, sizeof(c1), "%llu",
				 (unsigned long long)b->conns);
			printf(BE_FMT,
			       kpx_hostport_str(s->family, &b->addr, b->port,
						hp, sizeof(hp)),
			       w, c1);
		}
	}
}

static int cmd_list(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_service *v;
	struct kpx_nl *nl;
	size_t n;
	int json, err;

	json = parse_json_flag(cmd, argc, argv);
	if (json < 0)
		return EXIT_USAGE;
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_dump(nl, &v, &n);
	if (err) {
		runtime_error(nl, "list", err);
		kpx_nl_close(nl);
		return 1;
	}
	kpx_nl_close(nl);
	qsort(v, n, sizeof(*v), svc_qsort_cmp);
	if (json)
		list_json(v, n);
	else
		list_table(v, n);
	kpx_services_free(v, n);
	return 0;
}

/* ---- set / del ---- */

/* Parses "PROTO VIP:PORT" from argv[0..1] into @s. */
static int parse_key(const struct cmd *cmd, char **argv,
		     struct kpx_service *s)
{
	if (kpx_proto_parse(argv[0], &s->protocol))
		return usage_error(cmd, "bad protocol '%s' (tcp, udp or sctp)",
				   argv[0]);
	if (kpx_hostport_parse(argv[1], &s->family, &s->addr, &s->port))
		return usage_error(cmd, "bad frontend '%s' (VIP:PORT or "
				   "[VIP6]:PORT, port 1-65535)", argv[1]);
	return 0;
}

/* Parses an unsigned decimal in [lo, hi]; 0 or -1. */
static int parse_u32(const char *str, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*str || *str == '-' || *str == '+')
		return -1;
	errno = 0;
	v = strtoul(str, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/*
 * Issue 4: --scheduler NAME, --mh-size N, --affinity SECONDS at argv[*i].
 * Returns 1 if consumed (*i advanced past the value), 0 if not one of
 * them, -1 after a usage error.
 */
static int parse_sched_opt(const struct cmd *cmd, int argc, char **argv,
			   int *i, struct kpx_service *s)
{
	static const char *const names[] = { "random", "rr", "wrr", "lc",
					     "sh", "mh" };
	const char *opt = argv[*i], *val = *i + 1 < argc ? argv[*i + 1] : NULL;
	size_t k;

	if (!strcmp(opt, "--scheduler")) {
		for (k = 0; val && k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(val, names[k]))
				break;
		if (!val || k == sizeof(names) / sizeof(names[0])) {
			usage_error(cmd, "--scheduler needs one of random, rr, "
				    "wrr, lc, sh, mh");
			return -1;
		}
		snprintf(s->scheduler, sizeof(s->scheduler), "%s", val);
	} else if (!strcmp(opt, "--mh-size")) {
		if (!val || parse_u32(val, KPX_MH_SIZE_MIN, KPX_MH_SIZE_MAX,
				      &s->mh_size)) {
			usage_error(cmd, "--mh-size needs a prime in %u..%u",
				    KPX_MH_SIZE_MIN, KPX_MH_SIZE_MAX);
			return -1;
		}
	} else if (!strcmp(opt, "--affinity")) {
		if (!val || parse_u32(val, 1, 86400, &s->affinity_timeout)) {
			usage_error(cmd, "--affinity needs seconds, 1..86400");
			return -1;
		}
	} else {
		return 0;
	}
	(*i)++;
	return 1;
}

static int cmd_set(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_service s = { 0 };
	char what[KPX_SERVICE_STRLEN + 8], key[KPX_SERVICE_STRLEN];
	char *pos[2];
	struct kpx_nl *nl;
	int npos = 0, err, ret = EXIT_USAGE;

	s.backends = calloc((size_t)argc, sizeof(*s.backends));
	if (!s.backends) {
		fprintf(stderr, "kpxctl: set: %s\n", strerror(ENOMEM));
		return 1;
	}
	s.source_ranges = calloc((size_t)argc, sizeof(*s.source_ranges));
	if (!s.source_ranges) {
		fprintf(stderr, "kpxctl: set: %s\n", strerror(ENOMEM));
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		struct kpx_backend *b;
		int fam;

		if (!strcmp(argv[i], "--drop-empty")) {
			s.flags |= KPX_SVC_F_DROP_EMPTY;
			continue;
		}
		if (!strcmp(argv[i], "--masq")) {
			s.flags |= KPX_SVC_F_MASQ;
			continue;
		}
		if (!strcmp(argv[i], "--masq-nonlocal")) {
			s.flags |= KPX_SVC_F_MASQ_NONLOCAL;
			continue;
		}
		if (!strcmp(argv[i], "--ext-local")) {
			int cfam;

			if (i + 1 >= argc ||
			    kpx_hostport_parse(argv[i + 1], &cfam,
					       &s.cluster_addr,
					       &s.cluster_port)) {
				usage_error(cmd, "--ext-local needs the ClusterIP "
					    "frontend's VIP:PORT");
				goto out;
			}
			s.flags |= KPX_SVC_F_EXT_LOCAL;
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--source-range")) {
			if (i + 1 >= argc || kpx_cidr_parse(argv[i + 1],
					&s.source_ranges[s.nsource_ranges])) {
				usage_error(cmd, "--source-range needs a CIDR");
				goto out;
			}
			s.nsource_ranges++;
			i++;
			continue;
		}
		switch (parse_sched_opt(cmd, argc, argv, &i, &s)) {
		case 1:
			continue;
		case -1:
			goto out;
		}
		if (argv[i][0] == '-' && argv[i][1] == '-') {
			usage_error(cmd, "unknown option '%s'", argv[i]);
			goto out;
		}
		if (npos < 2) {
			pos[npos++] = argv[i];
			if (npos == 2 && parse_key(cmd, pos, &s))
				goto out;
			continue;
		}
		b = &s.backends[s.nbackends];
		if (kpx_backend_parse(argv[i], &fam, b)) {
			usage_error(cmd, "bad backend '%s' (ADDR:PORT[@WEIGHT], "
				    "[ADDR6]:PORT[@WEIGHT], weight 1-%u)",
				    argv[i], KPX_WEIGHT_MAX);
			goto out;
		}
		if (fam != s.family) {
			usage_error(cmd, "backend '%s' is not of the "
				    "frontend's address family", argv[i]);
			goto out;
		}
		s.nbackends++;
	}
	if (npos < 2) {
		usage_error(cmd, "missing %s", npos ? "VIP:PORT" : "PROTO");
		goto out;
	}
	ret = 1;
	if (open_nl(&nl))
		goto out;
	err = kpx_nl_set_service(nl, &s);
	if (!err)	/* return with its conntrack cleanup done */
		err = kpx_nl_ct_sync(nl);
	if (err) {
		snprintf(what, sizeof(what), "set %s",
			 kpx_service_str(&s, key, sizeof(key)));
		runtime_error(nl, what, err);
	} else {
		ret = 0;
	}
	kpx_nl_close(nl);
out:
	kpx_service_free(&s);
	return ret;
}

static int cmd_del(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_service s = { 0 };
	char what[KPX_SERVICE_STRLEN + 8], key[KPX_SERVICE_STRLEN];
	struct kpx_nl *nl;
	int err, ret = 0;

	if (argc != 3)
		return usage_error(cmd, "expected PROTO VIP:PORT");
	if (parse_key(cmd, argv + 1, &s))
		return EXIT_USAGE;
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_del_service(nl, &s);
	if (!err)
		err = kpx_nl_ct_sync(nl);
	if (err) {
		snprintf(what, sizeof(what), "del %s",
			 kpx_service_str(&s, key, sizeof(key)));
		ret = runtime_error(nl, what, err);
	}
	kpx_nl_close(nl);
	return ret;
}

/* ---- flush / stats ---- */

static int cmd_flush(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_nl *nl;
	int err, ret = 0;

	if (argc != 1)
		return usage_error(cmd, "unexpected argument '%s'", argv[1]);
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_flush(nl);
	if (!err)
		err = kpx_nl_ct_sync(nl);
	if (err)
		ret = runtime_error(nl, "flush", err);
	kpx_nl_close(nl);
	return ret;
}

static int filtered_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *st[KPX_STATS_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, KPX_A_MAX, NULL) >= 0 &&
	    tb[KPX_A_STATS] &&
	    nla_parse_nested(st, KPX_STATS_A_MAX, tb[KPX_A_STATS], NULL) >= 0 &&
	    st[KPX_STATS_A_FILTERED])
		*(uint64_t *)arg = nla_get_u64(st[KPX_STATS_A_FILTERED]);
	return NL_OK;
}

/*
 * KPX_STATS_A_FILTERED, which struct kpx_nl_stats (nl.h) does not carry:
 * a second GET_STATS read here.  0 or a negative errno.
 */
static int read_filtered(struct kpx_nl *nl, uint64_t *out)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb;
	int ret;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family_id, 0, 0,
			 KPX_CMD_GET_STATS, KPX_GENL_VERSION)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return kpx_nl_errno(ret);
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, filtered_cb, out);
	ret = nl_recvmsgs(nl->sk, cb);
	nl_cb_put(cb);
	return ret < 0 ? kpx_nl_errno(ret) : 0;
}

static int cmd_stats(const struct cmd *cmd, int argc, char **argv)
{
	uint64_t filtered = 0;
	struct kpx_nl_stats st;
	struct kpx_nl *nl;
	int json, err;

	json = parse_json_flag(cmd, argc, argv);
	if (json < 0)
		return EXIT_USAGE;
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_stats(nl, &st);
	if (!err)
		err = read_filtered(nl, &filtered);
	if (err) {
		runtime_error(nl, "stats", err);
		kpx_nl_close(nl);
		return 1;
	}
	kpx_nl_close(nl);
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "services",
				       json_object_new_uint64(st.services));
		json_object_object_add(o, "backends",
				       json_object_new_uint64(st.backends));
		json_object_object_add(o, "conns",
				       json_object_new_uint64(st.conns));
		json_object_object_add(o, "rejects",
				       json_object_new_uint64(st.rejects));
		json_object_object_add(o, "drops",
				       json_object_new_uint64(st.drops));
		json_object_object_add(o, "filtered",
				       json_object_new_uint64(filtered));
		json_object_object_add(o, "generation",
				       json_object_new_uint64(st.generation));
		print_json(o);
		json_object_put(o);
	} else {
		printf("services: %u\nbackends: %u\nconns: %llu\n"
		       "rejects: %llu\ndrops: %llu\nfiltered: %llu\n"
		       "generation: %u\n",
		       st.services, st.backends, (unsigned long long)st.conns,
		       (unsigned long long)st.rejects,
		       (unsigned long long)st.drops,
		       (unsigned long long)filtered, st.generation);
	}
	return 0;
}

/* ---- config ---- */

struct shown_config {
	struct json_object *o;
	int err;
};

static int show_config_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KPX_A_MAX + 1], *ct[KPX_CFG_A_MAX + 1];
	struct shown_config *sc = arg;
	struct kpx_cidr *v = NULL;
	size_t n = 0;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, KPX_A_MAX, NULL) < 0 ||
	    !tb[KPX_A_CONFIG] ||
	    nla_parse_nested(ct, KPX_CFG_A_MAX, tb[KPX_A_CONFIG], NULL) < 0) {
		sc->err = -EBADMSG;
		return NL_SKIP;
	}
	if (ct[KPX_CFG_A_LOCAL_CIDRS] &&
	    kpx_nl_parse_cidrs(ct[KPX_CFG_A_LOCAL_CIDRS], &v, &n)) {
		sc->err = -EBADMSG;
		return NL_SKIP;
	}
	sc->o = json_object_new_object();
	json_object_object_add(sc->o, "local_cidrs", cidrs_json(v, n));
	json_object_object_add(sc->o, "local_ifname", json_object_new_string(
		ct[KPX_CFG_A_LOCAL_IFNAME] ?
		nla_get_string(ct[KPX_CFG_A_LOCAL_IFNAME]) : ""));
	json_object_object_add(sc->o, "local_ifprefix", json_object_new_string(
		ct[KPX_CFG_A_LOCAL_IFPREFIX] ?
		nla_get_string(ct[KPX_CFG_A_LOCAL_IFPREFIX]) : ""));
	free(v);
	return NL_SKIP;
}

/* "kpxctl config --show": KPX_CMD_GET_CONFIG as one JSON object. */
static int show_config(void)
{
	struct shown_config sc = { 0 };
	struct kpx_nl *nl;
	struct nl_msg *msg;
	struct nl_cb *cb;
	int ret;

	if (open_nl(&nl))
		return 1;
	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family_id,
				 0, 0, KPX_CMD_GET_CONFIG, KPX_GENL_VERSION)) {
		nlmsg_free(msg);
		kpx_nl_close(nl);
		return runtime_error(NULL, "config", -ENOMEM);
	}
	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	cb = ret < 0 ? NULL : nl_cb_alloc(NL_CB_DEFAULT);
	if (cb) {
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, show_config_cb, &sc);
		ret = nl_recvmsgs(nl->sk, cb);
		nl_cb_put(cb);
	}
	kpx_nl_close(nl);
	if (ret < 0 || sc.err || !sc.o) {
		json_object_put(sc.o);
		return runtime_error(NULL, "config",
				     sc.err ? sc.err :
				     ret < 0 ? kpx_nl_errno(ret) : -EBADMSG);
	}
	print_json(sc.o);
	json_object_put(sc.o);
	return 0;
}

static int cmd_config(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_ns_config c;
	struct kpx_nl *nl;
	int err, ret = 0;

	if (argc == 2 && !strcmp(argv[1], "--show"))
		return show_config();
	memset(&c, 0, sizeof(c));
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return usage_error(cmd, "'%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "--local-cidr")) {
			if (c.nlocal_cidrs >= KPX_CONFIG_CIDRS_MAX)
				return usage_error(cmd, "too many CIDRs");
			if (kpx_cidr_parse(v, &c.local_cidrs[c.nlocal_cidrs]))
				return usage_error(cmd, "bad CIDR '%s'", v);
			c.nlocal_cidrs++;
		} else if (!strcmp(argv[i], "--local-ifname") ||
			   !strcmp(argv[i], "--local-ifprefix")) {
			char *dst = !strcmp(argv[i], "--local-ifname") ?
				    c.local_ifname : c.local_ifprefix;

			if (strlen(v) >= IF_NAMESIZE)
				return usage_error(cmd, "name '%s' too long", v);
			snprintf(dst, IF_NAMESIZE, "%s", v);
		} else {
			return usage_error(cmd, "unknown option '%s'", argv[i]);
		}
		i++;
	}
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_set_config(nl, &c);
	if (err)
		ret = runtime_error(nl, "config", err);
	kpx_nl_close(nl);
	return ret;
}

static int cmd_help(const struct cmd *cmd, int argc, char **argv);

static const struct cmd cmds[] = {
	{ "list", cmd_list, "[list] [--json]",
	  "Lists the frontends of this network namespace with their backends\n"
	  "and counters (the default command)." },
	{ "set", cmd_set,
	  "set PROTO VIP:PORT [ADDR:PORT[@WEIGHT] ...] [--drop-empty] [--masq]\n"
	  "             [--masq-nonlocal] [--source-range CIDR ...]\n"
	  "             [--scheduler NAME] [--mh-size N] [--affinity SECONDS]\n"
	  "             [--ext-local CLUSTER-VIP:PORT]",
	  "Creates or replaces a frontend and its whole backend set.\n"
	  "PROTO is tcp, udp or sctp; IPv6 addresses are bracketed, as in\n"
	  "[fd00::1]:80.  WEIGHT is 1-65535 (default 1).  With no backend, new\n"
	  "connections are refused (ICMP port unreachable), or silently dropped\n"
	  "with --drop-empty.  --masq source-NATs every new connection,\n"
	  "--masq-nonlocal those from sources that are not local (see config);\n"
	  "--source-range (repeatable) drops new connections from other sources.\n"
	  "--scheduler is random (default), rr, wrr, lc, sh or mh (Maglev, table\n"
	  "size --mh-size, a prime, default 65537).  --affinity keeps a client\n"
	  "address on its backend while it opens connections within SECONDS\n"
	  "(ClientIP session affinity, 1-86400).  --ext-local makes it an\n"
	  "external frontend with externalTrafficPolicy: Local whose local\n"
	  "clients and node are scheduled with the ClusterIP frontend\n"
	  "CLUSTER-VIP:PORT (same family and protocol) instead." },
	{ "config", cmd_config,
	  "config [--local-cidr CIDR ...] [--local-ifname NAME] "
	  "[--local-ifprefix PREFIX] | config --show",
	  "Sets what is a local source for --masq-nonlocal: the prefixes, the\n"
	  "interface and the interface name prefix packets enter through.  Every\n"
	  "setting is replaced: one left out is cleared.  --show prints the\n"
	  "settings as JSON." },
	{ "del", cmd_del, "del PROTO VIP:PORT", "Deletes a frontend." },
	{ "flush", cmd_flush, "flush",
	  "Deletes every frontend of this network namespace." },
	{ "stats", cmd_stats, "stats [--json]",
	  "Prints the namespace's totals: frontends, backends, connections\n"
	  "scheduled, rejected, dropped, and filtered by source ranges." },
	{ "help", cmd_help, "help [COMMAND]",
	  "Prints the commands, or the usage of one." },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static void print_usage(FILE *f)
{
	fprintf(f, "usage: kpxctl [COMMAND] [ARGS...]\n"
		"Inspects and programs the kpx Service proxy module of this "
		"network namespace.\n\nCommands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  kpxctl %s\n", cmds[i].usage);
	fprintf(f, "  kpxctl --version\n\n"
		"'kpxctl COMMAND --help' describes a command.\n");
}

static int cmd_help(const struct cmd *cmd, int argc, char **argv)
{
	const struct cmd *c;

	if (argc > 2)
		return usage_error(cmd, "unexpected argument '%s'", argv[2]);
	if (argc == 1 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_usage(stdout);
		return 0;
	}
	c = find_cmd(argv[1]);
	if (!c)
		return usage_error(cmd, "unknown command '%s'", argv[1]);
	print_cmd_help(c);
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *cmd;

	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("kpxctl %s\n", KPX_VERSION);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		print_usage(stdout);
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-') {
		/* Bare "kpxctl" and "kpxctl --json" mean list. */
		cmd = find_cmd("list");
		argv[0] = (char *)"list";
	} else {
		cmd = find_cmd(argv[1]);
		if (!cmd) {
			fprintf(stderr, "kpxctl: unknown command '%s'\n",
				argv[1]);
			print_usage(stderr);
			return EXIT_USAGE;
		}
		argc--;
		argv++;
	}
	if (cmd->fn != cmd_help && wants_help(cmd, argc, argv))
		return 0;
	return cmd->fn(cmd, argc, argv);
}
