// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl's reader of the nftables mode (dp/nft/nft_read.c): frontends
 * written by the mode's own rule builders (nft_rules.c: the table, each
 * frontend, the cluster-ips set) are read back with their backends,
 * weights, flags, source ranges, scheduler, affinity, and Service name
 * and kind from the map elements' comments.  The parser runs on
 * tests/data/nft_read_ip.json, the kernel's listing of those builders'
 * text; then, in a network namespace of our own (unshare(CLONE_NEWNET),
 * skipped without), the builders' text is committed for real and
 * kpx_nft_read() reads the kernel, both families (TEST_NFT_READ_WRITE=1
 * writes that listing to the fixture).  TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nftables/libnftables.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/strbuf.h"
#include "dp/nft/nft_read.h"
#include "dp/nft/nft_rules.h"

#include "lib/fixtures.h"
#include "lib/readback.h"
#include "lib/tap.h"

#define FIXTURE "tests/data/nft_read_ip.json"

/* The frontends written: every part of the layout that reads back. */
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
	s[0].flags = KPX_SVC_F_CLUSTER_IP | KPX_SVC_F_MASQ_NONLOCAL;
	kpx_service_set_name(&s[0], "demo/web:http");
	s[0].kind = KPX_SVC_KIND_CLUSTER_IP;
	snprintf(s[0].scheduler, sizeof(s[0].scheduler), "random");
	s[1] = fx_frontend(AF_INET, IPPROTO_UDP, "10.96.0.10", 53);
	s[1].flags = KPX_SVC_F_CLUSTER_IP | KPX_SVC_F_DROP_EMPTY;
	kpx_service_set_name(&s[1], "demo/web:dns");
	s[1].kind = KPX_SVC_KIND_CLUSTER_IP;
	s[2] = fx_service_str(AF_INET, IPPROTO_TCP, "192.0.2.10", 443, lb, 3);
	s[2].flags = KPX_SVC_F_MASQ;
	s[2].affinity_timeout = 10800;
	fx_add_range(&s[2], "198.51.100.0/24");
	fx_add_range(&s[2], "203.0.113.7/32");
	kpx_service_set_name(&s[2], "demo/lb:https");
	s[2].kind = KPX_SVC_KIND_LOAD_BALANCER;
	snprintf(s[2].scheduler, sizeof(s[2].scheduler), "random");
	s[3] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.11", 80, one, 1);
	snprintf(s[3].scheduler, sizeof(s[3].scheduler), "sh");
	s[4] = fx_service_str(AF_INET, IPPROTO_SCTP, "10.96.0.12", 9, one, 1);
	snprintf(s[4].scheduler, sizeof(s[4].scheduler), "rr");
	kpx_service_set_name(&s[4], "other/sctp");
	s[4].kind = KPX_SVC_KIND_NODE_PORT;
	s[5] = fx_service_str(AF_INET6, IPPROTO_TCP, "fd00::10", 80, v6, 2);
	s[5].flags = KPX_SVC_F_CLUSTER_IP;
	kpx_service_set_name(&s[5], "demo/web:http");
	s[5].kind = KPX_SVC_KIND_CLUSTER_IP;
	snprintf(s[5].scheduler, sizeof(s[5].scheduler), "random");
	return 6;
}

/* The mode's text for the frontends of @family in @s. */
static void gen(struct kpx_strbuf *b, int family, const struct kpx_service *s,
		size_t n)
{
	kpx_nft_gen_table(b, family);
	for (size_t i = 0; i < n; i++) {
		if (s[i].family != family)
			continue;
		kpx_nft_gen_service(b, NULL, &s[i]);
		if (s[i].flags & KPX_SVC_F_CLUSTER_IP)
			kpx_nft_gen_cluster_ip(b, family, &s[i].addr, true);
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&s, &len, '\0', f) < 0) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static void test_fixture(const struct kpx_service *w, size_t nw)
{
	struct kpx_service *got = NULL;
	size_t n = 0;
	char *json = slurp(FIXTURE);

	ok(json != NULL, "fixture %s", FIXTURE);
	if (!json)
		return;
	ok(kpx_nft_parse_json(json, &got, &n) == 0, "the fixture parses");
	readback_check("fixture", w, nw, AF_INET, got, n);
	kpx_services_free(got, n);
	n = 0;
	got = NULL;
	ok(kpx_nft_parse_json("{\"nftables\": 1}", &got, &n) == -EINVAL && !n,
	   "not a listing: -EINVAL");
	free(json);
}

static void test_kernel(const struct kpx_service *w, size_t nw)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	struct kpx_service *got = NULL;
	struct kpx_strbuf b = { 0 };
	char err[256];
	size_t n = 0;
	int r;

	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	r = kpx_nft_read(&got, &n, err, sizeof(err));
	ok(r == -ENOENT && !n, "no table: -ENOENT (%s)", err);
	gen(&b, AF_INET, w, nw);
	gen(&b, AF_INET6, w, nw);
	r = nft_run_cmd_from_buffer(nft, b.s);
	ok(r == 0, "the builders' text commits");
	if (r)
		printf("# %s\n", nft_ctx_get_error_buffer(nft));
	r = kpx_nft_read(&got, &n, err, sizeof(err));
	ok(r == 0, "kpx_nft_read: %d %s", r, r ? err : "");
	readback_check("kernel", w, nw, 0, got, n);
	kpx_services_free(got, n);
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON);
	nft_run_cmd_from_buffer(nft, "list table ip " KPX_NFT_TABLE);
	if (getenv("TEST_NFT_READ_WRITE")) {
		FILE *f = fopen(FIXTURE, "w");

		fputs(nft_ctx_get_output_buffer(nft), f);
		fclose(f);
	}
	free(b.s);
	nft_ctx_free(nft);
}

int main(void)
{
	struct kpx_service w[8];
	size_t nw = want(w);

	printf("TAP version 13\n");
	test_fixture(w, nw);
	if (unshare(CLONE_NEWNET) == 0)
		test_kernel(w, nw);
	else
		printf("# SKIP kernel checks: unshare(CLONE_NEWNET): %s\n",
		       strerror(errno));
	kpx_services_free(NULL, 0);
	for (size_t i = 0; i < nw; i++)
		kpx_service_free(&w[i]);
	return tap_done();
}
