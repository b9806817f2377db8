// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node sysctls kube-proxy sets at start-up (ctsysctl.h): conntrack's
 * table limit and hash size, TCP and UDP timeouts and tcp_be_liberal, and
 * those of the proxy mode; a read-only /proc/sys is tolerated on request.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include "config/ctsysctl.h"
#include "base/sysctl.h"
#include "base/log.h"

#define NF_SYSCTL	"/proc/sys/net/netfilter/"
#define HASHSIZE	"/sys/module/nf_conntrack/parameters/hashsize"

void kpx_ct_settings_defaults(struct kpx_ct_settings *s)
{
	*s = (struct kpx_ct_settings){
		.max_per_core = KPX_CT_MAX_PER_CORE_DEFAULT,
		.min = KPX_CT_MIN_DEFAULT,
		.tcp_established_s = KPX_CT_TCP_ESTABLISHED_DEFAULT_S,
		.tcp_close_wait_s = KPX_CT_TCP_CLOSE_WAIT_DEFAULT_S,
	};
}

long kpx_ct_max(const struct kpx_ct_settings *s, int ncpu)
{
	long scaled;

	if (s->max_per_core <= 0)
		return 0;
	scaled = s->max_per_core * (ncpu > 0 ? ncpu : 1);
	return scaled > s->min ? scaled : s->min;
}

int kpx_ct_ncpu(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}


/* ---- conntrack -------------------------------------------------------- */

struct ctx {
	const char *root;
	unsigned int flags;
	int written;
	char *err;
	size_t errlen;
};

/* kpx_sysctl_ensure() of net/netfilter/@file; 0 or -errno. */
static int set(struct ctx *c, const char *file, long v)
{
	char name[128];
	int r;

	snprintf(name, sizeof(name), "net/netfilter/%s", file);
	r = kpx_sysctl_ensure(c->root, name, v, c->flags, c->err, c->errlen);
	if (r > 0)
		c->written++;
	return r < 0 ? r : 0;
}

/*
 * The hash table size, raised to @max / 4 when smaller (never lowered).  A
 * module parameter in /sys, not a sysctl: a read-only /sys (EROFS, EACCES)
 * or a writer outside the initial network namespace (EOPNOTSUPP) leaves it
 * as it is, with a warning.
 */
static int set_hashsize(struct ctx *c, long max)
{
	char path[512];
	long cur;
	int r;

	snprintf(path, sizeof(path), "%s%s", c->root, HASHSIZE);
	r = kpx_sysctl_read(path, &cur);
	if (!r && cur >= max / 4)
		return 0;
	if (c->flags & KPX_SYSCTL_DRY_RUN) {
		kpx_info("conntrack", "dry run: would set %s = %ld", HASHSIZE, max / 4);
		c->written++;
		return 0;
	}
	if (r) {
		snprintf(c->err, c->errlen, "conntrack: cannot read %s: %s", path, strerror(-r));
		return r;
	}
	r = kpx_sysctl_write(path, max / 4);
	if (r == -EROFS || r == -EACCES || r == -EPERM || r == -EOPNOTSUPP) {
		kpx_warn("conntrack", "cannot set %s = %ld: %s; the hash table stays at %ld buckets",
			 path, max / 4, strerror(-r), cur);
		return 0;
	}
	if (r) {
		snprintf(c->err, c->errlen, "conntrack: cannot set %s = %ld: %s", path, max / 4,
			 strerror(-r));
		return r;
	}
	kpx_info("conntrack", "set %s = %ld (was %ld)", HASHSIZE, max / 4, cur);
	c->written++;
	return 0;
}

int kpx_ct_apply(const struct kpx_ct_settings *s, const char *root, int ncpu,
		 unsigned int flags, char *err, size_t errlen)
{
	struct ctx c = { .root = root, .flags = flags, .err = err, .errlen = errlen };
	long max = kpx_ct_max(s, ncpu);
	char path[512];
	int r = 0;

	snprintf(path, sizeof(path), "%s" NF_SYSCTL "nf_conntrack_max", root);
	if (!*root && access(path, F_OK) && !(flags & KPX_SYSCTL_DRY_RUN) &&
	    kpx_modprobe("nf_conntrack"))
		kpx_info("conntrack", "loaded nf_conntrack (modprobe nf_conntrack)");
	if (max > 0) {
		r = set(&c, "nf_conntrack_max", max);
		if (!r)
			r = set_hashsize(&c, max);
	}
	if (!r && s->tcp_established_s > 0)
		r = set(&c, "nf_conntrack_tcp_timeout_established", s->tcp_established_s);
	if (!r && s->tcp_close_wait_s > 0)
		r = set(&c, "nf_conntrack_tcp_timeout_close_wait", s->tcp_close_wait_s);
	if (!r && s->tcp_be_liberal) {
		r = set(&c, "nf_conntrack_tcp_be_liberal", 1);
	} else if (!r) {
		long v;

		/* left as it is, but said: it decides what INVALID means */
		snprintf(path, sizeof(path), "%s" NF_SYSCTL "nf_conntrack_tcp_be_liberal", root);
		if (!kpx_sysctl_read(path, &v))
			kpx_info("conntrack", "net.netfilter.nf_conntrack_tcp_be_liberal = %ld (left as it is; --conntrack-tcp-be-liberal sets it): %s",
				 v, v ? "conntrack accepts out-of-window TCP segments" :
				 "conntrack marks out-of-window TCP segments INVALID");
	}
	if (!r && s->udp_s > 0)
		r = set(&c, "nf_conntrack_udp_timeout", s->udp_s);
	if (!r && s->udp_stream_s > 0)
		r = set(&c, "nf_conntrack_udp_timeout_stream", s->udp_stream_s);
	return r ? r : c.written;
}

bool kpx_ct_tcp_be_liberal(const char *root)
{
	char path[512];
	long v;

	snprintf(path, sizeof(path), "%s" NF_SYSCTL "nf_conntrack_tcp_be_liberal", root);
	return !kpx_sysctl_read(path, &v) && v;
}

/* ---- the proxy mode's own sysctls ------------------------------------- */

int kpx_mode_sysctls(const char *mode, bool localhost_nodeports, const char *root,
		     unsigned int flags, char *err, size_t errlen)
{
	static const char *const ipvs[] = {
		"net/ipv4/vs/conntrack", "net/ipv4/vs/expire_nodest_conn",
		"net/ipv4/vs/expire_quiescent_template", "net/ipv4/ip_forward",
	};
	static bool bridge_logged;
	char path[512];
	int n = 0, r;
	size_t i;
	long v;

	if (localhost_nodeports) {
		r = kpx_sysctl_ensure(root, "net/ipv4/conf/all/route_localnet", 1, flags,
				      err, errlen);
		if (r < 0)
			return r;
		n += r;
	}
	if (mode && !strcmp(mode, "ipvs")) {
		snprintf(path, sizeof(path), "%s/proc/sys/net/ipv4/vs", root);
		if (!*root && access(path, F_OK) && !(flags & KPX_SYSCTL_DRY_RUN) &&
		    kpx_modprobe("ip_vs"))
			kpx_info("sysctl", "loaded ip_vs (modprobe ip_vs)");
		for (i = 0; i < sizeof(ipvs) / sizeof(ipvs[0]); i++) {
			r = kpx_sysctl_ensure(root, ipvs[i], 1, flags, err, errlen);
			if (r < 0)
				return r;
			n += r;
		}
	}
	snprintf(path, sizeof(path), "%s/proc/sys/net/bridge/bridge-nf-call-iptables", root);
	if (!bridge_logged && !kpx_sysctl_read(path, &v) && v == 0) {
		kpx_info("sysctl", "net.bridge.bridge-nf-call-iptables = 0: Service traffic between pods on one Linux bridge is not seen by the proxy (set it to 1 if the pod network uses a bridge)");
		bridge_logged = true;
	}
	return n;
}

int kpx_strict_arp_sysctls(const char *root, unsigned int flags, char *err, size_t errlen)
{
	int n, r;

	n = kpx_sysctl_ensure(root, "net/ipv4/conf/all/arp_ignore", 1, flags, err, errlen);
	if (n < 0)
		return n;
	r = kpx_sysctl_ensure(root, "net/ipv4/conf/all/arp_announce", 2, flags, err, errlen);
	return r < 0 ? r : n + r;
}
