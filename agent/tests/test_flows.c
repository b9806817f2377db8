// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpxctl flows' grouping (cli/flows.c): which conntrack entries are a
 * frontend's (destination-NATed, original destination its key), by
 * backend, a backend no longer the frontend's marked, the filter by
 * Service name (every port, one port) and by VIP:PORT (every protocol),
 * and the state names.  TAP.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "base/service.h"
#include "cli/flows.h"
#include "lib/fixtures.h"
#include "lib/tap.h"

static struct kpx_flow flow(uint8_t proto, const char *src, uint16_t sport, const char *vip,
			    uint16_t port, const char *be, uint16_t be_port, uint32_t status)
{
	struct kpx_flow f;

	memset(&f, 0, sizeof(f));
	f.family = AF_INET;
	f.protocol = proto;
	inet_pton(AF_INET, src, &f.src);
	inet_pton(AF_INET, vip, &f.dst);
	inet_pton(AF_INET, be, &f.be);
	f.sport = sport;
	f.dport = port;
	f.be_port = be_port;
	f.status = status;
	f.state = proto == IPPROTO_TCP ? 3 : -1;
	return f;
}

static void ok_str(const char *got, const char *want, const char *desc)
{
	ok(!strcmp(got, want), "%s", desc);
	if (strcmp(got, want))
		printf("#   got:  %s\n#   want: %s\n", got, want);
}

static int svc_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* "VIP:PORT/proto BE:PORT*N ..." per group, ";"-joined ("!" : not current). */
static const char *groups_str(const struct kpx_flow_group *g, size_t ng, char *buf, size_t len)
{
	char a[KPX_SERVICE_STRLEN], b[INET6_ADDRSTRLEN];
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ng; i++) {
		at += snprintf(buf + at, len - at, "%s%s", i ? ";" : "",
			       kpx_service_str(g[i].fe, a, sizeof(a)));
		for (size_t j = 0; j < g[i].nbackends; j++) {
			inet_ntop(AF_INET, &g[i].backends[j].addr, b, sizeof(b));
			at += snprintf(buf + at, len - at, " %s:%u*%zu%s", b, g[i].backends[j].port,
				       g[i].backends[j].nflows, g[i].backends[j].current ? "" : "!");
		}
	}
	return buf;
}

int main(void)
{
	const char *web_be[] = { "10.244.1.2:8080", "10.244.2.2:8080" };
	const char *db_be[] = { "10.244.3.2:5432" };
	struct kpx_service v[4];
	struct kpx_flow fl[8];
	struct kpx_flow_filter f;
	struct kpx_flow_group *g;
	char buf[1024];
	size_t ng;

	printf("TAP version 13\n");
	v[0] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.10", 80, web_be, 2);
	kpx_service_set_name(&v[0], "default/web:http");
	v[1] = fx_service_str(AF_INET, IPPROTO_UDP, "10.96.0.10", 80, web_be, 2);
	kpx_service_set_name(&v[1], "default/web:dns");
	v[2] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.30", 5432, db_be, 1);
	kpx_service_set_name(&v[2], "default/db");
	v[3] = fx_service_str(AF_INET, IPPROTO_TCP, "10.96.0.40", 80, NULL, 0);
	kpx_service_set_name(&v[3], "default/webx:http");
	qsort(v, 4, sizeof(v[0]), svc_cmp);

	fl[0] = flow(IPPROTO_TCP, "10.0.1.2", 40002, "10.96.0.10", 80, "10.244.2.2", 8080,
		     IPS_DST_NAT | IPS_ASSURED);
	fl[1] = flow(IPPROTO_TCP, "10.0.1.2", 40001, "10.96.0.10", 80, "10.244.2.2", 8080,
		     IPS_DST_NAT | IPS_ASSURED);
	fl[2] = flow(IPPROTO_TCP, "10.0.1.3", 40003, "10.96.0.10", 80, "10.244.1.2", 8080,
		     IPS_DST_NAT);
	/* to a VIP, not translated: not kpx's */
	fl[3] = flow(IPPROTO_TCP, "10.0.1.2", 40004, "10.96.0.10", 80, "10.96.0.10", 80, 0);
	/* translated, to no frontend's address: someone else's DNAT */
	fl[4] = flow(IPPROTO_TCP, "10.0.1.2", 40005, "10.96.0.11", 80, "10.244.1.2", 8080,
		     IPS_DST_NAT);
	/* to a backend the frontend no longer has */
	fl[5] = flow(IPPROTO_TCP, "10.0.1.4", 40006, "10.96.0.30", 5432, "10.244.9.9", 5432,
		     IPS_DST_NAT | IPS_ASSURED);
	fl[6] = flow(IPPROTO_UDP, "10.0.1.5", 5353, "10.96.0.10", 80, "10.244.1.2", 8080,
		     IPS_DST_NAT | IPS_SEEN_REPLY);
	fl[7] = flow(IPPROTO_UDP, "10.0.1.6", 5353, "10.96.0.10", 80, "10.244.1.2", 8080,
		     IPS_DST_NAT | IPS_ASSURED);

	ok(!kpx_flow_filter_parse(NULL, &f) && !kpx_flow_group(v, 4, fl, 8, &f, &g, &ng),
	   "every frontend: grouped");
	ok_str(groups_str(g, ng, buf, sizeof(buf)),
	       "10.96.0.10:80/tcp 10.244.1.2:8080*1 10.244.2.2:8080*2;"
	       "10.96.0.30:5432/tcp 10.244.9.9:5432*1!;"
	       "10.96.0.10:80/udp 10.244.1.2:8080*2",
	       "frontends with flows in key order (protocol first), backends sorted, the former backend marked; "
	       "untranslated and foreign DNAT entries left out");
	ok(ng && g[0].backends[1].flows[0]->sport == 40001 && g[0].backends[1].flows[1]->sport == 40002,
	   "a backend's flows in client order");
	kpx_flow_groups_free(g, ng);

	ok(!kpx_flow_filter_parse("default/web", &f) && !kpx_flow_group(v, 4, fl, 8, &f, &g, &ng),
	   "filter default/web parsed");
	ok_str(groups_str(g, ng, buf, sizeof(buf)),
	       "10.96.0.10:80/tcp 10.244.1.2:8080*1 10.244.2.2:8080*2;10.96.0.10:80/udp 10.244.1.2:8080*2",
	       "NAMESPACE/NAME: each of its ports, not default/webx's");
	kpx_flow_groups_free(g, ng);

	ok(!kpx_flow_filter_parse("default/web:dns", &f) && !kpx_flow_group(v, 4, fl, 8, &f, &g, &ng),
	   "filter default/web:dns parsed");
	ok_str(groups_str(g, ng, buf, sizeof(buf)), "10.96.0.10:80/udp 10.244.1.2:8080*2",
	       "NAMESPACE/NAME:PORT: that port");
	kpx_flow_groups_free(g, ng);

	ok(!kpx_flow_filter_parse("10.96.0.40:80", &f) && f.by_addr &&
	   !kpx_flow_group(v, 4, fl, 8, &f, &g, &ng), "filter 10.96.0.40:80 parsed");
	ok_str(groups_str(g, ng, buf, sizeof(buf)), "10.96.0.40:80/tcp",
	       "VIP:PORT: the frontend listed even without flows");
	kpx_flow_groups_free(g, ng);

	ok(!kpx_flow_filter_parse("10.96.0.10:80", &f) && !kpx_flow_group(v, 4, fl, 8, &f, &g, &ng) &&
	   ng == 2, "VIP:PORT: every protocol's frontend (%zu)", ng);
	kpx_flow_groups_free(g, ng);

	ok(kpx_flow_filter_parse("web", &f) && kpx_flow_filter_parse("/web", &f) &&
	   kpx_flow_filter_parse("default/", &f) && kpx_flow_filter_parse("a/b/c", &f) &&
	   kpx_flow_filter_parse("default/:http", &f),
	   "malformed filters refused: web, /web, default/, a/b/c, default/:http");

	ok(!strcmp(kpx_flow_state(&fl[0]), "ESTABLISHED") &&
	   !strcmp(kpx_flow_state(&fl[6]), "REPLIED") &&
	   !strcmp(kpx_flow_state(&fl[7]), "ASSURED"),
	   "states: TCP's by number, UDP's from the status bits");
	fl[6].status = IPS_DST_NAT;
	ok(!strcmp(kpx_flow_state(&fl[6]), "UNREPLIED"), "a UDP entry without a reply: UNREPLIED");

	/* IPVS alters the reply tuple without conntrack's NAT bits */
	fl[0].status = IPS_ASSURED;
	ok(kpx_flow_frontend(v, 4, &fl[0]) && kpx_flow_frontend(v, 4, &fl[0])->port == 80,
	   "IPVS's entry (no IPS_DST_NAT, the reply from the backend): its frontend");
	ok(!kpx_flow_frontend(v, 4, &fl[3]), "an entry whose reply comes from the VIP itself: none");
	for (int k = 0; k < 4; k++)
		kpx_service_free(&v[k]);
	return tap_done();
}
