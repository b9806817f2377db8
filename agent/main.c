// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx-agent: watches Services and EndpointSlices and programs the kpx
 * module.  Flags follow kube-proxy's names.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>

#include "duration.h"
#include "k8s.h"
#include "kubeconfig.h"
#include "log.h"
#include "model.h"
#include "nl.h"
#include "sync.h"

#ifndef KPX_VERSION
#define KPX_VERSION "0.1.0"
#endif

struct opts {
	const char *kubeconfig;
	const char *master;
	char hostname[HOST_NAME_MAX + 1];
	int64_t min_sync_ms, sync_ms;
	bool once, dry_run;
};

enum {
	OPT_KUBECONFIG = 1000, OPT_MASTER, OPT_HOSTNAME, OPT_MIN_SYNC, OPT_SYNC,
	OPT_ONCE, OPT_DRY_RUN, OPT_VERSION,
};

static const struct option long_opts[] = {
	{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
	{ "master", required_argument, NULL, OPT_MASTER },
	{ "hostname-override", required_argument, NULL, OPT_HOSTNAME },
	{ "v", required_argument, NULL, 'v' },
	{ "min-sync-period", required_argument, NULL, OPT_MIN_SYNC },
	{ "sync-period", required_argument, NULL, OPT_SYNC },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: kpx-agent [FLAGS]\n"
"Watches Services and EndpointSlices and programs the kpx kernel module.\n"
"\n"
"  --kubeconfig FILE          kubeconfig to use (default: in-cluster config)\n"
"  --master URL               API server URL; overrides the kubeconfig's server,\n"
"                             alone it means that URL without credentials\n"
"  --hostname-override NAME   this node's name (default: the host name)\n"
"  --v N, -v N                log verbosity (0 default, 2 more, 4 debug)\n"
"  --min-sync-period DUR      least time between syncs (default 1s)\n"
"  --sync-period DUR          full resync interval (default 30s)\n"
"  --once                     list, sync once and exit (for tests)\n"
"  --dry-run                  do not touch the module: sync against an empty\n"
"                             state and log the changes instead\n"
"  --help, --version\n"
"DUR is a kube duration such as 500ms, 1s, 1m30s.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kpx-agent: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'kpx-agent --help'.\n");
	return 2;
}

static int parse_period(const char *flag, const char *s, int64_t *ms)
{
	if (kpx_parse_duration(s, ms) || (!strcmp(flag, "--sync-period") && *ms <= 0)) {
		fprintf(stderr, "kpx-agent: %s: invalid duration \"%s\"\n", flag, s);
		return -1;
	}
	return 0;
}

/* Returns -1 to continue, or an exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	char *end;
	long v;
	int c;

	o->min_sync_ms = 1000;
	o->sync_ms = 30000;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hv:", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_KUBECONFIG:
			o->kubeconfig = optarg;
			break;
		case OPT_MASTER:
			o->master = optarg;
			break;
		case OPT_HOSTNAME:
			if (!*optarg || strlen(optarg) > HOST_NAME_MAX)
				return usage_error("--hostname-override: invalid name \"%s\"", optarg);
			strcpy(o->hostname, optarg);
			break;
		case 'v':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > 10)
				return usage_error("--v: invalid level \"%s\"", optarg);
			kpx_log_verbosity = (int)v;
			break;
		case OPT_MIN_SYNC:
			if (parse_period("--min-sync-period", optarg, &o->min_sync_ms))
				return 2;
			break;
		case OPT_SYNC:
			if (parse_period("--sync-period", optarg, &o->sync_ms))
				return 2;
			break;
		case OPT_ONCE:
			o->once = true;
			break;
		case OPT_DRY_RUN:
			o->dry_run = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("kpx-agent %s\n", KPX_VERSION);
			return 0;
		case ':':
			return usage_error("flag %s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown flag %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument \"%s\"", argv[optind]);
	if (!o->hostname[0] && gethostname(o->hostname, sizeof(o->hostname))) {
		fprintf(stderr, "kpx-agent: gethostname: %s\n", strerror(errno));
		return 1;
	}
	/* kube-proxy lower-cases the node name. */
	for (char *p = o->hostname; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return -1;
}

/* Fills @kc from the flags; prints the reason and returns false on error. */
static bool load_config(const struct opts *o, struct kpx_kubeconfig *kc)
{
	char err[512];
	int r;

	if (o->kubeconfig)
		r = kpx_kubeconfig_load(o->kubeconfig, kc, err, sizeof(err));
	else if (o->master)
		r = (memset(kc, 0, sizeof(*kc)), 0);
	else
		r = kpx_kubeconfig_incluster(KPX_SA_DIR, kc, err, sizeof(err));
	if (r) {
		if (r == -ENOENT && !o->kubeconfig)
			fprintf(stderr, "kpx-agent: no API server: give --kubeconfig or --master, or run in a cluster\n");
		else
			fprintf(stderr, "kpx-agent: %s\n", err);
		return false;
	}
	if (o->master) {
		free(kc->server);
		if (!(kc->server = strdup(o->master))) {
			fprintf(stderr, "kpx-agent: out of memory\n");
			return false;
		}
	}
	return true;
}

static int signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Ready to sync: never before the first lists (see the brief in sync.h). */
static bool lists_done(const struct kpx_k8s *k, bool node_too)
{
	return kpx_k8s_synced(k, KPX_KIND_SERVICE) &&
	       kpx_k8s_synced(k, KPX_KIND_ENDPOINTSLICE) &&
	       (!node_too || kpx_k8s_synced(k, KPX_KIND_NODE));
}

static int run(const struct opts *o, struct kpx_nl *nl,
	       const struct kpx_kubeconfig *kc)
{
	struct kpx_model *model = kpx_model_new();
	struct kpx_sync *sync = model ? kpx_sync_new(model, nl, o->min_sync_ms, o->sync_ms) : NULL;
	struct kpx_k8s *k = sync ? kpx_k8s_new(kc, o->hostname, model) : NULL;
	int sfd = signal_fd(), status = 0, r;

	if (!k || sfd < 0) {
		fprintf(stderr, "kpx-agent: setup failed: %s\n", strerror(errno));
		status = 1;
		goto out;
	}
	kpx_info("main", "kpx-agent %s starting: node %s, server %s%s", KPX_VERSION,
		 o->hostname, kc->server, o->dry_run ? ", dry run" : "");
	for (;;) {
		int64_t now = kpx_now_ms(), wait = 1000;

		if (lists_done(k, o->once)) {
			int64_t due = kpx_sync_due(sync);

			if (due <= now) {
				r = kpx_sync_run(sync);
				if (o->once) {
					status = r ? 1 : 0;
					break;
				}
				due = kpx_sync_due(sync);
			}
			wait = due - now > 0 ? due - now : 0;
			if (wait > INT_MAX)
				wait = INT_MAX;
		}
		r = kpx_k8s_poll(k, sfd, (int)wait);
		if (r < 0) {
			kpx_err("main", "event loop: %s", strerror(-r));
			status = 1;
			break;
		}
		if (r > 0) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				kpx_info("main", "%s: exiting, module state left in place",
					 strsignal((int)si.ssi_signo));
				break;
			}
		}
	}
out:
	if (sfd >= 0)
		close(sfd);
	kpx_k8s_free(k);
	kpx_sync_free(sync);
	kpx_model_free(model);
	return status;
}

int main(int argc, char **argv)
{
	struct kpx_kubeconfig kc;
	struct opts o = { 0 };
	struct kpx_nl *nl = NULL;
	int r;

	r = parse_args(argc, argv, &o);
	if (r >= 0)
		return r;
	if (!o.dry_run) {
		r = kpx_nl_open(&nl);
		if (r == -ENOENT) {
			fprintf(stderr, "kpx-agent: kpx module not loaded (generic netlink family \"kpx\" not found)\n");
			return 1;
		}
		if (r) {
			fprintf(stderr, "kpx-agent: netlink: %s\n", strerror(-r));
			return 1;
		}
	}
	if (!load_config(&o, &kc)) {
		if (nl)
			kpx_nl_close(nl);
		return 1;
	}
	r = run(&o, nl, &kc);
	kpx_kubeconfig_free(&kc);
	if (nl)
		kpx_nl_close(nl);
	return r;
}
