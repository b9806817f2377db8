// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line: kube-proxy's flags (getopt_long over the settings
 * table), --help and --version.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/log.h"
#include "config/config.h"
#include "config/config_priv.h"

/* ---- command line -------------------------------------------------------- */

/*
 * Prints the flags of cfg_settings[]: kube-proxy's that kpx uses (@used) or
 * ignores, wrapped.
 */
static void list_flags(bool used)
{
	size_t i, col = 0;

	for (i = 0; i < NSETTINGS; i++) {
		if (!cfg_settings[i].flag || cfg_settings[i].own || !cfg_settings[i].set != !used)
			continue;
		if (col + strlen(cfg_settings[i].flag) + 3 > 78) {
			printf("\n");
			col = 0;
		}
		col += (size_t)printf(" --%s", cfg_settings[i].flag);
	}
	printf("\n");
}

static void usage(void)
{
	printf("Usage: kpx-agent [FLAGS]\n"
	       "Watches Services and EndpointSlices and programs the kpx kernel module.\n"
	       "Flags and --config (KubeProxyConfiguration v1alpha1) are kube-proxy's; with\n"
	       "--config, flags other than --v and --hostname-override that map to a field\n"
	       "are ignored, as in kube-proxy; \"_\" in a flag name reads as \"-\".\n"
	       "kpx-agent's own flags (not kube-proxy's):\n"
	       "  --once          list, sync once and exit (for tests)\n"
	       "  --dry-run       do not touch the module: sync against an empty state\n"
	       "                  and log the changes instead\n"
	       "  --scheduler S   default scheduler: random, rr, wrr, lc, sh, mh\n"
	       "  --kube-api-timeout DUR      list request timeout (default 60s)\n"
	       "  --watch-stall-timeout DUR   re-watch after this long without data\n"
	       "                  (default 150s; API servers send bookmarks each minute)\n"
	       "  --min-sync-period, --sync-period DUR   (as kube-proxy >= 1.30)\n"
	       "  --metrics-per-backend  /metrics also has kpx_backend_connections_total,\n"
	       "                  one series per backend (default: per frontend only)\n"
	       "kube-proxy flags used by kpx (--proxy-mode also takes kpx; \"\" = kpx if\n"
	       "the module loads, else nftables, else iptables; --healthz-port and\n"
	       "--metrics-port are deprecated, as in kube-proxy):\n");
	list_flags(true);
	printf("kube-proxy flags accepted, reported and ignored:\n");
	list_flags(false);
	printf("  --help, --version\nDUR is a kube duration such as 500ms, 1s, 1m30s.\n");
}

/* The value --@flag was given, or NULL. */
const char *cfg_given_value(const struct kpx_config *c, const char *flag)
{
	size_t i;

	for (i = 0; c->values && i < NSETTINGS; i++)
		if (cfg_settings[i].flag && !strcmp(cfg_settings[i].flag, flag))
			return c->values[i];
	return NULL;
}

/* --healthz-port / --metrics-port @flag over the bind address @bind. */
static void apply_port(struct kpx_config *c, const char *flag, char *bind,
		       size_t bindlen, bool bare)
{
	const char *v = cfg_given_value(c, flag);
	char host[64], *colon;

	if (!v)
		return;
	if (!strcmp(v, "0")) {
		bind[0] = '\0';
		return;
	}
	if (!bare || !bind[0])
		return;	/* the address names its port: it wins, as kube-proxy */
	colon = strrchr(bind, ':');
	if (!colon || (size_t)(colon - bind) >= sizeof(host))
		return;
	memcpy(host, bind, colon - bind);
	host[colon - bind] = '\0';
	if (snprintf(bind, bindlen, "%s:%.5s", host, v) >= (int)bindlen)
		bind[0] = '\0';	/* cannot happen: host came from bind */
}

#define OPT_HELP	(int)(NSETTINGS + 1)
#define OPT_VERSION	(int)(NSETTINGS + 2)

int kpx_config_parse(struct kpx_config *c, int argc, char **argv, char *err,
		     size_t errlen)
{
	struct option opts[NSETTINGS + 3];
	struct {
		const struct setting *s;
		const char *v;
	} given[256];
	size_t i, n = 0, ngiven = 0;
	char **nargv = NULL;
	int ch, r, idx;

	kpx_config_defaults(c);
	for (i = 0; i < NSETTINGS; i++) {
		if (!cfg_settings[i].flag)
			continue;
		opts[n++] = (struct option){
			cfg_settings[i].flag,
			cfg_settings[i].type == V_BOOL ? optional_argument : required_argument,
			NULL, (int)i + 1,
		};
	}
	opts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	opts[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	opts[n] = (struct option){ 0 };

	/*
	 * pflag's WordSepNormalizeFunc: "_" in a flag's name reads as "-".
	 * The flags are normalized in a copy of argv (the caller's may be
	 * read-only).
	 */
	nargv = calloc((size_t)argc + 1, sizeof(*nargv));
	if (!nargv)
		return cfg_fail(err, errlen, "out of memory");
	for (i = 0; i < (size_t)argc; i++) {
		nargv[i] = strdup(argv[i]);
		if (!nargv[i]) {
			r = cfg_fail(err, errlen, "out of memory");
			goto out;
		}
	}
	argv = nargv;

	/* Whole names only: getopt would take abbreviations, kube-proxy does not. */
	for (i = 1; i < (size_t)argc; i++) {
		char *a = argv[i], *nm;
		size_t len, j;

		if (a[0] != '-' || !a[1])
			continue;
		if (!strcmp(a, "--"))
			break;
		nm = a + (a[1] == '-' ? 2 : 1);
		len = strcspn(nm, "=");
		for (j = 0; j < len; j++)
			if (nm[j] == '_')
				nm[j] = '-';
		if ((len == 4 && !strncmp(nm, "help", 4)) || (len == 1 && nm[0] == 'h') ||
		    (len == 7 && !strncmp(nm, "version", 7)))
			continue;
		for (j = 0; j < NSETTINGS; j++)
			if (cfg_settings[j].flag && strlen(cfg_settings[j].flag) == len &&
			    !strncmp(cfg_settings[j].flag, nm, len))
				break;
		if (j == NSETTINGS) {
			r = cfg_fail(err, errlen, "unknown flag %.*s", (int)(nm - a + len), a);
			goto out;
		}
		if (cfg_settings[j].type != V_BOOL && !nm[len])
			i++;	/* its value */
	}
	optind = 0;	/* full re-initialization (tests parse several times) */
	opterr = 0;
	while ((ch = getopt_long_only(argc, argv, ":h", opts, &idx)) != -1) {
		if (ch == 'h' || ch == OPT_HELP) {
			usage();
			r = 1;
			goto out;
		}
		if (ch == OPT_VERSION) {
			r = 2;
			goto out;
		}
		if (ch == ':')
			{ r = cfg_fail(err, errlen, "flag %s needs a value", argv[optind - 1]); goto out; }
		if (ch == '?' || ch < 1 || ch > (int)NSETTINGS)
			{ r = cfg_fail(err, errlen, "unknown flag %s", argv[optind - 1]); goto out; }
		if (ngiven == sizeof(given) / sizeof(given[0]))
			{ r = cfg_fail(err, errlen, "too many flags"); goto out; }
		given[ngiven].s = &cfg_settings[ch - 1];
		given[ngiven].v = optarg ? optarg : "true";
		ngiven++;
	}
	if (optind < argc)
		{ r = cfg_fail(err, errlen, "unexpected argument \"%s\"", argv[optind]); goto out; }

	/* --config first (the last one given wins), then the flags. */
	for (i = 0; i < ngiven; i++) {
		if (given[i].s->set == cfg_set_str && given[i].s->off == offsetof(struct kpx_config, config_file)) {
			r = cfg_apply(c, given[i].s, given[i].v, false, err, errlen);
			if (r)
				goto out;
		}
	}
	if (c->config_file) {
		r = kpx_config_load_file(c, c->config_file, err, errlen);
		if (r) {
			r = -EINVAL;
			goto out;
		}
	}
	for (i = 0; i < ngiven; i++) {
		const struct setting *s = given[i].s;

		if (s->set == cfg_set_str && s->off == offsetof(struct kpx_config, config_file))
			continue;
		if (s->deprecated) {
			kpx_logkv(KPX_LOG_WARN, "config", "flag has been deprecated",
				  "flag", cfg_name(s, false), "notice", s->deprecated, NULL);
		}
		if (c->config_file && !s->always) {
			c->n_ignored++;
			kpx_logkv(KPX_LOG_WARN, "config",
				  "flag ignored because --config is given (as kube-proxy)",
				  "flag", cfg_name(s, false), "value", given[i].v, NULL);
			continue;
		}
		r = cfg_apply(c, s, given[i].v, false, err, errlen);
		if (r)
			goto out;
	}
	/*
	 * kube-proxy's addressFromDeprecatedFlags(): without --config and
	 * --write-config-to, a port of 0 disables the server and another
	 * port is appended to a bind address given without one.
	 */
	if (!c->config_file && !c->write_config_to) {
		apply_port(c, "healthz-port", c->healthz_bind, sizeof(c->healthz_bind),
			   c->healthz_bind_bare);
		apply_port(c, "metrics-port", c->metrics_bind, sizeof(c->metrics_bind),
			   c->metrics_bind_bare);
	}

	/*
	 * The per-mode sync period flags, as kube-proxy's
	 * processV1Alpha1Flags(): --iptables-* unless the mode is ipvs,
	 * --ipvs-* in ipvs mode (with --config, cfg_resolve_periods() did it).
	 */
	if (!c->config_file) {
		const char *v;
		int64_t ms;
		bool ipvs = !strcmp(c->proxy_mode, "ipvs");

		if ((v = cfg_given_value(c, ipvs ? "ipvs-sync-period" : "iptables-sync-period")) &&
		    !kpx_parse_duration(v, &ms))
			c->sync_ms = ms;
		if ((v = cfg_given_value(c, ipvs ? "ipvs-min-sync-period" : "iptables-min-sync-period")) &&
		    !kpx_parse_duration(v, &ms))
			c->min_sync_ms = ms;
	}
	cfg_resolve_ipvs_scheduler(c);

	/* Cross-field checks, as kube-proxy's validation. */
	if (c->detect_local == KPX_DETECT_LOCAL_BRIDGE && !c->pod_bridge_interface[0])
		{ r = cfg_fail(err, errlen, "detectLocalMode BridgeInterface needs --pod-bridge-interface (detectLocal.bridgeInterface)"); goto out; }
	if (c->detect_local == KPX_DETECT_LOCAL_IFPREFIX && !c->pod_interface_prefix[0])
		{ r = cfg_fail(err, errlen, "detectLocalMode InterfaceNamePrefix needs --pod-interface-name-prefix (detectLocal.interfaceNamePrefix)"); goto out; }
	if (c->min_sync_ms > c->sync_ms)
		{ r = cfg_fail(err, errlen, "min-sync-period (%lld ms) is longer than sync-period (%lld ms)",
			    (long long)c->min_sync_ms, (long long)c->sync_ms); goto out; }
	c->health_timeout_ms = 2 * c->sync_ms;
	if (!c->hostname[0]) {
		if (gethostname(c->hostname, sizeof(c->hostname)))
			{ r = cfg_fail(err, errlen, "gethostname: %s", strerror(errno)); goto out; }
		c->hostname[sizeof(c->hostname) - 1] = '\0';
		for (char *p = c->hostname; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	}
	r = 0;
	if (c->write_config_to) {
		r = kpx_config_write(c, c->write_config_to, err, errlen);
		if (!r) {
			kpx_logkv(KPX_LOG_INFO, "config", "Wrote configuration",
				  "file", c->write_config_to, NULL);
			r = 1;
		}
	}
out:
	for (i = 0; nargv && i < (size_t)argc; i++)
		free(nargv[i]);
	free(nargv);
	return r;
}

