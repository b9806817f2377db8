/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node's conntrack sysctls, set at start-up as kube-proxy does
 * (cmd/kube-proxy/app/server_linux.go, setupConntrack; the conntrack.*
 * fields of KubeProxyConfiguration v1alpha1 and their --conntrack-* flags).
 *
 * Without this the kernel's default nf_conntrack_max is sized from RAM
 * (about 8,000 entries on a 1 GiB node) and TIME_WAIT entries of a busy
 * Service fill it: new connections are dropped ("nf_conntrack: table full").
 */
#ifndef KPX_CTSYSCTL_H
#define KPX_CTSYSCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/sysctl.h"

/* Defaults of kube-proxy's v1alpha1 defaulting (SetDefaults_KubeProxyConfiguration). */
#define KPX_CT_MAX_PER_CORE_DEFAULT	32768
#define KPX_CT_MIN_DEFAULT		131072
#define KPX_CT_TCP_ESTABLISHED_DEFAULT_S	(24 * 3600)
#define KPX_CT_TCP_CLOSE_WAIT_DEFAULT_S		3600

/* The conntrack.* settings; times in seconds, 0 = leave the sysctl as is. */
struct kpx_ct_settings {
	long max_per_core;	/* conntrack.maxPerCore; 0: leave max (and min) as is */
	long min;		/* conntrack.min: floor of max_per_core x CPUs */
	long tcp_established_s;	/* conntrack.tcpEstablishedTimeout */
	long tcp_close_wait_s;	/* conntrack.tcpCloseWaitTimeout */
	bool tcp_be_liberal;	/* conntrack.tcpBeLiberal: set to 1 when true */
	long udp_s;		/* conntrack.udpTimeout */
	long udp_stream_s;	/* conntrack.udpStreamTimeout */
};

/* kube-proxy's defaults for @s. */
void kpx_ct_settings_defaults(struct kpx_ct_settings *s);

/*
 * nf_conntrack_max to set for @ncpu CPUs: max(max_per_core x ncpu, min) as
 * kube-proxy's getConntrackMax(), or 0 (leave as is) when max_per_core is 0.
 */
long kpx_ct_max(const struct kpx_ct_settings *s, int ncpu);

/* CPUs this process may run on (sched_getaffinity, as Go's NumCPU), >= 1. */
int kpx_ct_ncpu(void);

/*
 * Writes the conntrack sysctls under @root: nf_conntrack_max, then the
 * hash table size raised to max / 4 when it is smaller (as kube-proxy: the
 * hash is global and only the initial network namespace may resize it;
 * EROFS or EACCES there, a read-only /sys, is logged and skipped), then
 * each timeout that is > 0 and nf_conntrack_tcp_be_liberal when set, each
 * through kpx_sysctl_ensure() with @flags.  Loads nf_conntrack (modprobe)
 * when its sysctls are missing on the node.  Returns the number of values
 * written (or that would be), or -errno with the file and reason in @err
 * (the caller stops: kube-proxy fails to start then too).
 */
int kpx_ct_apply(const struct kpx_ct_settings *s, const char *root, int ncpu,
		 unsigned int flags, char *err, size_t errlen);

/*
 * Whether nf_conntrack_tcp_be_liberal under @root is set (non-zero): then
 * conntrack marks only out-of-window RST segments INVALID, and the iptables
 * and ipvs modes install no drop of INVALID packets, as kube-proxy's
 * (it reads the sysctl once at start).  False when it cannot be read.
 */
bool kpx_ct_tcp_be_liberal(const char *root);

/*
 * The other sysctls a proxy mode needs, as kube-proxy's proxiers set them:
 * net.ipv4.conf.all.route_localnet = 1 when @localhost_nodeports (every
 * mode: kube-proxy's iptables mode for 127.0.0.1 NodePorts); in the "ipvs"
 * mode net.ipv4.vs.conntrack = 1 (NAT'ed connections keep conntrack
 * entries, which the masquerade rules need), net.ipv4.vs.expire_nodest_conn
 * = 1, net.ipv4.vs.expire_quiescent_template = 1 and net.ipv4.ip_forward =
 * 1 (net.ipv4.vs.conn_reuse_mode is left as is: kube-proxy changes it only
 * on kernels before 5.9).  net.bridge.bridge-nf-call-iptables is only
 * checked: when it exists and is 0, a line says that Service traffic
 * between pods of one bridge bypasses the proxy (kube-proxy logs the same).
 * Returns the number written, or -errno with @err.
 */
int kpx_mode_sysctls(const char *mode, bool localhost_nodeports, const char *root,
		     unsigned int flags, char *err, size_t errlen);

/*
 * ipvs.strictARP in the "ipvs" mode, as kube-proxy's IPVS proxier:
 * net.ipv4.conf.all.arp_ignore = 1 (answer ARP only for addresses of the
 * interface asked on, so not for the VIPs on the dummy device) and
 * net.ipv4.conf.all.arp_announce = 2 (never announce them as a source),
 * each through kpx_sysctl_ensure() with @flags.  Returns the number
 * written, or -errno with @err.
 */
int kpx_strict_arp_sysctls(const char *root, unsigned int flags, char *err, size_t errlen);

#endif
