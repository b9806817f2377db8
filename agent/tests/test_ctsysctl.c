// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctsysctl.c: kube-proxy's nf_conntrack_max formula, and the sysctls
 * written under a scratch directory laid out as /proc/sys/net/netfilter and
 * /sys/module/nf_conntrack/parameters: values, hash size raised but never
 * lowered, unchanged values not rewritten, 0 = leave as is, dry run, a
 * missing file; the proxy modes' sysctls; a read-only /proc/sys (a
 * read-only bind mount in a private mount namespace, as a container's):
 * an error for --init-only, a warning logged once and the kpx_sysctl_unset
 * metric for the agent.  TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/ctsysctl.h"
#include "base/log.h"

#include "lib/tap.h"

static char root[64], err[512];

static void put(const char *file, long v)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, file);
	f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fprintf(f, "%ld\n", v);
	fclose(f);
}

static long get(const char *file)
{
	char p[256];
	long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, file);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -2;
		fclose(f);
	}
	return v;
}

#define NF "/proc/sys/net/netfilter/"
#define MAX NF "nf_conntrack_max"
#define EST NF "nf_conntrack_tcp_timeout_established"
#define CW NF "nf_conntrack_tcp_timeout_close_wait"
#define LIB NF "nf_conntrack_tcp_be_liberal"
#define UDP NF "nf_conntrack_udp_timeout"
#define UDPS NF "nf_conntrack_udp_timeout_stream"
#define HASH "/sys/module/nf_conntrack/parameters/hashsize"

/* A kernel's values before kube-proxy: a 1 GiB node's defaults. */
static void kernel_defaults(void)
{
	put(MAX, 8192);
	put(HASH, 8192);
	put(EST, 432000);
	put(CW, 60);
	put(LIB, 0);
	put(UDP, 30);
	put(UDPS, 120);
}

#define LOCALNET "/proc/sys/net/ipv4/conf/all/route_localnet"
#define VS "/proc/sys/net/ipv4/vs/"
#define FWD "/proc/sys/net/ipv4/ip_forward"
#define BRIDGE "/proc/sys/net/bridge/bridge-nf-call-iptables"

static void mode_sysctls(void)
{
	char cmd[512];
	int r;

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/sys/net/ipv4/conf/all %s" VS
		 " %s/proc/sys/net/bridge", root, root, root);
	if (system(cmd))
		exit(1);
	put(LOCALNET, 0);
	put(VS "conntrack", 0);
	put(VS "expire_nodest_conn", 0);
	put(VS "expire_quiescent_template", 0);
	put(FWD, 0);
	put(BRIDGE, 1);
	r = kpx_mode_sysctls("kpx", false, root, 0, err, sizeof(err));
	ok(r == 0 && get(LOCALNET) == 0 && get(FWD) == 0,
	   "kpx mode without localhost NodePorts: nothing written (%d)", r);
	r = kpx_mode_sysctls("kpx", true, root, 0, err, sizeof(err));
	ok(r == 1 && get(LOCALNET) == 1 && get(VS "conntrack") == 0,
	   "localhost NodePorts: route_localnet = 1 only (%d)", r);
	r = kpx_mode_sysctls("ipvs", true, root, 0, err, sizeof(err));
	ok(r == 4 && get(VS "conntrack") == 1 && get(VS "expire_nodest_conn") == 1 &&
	   get(VS "expire_quiescent_template") == 1 && get(FWD) == 1,
	   "ipvs: vs.conntrack, expire_nodest_conn, expire_quiescent_template, ip_forward = 1 (%d)", r);
	ok(get(BRIDGE) == 1, "bridge-nf-call-iptables is only read");
	r = kpx_mode_sysctls("ipvs", true, root, 0, err, sizeof(err));
	ok(r == 0, "ipvs again: nothing rewritten (%d)", r);
	snprintf(cmd, sizeof(cmd), "rm -f %s" VS "conntrack", root);
	if (system(cmd))
		exit(1);
	r = kpx_mode_sysctls("ipvs", false, root, KPX_SYSCTL_TOLERANT, err, sizeof(err));
	ok(r == -ENOENT && strstr(err, "vs/conntrack"),
	   "ipvs without net.ipv4.vs.conntrack: -ENOENT even when tolerant (%d %s)", r, err);
	put(VS "conntrack", 1);
	put("/proc/sys/net/ipv4/conf/all/arp_ignore", 0);
	put("/proc/sys/net/ipv4/conf/all/arp_announce", 1);
	r = kpx_strict_arp_sysctls(root, 0, err, sizeof(err));
	ok(r == 2 && get("/proc/sys/net/ipv4/conf/all/arp_ignore") == 1 &&
	   get("/proc/sys/net/ipv4/conf/all/arp_announce") == 2,
	   "ipvs.strictARP: arp_ignore 0 -> 1, arp_announce 1 -> 2 (%d)", r);
	r = kpx_strict_arp_sysctls(root, 0, err, sizeof(err));
	ok(r == 0, "ipvs.strictARP again: nothing rewritten (%d)", r);
}

/* Runs @fn with stderr (the log) in a file; returns the number of lines matching @pat. */
static int log_count(const char *pat, int (*fn)(void *), void *arg, int *ret)
{
	char path[128], line[1024];
	int fd, saved, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/log", root);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || saved < 0 || dup2(fd, 2) < 0)
		exit(1);
	close(fd);
	*ret = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		n += !!strstr(line, pat);
	if (f)
		fclose(f);
	return n;
}

static int apply_tolerant(void *arg)
{
	return kpx_ct_apply(arg, root, 2, KPX_SYSCTL_TOLERANT, err, sizeof(err));
}

static char *metrics(void)
{
	static char buf[2048];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	if (!f)
		exit(1);
	kpx_sysctl_metrics(f);
	fclose(f);
	return buf;
}

/*
 * A private mount namespace with @root/proc/sys bound read-only over
 * itself, as runc mounts /proc/sys and systemd's ProtectKernelTunables=.
 */
static void readonly_proc_sys(void)
{
	struct kpx_ct_settings d;
	char ps[128];
	int r, n;

	kpx_ct_settings_defaults(&d);
	kernel_defaults();
	r = kpx_ct_apply(&d, root, 2, 0, err, sizeof(err));
	ok(r == 4, "before: the init step's values (%d)", r);
	snprintf(ps, sizeof(ps), "%s/proc/sys", root);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(ps, ps, NULL, MS_BIND, NULL) ||
	    mount(NULL, ps, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL)) {
		tap_skip("no private mount namespace (%s)", strerror(errno));
		return;
	}
	ok(kpx_sysctl_readonly(root), "read-only /proc/sys detected");
	ok(!strstr(metrics(), "kpx_sysctl_unset"), "no kpx_sysctl_unset series before");

	/* values already right (as --init-only left them): no warning */
	n = log_count("cannot set", apply_tolerant, &d, &r);
	ok(r == 0 && n == 0, "read-only, values right: 0 written, no warning (%d, %d lines)", r, n);
	ok(!strstr(metrics(), "kpx_sysctl_unset"), "and no kpx_sysctl_unset series");

	/* a fresh node: close_wait and established at the kernel's values */
	if (umount(ps))
		exit(1);
	put(EST, 432000);
	put(CW, 60);
	if (mount(ps, ps, NULL, MS_BIND, NULL) ||
	    mount(NULL, ps, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
		exit(1);
	r = kpx_ct_apply(&d, root, 2, 0, err, sizeof(err));
	ok(r == -EROFS && strstr(err, "nf_conntrack_tcp_timeout_established"),
	   "strict (--init-only): -EROFS naming the sysctl (%d %s)", r, err);
	n = log_count("cannot set net.netfilter.nf_conntrack_tcp_timeout_", apply_tolerant, &d, &r);
	ok(r == 0 && n == 2, "tolerant (the agent): no error, one warning per sysctl (%d, %d lines)",
	   r, n);
	ok(get(EST) == 432000 && get(CW) == 60, "nothing written");
	ok(strstr(metrics(), "kpx_sysctl_unset{sysctl=\"net.netfilter.nf_conntrack_tcp_timeout_established\"} 1\n") &&
	   strstr(metrics(), "kpx_sysctl_unset{sysctl=\"net.netfilter.nf_conntrack_tcp_timeout_close_wait\"} 1\n") &&
	   !strstr(metrics(), "nf_conntrack_max"),
	   "kpx_sysctl_unset = 1 for both, no series for nf_conntrack_max");
	n = log_count("cannot set", apply_tolerant, &d, &r);
	ok(r == 0 && n == 0, "second time: not warned again (%d lines)", n);

	/* set from outside (the init step ran): the gauge goes to 0 */
	if (umount(ps))
		exit(1);
	put(EST, 86400);
	put(CW, 3600);
	r = kpx_ct_apply(&d, root, 2, KPX_SYSCTL_TOLERANT, err, sizeof(err));
	ok(r == 0 && strstr(metrics(), "nf_conntrack_tcp_timeout_close_wait\"} 0\n") &&
	   strstr(metrics(), "nf_conntrack_tcp_timeout_established\"} 0\n"),
	   "values right again: kpx_sysctl_unset 0 (%d)", r);
}

int main(void)
{
	struct kpx_ct_settings s, d;
	char cmd[256];
	int r;

	kpx_log_verbosity = -1;
	printf("TAP version 13\n");
	kpx_ct_settings_defaults(&d);

	ok(kpx_ct_max(&d, 2) == 131072, "2 CPUs: max(32768 x 2, 131072) = 131072");
	ok(kpx_ct_max(&d, 8) == 262144, "8 CPUs: 32768 x 8 = 262144");
	ok(kpx_ct_max(&d, 96) == 3145728 && kpx_ct_max(&d, 96) / 4 == 786432,
	   "96 CPUs (case 39's node-a): 32768 x 96 = 3145728 entries, hash size 786432");
	s = d;
	s.min = 0;
	s.max_per_core = 1000;
	ok(kpx_ct_max(&s, 3) == 3000, "maxPerCore 1000, min 0, 3 CPUs: 3000");
	s.max_per_core = 0;
	s.min = 500000;
	ok(kpx_ct_max(&s, 64) == 0, "maxPerCore 0: leave as is, min ignored");
	ok(kpx_ct_ncpu() >= 1, "ncpu %d >= 1", kpx_ct_ncpu());

	snprintf(root, sizeof(root), "/tmp/kpx-ctsysctl.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p %s" NF " %s/sys/module/nf_conntrack/parameters",
		 root, root);
	if (system(cmd))
		return 1;

	/* missing files: an error naming the file, nothing written */
	r = kpx_ct_apply(&d, root, 2, 0, err, sizeof(err));
	ok(r == -ENOENT && strstr(err, "nf_conntrack_max"), "no conntrack sysctls: -ENOENT (%d, %s)",
	   r, err);

	kernel_defaults();
	r = kpx_ct_apply(&d, root, 2, KPX_SYSCTL_DRY_RUN, err, sizeof(err));
	ok(r == 4 && get(MAX) == 8192 && get(HASH) == 8192 && get(EST) == 432000,
	   "dry run: 4 changes reported, nothing written (%d)", r);

	r = kpx_ct_apply(&d, root, 2, 0, err, sizeof(err));
	ok(r == 4, "defaults, 2 CPUs: 4 sysctls written (%d %s)", r, r < 0 ? err : "");
	ok(get(MAX) == 131072, "nf_conntrack_max = 131072 (%ld)", get(MAX));
	ok(get(HASH) == 32768, "hashsize = max / 4 = 32768 (%ld)", get(HASH));
	ok(get(EST) == 86400 && get(CW) == 3600,
	   "tcp established 24h = 86400 s, close_wait 1h = 3600 s (%ld, %ld)", get(EST), get(CW));
	ok(get(LIB) == 0 && get(UDP) == 30 && get(UDPS) == 120,
	   "be_liberal and UDP timeouts left as they were (unset)");

	r = kpx_ct_apply(&d, root, 2, 0, err, sizeof(err));
	ok(r == 0, "second start: nothing rewritten (%d)", r);

	put(HASH, 65536);
	r = kpx_ct_apply(&d, root, 2, 0, err, sizeof(err));
	ok(r == 0 && get(HASH) == 65536, "a larger hash table is not shrunk (%ld)", get(HASH));

	kernel_defaults();
	s = d;
	s.max_per_core = 0;
	s.tcp_established_s = 0;
	s.tcp_close_wait_s = 0;
	s.tcp_be_liberal = true;
	s.udp_s = 45;
	s.udp_stream_s = 300;
	r = kpx_ct_apply(&s, root, 4, 0, err, sizeof(err));
	ok(r == 3 && get(MAX) == 8192 && get(HASH) == 8192 && get(EST) == 432000 && get(CW) == 60,
	   "maxPerCore 0 and timeouts 0: left as is (%d)", r);
	ok(get(LIB) == 1 && get(UDP) == 45 && get(UDPS) == 300,
	   "tcpBeLiberal 1, udp 45 s, udp stream 300 s");

	mode_sysctls();
	readonly_proc_sys();

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		return 1;
	return tap_done();
}
