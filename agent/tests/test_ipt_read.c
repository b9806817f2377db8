// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl's reader of the iptables mode (dp/ipt/ipt_read.c): the
 * iptables-restore text the mode's own builder writes
 * (kpx_ipt_restore_text()) for frontends with every part of the layout
 * (named and unnamed, source ranges, masquerade flags, affinity, weights,
 * no endpoints rejected or dropped, IPv6) is read back by
 * kpx_ipt_parse_frontends(); then, in a network namespace of our own
 * (unshare(CLONE_NEWNET), skipped without), restored into the kernel and
 * read by kpx_ipt_read() from iptables-save's and ip6tables-save's output,
 * whose spelling differs from the input (matches reordered, "/32",
 * probabilities with 11 digits).  TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/strbuf.h"
#include "dp/ipt/ipt_read.h"
#include "dp/ipt/ipt_rules.h"

#include "lib/fixtures.h"
#include "lib/readback.h"
#include "lib/tap.h"

static void name(struct kpx_service *s, const char *n, uint8_t kind)
{
	kpx_service_set_name(s, n);
	s->kind = kind;
}

static size_t want(struct kpx_service *s)
{
	static const char *const web[] = { "10.244.1.2:8080",
					   "10.244.2.2:8080" };
	static const char *const lb[] = { "10.244.1.2:8443@1",
					  "10.244.2.2:8443@2",
					  "10.244.3.2:8443@3" };
	static const char *const one[] = { "10.244.9.9:81" };
	static const char *const v6[] = { "[fd00:10:244:1::2]:8080",
					  "[fd00:10:244:2::2]:8080" };

	s[0] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, web, 2);
	s[0].flags = KPX_SVC_F_MASQ_NONLOCAL;
	name(&s[0], "demo/web:http", KPX_SVC_KIND_CLUSTER_IP);
	s[1] = fx_frontend(AF_INET, IPPROTO_UDP, "10.96.0.10", 53);
	s[1].flags = KPX_SVC_F_DROP_EMPTY;
	name(&s[1], "demo/web:dns", KPX_SVC_KIND_CLUSTER_IP);
	s[2] = fx_service_str(AF_INET, IPPROTO_TCP, "192.0.2.10", 443, lb, 3);
	s[2].flags = KPX_SVC_F_MASQ;
	s[2].affinity_timeout = 10800;
	fx_add_range(&s[2], "198.51.100.0/24");
	fx_add_range(&s[2], "203.0.113.7/32");
	name(&s[2], "demo/lb:https", KPX_SVC_KIND_LOAD_BALANCER);
	s[3] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.11", 80, one, 1);
	s[4] = fx_frontend(AF_INET, IPPROTO_TCP, "192.0.2.20", 30080);
	fx_add_range(&s[4], "198.51.100.0/24");
	name(&s[4], "other/empty", KPX_SVC_KIND_NODE_PORT);
	s[5] = fx_service_str(AF_INET6, IPPROTO_TCP, "fd00::10", 80, v6, 2);
	name(&s[5], "demo/web:http", KPX_SVC_KIND_CLUSTER_IP);
	s[6] = fx_service_str(AF_INET, IPPROTO_SCTP, "10.96.0.12", 9, one, 1);
	name(&s[6], "other/sctp", KPX_SVC_KIND_EXTERNAL_IP);
	return 7;
}

static char *gen(int family, const struct kpx_service *v, size_t n)
{
	struct kpx_ipt_gen g = { .family = family,
				 .svcs = v,
				 .n = n,
				 .add_hooks = KPX_IPT_HOOKS_ALL };
	struct kpx_strbuf b = { 0 };

	ok(kpx_ipt_restore_text(&g, &b) == 0, "restore text (family %d)",
	   family);
	return b.s;
}

static void test_text(const struct kpx_service *w, size_t nw)
{
	struct kpx_service *got = NULL;
	size_t n = 0;
	bool found = false;
	char *t = gen(AF_INET, w, nw);

	ok(kpx_ipt_parse_frontends(t, AF_INET, &got, &n, &found) == 0 && found,
	   "the builder's IPv4 text parses, KPX-SERVICES found");
	readback_check("text", w, nw, AF_INET, got, n);
	for (size_t i = 0; i < n; i++)
		if (got[i].port == 443)
			ok(got[i].nbackends == 3 &&
				   got[i].backends[0].weight == 1 &&
				   got[i].backends[1].weight == 2 &&
				   got[i].backends[2].weight == 3,
			   "weights 1, 2, 3 from the probabilities");
	kpx_services_free(got, n);
	free(t);
	got = NULL;
	n = 0;
	found = false;
	ok(kpx_ipt_parse_frontends("*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n",
				   AF_INET, &got, &n, &found) == 0 &&
		   !n && !found,
	   "no KPX-SERVICES: nothing");
}

static void test_kernel(const struct kpx_service *w, size_t nw)
{
	struct kpx_service *got = NULL;
	struct stat st0, st1;
	char err[256], *t;
	size_t n = 0;
	FILE *f;
	int r;

	if (stat("/proc/self/ns/net", &st0) || unshare(CLONE_NEWNET) ||
	    stat("/proc/self/ns/net", &st1) || st0.st_ino == st1.st_ino) {
		printf("# SKIP kernel checks: no private network namespace (needs root)\n");
		return;
	}
	r = kpx_ipt_read(&got, &n, err, sizeof(err));
	ok(r == -ENOENT && !n, "nothing written: -ENOENT (%s)", err);
	for (int fam = 0; fam < 2; fam++) {
		t = gen(fam ? AF_INET6 : AF_INET, w, nw);
		f = popen(fam ? "ip6tables-restore --noflush" :
				"iptables-restore --noflush",
			  "w");
		fputs(t, f);
		ok(pclose(f) == 0, "%s accepts the builder's text",
		   fam ? "ip6tables-restore" : "iptables-restore");
		free(t);
	}
	r = kpx_ipt_read(&got, &n, err, sizeof(err));
	ok(r == 0, "kpx_ipt_read: %d %s", r, r ? err : "");
	readback_check("kernel", w, nw, 0, got, n);
	kpx_services_free(got, n);
}

int main(void)
{
	struct kpx_service w[8];
	size_t nw = want(w);

	printf("TAP version 13\n");
	test_text(w, nw);
	test_kernel(w, nw);
	for (size_t i = 0; i < nw; i++)
		kpx_service_free(&w[i]);
	return tap_done();
}
