// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl: inspect and program the kpx module of the caller's network
 * namespace, in the manner of ipvsadm.  This file holds the command table,
 * help and the helpers the subcommands share (kpxctl.h).
 *
 * Exit status: 0 success, 1 runtime error (message on stderr, with the
 * kernel's extended-ack text when there is one), 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <json-c/json.h>
#include <linux/kpx.h>

#include "cli/kpxctl.h"
#include "dp/kpx/nl.h"
#include "base/buildinfo.h"


int usage_error(const struct cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("kpxctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: kpxctl %s\n", cmd->usage);
	return EXIT_USAGE;
}

int runtime_error(struct kpx_nl *nl, const char *what, int err)
{
	const char *msg = kpx_nl_errmsg(nl);

	if (*msg)
		fprintf(stderr, "kpxctl: %s: %s: %s\n", what, strerror(-err),
			msg);
	else
		fprintf(stderr, "kpxctl: %s: %s\n", what, strerror(-err));
	return 1;
}

int open_nl(struct kpx_nl **nl)
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

int close_nl(struct kpx_nl *nl, const char *what, int err)
{
	if (err)
		runtime_error(nl, what, err);
	kpx_nl_close(nl);
	return err ? 1 : 0;
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

int parse_json_flag(const struct cmd *cmd, int argc, char **argv)
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

struct json_object *cidrs_json(const struct kpx_cidr *v, size_t n)
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

void print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
}

static int cmd_help(const struct cmd *cmd, int argc, char **argv);

static const struct cmd cmds[] = {
	{ "list", cmd_list, "[list] [--json] [--mode MODE]",
	  "Lists the frontends of this network namespace with their backends\n"
	  "and counters (the default command).  They are read from the kpx\n"
	  "module, or, when kpx-agent runs another proxy mode, from that mode's\n"
	  "kernel state by the layout the agent writes: the nftables tables kpx,\n"
	  "the iptables chains KPX-SERVICES and theirs (iptables-save), the IPVS\n"
	  "services the ipset KPX-IPVS-SVC names; the same table and JSON, whose\n"
	  "\"mode\" says which was read.  --mode (kpx, nftables, iptables, ipvs)\n"
	  "chooses; without it, the module when it holds frontends, else the\n"
	  "first of nftables, ipvs, iptables present.  Counters are the module's:\n"
	  "0 in the other modes." },
	{ "set", cmd_set,
	  "set PROTO VIP:PORT [ADDR:PORT[@WEIGHT] ...] [--drop-empty] [--masq]\n"
	  "             [--masq-nonlocal] [--cluster-ip] [--source-range CIDR ...]\n"
	  "             [--scheduler NAME] [--mh-size N] [--affinity SECONDS]\n"
	  "             [--ext-local CLUSTER-VIP:PORT]\n"
	  "             [--service NAMESPACE/NAME[:PORT]] [--kind KIND]",
	  "Creates or replaces a frontend and its whole backend set.\n"
	  "PROTO is tcp, udp or sctp; IPv6 addresses are bracketed, as in\n"
	  "[fd00::1]:80.  WEIGHT is 1-65535 (default 1).  With no backend, new\n"
	  "connections are refused (ICMP port unreachable), or silently dropped\n"
	  "with --drop-empty.  --masq source-NATs every new connection,\n"
	  "--masq-nonlocal those from sources that are not local (see config);\n"
	  "--cluster-ip marks the VIP a ClusterIP: a new connection to a port\n"
	  "of it that no frontend has is refused.\n"
	  "--source-range (repeatable) drops new connections from other sources.\n"
	  "--scheduler is random (default), rr, wrr, lc, sh or mh (Maglev, table\n"
	  "size --mh-size, a prime, default 65537).  --affinity keeps a client\n"
	  "address on its backend while it opens connections within SECONDS\n"
	  "(ClientIP session affinity, 1-86400).  --ext-local makes it an\n"
	  "external frontend with externalTrafficPolicy: Local whose local\n"
	  "clients and node are scheduled with the ClusterIP frontend\n"
	  "CLUSTER-VIP:PORT (same family and protocol) instead.  --service\n"
	  "names the Service the frontend belongs to (visible ASCII, at most\n"
	  "255 bytes; '' clears it) and --kind says which of its addresses it\n"
	  "is: cluster-ip, node-port, load-balancer or external-ip (- none);\n"
	  "without them the frontend keeps the name and kind it has." },
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
	{ "flows", cmd_flows, "flows [NAMESPACE/NAME[:PORT] | VIP:PORT] [--json] [--mode MODE]",
	  "Lists the live conntrack entries the module (or the proxy mode in use,\n"
	  "--mode as for list) translated, by frontend\n"
	  "(with its Service) and backend: each client address and port, the\n"
	  "entry's state, age and the seconds left before it expires.  The age\n"
	  "needs conntrack timestamps (sysctl net.netfilter.nf_conntrack_timestamp\n"
	  "= 1, for entries created after it is set); without them it is '-' and\n"
	  "a line says why.  A backend that is no longer one of the frontend's is\n"
	  "marked.  NAMESPACE/NAME selects every port of a Service, NAME:PORT one\n"
	  "port (the name kpxctl list shows), VIP:PORT one address of every\n"
	  "protocol; exit status 1 when none matches.  Reads conntrack through\n"
	  "ctnetlink, which needs CAP_NET_ADMIN." },
	{ "status", cmd_status, "status [--json] [--server URL]",
	  "The agent's view against the module's: the proxy mode, the agent's\n"
	  "last sync (time, duration, full or partial, failed changes with\n"
	  "their Services), the frontends it refused and why, and the\n"
	  "frontends the agent wants that the module lacks or holds otherwise,\n"
	  "and those the module holds that the agent does not want (another\n"
	  "writer's, until the agent's next re-check repairs them).  Read from\n"
	  "the agent's /statusz on its metrics server (--server, default\n"
	  "http://127.0.0.1:10249, kpx-agent --metrics-bind-address).  Exit\n"
	  "status 1 when the agent cannot be reached, 3 when the two views\n"
	  "differ or the last sync had errors." },
	{ "explain", cmd_explain,
	  "explain PROTO SRC:PORT DST:PORT [--iif IFNAME | --from-node] [--json]",
	  "Says what the module would do now with a new connection from SRC to\n"
	  "DST, entering by IFNAME (default: an interface that matches no local\n"
	  "setting) or made by this node itself (--from-node): the verdict, the\n"
	  "frontend matched and its counters, the source (local or external, and\n"
	  "why), the source-range verdict, the eTP Local short cut, the affinity\n"
	  "entry and its age, the scheduler and the backend it would pick (rr,\n"
	  "wrr: the next one; lc: one of the least loaded; random: any), whether\n"
	  "it is masqueraded and why, and the counters the connection would add\n"
	  "to.  Read-only: nothing changes, no privilege is needed." },
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
		printf("kpxctl %s\n", kpx_build_version);
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
