// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl explain: what the module's packet path would do now with a new
 * connection (KPX_CMD_EXPLAIN), as lines for people or one JSON object.
 * The module answers with the decision function its NAT hook calls and
 * changes nothing; this file only names its enums.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/service.h"
#include "cli/kpxctl.h"
#include "dp/kpx/nl.h"

#define NAME(tab, v) \
	((v) < sizeof(tab) / sizeof(tab[0]) && tab[v] ? tab[v] : "?")

static const char *const verdicts[] = {
	[KPX_EXP_V_ACCEPT] = "accept",
	[KPX_EXP_V_MARTIAN] = "drop-martian",
	[KPX_EXP_V_UNDEFINED_PORT] = "reject-undefined-port",
	[KPX_EXP_V_FILTERED] = "drop-source-range",
	[KPX_EXP_V_REJECT] = "reject-no-backend",
	[KPX_EXP_V_DROP] = "drop-no-backend",
	[KPX_EXP_V_DNAT] = "dnat",
};

static const char *const verdict_text[] = {
	[KPX_EXP_V_ACCEPT] = "not a frontend nor a ClusterIP: left alone",
	[KPX_EXP_V_MARTIAN] = "loopback destination from outside: dropped",
	[KPX_EXP_V_UNDEFINED_PORT] =
		"undefined port of a ClusterIP: rejected (port unreachable)",
	[KPX_EXP_V_FILTERED] = "source not in the source ranges: dropped",
	[KPX_EXP_V_REJECT] = "no backend: rejected (port unreachable)",
	[KPX_EXP_V_DROP] = "no backend (drop-empty): dropped",
	[KPX_EXP_V_DNAT] = "DNAT to a backend",
};

static const char *const sources[] = {
	[KPX_EXP_SRC_EXTERNAL] = "external",
	[KPX_EXP_SRC_NO_CONFIG] = "external-no-config",
	[KPX_EXP_SRC_CIDR] = "local-cidr",
	[KPX_EXP_SRC_IFNAME] = "local-ifname",
	[KPX_EXP_SRC_IFPREFIX] = "local-ifprefix",
};

static const char *const source_text[] = {
	[KPX_EXP_SRC_EXTERNAL] = "external (matches no local setting)",
	[KPX_EXP_SRC_NO_CONFIG] = "external (no local settings: kpxctl config)",
	[KPX_EXP_SRC_CIDR] = "local (in a local CIDR)",
	[KPX_EXP_SRC_IFNAME] = "local (enters by the local interface)",
	[KPX_EXP_SRC_IFPREFIX] = "local (interface has the local prefix)",
};

static const char *const ranges[] = {
	[KPX_EXP_RANGES_NONE] = "none",
	[KPX_EXP_RANGES_ALLOWED] = "allowed",
	[KPX_EXP_RANGES_DENIED] = "denied",
};

static const char *const affinities[] = {
	[KPX_EXP_AFF_OFF] = "off",
	[KPX_EXP_AFF_MISS] = "miss",
	[KPX_EXP_AFF_HIT] = "hit",
	[KPX_EXP_AFF_STALE] = "stale",
};

static const char *const picks[] = {
	[KPX_EXP_PICK_EXACT] = "exact",
	[KPX_EXP_PICK_RANDOM] = "random",
	[KPX_EXP_PICK_LEAST] = "least-loaded",
};

static const char *const masqs[] = {
	[KPX_EXP_MASQ_NO] = "no",
	[KPX_EXP_MASQ_NO_LOCAL] = "no-local-source",
	[KPX_EXP_MASQ_NO_SHORT] = "no-short-circuit",
	[KPX_EXP_MASQ_NODE] = "node",
	[KPX_EXP_MASQ_ALL] = "masq",
	[KPX_EXP_MASQ_HAIRPIN] = "hairpin",
	[KPX_EXP_MASQ_NONLOCAL] = "masq-nonlocal",
};

static const char *const masq_text[] = {
	[KPX_EXP_MASQ_NO] = "no (no flag asks for it)",
	[KPX_EXP_MASQ_NO_LOCAL] = "no (masq-nonlocal, but the source is local)",
	[KPX_EXP_MASQ_NO_SHORT] =
		"no (a local client short-cut keeps its source)",
	[KPX_EXP_MASQ_NODE] =
		"yes (from this node, short-cut to the ClusterIP)",
	[KPX_EXP_MASQ_ALL] = "yes (masq: every connection)",
	[KPX_EXP_MASQ_HAIRPIN] = "yes (hairpin: the backend is the client)",
	[KPX_EXP_MASQ_NONLOCAL] = "yes (masq-nonlocal, external source)",
};

static const char *const counter_names[] = {
	"frontend.conns",    "backend.conns",	   "namespace.conns",
	"frontend.rejects",  "namespace.rejects",  "namespace.drops",
	"frontend.filtered", "namespace.filtered",
};

static int masq_yes(uint8_t m)
{
	return m >= KPX_EXP_MASQ_NODE;
}

/* "a,b": the names of @flags, "-" for none. */
static void flags_str(uint32_t flags, char *out, size_t len)
{
	size_t at = 0;

	snprintf(out, len, "-");
	for (unsigned int bit = 0; bit < 32 && at < len; bit++) {
		const char *n = kpx_flag_name(bit);

		if (flags & (1U << bit))
			at += (size_t)snprintf(out + at, len - at, "%s%s",
					       at ? "," : "", n ? n : "?");
	}
}

static struct json_object *fe_json(const struct kpx_nl_explain_fe *fe)
{
	struct json_object *o = json_object_new_object(), *fl;
	char buf[KPX_HOSTPORT_STRLEN];

	json_object_object_add(
		o, "protocol",
		json_object_new_string(kpx_proto_name(fe->protocol)));
	json_object_object_add(
		o, "frontend",
		json_object_new_string(kpx_hostport_str(
			fe->family, &fe->addr, fe->port, buf, sizeof(buf))));
	json_object_object_add(o, "service",
			       fe->name[0] ? json_object_new_string(fe->name) :
					     NULL);
	json_object_object_add(
		o, "kind",
		fe->kind ? json_object_new_string(kpx_kind_name(fe->kind)) :
			   NULL);
	fl = json_object_new_array();
	for (unsigned int bit = 0; bit < 32; bit++)
		if (fe->flags & (1U << bit) && kpx_flag_name(bit))
			json_object_array_add(
				fl, json_object_new_string(kpx_flag_name(bit)));
	json_object_object_add(o, "flags", fl);
	json_object_object_add(o, "scheduler",
			       json_object_new_string(fe->scheduler));
	json_object_object_add(o, "affinity_timeout",
			       json_object_new_int64(fe->affinity_timeout));
	json_object_object_add(o, "conns", json_object_new_uint64(fe->conns));
	json_object_object_add(o, "rejects",
			       json_object_new_uint64(fe->rejects));
	json_object_object_add(o, "filtered",
			       json_object_new_uint64(fe->filtered));
	return o;
}

static void print_json_answer(const struct kpx_nl_explain *x)
{
	struct json_object *o = json_object_new_object(), *c;
	char buf[KPX_HOSTPORT_STRLEN];

	json_object_object_add(
		o, "verdict",
		json_object_new_string(NAME(verdicts, x->verdict)));
	if (x->fe.present)
		json_object_object_add(o, "frontend", fe_json(&x->fe));
	if (x->sfe.present)
		json_object_object_add(o, "sched_frontend", fe_json(&x->sfe));
	if (x->has_source) {
		json_object_object_add(
			o, "source",
			json_object_new_string(NAME(sources, x->source)));
		json_object_object_add(
			o, "source_ranges",
			json_object_new_string(NAME(ranges, x->ranges)));
	}
	if (x->has_sched) {
		json_object_object_add(
			o, "short_circuit",
			json_object_new_boolean(x->short_circuit));
		json_object_object_add(o, "scheduler",
				       json_object_new_string(x->scheduler));
		json_object_object_add(o, "backends",
				       json_object_new_int64(x->nbackends));
	}
	if (x->has_pick) {
		json_object_object_add(
			o, "affinity",
			json_object_new_string(NAME(affinities, x->affinity)));
		if (x->affinity == KPX_EXP_AFF_HIT)
			json_object_object_add(
				o, "affinity_age_ms",
				json_object_new_uint64(x->affinity_age_ms));
		json_object_object_add(
			o, "pick",
			json_object_new_string(NAME(picks, x->pick)));
	}
	if (x->has_backend) {
		struct json_object *b = json_object_new_object();

		json_object_object_add(b, "backend",
				       json_object_new_string(kpx_hostport_str(
					       x->fe.family, &x->be.addr,
					       x->be.port, buf, sizeof(buf))));
		json_object_object_add(b, "weight",
				       json_object_new_int64(x->be.weight));
		json_object_object_add(b, "conns",
				       json_object_new_uint64(x->be.conns));
		json_object_object_add(b, "active",
				       json_object_new_int64(x->be.active));
		json_object_object_add(o, "backend", b);
	}
	if (x->has_masq) {
		json_object_object_add(
			o, "masquerade",
			json_object_new_boolean(masq_yes(x->masq)));
		json_object_object_add(
			o, "masquerade_reason",
			json_object_new_string(NAME(masqs, x->masq)));
	}
	c = json_object_new_array();
	for (unsigned int i = 0;
	     i < sizeof(counter_names) / sizeof(counter_names[0]); i++)
		if (x->counters & (1U << i))
			json_object_array_add(
				c, json_object_new_string(counter_names[i]));
	json_object_object_add(o, "counters", c);
	print_json(o);
	json_object_put(o);
}

static void print_fe(const char *label, const struct kpx_nl_explain_fe *fe)
{
	char buf[KPX_HOSTPORT_STRLEN], fl[128];

	flags_str(fe->flags, fl, sizeof(fl));
	printf("%-14s %s %s  %s %s  flags %s\n", label,
	       kpx_proto_name(fe->protocol),
	       kpx_hostport_str(fe->family, &fe->addr, fe->port, buf,
				sizeof(buf)),
	       fe->name[0] ? fe->name : "-",
	       fe->kind ? kpx_kind_name(fe->kind) : "-", fl);
	printf("%-14s conns %llu  rejects %llu  filtered %llu\n", "",
	       (unsigned long long)fe->conns, (unsigned long long)fe->rejects,
	       (unsigned long long)fe->filtered);
}

static void print_text(const struct kpx_nl_explain *x)
{
	char buf[KPX_HOSTPORT_STRLEN];
	unsigned int i, n = 0;

	printf("%-14s %s: %s\n", "verdict:", NAME(verdicts, x->verdict),
	       NAME(verdict_text, x->verdict));
	if (x->fe.present)
		print_fe("frontend:", &x->fe);
	if (x->has_source) {
		printf("%-14s %s\n", "source:", NAME(source_text, x->source));
		printf("%-14s %s\n", "source ranges:", NAME(ranges, x->ranges));
	}
	if (x->has_sched) {
		printf("%-14s %s\n", "eTP Local:",
		       x->short_circuit ?
			       "short-cut: served by the ClusterIP frontend" :
			       "no short cut");
		if (x->sfe.present)
			print_fe("served by:", &x->sfe);
		printf("%-14s %s over %u backend%s\n",
		       "scheduler:", x->scheduler, x->nbackends,
		       x->nbackends == 1 ? "" : "s");
	}
	if (x->has_pick) {
		if (x->affinity == KPX_EXP_AFF_HIT)
			printf("%-14s hit, entry refreshed %llu ms ago\n",
			       "affinity:",
			       (unsigned long long)x->affinity_age_ms);
		else
			printf("%-14s %s\n",
			       "affinity:", NAME(affinities, x->affinity));
	}
	if (x->has_backend)
		printf("%-14s %s (%s)  weight %u  conns %llu  active %u\n",
		       "backend:",
		       kpx_hostport_str(x->fe.family, &x->be.addr, x->be.port,
					buf, sizeof(buf)),
		       NAME(picks, x->pick), x->be.weight,
		       (unsigned long long)x->be.conns, x->be.active);
	else if (x->has_pick && x->pick == KPX_EXP_PICK_RANDOM)
		printf("%-14s any of %u (random)\n", "backend:", x->nbackends);
	if (x->has_masq)
		printf("%-14s %s\n", "masquerade:", NAME(masq_text, x->masq));
	printf("%-14s", "counters:");
	for (i = 0; i < sizeof(counter_names) / sizeof(counter_names[0]); i++)
		if (x->counters & (1U << i))
			printf("%s%s", n++ ? ", " : " ", counter_names[i]);
	printf("%s\n", n ? "" : " none");
}

/* "ADDR:PORT" of @family (0: either) into @addr and @port. */
static int parse_end(const char *s, int *family, void *addr, uint16_t *port)
{
	int fam;

	if (kpx_hostport_parse(s, &fam, addr, port))
		return -1;
	if (*family && fam != *family)
		return -1;
	*family = fam;
	return 0;
}

int cmd_explain(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_nl_explain_req q = { 0 };
	struct kpx_nl_explain x;
	struct kpx_nl *nl;
	int json = 0, err, i;

	if (argc < 4)
		return usage_error(cmd, "needs PROTO SRC:PORT DST:PORT");
	if (kpx_proto_parse(argv[1], &q.protocol))
		return usage_error(cmd, "bad protocol '%s' (tcp, udp or sctp)",
				   argv[1]);
	if (parse_end(argv[2], &q.family, &q.src, &q.sport))
		return usage_error(
			cmd, "bad source '%s' (ADDR:PORT or [ADDR6]:PORT)",
			argv[2]);
	if (parse_end(argv[3], &q.family, &q.dst, &q.dport))
		return usage_error(
			cmd, "bad destination '%s' (of the source's family)",
			argv[3]);
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--from-node")) {
			q.local_out = true;
		} else if (!strcmp(argv[i], "--iif") && i + 1 < argc) {
			q.iif = if_nametoindex(argv[++i]);
			if (!q.iif)
				return usage_error(cmd, "no interface '%s'",
						   argv[i]);
		} else {
			return usage_error(cmd, "unexpected argument '%s'",
					   argv[i]);
		}
	}
	if (q.local_out && q.iif)
		return usage_error(cmd,
				   "--iif and --from-node exclude each other");
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_explain(nl, &q, &x);
	if (close_nl(nl, "explain", err))
		return 1;
	if (json)
		print_json_answer(&x);
	else
		print_text(&x);
	return 0;
}
