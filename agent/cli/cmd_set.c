// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl set, del and flush: program one frontend, remove one, remove all.
 */
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
#include "dp/kpx/nl.h"

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
 * --scheduler NAME, --mh-size N, --affinity SECONDS at argv[*i].
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

int cmd_set(const struct cmd *cmd, int argc, char **argv)
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
		if (!strcmp(argv[i], "--cluster-ip")) {
			s.flags |= KPX_SVC_F_CLUSTER_IP;
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
		/* as given: the module checks the name (EINVAL) */
		if (!strcmp(argv[i], "--service")) {
			if (i + 1 >= argc) {
				usage_error(cmd, "--service needs NAMESPACE/NAME[:PORT] ('' clears it)");
				goto out;
			}
			if (kpx_service_set_name(&s, argv[++i])) {
				fprintf(stderr, "kpxctl: set: %s\n", strerror(ENOMEM));
				ret = 1;
				goto out;
			}
			continue;
		}
		if (!strcmp(argv[i], "--kind")) {
			int k = i + 1 < argc ? kpx_kind_parse(argv[i + 1]) : -EINVAL;

			if (k < 0) {
				usage_error(cmd, "--kind needs cluster-ip, node-port, "
					    "load-balancer, external-ip or - (none)");
				goto out;
			}
			s.kind = (uint8_t)k;
			s.clear_kind = !k;
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
	snprintf(what, sizeof(what), "set %s",
		 kpx_service_str(&s, key, sizeof(key)));
	ret = close_nl(nl, what, err);
out:
	kpx_service_free(&s);
	return ret;
}

int cmd_del(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_service s = { 0 };
	char what[KPX_SERVICE_STRLEN + 8], key[KPX_SERVICE_STRLEN];
	struct kpx_nl *nl;
	int err;

	if (argc != 3)
		return usage_error(cmd, "expected PROTO VIP:PORT");
	if (parse_key(cmd, argv + 1, &s))
		return EXIT_USAGE;
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_del_service(nl, &s);
	if (!err)
		err = kpx_nl_ct_sync(nl);
	snprintf(what, sizeof(what), "del %s",
		 kpx_service_str(&s, key, sizeof(key)));
	return close_nl(nl, what, err);
}

/* ---- flush / stats ---- */

int cmd_flush(const struct cmd *cmd, int argc, char **argv)
{
	struct kpx_nl *nl;
	int err;

	if (argc != 1)
		return usage_error(cmd, "unexpected argument '%s'", argv[1]);
	if (open_nl(&nl))
		return 1;
	err = kpx_nl_flush(nl);
	if (!err)
		err = kpx_nl_ct_sync(nl);
	return close_nl(nl, "flush", err);
}
