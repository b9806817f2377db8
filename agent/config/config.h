/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx-agent's configuration: kube-proxy's flags and KubeProxyConfiguration
 * (kubeproxy.config.k8s.io/v1alpha1) fields that apply to kpx, under their
 * kube-proxy names.  As in kube-proxy, with --config the file wins over
 * the flags that map to its fields (--v, --hostname-override, --master and
 * --cleanup still apply).  Plain data.
 */
#ifndef KPX_CONFIG_H
#define KPX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>

#include "base/cidr.h"
#include "config/ctsysctl.h"

enum kpx_detect_local {
	KPX_DETECT_LOCAL_NONE,		/* nothing is local: masquerade off-node */
	KPX_DETECT_LOCAL_CLUSTER_CIDR,	/* --cluster-cidr */
	KPX_DETECT_LOCAL_NODE_CIDR,	/* the Node's spec.podCIDRs */
	KPX_DETECT_LOCAL_BRIDGE,	/* --pod-bridge-interface */
	KPX_DETECT_LOCAL_IFPREFIX,	/* --pod-interface-name-prefix */
};

/* A Node name is a DNS-1123 subdomain: at most 253 characters. */
#define KPX_NODE_NAME_MAX 253

struct kpx_config {
	/* API access */
	char *kubeconfig;		/* --kubeconfig / clientConnection.kubeconfig */
	char *master;			/* --master */
	char hostname[KPX_NODE_NAME_MAX + 1];	/* --hostname-override, the Node's
						 * name: a DNS-1123 subdomain */
	double kube_api_qps;		/* --kube-api-qps, default 5 */
	int kube_api_burst;		/* --kube-api-burst, default 10 */

	/* sync */
	int64_t min_sync_ms;		/* --min-sync-period, default 1000 */
	int64_t sync_ms;		/* --sync-period, default 30000 */

	/* what is local, masquerade */
	struct kpx_cidr cluster_cidrs[KPX_CONFIG_CIDRS_MAX];	/* --cluster-cidr, comma separated */
	int n_cluster_cidrs;
	enum kpx_detect_local detect_local;	/* --detect-local-mode */
	char pod_bridge_interface[IF_NAMESIZE];	/* --pod-bridge-interface */
	char pod_interface_prefix[IF_NAMESIZE];	/* --pod-interface-name-prefix */
	bool masquerade_all;		/* --masquerade-all */

	/*
	 * --nodeport-addresses: CIDRs, or "primary" (the default, as
	 * kube-proxy's nftables mode: the node's primary IPs from its Node
	 * object); nodeport_primary is true when "primary" is given or nothing.
	 */
	struct kpx_cidr nodeport_cidrs[KPX_CONFIG_CIDRS_MAX];
	int n_nodeport_cidrs;
	bool nodeport_primary;

	/* scheduler: --scheduler, default "random" */
	char scheduler[16];

	/* endpoints */
	char healthz_bind[64];		/* --healthz-bind-address, default 0.0.0.0:10256 */
	char metrics_bind[64];		/* --metrics-bind-address, default 127.0.0.1:10249 */
	char proxy_mode[16];		/* --proxy-mode, "" = kpx */

	int verbosity;			/* --v */
	bool log_json;			/* --logging-format json (default text) */
	bool once, dry_run, cleanup;	/* --once, --dry-run, --cleanup */

	/* the config file, health and API timeouts, metrics */
	char *config_file;		/* --config, or NULL */
	bool init_only;			/* --init-only: validate, check, exit 0 */
	int64_t health_timeout_ms;	/* /healthz stale after: 2 x sync_ms */
	unsigned int n_ignored;		/* settings given that kpx does not use
					 * (each logged once at parse time) */
	int64_t request_timeout_ms;	/* --kube-api-timeout (kpx), list page, default 60 s */
	int64_t watch_stall_ms;		/* --watch-stall-timeout (kpx), default 150 s */
	bool metrics_per_backend;	/* --metrics-per-backend (kpx): kpx_backend_* series */

	/* --conntrack-* / conntrack.*: sysctls set at start-up (ctsysctl.h) */
	struct kpx_ct_settings conntrack;

	/*
	 * --write-config-to FILE: write the effective KubeProxyConfiguration
	 * there and exit (kpx_config_parse() returns 1 after writing).
	 */
	char *write_config_to;
	/*
	 * The value each setting was last given (flag or file, after the
	 * precedence rules), by index in settings.c's table; NULL entries are
	 * unset.  Read by kpx_config_write().  Owned; NULL until a setting is
	 * applied.
	 */
	char **values;
	int oom_score_adj;		/* --oom-score-adj / oomScoreAdj, default -999 */
	/*
	 * The fallback modes' own settings (kpx_dp_params, given to the data
	 * plane by main.c): ipvs.strictARP; ipvs.tcpTimeout, tcpFinTimeout,
	 * udpTimeout in seconds (0: the kernel's); iptables.masqueradeBit
	 * (iptables and ipvs modes) and nftables.masqueradeBit, default 14;
	 * no_localhost_nodeports: iptables.localhostNodePorts false (default
	 * true), no 127.0.0.1 NodePort even when --nodeport-addresses holds it.
	 */
	bool ipvs_strict_arp;
	long ipvs_tcp_s, ipvs_tcpfin_s, ipvs_udp_s;
	int ipt_masq_bit, nft_masq_bit;
	bool no_localhost_nodeports;
	/* ipvs.excludeCIDRs / --ipvs-exclude-cidrs: IPVS services there are
	 * never taken for the ipvs mode's stale ones */
	struct kpx_cidr ipvs_exclude[KPX_CONFIG_CIDRS_MAX];
	int n_ipvs_exclude;
	/* bindAddressHardFail / --bind-address-hard-fail: a health or metrics
	 * server that cannot listen is fatal (exit 1) */
	bool bind_hard_fail;
	/* --healthz-bind-address / --metrics-bind-address had no port: the
	 * deprecated --healthz-port / --metrics-port then set it */
	bool healthz_bind_bare, metrics_bind_bare;
};

/* Fills @c with kube-proxy's defaults. */
void kpx_config_defaults(struct kpx_config *c);

/*
 * The agent's command line, as kube-proxy reads it: kpx_config_defaults(),
 * then the --config file (KubeProxyConfiguration v1alpha1 YAML), then the
 * flags.  As in kube-proxy, when --config is given the flags that map to a
 * configuration field are ignored (each one logged), except --v and
 * --hostname-override; flags without a field (--master, --cleanup, ...)
 * always apply.  Flags are long options, "--name value", "--name=value" or
 * one dash; a boolean flag takes no separate value ("--masquerade-all",
 * "--masquerade-all=false").  A setting kpx does not use (iptables/ipvs
 * tuning, ...) is logged once as ignored when set to
 * something other than its zero value, and counted in c->n_ignored.
 * Flag names are normalized as kube-proxy's (pflag's WordSepNormalizeFunc):
 * "_" reads as "-".  The deprecated --healthz-port and --metrics-port are
 * accepted with a warning and, without --config or --write-config-to, set
 * the port of a bind address given without one, or disable the server (0).
 * Returns 0 to run, 1 when --help was printed on stdout or --write-config-to
 * wrote its file, 2 when --version
 * was asked for (the caller prints it; both exit 0), or -EINVAL with a one-line reason in @err for any unknown or invalid
 * flag, field or value, or an unreadable --config file (exit 2).
 * Free with kpx_config_free().
 */
int kpx_config_parse(struct kpx_config *c, int argc, char **argv,
		     char *err, size_t errlen);

/*
 * Applies a KubeProxyConfiguration YAML document of @len bytes over @c:
 * apiVersion must be kubeproxy.config.k8s.io/v1alpha1 and kind
 * KubeProxyConfiguration; an unknown field, a wrong type or an invalid value
 * is -EINVAL with the field's path in @err.  Empty strings, null and zero
 * durations/numbers keep the default, as kube-proxy's defaulting does.
 */
int kpx_config_load_yaml(struct kpx_config *c, const char *data, size_t len,
			 char *err, size_t errlen);

/* kpx_config_load_yaml() of file @path; -ENOENT/-EACCES if unreadable. */
int kpx_config_load_file(struct kpx_config *c, const char *path,
			 char *err, size_t errlen);

/*
 * Writes @c as a KubeProxyConfiguration v1alpha1 YAML document (libyaml's
 * emitter) to @path, as kube-proxy's --write-config-to: every field, in
 * kube-proxy's key order, with the value given (flag or file) or
 * kube-proxy's default.  Returns 0 or -errno with the reason in @err.
 */
int kpx_config_write(const struct kpx_config *c, const char *path,
		     char *err, size_t errlen);

/*
 * Watches the --config file @path as kube-proxy does, to exit (and be
 * restarted) when it changes: an inotify descriptor (non-blocking,
 * close-on-exec) for the file's writes, its rename and its removal (a
 * ConfigMap volume's update removes the old file behind the symlink).
 * Returns the descriptor or -errno.
 */
int kpx_config_watch_open(const char *path);

/*
 * Reads the events pending on @fd (from kpx_config_watch_open()) without
 * blocking; true when one says the file changed.
 */
bool kpx_config_watch_changed(int fd);

/*
 * Writes @c->oom_score_adj to @path (NULL: /proc/self/oom_score_adj), as
 * kube-proxy does at start in every mode.  A failure (an unprivileged agent
 * cannot lower it) is logged at --v 2 as kube-proxy does and returned as
 * -errno; it is not fatal.
 */
int kpx_config_apply_oom_score_adj(const struct kpx_config *c, const char *path);

/*
 * /configz: {"kubeproxy.config.k8s.io": {...}}, the effective
 * KubeProxyConfiguration (the fields kpx_config_write() writes) as JSON
 * (json-c).  /flagz: kube-proxy's flagz text page, a header then one
 * "name=value" line per flag (given or default), sorted.  malloc'd; NULL
 * on ENOMEM.
 */
char *kpx_config_configz(const struct kpx_config *c);
char *kpx_config_flagz(const struct kpx_config *c);

/*
 * Logs, once at start-up, each fallback-mode setting of @c (ipvs.strictARP,
 * the IPVS timeouts, the masquerade bits, iptables.localhostNodePorts)
 * given with a non-default value that @mode ("kpx", "nftables", ...) does
 * not use, and why (modenotes.c).
 */
void kpx_config_mode_notes(const struct kpx_config *c, const char *mode);

/* Frees the strings @c owns (kubeconfig, master, config_file, ...). */
void kpx_config_free(struct kpx_config *c);

#endif
