// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ipvs mode's read-back (dp/ipvs/ipvs_read.c), shared by its dump()
 * and kpxctl: the ipset entries the mode's own builder writes
 * (kpx_ipvs_entries(), as `ipset save` prints them: "add SET ENTRY
 * comment ...") and the IPVS service and destinations it programs
 * (kpx_ipvs_svc_of()) give back each frontend: flags, scheduler,
 * affinity, source ranges (0/0 written as two halves), the eTP Local
 * cluster key, the Service name and kind; a quiesced destination is no
 * backend; an older agent's comment without a name reads back without
 * one.  The IPVS kernel part runs in the VM (kpx_diag_modes).  TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kpx.h>

#include "base/addr.h"
#include "base/strbuf.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_rules.h"

#include "lib/fixtures.h"
#include "lib/tap.h"

/* @s written by the mode's builders and read back into @got. */
static int roundtrip(const struct kpx_service *s, struct kpx_service *got,
		     bool quiesce_first)
{
	int max = kpx_ipvs_entries_max(s), n, r;
	char(*lines)[KPX_IPVS_LINE_MAX] =
		calloc((size_t)max, KPX_IPVS_LINE_MAX);
	struct kpx_ipvs_dest *d = calloc(s->nbackends + 1, sizeof(*d));
	struct kpx_strbuf save = { 0 };
	struct kpx_ipvs_entry *e = NULL;
	struct kpx_ipvs_svc is;
	size_t ne = 0, nd = 0;

	n = kpx_ipvs_entries(s, lines, max);
	for (int i = 0; i < n; i++)
		kpx_strbuf_printf(&save, "add %s\n", lines[i]);
	kpx_strbuf_printf(&save, "add KPX-IPVS-IPS 10.96.0.10\n");
	r = kpx_ipvs_parse_save(save.s, NULL, &e, &ne);
	kpx_ipvs_svc_of(s, &is);
	for (size_t i = 0; i < s->nbackends; i++, nd++) {
		memcpy(&d[nd].addr, &s->backends[i].addr, sizeof(d[nd].addr));
		d[nd].port = s->backends[i].port;
		d[nd].weight = s->backends[i].weight;
	}
	if (quiesce_first) {
		d[nd] = d[0];
		d[nd].port = 9999;
		d[nd++].weight = 0;
	}
	for (size_t i = 0; !r && i < ne; i++)
		if (e[i].set == KPX_IPVS_SET_SVC)
			r = kpx_ipvs_frontend(&is, e[i].comment, d, nd, e, ne,
					      got);
	free(lines);
	free(d);
	free(e);
	free(save.s);
	return r;
}

static void check(const char *what, const struct kpx_service *w,
		  const struct kpx_service *g)
{
	char k[KPX_SERVICE_STRLEN];

	kpx_service_str(w, k, sizeof(k));
	ok(!kpx_service_key_cmp(w, g) && kpx_service_same_config(w, g),
	   "%s %s: flags 0x%x (0x%x), %zu backends (%zu), %zu ranges (%zu), scheduler '%s' ('%s'), affinity %u",
	   what, k, g->flags, w->flags, g->nbackends, w->nbackends,
	   g->nsource_ranges, w->nsource_ranges, g->scheduler, w->scheduler,
	   g->affinity_timeout);
	ok((!w->name && !g->name) ||
		   (w->name && g->name && !strcmp(w->name, g->name)),
	   "%s %s: Service '%s'", what, k, g->name ? g->name : "(none)");
	ok(g->kind == w->kind, "%s %s: kind %s", what, k,
	   kpx_kind_name(g->kind));
}

int main(void)
{
	static const char *const web[] = { "10.244.1.2:8080",
					   "10.244.2.2:8080@3" };
	struct kpx_service s, got;
	char c[KPX_IPVS_COMMENT_MAX];

	printf("TAP version 13\n");
	s = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, web, 2);
	s.flags = KPX_SVC_F_CLUSTER_IP | KPX_SVC_F_MASQ_NONLOCAL;
	snprintf(s.scheduler, sizeof(s.scheduler), "wrr");
	s.affinity_timeout = 10800;
	kpx_service_set_name(&s, "demo/web:http");
	s.kind = KPX_SVC_KIND_CLUSTER_IP;
	ok(roundtrip(&s, &got, true) == 0, "ClusterIP: read back");
	check("ClusterIP", &s, &got);
	kpx_service_free(&got);
	kpx_service_free(&s);

	s = fx_service_str(AF_INET, IPPROTO_UDP, "192.0.2.10", 53, web, 1);
	s.flags = KPX_SVC_F_EXT_LOCAL | KPX_SVC_F_MASQ;
	snprintf(s.scheduler, sizeof(s.scheduler), "mh");
	s.mh_size = 251;
	kpx_parse_addr("10.96.0.10", AF_INET, &s.cluster_addr);
	s.cluster_port = 53;
	fx_add_range(&s, "0.0.0.0/0");
	kpx_service_set_name(&s, "demo/lb:dns");
	s.kind = KPX_SVC_KIND_LOAD_BALANCER;
	ok(roundtrip(&s, &got, false) == 0, "LoadBalancer: read back");
	check("LoadBalancer", &s, &got);
	kpx_service_free(&got);
	kpx_service_free(&s);

	s = fx_frontend(AF_INET6, IPPROTO_TCP, "fd00::10", 30080);
	s.flags = KPX_SVC_F_DROP_EMPTY;
	fx_add_range(&s, "fd00:1::/64");
	ok(roundtrip(&s, &got, false) == 0,
	   "unnamed NodePort without backends: read back");
	check("unnamed", &s, &got);
	kpx_service_free(&got);
	kpx_service_free(&s);

	memset(&got, 0, sizeof(got));
	got.family = AF_INET;
	ok(kpx_ipvs_comment_parse("f=8 s=rr m=0 x=0", &got) == 0 && !got.name &&
		   !got.kind && got.flags == 8 && !strcmp(got.scheduler, "rr"),
	   "an older agent's comment: no name, no kind");
	ok(kpx_ipvs_comment_parse("f=8 s=rr m=0 x=0 k=bogus n=a/b", &got) ==
		   -EINVAL,
	   "an unknown kind: -EINVAL");
	kpx_service_free(&got);
	s = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.10", 80);
	kpx_service_set_name(&s, "ns/with space");
	kpx_ipvs_comment(&s, c, sizeof(c));
	ok(!strstr(c, "n="), "a name that needs quoting is left out: \"%s\"",
	   c);
	kpx_service_free(&s);
	return tap_done();
}
