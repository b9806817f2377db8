// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx-agent's configuration: kube-proxy's flags and the
 * KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) file.  One
 * table (cfg_settings[]) names every flag and field kube-proxy has, with
 * the setter kpx uses, or none when kpx has no use for it (then a non-zero
 * value is logged once and ignored); a value of a plain type goes through
 * a typed setter to the field its row names (offsetof).  The file's reader
 * is yaml.c, the command line flags.c, the effective configuration written
 * out effective.c.  Also here: the --config file's watch and oomScoreAdj.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <arpa/inet.h>
#include <linux/kpx.h>

#include "base/duration.h"
#include "base/log.h"
#include "config/config.h"
#include "config/config_priv.h"

__attribute__((format(printf, 3, 4)))
int cfg_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void kpx_config_defaults(struct kpx_config *c)
{
	memset(c, 0, sizeof(*c));
	c->kube_api_qps = 5;
	c->kube_api_burst = 10;
	c->min_sync_ms = 1000;
	c->sync_ms = 30000;
	c->detect_local = KPX_DETECT_LOCAL_CLUSTER_CIDR;
	c->nodeport_primary = true;
	strcpy(c->scheduler, "random");
	snprintf(c->healthz_bind, sizeof(c->healthz_bind), "0.0.0.0:%d", HEALTHZ_PORT);
	snprintf(c->metrics_bind, sizeof(c->metrics_bind), "127.0.0.1:%d", METRICS_PORT);
	c->health_timeout_ms = 2 * c->sync_ms;
	c->request_timeout_ms = 60000;
	c->watch_stall_ms = 150000;
	c->oom_score_adj = -999;	/* kube-proxy's qos.KubeProxyOOMScoreAdj */
	kpx_ct_settings_defaults(&c->conntrack);
	c->ipt_masq_bit = c->nft_masq_bit = 14;
}

void kpx_config_free(struct kpx_config *c)
{
	free(c->kubeconfig);
	free(c->master);
	free(c->config_file);
	free(c->write_config_to);
	if (c->values) {
		for (size_t i = 0; i < cfg_nsettings(); i++)
			free(c->values[i]);
		free(c->values);
	}
	c->kubeconfig = c->master = c->config_file = c->write_config_to = NULL;
	c->values = NULL;
}

_Static_assert(KPX_CONFIG_CIDRS_MAX == KPX_CIDRS_MAX,
	       "a configured prefix list must fit the module's");

/*
 * An invalid value: "--flag: invalid value "v" (why)" for a flag; for a
 * file field the shape of kube-proxy's validation errors,
 * "path: Invalid value: v: why" (strings quoted, numbers not).
 */
int cfg_bad(char *err, size_t len, const struct setting *s, bool from_file,
	       const char *v, const char *what)
{
	size_t n;

	if (!from_file || !s->field)
		return cfg_fail(err, len, "%s: invalid value \"%.128s\"%s", cfg_name(s, from_file), v, what);
	while (*what == ' ' || *what == '(')
		what++;
	n = strlen(what);
	if (n && what[n - 1] == ')')
		n--;
	return cfg_fail(err, len, s->type == V_INT || s->type == V_FLOAT || s->type == V_BOOL ?
		    "%s: Invalid value: %.128s%s%.*s" : "%s: Invalid value: \"%.128s\"%s%.*s",
		    s->field, v, n ? ": " : "", (int)n, what);
}

const char *cfg_name(const struct setting *s, bool from_file)
{
	static char buf[96];

	if (from_file || !s->flag)
		return s->field;
	snprintf(buf, sizeof(buf), "--%s", s->flag);
	return buf;
}

/* The field a generic setter writes. */
#define AT(f) .off = offsetof(struct kpx_config, f)

/* own, deprecated and off are set by name where they apply; the rest are zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct setting cfg_settings[] = {
	/* flags without a field: always apply */
	{ "config", NULL, V_STR, cfg_set_str, true, AT(config_file) },
	{ "write-config-to", NULL, V_STR, cfg_set_write_config, true },
	{ "healthz-port", NULL, V_INT, cfg_set_port, true, .deprecated =
	  "This flag is deprecated and will be removed in a future release. Please use --healthz-bind-address instead." },
	{ "metrics-port", NULL, V_INT, cfg_set_port, true, .deprecated =
	  "This flag is deprecated and will be removed in a future release. Please use --metrics-bind-address instead." },
	{ "master", NULL, V_STR, cfg_set_master, true },
	{ "cleanup", NULL, V_BOOL, cfg_set_bool, true, AT(cleanup) },
	{ "init-only", NULL, V_BOOL, cfg_set_bool, true, AT(init_only) },
	{ "once", NULL, V_BOOL, cfg_set_bool, true, AT(once), .own = true },
	{ "dry-run", NULL, V_BOOL, cfg_set_bool, true, AT(dry_run), .own = true },
	{ "scheduler", NULL, V_STR, cfg_set_scheduler, true, .own = true },
	{ "kube-api-timeout", NULL, V_DUR, cfg_set_req_timeout, true, .own = true },
	{ "watch-stall-timeout", NULL, V_DUR, cfg_set_stall, true, .own = true },
	{ "metrics-per-backend", NULL, V_BOOL, cfg_set_bool, true, AT(metrics_per_backend), .own = true },
	{ "min-sync-period", NULL, V_DUR, cfg_set_ms, false, AT(min_sync_ms), .own = true },
	{ "sync-period", NULL, V_DUR, cfg_set_ms_positive, false, AT(sync_ms), .own = true },
	{ "v", "logging.verbosity", V_INT, cfg_set_verbosity, true },
	{ "hostname-override", "hostnameOverride", V_STR, cfg_set_hostname, true },
	{ "boot-id-file", NULL, V_STR, NULL, true, .why = "kpx reads no host identity files" },
	{ "machine-id-file", NULL, V_STR, NULL, true, .why = "kpx reads no host identity files" },
	{ "log-text-split-stream", NULL, V_BOOL, NULL, true,
	  .why = "component-base's split of info lines to stdout: kpx writes every line to stderr" },
	{ "log-text-info-buffer-size", NULL, V_STR, NULL, true,
	  .why = "component-base's buffer of info lines: kpx writes each line at once" },
	{ "log-json-split-stream", NULL, V_BOOL, NULL, true,
	  .why = "component-base's split of info lines to stdout: kpx writes every line to stderr" },
	{ "log-json-info-buffer-size", NULL, V_STR, NULL, true,
	  .why = "component-base's buffer of info lines: kpx writes each line at once" },
	{ "vmodule", "logging.vmodule", V_ANY, NULL, true,
	  .why = "per-file verbosity: kpx has the one --v" },
	{ "log-flush-frequency", "logging.flushFrequency", V_ANY, NULL, true,
	  .why = "kpx writes each line at once: nothing to flush" },
	{ "logging-format", "logging.format", V_STR, cfg_set_log_format, true },
	{ NULL, "logging.options", V_ANY, NULL, false,
	  .why = "the split streams and info buffers: kpx writes every line to stderr at once" },

	/* flags and fields */
	{ "kubeconfig", "clientConnection.kubeconfig", V_STR, cfg_set_str, false, AT(kubeconfig) },
	{ "kube-api-qps", "clientConnection.qps", V_FLOAT, cfg_set_qps, false },
	{ "kube-api-burst", "clientConnection.burst", V_INT, cfg_set_burst, false },
	{ "kube-api-content-type", "clientConnection.contentType", V_STR, cfg_set_content_type, false },
	{ NULL, "clientConnection.acceptContentTypes", V_STR, cfg_set_content_type, false },
	{ "healthz-bind-address", "healthzBindAddress", V_STR, cfg_set_healthz, false },
	{ "metrics-bind-address", "metricsBindAddress", V_STR, cfg_set_metrics, false },
	{ "proxy-mode", "mode", V_STR, cfg_set_mode, false },
	{ "cluster-cidr", "clusterCIDR", V_STR, cfg_set_cluster_cidr, false },
	{ "detect-local-mode", "detectLocalMode", V_STR, cfg_set_detect_local, false },
	{ "pod-bridge-interface", "detectLocal.bridgeInterface", V_STR, cfg_set_ifname, false, AT(pod_bridge_interface) },
	{ "pod-interface-name-prefix", "detectLocal.interfaceNamePrefix", V_STR, cfg_set_ifname, false, AT(pod_interface_prefix) },
	{ "masquerade-all", "iptables.masqueradeAll", V_BOOL, cfg_set_bool, false, AT(masquerade_all) },
	{ NULL, "nftables.masqueradeAll", V_BOOL, cfg_set_bool, false, AT(masquerade_all) },
	{ "nodeport-addresses", "nodePortAddresses", V_LIST, cfg_set_nodeport, false },
	{ "iptables-sync-period", "iptables.syncPeriod", V_DUR, cfg_set_mode_period, false },
	{ "iptables-min-sync-period", "iptables.minSyncPeriod", V_DUR, cfg_set_mode_period, false },
	{ "conntrack-max-per-core", "conntrack.maxPerCore", V_INT, cfg_set_ct_count, false, AT(conntrack.max_per_core) },
	{ "conntrack-min", "conntrack.min", V_INT, cfg_set_ct_count, false, AT(conntrack.min) },
	{ "conntrack-tcp-timeout-established", "conntrack.tcpEstablishedTimeout", V_DUR,
	  cfg_set_ct_timeout, false, AT(conntrack.tcp_established_s) },
	{ "conntrack-tcp-timeout-close-wait", "conntrack.tcpCloseWaitTimeout", V_DUR,
	  cfg_set_ct_timeout, false, AT(conntrack.tcp_close_wait_s) },
	{ "conntrack-tcp-be-liberal", "conntrack.tcpBeLiberal", V_BOOL, cfg_set_bool, false, AT(conntrack.tcp_be_liberal) },
	{ "conntrack-udp-timeout", "conntrack.udpTimeout", V_DUR, cfg_set_ct_timeout, false, AT(conntrack.udp_s) },
	{ "conntrack-udp-timeout-stream", "conntrack.udpStreamTimeout", V_DUR, cfg_set_ct_timeout, false, AT(conntrack.udp_stream_s) },

	/* kube-proxy settings kpx has no use for */
	{ "feature-gates", "featureGates", V_MAP, NULL, false,
	  .why = "kpx has kube-proxy 1.33's released behaviours built in, without gates: a gate changes nothing" },
	/*
	 * kube-proxy takes a specific --bind-address as the node's primary IP
	 * of its family (cmd/kube-proxy/app/server.go detectNodeIPs()); kpx
	 * takes the node's addresses from its Node object only, so a specific
	 * address is reported as ignored; 0.0.0.0 and :: (the default) are not.
	 */
	{ "bind-address", "bindAddress", V_IP, NULL, false,
	  .why = "kpx takes the node's addresses from its Node object" },
	{ "bind-address-hard-fail", "bindAddressHardFail", V_BOOL, cfg_set_bool, false, AT(bind_hard_fail) },
	{ "profiling", "enableProfiling", V_BOOL, NULL, false,
	  .why = "Go's pprof handlers: kpx is not a Go program" },
	{ "show-hidden-metrics-for-version", "showHiddenMetricsForVersion", V_STR, NULL, false,
	  .why = "kpx hides no deprecated metric: every metric it has is shown" },
	{ "oom-score-adj", "oomScoreAdj", V_INT, cfg_set_oom, false },
	{ "config-sync-period", "configSyncPeriod", V_DUR, NULL, false,
	  .why = "client-go's informer resync re-delivers unchanged cached objects, which change nothing; kpx's watches keep its cache current and --sync-period re-checks the data plane" },
	{ "proxy-port-range", "portRange", V_STR, NULL, false,
	  .why = "only the userspace proxy used it, which kube-proxy removed in 1.26; kube-proxy ignores it too" },
	{ NULL, "windowsRunAsService", V_BOOL, NULL, false,
	  .why = "Windows only" },
	{ "iptables-masquerade-bit", "iptables.masqueradeBit", V_INT, cfg_set_masq_bit, false, AT(ipt_masq_bit) },
	{ "iptables-localhost-nodeports", "iptables.localhostNodePorts", V_BOOL, cfg_set_bool_not, false,
	  AT(no_localhost_nodeports) },
	{ NULL, "iptables.snatNodeInternalIP", V_BOOL, NULL, false,
	  .why = "not a field of kube-proxy's configuration types" },
	{ NULL, "nftables.masqueradeBit", V_INT, cfg_set_masq_bit, false, AT(nft_masq_bit) },
	{ NULL, "nftables.syncPeriod", V_DUR, cfg_set_mode_period, false },
	{ NULL, "nftables.minSyncPeriod", V_DUR, cfg_set_mode_period, false },
	{ "ipvs-sync-period", "ipvs.syncPeriod", V_DUR, cfg_set_mode_period, false },
	{ "ipvs-min-sync-period", "ipvs.minSyncPeriod", V_DUR, cfg_set_mode_period, false },
	{ "ipvs-scheduler", "ipvs.scheduler", V_STR, cfg_set_ipvs_scheduler, false },
	{ "ipvs-exclude-cidrs", "ipvs.excludeCIDRs", V_LIST, cfg_set_cidr_list, false },
	{ "ipvs-strict-arp", "ipvs.strictARP", V_BOOL, cfg_set_bool, false, AT(ipvs_strict_arp) },
	{ "ipvs-tcp-timeout", "ipvs.tcpTimeout", V_DUR, cfg_set_ct_timeout, false, AT(ipvs_tcp_s) },
	{ "ipvs-tcpfin-timeout", "ipvs.tcpFinTimeout", V_DUR, cfg_set_ct_timeout, false, AT(ipvs_tcpfin_s) },
	{ "ipvs-udp-timeout", "ipvs.udpTimeout", V_DUR, cfg_set_ct_timeout, false, AT(ipvs_udp_s) },
	{ NULL, "winkernel.networkName", V_STR, NULL, false,
	  .why = "Windows only" },
	{ NULL, "winkernel.sourceVip", V_STR, NULL, false,
	  .why = "Windows only" },
	{ NULL, "winkernel.enableDSR", V_BOOL, NULL, false,
	  .why = "Windows only" },
	{ NULL, "winkernel.rootHnsEndpointName", V_STR, NULL, false,
	  .why = "Windows only" },
	{ NULL, "winkernel.forwardHealthCheckVip", V_BOOL, NULL, false,
	  .why = "Windows only" },
};
#pragma GCC diagnostic pop

size_t cfg_nsettings(void)
{
	return sizeof(cfg_settings) / sizeof(cfg_settings[0]);
}

/* Records @v as the value @s was given, for kpx_config_write(). */
static int remember(struct kpx_config *c, const struct setting *s, const char *v)
{
	char *d;

	if (!c->values) {
		c->values = calloc(NSETTINGS, sizeof(*c->values));
		if (!c->values)
			return -ENOMEM;
	}
	d = strdup(v);
	if (!d)
		return -ENOMEM;
	free(c->values[s - cfg_settings]);
	c->values[s - cfg_settings] = d;
	return 0;
}

/*
 * 0 when @v is an IPv4 or IPv6 address (then *unspec, if not NULL: it is
 * 0.0.0.0 or ::), else -EINVAL.
 */
int cfg_parse_ip(const char *v, bool *unspec)
{
	static const unsigned char zero[16];
	unsigned char a[16] = { 0 };

	if (inet_pton(AF_INET, v, a) != 1 && inet_pton(AF_INET6, v, a) != 1)
		return -EINVAL;
	if (unspec)
		*unspec = !memcmp(a, zero, sizeof(a));
	return 0;
}

/* Checks @v's syntax for a setting kpx ignores, so typos still fail. */
static int check_ignored(const struct setting *s, const char *v, bool from_file,
			 char *err, size_t len)
{
	int64_t ms;
	bool b;
	long x;

	switch (s->type) {
	case V_BOOL:
		return cfg_parse_bool(v, &b) ? BAD(" (want true or false)") : 0;
	case V_INT:
		return cfg_parse_long(v, -2147483648L, 2147483647L, &x) ? BAD(" (want an integer)") : 0;
	case V_DUR:
		return kpx_parse_duration(v, &ms) ? BAD(" (want a duration)") : 0;
	case V_IP:
		return cfg_parse_ip(v, NULL) ? BAD(" (want an IP address)") : 0;
	default:
		return 0;
	}
}

int cfg_apply(struct kpx_config *c, const struct setting *s, const char *v,
		 bool from_file, char *err, size_t len)
{
	int r;

	if (remember(c, s, v))
		return cfg_fail(err, len, "out of memory");
	if (s->set) {
		r = s->set(c, s, v, from_file, err, len);
		if (r == -ENOMEM)
			return cfg_fail(err, len, "out of memory");
		return r;
	}
	r = check_ignored(s, v, from_file, err, len);
	if (r)
		return r;
	if (s->type == V_IP && cfg_is_zero(s, v))
		return 0;	/* the default, given explicitly */
	c->n_ignored++;
	if (s->why)
		kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
			  "setting", cfg_name(s, from_file), "value", v, "reason", s->why, NULL);
	else
		kpx_logkv(KPX_LOG_WARN, "config", "setting not used by kpx-agent, ignored",
			  "setting", cfg_name(s, from_file), "value", v, NULL);
	return 0;
}

/* ---- the --config file's changes --------------------------------------- */

#define WATCH_EVENTS (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF)

int kpx_config_watch_open(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	if (inotify_add_watch(fd, path, WATCH_EVENTS) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

bool kpx_config_watch_changed(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->mask & (WATCH_EVENTS | IN_IGNORED))
				changed = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return changed;
}

int kpx_config_apply_oom_score_adj(const struct kpx_config *c, const char *path)
{
	char v[16];
	FILE *f = fopen(path ? path : "/proc/self/oom_score_adj", "we");
	int r = 0;

	if (!f) {
		r = -errno;
	} else {
		snprintf(v, sizeof(v), "%d\n", c->oom_score_adj);
		if (fputs(v, f) == EOF)
			r = -errno;
		if (fclose(f) && !r)
			r = -errno;
	}
	if (r) {
		char val[16];

		snprintf(val, sizeof(val), "%d", c->oom_score_adj);
		kpx_dbg(2, "config", "Failed to apply OOMScore: %s (oomScoreAdj %s)",
			strerror(-r), val);
	}
	return r;
}

