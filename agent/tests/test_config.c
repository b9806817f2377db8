// SPDX-License-Identifier: GPL-2.0-only
/*
 * config.c: defaults, the sample KubeProxyConfiguration files in
 * ../testdata/config (kubeadm's zero values, every field kpx uses), invalid
 * documents, flags, flags vs --config, CIDR parsing.  TAP.
 * Run from agent/ (make test does).
 *
 * Over 600 lines as one concern: the one settings table read from each of
 * its sources (defaults, files, flags) and their precedence.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "config/config.h"
#include "base/log.h"

#include "lib/tap.h"

#define DATA "../testdata/config/"

static char err[512];

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static const char *cidr_str(const struct kpx_cidr *c)
{
	static char buf[INET6_ADDRSTRLEN + 8];
	char a[INET6_ADDRSTRLEN];

	inet_ntop(c->family, &c->addr, a, sizeof(a));
	snprintf(buf, sizeof(buf), "%s/%u", a, c->len);
	return buf;
}

/* Parses a NULL-terminated flag list; returns kpx_config_parse()'s value. */
static int parse(struct kpx_config *c, const char *const *args)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = (char *)"kpx-agent";
	while (*args)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	return kpx_config_parse(c, argc, argv, err, sizeof(err));
}

/* Loads YAML text over defaults; returns kpx_config_load_yaml()'s value. */
static int yaml(struct kpx_config *c, const char *text)
{
	kpx_config_defaults(c);
	err[0] = '\0';
	return kpx_config_load_yaml(c, text, strlen(text), err, sizeof(err));
}

#define HDR "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"

static void test_defaults(void)
{
	struct kpx_config c;

	kpx_config_defaults(&c);
	ok(c.kube_api_qps == 5 && c.kube_api_burst == 10, "defaults: qps 5, burst 10");
	ok(c.min_sync_ms == 1000 && c.sync_ms == 30000, "defaults: min-sync 1s, sync 30s");
	ok(streq(c.healthz_bind, "0.0.0.0:10256") && streq(c.metrics_bind, "127.0.0.1:10249"),
	   "defaults: healthz 0.0.0.0:10256, metrics 127.0.0.1:10249");
	ok(c.nodeport_primary && c.n_nodeport_cidrs == 0, "defaults: nodeport-addresses primary");
	ok(c.detect_local == KPX_DETECT_LOCAL_CLUSTER_CIDR && !c.masquerade_all,
	   "defaults: detect-local ClusterCIDR, no masquerade-all");
	ok(streq(c.proxy_mode, "") && streq(c.scheduler, "random") && c.verbosity == 0,
	   "defaults: mode \"\", scheduler random, --v 0");
	ok(c.health_timeout_ms == 60000, "defaults: health timeout 2 x sync-period");
}

static void test_kubeadm(void)
{
	struct kpx_config c;
	const char *const args[] = { "--config", DATA "kubeadm.yaml", "--hostname-override", "n1", NULL };
	int r = parse(&c, args);

	ok(r == 0, "kubeadm.yaml loads (%s)", r ? err : "ok");
	ok(streq(c.kubeconfig, "/var/lib/kube-proxy/kubeconfig.conf"), "kubeadm: kubeconfig path");
	ok(c.kube_api_qps == 5 && c.kube_api_burst == 10, "kubeadm: qps 0/burst 0 keep defaults");
	ok(c.min_sync_ms == 1000 && c.sync_ms == 30000, "kubeadm: 0s periods keep defaults");
	ok(streq(c.healthz_bind, "0.0.0.0:10256") && streq(c.metrics_bind, "127.0.0.1:10249"),
	   "kubeadm: empty bind addresses keep defaults");
	ok(c.n_cluster_cidrs == 1 && streq(cidr_str(&c.cluster_cidrs[0]), "10.244.0.0/16"),
	   "kubeadm: clusterCIDR 10.244.0.0/16");
	ok(c.masquerade_all, "kubeadm: iptables.masqueradeAll true");
	ok(c.conntrack.max_per_core == 32768 && c.conntrack.min == 131072 &&
	   c.conntrack.tcp_established_s == 86400 && c.conntrack.tcp_close_wait_s == 3600 &&
	   !c.conntrack.tcp_be_liberal && !c.conntrack.udp_s && !c.conntrack.udp_stream_s,
	   "kubeadm: conntrack nulls and 0s keep kube-proxy's defaults (32768/core, 131072, 24h, 1h)");
	ok(c.n_ignored == 1,
	   "kubeadm: only logging.options reported as ignored, not bindAddress 0.0.0.0 (%u)",
	   c.n_ignored);
	ok(streq(c.hostname, "n1"), "kubeadm: --hostname-override applies with --config");
	kpx_config_free(&c);
}

static void test_full(void)
{
	struct kpx_config c;
	const char *const args[] = { "--config=" DATA "full.yaml", NULL };
	int r = parse(&c, args);

	ok(r == 0, "full.yaml loads (%s)", r ? err : "ok");
	ok(streq(c.kubeconfig, "/etc/kpx/kubeconfig"), "full: kubeconfig");
	ok(c.kube_api_qps == 50.5 && c.kube_api_burst == 100, "full: qps 50.5 burst 100");
	ok(streq(c.hostname, "node-a.example"), "full: hostnameOverride trimmed, lower-cased (%s)",
	   c.hostname);
	ok(streq(c.healthz_bind, "[::]:20256") && streq(c.metrics_bind, "0.0.0.0:20249"),
	   "full: healthz [::]:20256, metrics 0.0.0.0:20249 (%s %s)", c.healthz_bind, c.metrics_bind);
	ok(streq(c.proxy_mode, "kpx"), "full: mode kpx");
	ok(c.n_cluster_cidrs == 2 && streq(cidr_str(&c.cluster_cidrs[0]), "10.244.0.0/16") &&
	   streq(cidr_str(&c.cluster_cidrs[1]), "fd00:10:244::/56"), "full: dual-stack clusterCIDR");
	ok(c.detect_local == KPX_DETECT_LOCAL_BRIDGE && streq(c.pod_bridge_interface, "cbr0"),
	   "full: detectLocalMode BridgeInterface cbr0");
	ok(c.masquerade_all, "full: masqueradeAll");
	ok(c.sync_ms == 90000 && c.min_sync_ms == 250, "full: syncPeriod 1m30s, minSyncPeriod 250ms");
	ok(c.health_timeout_ms == 180000, "full: health timeout 2 x 90 s");
	ok(c.nodeport_primary && c.n_nodeport_cidrs == 2 &&
	   streq(cidr_str(&c.nodeport_cidrs[0]), "10.0.0.0/8") &&
	   streq(cidr_str(&c.nodeport_cidrs[1]), "fd00:1::/64"),
	   "full: nodePortAddresses primary + 10.0.0.0/8 (host bits cleared) + fd00:1::/64");
	ok(c.verbosity == 4, "full: logging.verbosity 4");
	ok(c.conntrack.max_per_core == 0 && c.conntrack.min == 1000 &&
	   c.conntrack.tcp_established_s == 7200 && c.conntrack.tcp_close_wait_s == 0 &&
	   c.conntrack.tcp_be_liberal && c.conntrack.udp_s == 30 && c.conntrack.udp_stream_s == 120,
	   "full: conntrack.* read, a 0 kept as 0 (leave the sysctl as is)");
	ok(c.n_ignored == 2, "full: 2 ignored settings reported, bindAddress 192.0.2.7 one (%u)",
	   c.n_ignored);
	ok(c.ipvs_strict_arp && c.ipvs_tcp_s == 900 && c.ipvs_tcpfin_s == 30 && c.ipvs_udp_s == 300,
	   "full: ipvs.strictARP, tcpTimeout 900 s, tcpFinTimeout 30 s, udpTimeout 300 s (%ld %ld %ld)",
	   c.ipvs_tcp_s, c.ipvs_tcpfin_s, c.ipvs_udp_s);
	ok(c.ipt_masq_bit == 12 && c.nft_masq_bit == 13 && c.no_localhost_nodeports,
	   "full: iptables.masqueradeBit 12, nftables.masqueradeBit 13, localhostNodePorts false (%d %d)",
	   c.ipt_masq_bit, c.nft_masq_bit);
	ok(c.oom_score_adj == -999, "full: oomScoreAdj -999");
	kpx_config_free(&c);
}

static void test_bad_yaml(void)
{
	static const struct {
		const char *doc, *want, *what;
	} bad[] = {
		{ "apiVersion: v1\nkind: KubeProxyConfiguration\n", "apiVersion", "wrong apiVersion" },
		{ "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: Pod\n", "kind", "wrong kind" },
		{ HDR "mode: kernelspace\n", "Windows-only", "mode kernelspace: Windows" },
		{ HDR "mode: userspace\n", "unknown proxy mode", "unknown mode" },
		{ HDR "clusterCIDR: 10.0.0.0/33\n", "clusterCIDR: Invalid value", "bad CIDR" },
		{ HDR "clusterCIDR: 10.0.0.0/8,10.1.0.0/16\n", "one IPv4 and one IPv6", "two IPv4 CIDRs" },
		{ HDR "iptables:\n  masqueradeAll: \"true\"\n", "not a quoted string", "quoted boolean" },
		{ HDR "iptables:\n  masqueradeAll: maybe\n", "masqueradeAll: Invalid value", "bad boolean" },
		{ HDR "iptables:\n  syncPeriod: soon\n", "syncPeriod: Invalid value", "bad duration" },
		{ HDR "nodePortAddresses: 10.0.0.0/8\n", "want a list", "list given as a string" },
		{ HDR "nodePortAddresses: [everything]\n", "nodePortAddresses: Invalid value", "bad nodeport keyword" },
		{ HDR "healthzBindAddress: 300.0.0.1:10256\n", "healthzBindAddress: Invalid value", "bad bind address" },
		{ HDR "bindAddress: 10.0.0.300\n", "bindAddress: Invalid value", "bad bindAddress" },
		{ HDR "detectLocalMode: Magic\n", "detectLocalMode: Invalid value", "bad detect-local mode" },
		{ HDR "clientConnection:\n  burst: -1\n", "burst: Invalid value", "negative burst" },
		{ HDR "conntrack:\n  maxPerCore: lots\n", "maxPerCore: Invalid value", "ignored field still type-checked" },
		{ HDR "featureGates:\n  X: perhaps\n", "featureGates", "feature gate not a boolean" },
		{ HDR "iptables: [1]\n", "iptables: want a map", "section not a map" },
		{ HDR "mode: [kpx\n", "YAML syntax error", "YAML syntax error" },
		{ "- 1\n", "not a map", "document not a map" },
		{ "", "empty", "empty document" },
	};
	struct kpx_config c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = yaml(&c, bad[i].doc);

		ok(r == -EINVAL && strstr(err, bad[i].want), "rejected: %s (%s)", bad[i].what, err);
		kpx_config_free(&c);
	}
}

static void test_flags(void)
{
	struct kpx_config c;
	int r;

	{
		const char *const a[] = { "--kubeconfig", "/k", "--master=https://10.0.0.1:6443",
			"--cluster-cidr=10.244.0.0/16,fd00::/48", "-v=3", "--masquerade-all",
			"--min-sync-period", "0", "--sync-period=10s", "--nodeport-addresses",
			"all", "--healthz-bind-address", "0.0.0.0", "--metrics-bind-address=[::1]:9999",
			"--hostname-override", "MyNode", "--kube-api-qps", "-1",
			"--detect-local-mode", "InterfaceNamePrefix", "--pod-interface-name-prefix",
			"veth", "--proxy-mode", "", "--scheduler", "mh", "--dry-run", "--once", NULL };

		r = parse(&c, a);
		ok(r == 0, "flags parse (%s)", r ? err : "ok");
		ok(streq(c.kubeconfig, "/k") && streq(c.master, "https://10.0.0.1:6443"),
		   "flags: --kubeconfig, --master");
		ok(c.n_cluster_cidrs == 2 && c.cluster_cidrs[1].family == AF_INET6,
		   "flags: dual-stack --cluster-cidr");
		ok(c.verbosity == 3 && c.masquerade_all, "flags: -v=3, bare --masquerade-all");
		ok(c.min_sync_ms == 0 && c.sync_ms == 10000, "flags: --min-sync-period 0, --sync-period 10s");
		ok(!c.nodeport_primary && c.n_nodeport_cidrs == 2 &&
		   streq(cidr_str(&c.nodeport_cidrs[0]), "0.0.0.0/0") &&
		   streq(cidr_str(&c.nodeport_cidrs[1]), "::/0"), "flags: --nodeport-addresses all");
		ok(streq(c.healthz_bind, "0.0.0.0:10256"), "flags: bare IP gets the default port (%s)",
		   c.healthz_bind);
		ok(streq(c.metrics_bind, "[::1]:9999"), "flags: IPv6 metrics address");
		ok(streq(c.hostname, "mynode"), "flags: hostname lower-cased");
		ok(c.kube_api_qps == -1, "flags: negative qps = no limit");
		ok(c.detect_local == KPX_DETECT_LOCAL_IFPREFIX && streq(c.pod_interface_prefix, "veth"),
		   "flags: InterfaceNamePrefix veth");
		ok(streq(c.scheduler, "mh") && c.dry_run && c.once, "flags: --scheduler, --dry-run, --once");
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--masquerade-all=false", "--healthz-bind-address=",
			"--metrics-bind-address", "127.0.0.1:0", "--conntrack-max-per-core=0",
			"--hostname-override", "x", NULL };

		r = parse(&c, a);
		ok(r == 0 && !c.masquerade_all, "flags: --masquerade-all=false (%s)", r ? err : "ok");
		ok(!c.healthz_bind[0] && !c.metrics_bind[0], "flags: empty / port 0 disable the servers");
		ok(c.n_ignored == 0 && c.conntrack.max_per_core == 0,
		   "flags: --conntrack-max-per-core=0 used (leave nf_conntrack_max as is)");
		kpx_config_free(&c);
	}
	{
		/* kube-proxy's node-IP override: kpx reports it (Node object only) */
		const char *const a0[] = { "--bind-address", "::", NULL };
		const char *const a1[] = { "--bind-address=0.0.0.0", NULL };
		const char *const a2[] = { "--bind-address", "192.0.2.1", NULL };
		const char *const a3[] = { "--bind-address", "fd00::1", NULL };

		r = parse(&c, a0);
		ok(r == 0 && c.n_ignored == 0, "flags: --bind-address :: is the default, not reported");
		kpx_config_free(&c);
		r = parse(&c, a1);
		ok(r == 0 && c.n_ignored == 0, "flags: --bind-address 0.0.0.0 not reported");
		kpx_config_free(&c);
		r = parse(&c, a2);
		ok(r == 0 && c.n_ignored == 1, "flags: --bind-address 192.0.2.1 reported as ignored");
		kpx_config_free(&c);
		r = parse(&c, a3);
		ok(r == 0 && c.n_ignored == 1, "flags: --bind-address fd00::1 reported as ignored");
		kpx_config_free(&c);
	}
	{
		/* up to the module's KPX_CIDRS_MAX (256) --nodeport-addresses */
		static char list[257 * 20];
		const char *const a[] = { "--nodeport-addresses", list, NULL };
		size_t off = 0;
		int i;

		for (i = 0; i < 256; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s10.%d.%d.0/24",
						i ? "," : "", i / 256, i % 256);
		r = parse(&c, a);
		ok(r == 0 && c.n_nodeport_cidrs == 256 &&
		   streq(cidr_str(&c.nodeport_cidrs[255]), "10.0.255.0/24"),
		   "flags: 256 --nodeport-addresses CIDRs (%s)", r ? err : "ok");
		kpx_config_free(&c);
		snprintf(list + off, sizeof(list) - off, ",10.1.0.0/24");
		r = parse(&c, a);
		ok(r == -EINVAL && strstr(err, "nodeport-addresses"), "flags: 257 CIDRs rejected (%s)", err);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--config", DATA "kubeadm.yaml", "--cluster-cidr=10.9.0.0/16",
			"--masquerade-all=false", "--v", "5", "--master", "https://h:1", NULL };

		r = parse(&c, a);
		ok(r == 0, "--config with flags parses (%s)", r ? err : "ok");
		ok(c.n_cluster_cidrs == 1 && streq(cidr_str(&c.cluster_cidrs[0]), "10.244.0.0/16") &&
		   c.masquerade_all, "--config: field flags ignored, as kube-proxy");
		ok(c.verbosity == 5 && streq(c.master, "https://h:1"), "--config: --v and --master apply");
		ok(c.n_ignored == 3, "--config: the 2 flags + logging.options reported (%u)", c.n_ignored);
		kpx_config_free(&c);
	}
	{
		static const struct {
			const char *a[4], *want;
		} bad[] = {
			{ { "--no-such-flag", NULL }, "unknown flag --no-such-flag" },
			{ { "--kubeconf=/k", NULL }, "unknown flag --kubeconf" },
			{ { "--kube", "1", NULL }, "unknown flag --kube" },
			{ { "--kubeconfig", NULL }, "needs a value" },
			{ { "stray", NULL }, "unexpected argument" },
			{ { "--proxy-mode", "kernelspace", NULL }, "Windows-only" },
			{ { "--proxy-mode=bpf", NULL }, "unknown proxy mode" },
			{ { "--bind-address", "node-a", NULL }, "bind-address" },
			{ { "--v", "11", NULL }, "--v: invalid value" },
			{ { "--masquerade-all=maybe", NULL }, "--masquerade-all: invalid value" },
			{ { "--sync-period", "0s", NULL }, "--sync-period: invalid value" },
			{ { "--min-sync-period=1m", NULL }, "longer than sync-period" },
			{ { "--detect-local-mode=BridgeInterface", NULL }, "needs --pod-bridge-interface" },
			{ { "--master", "10.0.0.1:6443", NULL }, "--master: invalid value" },
			{ { "--config", DATA "missing.yaml", NULL }, "No such file" },
			{ { "--scheduler", "fastest", NULL }, "--scheduler: invalid value" },
			{ { "--conntrack-min", "many", NULL }, "--conntrack-min: invalid value" },
			{ { "--conntrack-max-per-core=-1", NULL }, "--conntrack-max-per-core: invalid value" },
			{ { "--conntrack-tcp-timeout-established", "-5s", NULL },
			  "--conntrack-tcp-timeout-established: invalid value" },
			{ { "--hostname-override", "bad/name", NULL }, "--hostname-override: invalid value" },
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = parse(&c, bad[i].a);
			ok(r == -EINVAL && strstr(err, bad[i].want), "flags rejected: %s %s (%s)",
			   bad[i].a[0], bad[i].a[1] ? bad[i].a[1] : "", err);
			kpx_config_free(&c);
		}
	}
	{
		const char *const h[] = { "--help", NULL }, *const v[] = { "--version", NULL };
		FILE *saved = stdout;

		stdout = fopen("/dev/null", "w");
		r = parse(&c, h);
		fclose(stdout);
		stdout = saved;
		ok(r == 1, "--help returns 1");
		kpx_config_free(&c);
		ok(parse(&c, v) == 2, "--version returns 2");
		kpx_config_free(&c);
	}
}

/* Reads file @path (at most 64 KiB) into a static buffer. */
static const char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/*
 * kube-proxy's other registered flags: --healthz-port/--metrics-port
 * (deprecated, addressFromDeprecatedFlags()), "_" normalized to "-",
 * --write-config-to, the logging and machine-id flags, --help's groups.
 */
static void test_kube_proxy_flags(void)
{
	struct kpx_config c;
	char path[] = "/tmp/kpx-test-config-XXXXXX";
	int r, fd;

	{
		const char *const a[] = { "--healthz_bind_address=192.0.2.7:81",
			"--kube_api_qps", "7", "-v=2", "--masquerade_all", NULL };

		r = parse(&c, a);
		ok(r == 0 && streq(c.healthz_bind, "192.0.2.7:81") && c.kube_api_qps == 7 &&
		   c.masquerade_all && c.verbosity == 2,
		   "flags: _ reads as - in flag names (%s)", r ? err : c.healthz_bind);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--healthz-port", "0", "--metrics-port=0", NULL };

		r = parse(&c, a);
		ok(r == 0 && !c.healthz_bind[0] && !c.metrics_bind[0],
		   "flags: --healthz-port 0 / --metrics-port 0 disable the servers (%s)", r ? err : "ok");
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--healthz-bind-address", "10.0.0.1", "--healthz-port",
			"12345", "--metrics-bind-address=::1", "--metrics-port", "9000", NULL };

		r = parse(&c, a);
		ok(r == 0 && streq(c.healthz_bind, "10.0.0.1:12345") &&
		   streq(c.metrics_bind, "[::1]:9000"),
		   "flags: --healthz-port/--metrics-port set the port of a bare bind address (%s %s)",
		   c.healthz_bind, c.metrics_bind);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--healthz-port", "12345",
			"--metrics-bind-address=127.0.0.1:9100", "--metrics-port", "9000", NULL };

		r = parse(&c, a);
		ok(r == 0 && streq(c.healthz_bind, "0.0.0.0:10256") &&
		   streq(c.metrics_bind, "127.0.0.1:9100"),
		   "flags: an address with a port keeps it over --*-port, as kube-proxy (%s %s)",
		   c.healthz_bind, c.metrics_bind);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--config", DATA "kubeadm.yaml", "--healthz-port", "0", NULL };

		r = parse(&c, a);
		ok(r == 0 && streq(c.healthz_bind, "0.0.0.0:10256"),
		   "flags: --healthz-port is not used with --config (%s)", r ? err : c.healthz_bind);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--healthz-port", "65536", NULL };

		r = parse(&c, a);
		ok(r == -EINVAL && strstr(err, "--healthz-port: invalid value"),
		   "flags: --healthz-port 65536 rejected (%s)", err);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--machine-id-file=/etc/machine-id", "--boot-id-file",
			"/proc/sys/kernel/random/boot_id", "--logging-format=json",
			"--log-flush-frequency=5s", "--vmodule=proxier*=4", "--log-text-split-stream",
			"--log-text-info-buffer-size", "1Mi", "--log-json-split-stream=true",
			"--log-json-info-buffer-size=0", NULL };

		r = parse(&c, a);
		kpx_log_set_format(KPX_LOG_TEXT);
		ok(r == 0 && c.n_ignored == 8 && c.log_json,
		   "flags: --machine-id-file, --boot-id-file and the logging flags accepted, reported, "
		   "--logging-format=json used (%s, %u)", r ? err : "ok", c.n_ignored);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--logging-format", "xml", NULL };

		r = parse(&c, a);
		ok(r == -EINVAL && strstr(err, "--logging-format: invalid value \"xml\" (want text or json)") &&
		   !c.log_json, "flags: --logging-format xml rejected (%s)", err);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--write-config-to", path, "--proxy-mode", "ipvs",
			"--sync-period=1m30s", "--cluster-cidr", "10.1.0.0/16",
			"--nodeport-addresses", "10.0.0.0/8,fd00::/64", "--hostname-override", "N1",
			"--conntrack-min", "65536", "--oom-score-adj=-500", "--healthz-port", "0", NULL };
		const char *text;
		struct kpx_config back;

		fd = mkstemp(path);
		close(fd);
		r = parse(&c, a);
		ok(r == 1, "--write-config-to writes and returns 1 (%s)", r == 1 ? "ok" : err);
		text = slurp(path);
		ok(strstr(text, "apiVersion: kubeproxy.config.k8s.io/v1alpha1\n") &&
		   strstr(text, "\nkind: KubeProxyConfiguration\n") &&
		   strstr(text, "\nmode: ipvs\n") && strstr(text, "\nhostnameOverride: n1\n") &&
		   strstr(text, "\noomScoreAdj: -500\n") &&
		   strstr(text, "\n  syncPeriod: 1m30s\n  tcpFinTimeout: 0s\n") &&
		   strstr(text, "\nnodePortAddresses:\n- 10.0.0.0/8\n- fd00::/64\n") &&
		   strstr(text, "\n  acceptContentTypes: \"\"\n") &&
		   strstr(text, "\nhealthzBindAddress: 0.0.0.0:10256\n"),
		   "--write-config-to: the effective values, ipvs.syncPeriod in ipvs mode, "
		   "--healthz-port not applied (as kube-proxy)");
		kpx_config_defaults(&back);
		r = kpx_config_load_file(&back, path, err, sizeof(err));
		ok(r == 0 && streq(back.proxy_mode, "ipvs") && back.n_cluster_cidrs == 1 &&
		   streq(cidr_str(&back.cluster_cidrs[0]), "10.1.0.0/16") &&
		   back.n_nodeport_cidrs == 2 && back.conntrack.min == 65536 &&
		   streq(back.hostname, "n1"),
		   "--write-config-to: the file loads back as --config (%s)", r ? err : "ok");
		kpx_config_free(&back);
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--write-config-to", "/nonexistent-dir/x.yaml", NULL };

		r = parse(&c, a);
		ok(r == -ENOENT && strstr(err, "No such file"),
		   "--write-config-to: an unwritable path is an error (%s)", err);
		kpx_config_free(&c);
	}
	{
		const char *const h[] = { "--help", NULL };
		FILE *saved = stdout;
		const char *text;

		stdout = fopen(path, "w");
		r = parse(&c, h);
		fclose(stdout);
		stdout = saved;
		text = slurp(path);
		ok(r == 1 && strstr(text, "kpx-agent's own flags (not kube-proxy's):\n") &&
		   strstr(text, "--dry-run") && strstr(text, "--healthz-port") &&
		   strstr(text, "--machine-id-file") &&
		   strstr(text, "kube-proxy flags accepted, reported and ignored:"),
		   "--help groups kpx's own flags apart from kube-proxy's");
		kpx_config_free(&c);
	}
	unlink(path);
}

#include <yaml.h>

/* The config.conf string of packaging/kubernetes/configmap.yaml (malloc'd). */
static char *configmap_config(void)
{
	FILE *f = fopen("../packaging/kubernetes/configmap.yaml", "r");
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *root, *data = NULL;
	char *out = NULL;

	if (!f)
		return NULL;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	if (yaml_parser_load(&p, &d)) {
		root = yaml_document_get_root_node(&d);
		for (yaml_node_pair_t *pr = root && root->type == YAML_MAPPING_NODE ?
		     root->data.mapping.pairs.start : NULL;
		     pr && pr < root->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&d, pr->key);

			if (k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, "data"))
				data = yaml_document_get_node(&d, pr->value);
		}
		for (yaml_node_pair_t *pr = data && data->type == YAML_MAPPING_NODE ?
		     data->data.mapping.pairs.start : NULL;
		     pr && pr < data->data.mapping.pairs.top; pr++) {
			yaml_node_t *k = yaml_document_get_node(&d, pr->key);
			yaml_node_t *v = yaml_document_get_node(&d, pr->value);

			if (k->type == YAML_SCALAR_NODE && v->type == YAML_SCALAR_NODE &&
			    !strcmp((char *)k->data.scalar.value, "config.conf"))
				out = strdup((char *)v->data.scalar.value);
		}
		yaml_document_delete(&d);
	}
	yaml_parser_delete(&p);
	fclose(f);
	return out;
}

/*
 * Config files as kube-proxy reads them: strict, then lenient (unknown and
 * obsolete fields logged); every field error at once; each mode's own
 * section; kubeadm 1.33's and a 1.2x cluster's files; the shipped ConfigMap.
 */
static void test_config_files(void)
{
	struct kpx_config c;
	char *cm;
	int r;

	r = yaml(&c, HDR "clusterCIDRs: 10.0.0.0/8\niptables:\n  syncPeriods: 1s\n"
		 "udpIdleTimeout: 250ms\nresourceContainer: /kube-proxy\nconntrack:\n  max: 0\n"
		 "clusterCIDR: 10.9.0.0/16\n");
	ok(r == 0 && c.n_ignored == 5 && c.n_cluster_cidrs == 1,
	   "lenient: 5 unknown/obsolete fields logged, not fatal; the rest applies (%s, %u)",
	   r ? err : "ok", c.n_ignored);
	kpx_config_free(&c);

	r = yaml(&c, HDR "conntrack:\n  maxPerCore: -1\n  min: -5\nclientConnection:\n  burst: x\n"
		 "mode: bogus\nudpIdleTimeout: 1s\n");
	ok(r == -EINVAL &&
	   strstr(err, "[conntrack.maxPerCore: Invalid value: -1: must be greater than or equal to 0, ") &&
	   strstr(err, ", conntrack.min: Invalid value: -5: must be greater than or equal to 0, ") &&
	   strstr(err, ", clientConnection.burst: Invalid value: x") &&
	   strstr(err, ", mode: Invalid value: \"bogus\"") && !strstr(err, "udpIdleTimeout"),
	   "validation: every field error at once, with its path (%s)", err);
	kpx_config_free(&c);

	r = yaml(&c, HDR "mode: nftables\nnftables:\n  syncPeriod: 45s\n  minSyncPeriod: 3s\n"
		 "iptables:\n  syncPeriod: 10s\n  minSyncPeriod: 2s\nipvs:\n  syncPeriod: 20s\n");
	ok(r == 0 && c.sync_ms == 45000 && c.min_sync_ms == 3000 && c.n_ignored == 0,
	   "mode nftables: nftables.syncPeriod/minSyncPeriod (%lld %lld)",
	   (long long)c.sync_ms, (long long)c.min_sync_ms);
	kpx_config_free(&c);
	r = yaml(&c, HDR "mode: ipvs\nnftables:\n  syncPeriod: 45s\n"
		 "iptables:\n  syncPeriod: 10s\nipvs:\n  syncPeriod: 20s\n  minSyncPeriod: 4s\n");
	ok(r == 0 && c.sync_ms == 20000 && c.min_sync_ms == 4000,
	   "mode ipvs: ipvs.syncPeriod/minSyncPeriod (%lld %lld)",
	   (long long)c.sync_ms, (long long)c.min_sync_ms);
	kpx_config_free(&c);
	r = yaml(&c, HDR "nftables:\n  syncPeriod: 45s\niptables:\n  syncPeriod: 10s\n"
		 "ipvs:\n  syncPeriod: 20s\n");
	ok(r == 0 && c.sync_ms == 10000 && c.min_sync_ms == 1000,
	   "mode \"\" (kpx, else nftables/iptables): iptables.syncPeriod, as kube-proxy's default mode (%lld)",
	   (long long)c.sync_ms);
	kpx_config_free(&c);
	{
		const char *const a[] = { "--proxy-mode", "ipvs", "--ipvs-sync-period=20s",
			"--iptables-sync-period", "10s", "--ipvs-min-sync-period", "3s", NULL };
		const char *const b[] = { "--ipvs-sync-period=20s", "--iptables-sync-period", "10s", NULL };

		r = parse(&c, a);
		ok(r == 0 && c.sync_ms == 20000 && c.min_sync_ms == 3000,
		   "flags: --ipvs-*sync-period in ipvs mode (%s)", r ? err : "ok");
		kpx_config_free(&c);
		r = parse(&c, b);
		ok(r == 0 && c.sync_ms == 10000 && c.min_sync_ms == 1000,
		   "flags: --iptables-sync-period outside ipvs mode (%s)", r ? err : "ok");
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--config", DATA "kubeadm-1.33.yaml", NULL };

		r = parse(&c, a);
		ok(r == 0 && c.n_cluster_cidrs == 1 && c.sync_ms == 30000 && c.min_sync_ms == 1000 &&
		   streq(c.healthz_bind, "0.0.0.0:10256") && c.conntrack.max_per_core == 32768 &&
		   streq(c.kubeconfig, "/var/lib/kube-proxy/kubeconfig.conf"),
		   "kubeadm 1.33's KubeProxyConfiguration loads with kube-proxy's defaults (%s)",
		   r ? err : "ok");
		kpx_config_free(&c);
	}
	{
		const char *const a[] = { "--config", DATA "kube-proxy-1.2x-obsolete.yaml", NULL };

		r = parse(&c, a);
		ok(r == 0 && streq(c.proxy_mode, "ipvs") && c.sync_ms == 15000 &&
		   c.min_sync_ms == 2000 && c.conntrack.max_per_core == 65536 &&
		   streq(cidr_str(&c.cluster_cidrs[0]), "10.32.0.0/12") &&
		   streq(c.metrics_bind, "0.0.0.0:10249"),
		   "a 1.2x cluster's file with conntrack.max, resourceContainer, udpIdleTimeout loads; "
		   "ipvs.syncPeriod in ipvs mode (%s)", r ? err : "ok");
		kpx_config_free(&c);
	}
	cm = configmap_config();
	ok(cm != NULL, "packaging/kubernetes/configmap.yaml has data.config.conf");
	r = cm ? yaml(&c, cm) : -1;
	ok(r == 0 && streq(c.healthz_bind, "0.0.0.0:10256") && c.sync_ms == 30000 &&
	   c.min_sync_ms == 1000 && c.n_ignored == 0,
	   "the shipped configmap.yaml's config.conf loads, no field unknown or ignored (%s, %u)",
	   r ? err : "ok", c.n_ignored);
	kpx_config_free(&c);
	free(cm);
}

/* The --config file's watch: a write, a rename, a removal are changes. */
static void test_config_watch(void)
{
	char path[] = "/tmp/kpx-test-watch-XXXXXX", moved[64];
	int fd = mkstemp(path), w;

	ok(fd >= 0 && write(fd, HDR, strlen(HDR)) > 0, "watch: config file written");
	close(fd);
	w = kpx_config_watch_open(path);
	ok(w >= 0, "watch: inotify on the file (%d)", w);
	ok(!kpx_config_watch_changed(w), "watch: no change, nothing reported");
	fd = open(path, O_RDONLY);
	close(fd);
	ok(!kpx_config_watch_changed(w), "watch: reading it is not a change");
	fd = open(path, O_WRONLY | O_APPEND);
	ok(fd >= 0 && write(fd, "mode: ipvs\n", 11) == 11, "watch: appended");
	close(fd);
	ok(kpx_config_watch_changed(w), "watch: a write is a change");
	ok(!kpx_config_watch_changed(w), "watch: reported once");
	snprintf(moved, sizeof(moved), "%s.moved", path);
	ok(rename(path, moved) == 0 && kpx_config_watch_changed(w), "watch: a rename is a change");
	close(w);
	w = kpx_config_watch_open(moved);
	ok(w >= 0 && unlink(moved) == 0 && kpx_config_watch_changed(w),
	   "watch: removing it (a ConfigMap update) is a change");
	close(w);
	ok(kpx_config_watch_open(path) == -ENOENT, "watch: a missing file is -ENOENT");
}

/* oomScoreAdj in every mode; ipvs.scheduler in ipvs mode. */
static void test_mode_settings(void)
{
	char path[] = "/tmp/kpx-test-oom-XXXXXX";
	struct kpx_config c;
	int r, fd;

	kpx_config_defaults(&c);
	ok(c.oom_score_adj == -999, "oomScoreAdj: default -999, as kube-proxy");
	r = yaml(&c, HDR "oomScoreAdj: 500\n");
	ok(r == 0 && c.oom_score_adj == 500 && c.n_ignored == 0, "oomScoreAdj: 500 used");
	kpx_config_free(&c);
	r = yaml(&c, HDR "ipvs:\n  excludeCIDRs: [10.96.0.0/24, \"fd00:10:96::/112\"]\nbindAddressHardFail: true\n");
	ok(r == 0 && c.n_ipvs_exclude == 2 && c.ipvs_exclude[0].family == AF_INET &&
	   c.ipvs_exclude[0].len == 24 && c.ipvs_exclude[1].family == AF_INET6 &&
	   c.ipvs_exclude[1].len == 112 && c.bind_hard_fail && c.n_ignored == 0,
	   "ipvs.excludeCIDRs (2 CIDRs, both families) and bindAddressHardFail used, not ignored (%s, %u)",
	   r ? err : "ok", c.n_ignored);
	kpx_config_free(&c);
	r = yaml(&c, HDR "ipvs:\n  excludeCIDRs: [10.96.0.0/33]\n");
	ok(r == -EINVAL && strstr(err, "ipvs.excludeCIDRs: Invalid value: \"10.96.0.0/33\": must be a valid CIDR"),
	   "ipvs.excludeCIDRs: a bad CIDR rejected with its path (%s)", err);
	kpx_config_free(&c);
	{
		const char *const a[] = { "--ipvs-exclude-cidrs=192.0.2.0/24", "--bind-address-hard-fail",
					  NULL };

		r = parse(&c, a);
		ok(r == 0 && c.n_ipvs_exclude == 1 && c.bind_hard_fail && c.n_ignored == 0,
		   "--ipvs-exclude-cidrs, --bind-address-hard-fail (%s)", r ? err : "ok");
		kpx_config_free(&c);
	}
	r = yaml(&c, HDR "configSyncPeriod: 10m\nportRange: 30000-30100\nfeatureGates:\n  ServiceTrafficDistribution: true\n");
	ok(r == 0 && c.n_ignored == 3, "configSyncPeriod, portRange, featureGates accepted and reported (%s, %u)",
	   r ? err : "ok", c.n_ignored);
	kpx_config_free(&c);
	r = yaml(&c, HDR "oomScoreAdj: 1001\n");
	ok(r == -EINVAL && strstr(err, "oomScoreAdj: Invalid value: 1001: must be within the range [-1000, 1000]"),
	   "oomScoreAdj: 1001 rejected (%s)", err);
	kpx_config_free(&c);
	{
		const char *const a[] = { "--oom-score-adj=-500", NULL };

		r = parse(&c, a);
		ok(r == 0 && c.oom_score_adj == -500, "--oom-score-adj -500 (%s)", r ? err : "ok");
	}
	fd = mkstemp(path);
	close(fd);
	ok(kpx_config_apply_oom_score_adj(&c, path) == 0 && streq(slurp(path), "-500\n"),
	   "oomScoreAdj: written to oom_score_adj (%s)", slurp(path));
	ok(kpx_config_apply_oom_score_adj(&c, "/nonexistent-dir/oom_score_adj") == -ENOENT,
	   "oomScoreAdj: a failure is returned, not fatal");
	unlink(path);
	kpx_config_free(&c);

	r = yaml(&c, HDR "mode: ipvs\nipvs:\n  scheduler: wrr\n");
	ok(r == 0 && streq(c.scheduler, "wrr") && c.n_ignored == 0,
	   "ipvs mode: ipvs.scheduler wrr is the default scheduler (%s)", c.scheduler);
	kpx_config_free(&c);
	r = yaml(&c, HDR "mode: kpx\nipvs:\n  scheduler: wrr\n");
	ok(r == 0 && streq(c.scheduler, "random"), "kpx mode: ipvs.scheduler not used (%s)", c.scheduler);
	kpx_config_free(&c);
	r = yaml(&c, HDR "mode: ipvs\nipvs:\n  scheduler: sed\n");
	ok(r == 0 && streq(c.scheduler, "random") && c.n_ignored == 1,
	   "ipvs mode: an IPVS scheduler kpx lacks (sed) is reported, default kept (%u)", c.n_ignored);
	kpx_config_free(&c);
	r = yaml(&c, HDR "mode: ipvs\nipvs:\n  scheduler: fastest\n");
	ok(r == -EINVAL && strstr(err, "ipvs.scheduler: Invalid value: \"fastest\""),
	   "ipvs.scheduler: not an IPVS scheduler rejected (%s)", err);
	kpx_config_free(&c);
	{
		const char *const a[] = { "--proxy-mode", "ipvs", "--ipvs-scheduler", "lc", NULL };
		const char *const b[] = { "--proxy-mode", "ipvs", "--ipvs-scheduler", "lc",
			"--scheduler", "mh", NULL };

		r = parse(&c, a);
		ok(r == 0 && streq(c.scheduler, "lc"), "--ipvs-scheduler lc in ipvs mode (%s)", c.scheduler);
		kpx_config_free(&c);
		r = parse(&c, b);
		ok(r == 0 && streq(c.scheduler, "mh"), "--scheduler wins over --ipvs-scheduler (%s)",
		   c.scheduler);
		kpx_config_free(&c);
	}
	kpx_config_defaults(&c);
	ok(c.ipt_masq_bit == 14 && c.nft_masq_bit == 14 && !c.no_localhost_nodeports &&
	   !c.ipvs_strict_arp && !c.ipvs_tcp_s && !c.ipvs_tcpfin_s && !c.ipvs_udp_s,
	   "defaults: masqueradeBit 14 (both), localhostNodePorts true, strictARP false, IPVS timeouts 0");
	r = yaml(&c, HDR "iptables:\n  masqueradeBit: 32\n");
	ok(r == -EINVAL && strstr(err, "masqueradeBit: Invalid value: 32: must be within the range [0, 31]"),
	   "iptables.masqueradeBit 32 rejected (%s)", err);
	kpx_config_free(&c);
	r = yaml(&c, HDR "ipvs:\n  udpTimeout: -1s\n");
	ok(r == -EINVAL && strstr(err, "udpTimeout: Invalid value"), "ipvs.udpTimeout -1s rejected (%s)",
	   err);
	kpx_config_free(&c);
	{
		const char *const a[] = { "--proxy-mode", "ipvs", "--ipvs-strict-arp",
			"--ipvs-tcp-timeout", "2m", "--ipvs-tcpfin-timeout=10s", "--ipvs-udp-timeout",
			"45s", "--iptables-masquerade-bit", "0", "--iptables-localhost-nodeports=false",
			NULL };

		r = parse(&c, a);
		ok(r == 0 && c.ipvs_strict_arp && c.ipvs_tcp_s == 120 && c.ipvs_tcpfin_s == 10 &&
		   c.ipvs_udp_s == 45 && c.ipt_masq_bit == 0 && c.no_localhost_nodeports &&
		   c.n_ignored == 0,
		   "--ipvs-strict-arp, --ipvs-*-timeout 2m 10s 45s, --iptables-masquerade-bit 0, --iptables-localhost-nodeports=false applied, none ignored (%s)",
		   r ? err : "ok");
		kpx_config_free(&c);
	}
}

#include <json-c/json.h>

/* /configz's JSON and /flagz's text of the effective configuration. */
static void test_configz_flagz(void)
{
	const char *const a[] = { "--proxy-mode", "nftables", "--cluster-cidr", "10.1.0.0/16",
		"--nodeport-addresses", "10.0.0.0/8,fd00::/64", "--conntrack-min=1000",
		"--masquerade-all", "--sync-period", "45s", NULL };
	struct kpx_config c;
	json_object *root, *cfg, *x;
	char *z, *f;
	int r = parse(&c, a);

	z = kpx_config_configz(&c);
	root = z ? json_tokener_parse(z) : NULL;
	ok(r == 0 && root && json_object_object_get_ex(root, "kubeproxy.config.k8s.io", &cfg),
	   "/configz: a JSON object under kubeproxy.config.k8s.io");
	ok(json_object_object_get_ex(cfg, "mode", &x) && streq(json_object_get_string(x), "nftables") &&
	   json_object_object_get_ex(cfg, "clusterCIDR", &x) &&
	   streq(json_object_get_string(x), "10.1.0.0/16"),
	   "/configz: mode nftables, clusterCIDR");
	ok(json_object_object_get_ex(cfg, "nodePortAddresses", &x) &&
	   json_object_is_type(x, json_type_array) && json_object_array_length(x) == 2 &&
	   streq(json_object_get_string(json_object_array_get_idx(x, 1)), "fd00::/64"),
	   "/configz: nodePortAddresses is a list");
	ok(json_object_object_get_ex(cfg, "conntrack", &x) &&
	   json_object_object_get_ex(x, "min", &x) && json_object_is_type(x, json_type_int) &&
	   json_object_get_int(x) == 1000, "/configz: conntrack.min is the number 1000");
	ok(json_object_object_get_ex(cfg, "nftables", &x) &&
	   json_object_object_get_ex(x, "syncPeriod", &x) &&
	   streq(json_object_get_string(x), "45s"), "/configz: nftables.syncPeriod 45s in nftables mode");
	ok(json_object_object_get_ex(cfg, "iptables", &x) &&
	   json_object_object_get_ex(x, "masqueradeAll", &x) &&
	   json_object_is_type(x, json_type_boolean) && json_object_get_boolean(x),
	   "/configz: iptables.masqueradeAll is the boolean true");
	json_object_put(root);
	free(z);
	f = kpx_config_flagz(&c);
	ok(f && strstr(f, "kube-proxy flags\nWarning: This endpoint is not meant to be machine parseable") &&
	   strstr(f, "\nproxy-mode=nftables\n") && strstr(f, "\nhealthz-bind-address=0.0.0.0:10256\n") &&
	   strstr(f, "\nconntrack-min=1000\n") && strstr(f, "\nsync-period=45s\n") &&
	   strstr(f, "\nbind-address=0.0.0.0\n") &&
	   strstr(f, "\nbind-address=") < strstr(f, "\ncluster-cidr="),
	   "/flagz: a name=value line per flag, given or default, sorted");
	free(f);
	kpx_config_free(&c);
}

/* --hostname-override: a Node name, a DNS-1123 subdomain of up to 253. */
static void test_node_names(void)
{
	struct kpx_config c;
	char name[300];
	const char *a[] = { "--hostname-override", name, NULL };
	static const char *const bad[] = {
		"-node", "node-", "a..b", ".a", "a.", "node_1", "a.-b",
	};
	size_t i;
	int r;

	/* 4 labels: 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
	memset(name, 'a', 253);
	name[63] = name[127] = name[191] = '.';
	name[253] = 0;
	r = parse(&c, a);
	ok(r == 0 && strlen(c.hostname) == 253 && !strcmp(c.hostname, name),
	   "node name of 253 characters taken (%d %s)", r, err);
	kpx_config_free(&c);
	name[253] = 'a';
	name[254] = 0;
	r = parse(&c, a);
	ok(r == -EINVAL && strstr(err, "at most 253"), "254 characters refused: %s", err);
	kpx_config_free(&c);
	snprintf(name, sizeof(name), "Node-1.Example.COM");
	r = parse(&c, a);
	ok(r == 0 && streq(c.hostname, "node-1.example.com"), "lower-cased: %s", c.hostname);
	kpx_config_free(&c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "%s", bad[i]);
		r = parse(&c, a);
		ok(r == -EINVAL, "not a DNS-1123 subdomain: \"%s\" refused (%s)", bad[i], err);
		kpx_config_free(&c);
	}
}

static void test_cidr(void)
{
	struct kpx_cidr c;

	ok(!kpx_cidr_parse("10.1.2.3/12", &c) && streq(cidr_str(&c), "10.0.0.0/12"),
	   "cidr: 10.1.2.3/12 -> 10.0.0.0/12");
	ok(!kpx_cidr_parse("fd00::ffff/120", &c) && streq(cidr_str(&c), "fd00::ff00/120"),
	   "cidr: fd00::ffff/120 -> fd00::ff00/120");
	ok(!kpx_cidr_parse("0.0.0.0/0", &c) && c.len == 0, "cidr: /0");
	ok(kpx_cidr_parse("10.0.0.0", &c) == -EINVAL, "cidr: no length rejected");
	ok(kpx_cidr_parse("10.0.0.0/", &c) == -EINVAL, "cidr: empty length rejected");
	ok(kpx_cidr_parse("10.0.0.0/+8", &c) == -EINVAL, "cidr: signed length rejected");
	ok(kpx_cidr_parse("::/129", &c) == -EINVAL, "cidr: /129 rejected");
}

int main(void)
{
	int fd = open("/dev/null", 1);

	kpx_log_set_fd(fd);	/* the "ignored" warnings */
	printf("TAP version 13\n");
	test_defaults();
	test_kubeadm();
	test_full();
	test_bad_yaml();
	test_flags();
	test_kube_proxy_flags();
	test_config_files();
	test_config_watch();
	test_mode_settings();
	test_configz_flagz();
	test_node_names();
	test_cidr();
	return tap_done();
}
