// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctsysctl.c: kube-proxy's nf_conntrack_max formula, and the sysctls
 * written under a scratch directory laid out as /proc/sys/net/netfilter and
 * /sys/module/nf_conntrack/parameters: values, hash size raised but never
 * lowered, unchanged values not rewritten, 0 = leave as is, dry run, a
 * missing file.  TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctsysctl.h"
#include "log.h"

#include "tap.h"

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
	r = kpx_ct_apply(&d, root, 2, false, err, sizeof(err));
	ok(r == -ENOENT && strstr(err, "nf_conntrack_max"), "no conntrack sysctls: -ENOENT (%d, %s)",
	   r, err);

	kernel_defaults();
	r = kpx_ct_apply(&d, root, 2, true, err, sizeof(err));
	ok(r == 4 && get(MAX) == 8192 && get(HASH) == 8192 && get(EST) == 432000,
	   "dry run: 4 changes reported, nothing written (%d)", r);

	r = kpx_ct_apply(&d, root, 2, false, err, sizeof(err));
	ok(r == 4, "defaults, 2 CPUs: 4 sysctls written (%d %s)", r, r < 0 ? err : "");
	ok(get(MAX) == 131072, "nf_conntrack_max = 131072 (%ld)", get(MAX));
	ok(get(HASH) == 32768, "hashsize = max / 4 = 32768 (%ld)", get(HASH));
	ok(get(EST) == 86400 && get(CW) == 3600,
	   "tcp established 24h = 86400 s, close_wait 1h = 3600 s (%ld, %ld)", get(EST), get(CW));
	ok(get(LIB) == 0 && get(UDP) == 30 && get(UDPS) == 120,
	   "be_liberal and UDP timeouts left as they were (unset)");

	r = kpx_ct_apply(&d, root, 2, false, err, sizeof(err));
	ok(r == 0, "second start: nothing rewritten (%d)", r);

	put(HASH, 65536);
	r = kpx_ct_apply(&d, root, 2, false, err, sizeof(err));
	ok(r == 0 && get(HASH) == 65536, "a larger hash table is not shrunk (%ld)", get(HASH));

	kernel_defaults();
	s = d;
	s.max_per_core = 0;
	s.tcp_established_s = 0;
	s.tcp_close_wait_s = 0;
	s.tcp_be_liberal = true;
	s.udp_s = 45;
	s.udp_stream_s = 300;
	r = kpx_ct_apply(&s, root, 4, false, err, sizeof(err));
	ok(r == 3 && get(MAX) == 8192 && get(HASH) == 8192 && get(EST) == 432000 && get(CW) == 60,
	   "maxPerCore 0 and timeouts 0: left as is (%d)", r);
	ok(get(LIB) == 1 && get(UDP) == 45 && get(UDPS) == 300,
	   "tcpBeLiberal 1, udp 45 s, udp stream 300 s");

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		return 1;
	printf("1..%d\n", test_no);
	return failures ? 1 : 0;
}
