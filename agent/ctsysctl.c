// SPDX-License-Identifier: GPL-2.0-only
/*
 * The conntrack sysctls kube-proxy sets at start-up (ctsysctl.h): the table
 * limit and hash size, the TCP and UDP timeouts, tcp_be_liberal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctsysctl.h"
#include "dataplane.h"
#include "log.h"

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

struct ctx {
	const char *root;
	bool dry_run;
	int written;
	char *err;
	size_t errlen;
};

/*
 * Sets @file (under ctx->root) to @v unless it has that value already.
 * 0, or -errno with @err filled.
 */
static int set(struct ctx *c, const char *file, long v)
{
	char path[512];
	long cur;
	int r;

	snprintf(path, sizeof(path), "%s%s", c->root, file);
	r = read_long(path, &cur);
	if (!r && cur == v)
		return 0;
	if (c->dry_run) {
		kpx_info("conntrack", "dry run: would set %s = %ld", file, v);
		c->written++;
		return 0;
	}
	if (r) {
		snprintf(c->err, c->errlen, "conntrack: cannot read %s: %s", path, strerror(-r));
		return r;
	}
	r = write_long(path, v);
	if (r) {
		snprintf(c->err, c->errlen, "conntrack: cannot set %s = %ld: %s", path, v,
			 strerror(-r));
		return r;
	}
	kpx_info("conntrack", "set %s = %ld (was %ld)", file, v, cur);
	c->written++;
	return 0;
}

/* The hash table size, raised to @max / 4 when smaller (never lowered). */
static int set_hashsize(struct ctx *c, long max)
{
	char path[512];
	long cur;
	int r;

	snprintf(path, sizeof(path), "%s%s", c->root, HASHSIZE);
	r = read_long(path, &cur);
	if (r && c->dry_run)
		return set(c, HASHSIZE, max / 4);
	if (r) {
		snprintf(c->err, c->errlen, "conntrack: cannot read %s: %s", path, strerror(-r));
		return r;
	}
	if (cur >= max / 4)
		return 0;
	r = set(c, HASHSIZE, max / 4);
	if (r == -EROFS || r == -EACCES) {
		kpx_warn("conntrack", "%s; the hash table stays at %ld buckets", c->err, cur);
		return 0;
	}
	return r;
}

int kpx_ct_apply(const struct kpx_ct_settings *s, const char *root, int ncpu,
		 bool dry_run, char *err, size_t errlen)
{
	struct ctx c = { .root = root, .dry_run = dry_run, .err = err, .errlen = errlen };
	long max = kpx_ct_max(s, ncpu);
	char path[512];
	int r = 0;

	snprintf(path, sizeof(path), "%s" NF_SYSCTL "nf_conntrack_max", root);
	if (!*root && access(path, F_OK) && !dry_run && kpx_modprobe("nf_conntrack"))
		kpx_info("conntrack", "loaded nf_conntrack (modprobe nf_conntrack)");
	if (max > 0) {
		r = set(&c, NF_SYSCTL "nf_conntrack_max", max);
		if (!r)
			r = set_hashsize(&c, max);
	}
	if (!r && s->tcp_established_s > 0)
		r = set(&c, NF_SYSCTL "nf_conntrack_tcp_timeout_established", s->tcp_established_s);
	if (!r && s->tcp_close_wait_s > 0)
		r = set(&c, NF_SYSCTL "nf_conntrack_tcp_timeout_close_wait", s->tcp_close_wait_s);
	if (!r && s->tcp_be_liberal)
		r = set(&c, NF_SYSCTL "nf_conntrack_tcp_be_liberal", 1);
	if (!r && s->udp_s > 0)
		r = set(&c, NF_SYSCTL "nf_conntrack_udp_timeout", s->udp_s);
	if (!r && s->udp_stream_s > 0)
		r = set(&c, NF_SYSCTL "nf_conntrack_udp_timeout_stream", s->udp_stream_s);
	return r ? r : c.written;
}
