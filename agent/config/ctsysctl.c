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
#include "dp/dataplane.h"
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

/* Reads the decimal value of @path into *v; 0 or -errno. */
static int read_long(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%ld", v) != 1)
		r = -EINVAL;
	fclose(f);
	return r;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "we");
	int r = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%ld\n", v) < 0)
		r = -errno;
	if (fclose(f) && !r)
		r = -errno;
	return r;
}

/* ---- one sysctl ------------------------------------------------------ */

/*
 * Sysctls that kpx_sysctl_ensure() found unwritable: warned once each, and
 * rendered by kpx_sysctl_metrics() (the metrics server's thread) while the
 * main thread adds to them.
 */
#define UNSET_MAX 32
static pthread_mutex_t unset_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char name[80];		/* dotted, "net.netfilter.nf_conntrack_max" */
	bool unset;		/* not at the wanted value */
} unset_v[UNSET_MAX];
static size_t unset_n;

/*
 * Records whether @dotted is at its wanted value; returns true when it is
 * not and this is the first time (the caller warns).
 */
static bool note(const char *dotted, bool is_unset)
{
	bool first = false;
	size_t i;

	pthread_mutex_lock(&unset_lock);
	for (i = 0; i < unset_n; i++)
		if (!strcmp(unset_v[i].name, dotted))
			break;
	if (i == unset_n && is_unset && unset_n < UNSET_MAX) {
		snprintf(unset_v[i].name, sizeof(unset_v[i].name), "%s", dotted);
		unset_n++;
		first = true;
	}
	if (i < unset_n)
		unset_v[i].unset = is_unset;
	pthread_mutex_unlock(&unset_lock);
	return first;
}

void kpx_sysctl_metrics(FILE *f)
{
	size_t i;

	pthread_mutex_lock(&unset_lock);
	if (unset_n) {
		fputs("# HELP kpx_sysctl_unset Node sysctls the agent needs at another value and could not set (read-only /proc/sys; see kpx-agent --init-only)\n"
		      "# TYPE kpx_sysctl_unset gauge\n", f);
		for (i = 0; i < unset_n; i++)
			fprintf(f, "kpx_sysctl_unset{sysctl=\"%s\"} %d\n", unset_v[i].name,
				unset_v[i].unset);
	}
	pthread_mutex_unlock(&unset_lock);
}

/* "net/ipv4/vs/conntrack" -> "net.ipv4.vs.conntrack", as sysctl(8) names it. */
static void dotted(const char *name, char *out, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		out[i] = name[i] == '/' ? '.' : name[i];
	out[i] = 0;
}

int kpx_sysctl_ensure(const char *root, const char *name, long want,
		      unsigned int flags, char *err, size_t errlen)
{
	char path[512], dn[80];
	long cur;
	int r;

	snprintf(path, sizeof(path), "%s/proc/sys/%s", root, name);
	dotted(name, dn, sizeof(dn));
	r = read_long(path, &cur);
	if (!r && cur == want) {
		kpx_dbg(4, "sysctl", "%s = %ld already", dn, want);
		note(dn, false);
		return 0;
	}
	if (flags & KPX_SYSCTL_DRY_RUN) {
		kpx_info("sysctl", "dry run: would set %s = %ld", dn, want);
		return 1;
	}
	if (r) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
		return r;
	}
	r = write_long(path, want);
	if (!r) {
		kpx_info("sysctl", "set %s = %ld (was %ld)", dn, want, cur);
		note(dn, false);
		return 1;
	}
	if ((flags & KPX_SYSCTL_TOLERANT) && (r == -EROFS || r == -EACCES || r == -EPERM)) {
		if (note(dn, true))
			kpx_warn("sysctl", "cannot set %s = %ld (it is %ld): %s; going on without it (kpx-agent --init-only with the rights to write /proc/sys sets it before the agent: the DaemonSet's init container, the unit's ExecStartPre=)",
				 dn, want, cur, strerror(-r));
		return 0;
	}
	snprintf(err, errlen, "cannot set %s = %ld: %s", path, want, strerror(-r));
	return r;
}

bool kpx_sysctl_readonly(const char *root)
{
	char path[512];
	struct statvfs st;

	snprintf(path, sizeof(path), "%s/proc/sys", root);
	return !statvfs(path, &st) && (st.f_flag & ST_RDONLY);
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
	r = read_long(path, &cur);
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
	r = write_long(path, max / 4);
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
	if (!r && s->tcp_be_liberal)
		r = set(&c, "nf_conntrack_tcp_be_liberal", 1);
	if (!r && s->udp_s > 0)
		r = set(&c, "nf_conntrack_udp_timeout", s->udp_s);
	if (!r && s->udp_stream_s > 0)
		r = set(&c, "nf_conntrack_udp_timeout_stream", s->udp_stream_s);
	return r ? r : c.written;
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
	if (!bridge_logged && !read_long(path, &v) && v == 0) {
		kpx_info("sysctl", "net.bridge.bridge-nf-call-iptables = 0: Service traffic between pods on one Linux bridge is not seen by the proxy (set it to 1 if the pod network uses a bridge)");
		bridge_logged = true;
	}
	return n;
}
