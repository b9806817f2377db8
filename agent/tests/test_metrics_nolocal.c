// SPDX-License-Identifier: GPL-2.0-only
/*
 * kubeproxy_sync_proxy_rules_no_local_endpoints_total: the model's count
 * (model_nolocal.c) for Services with a Local traffic policy whose
 * endpoints are all on other nodes, and its rendering by metrics.c.  TAP.
 */
#define _GNU_SOURCE

#include "testlib_model.h"
#include "lib/fixtures.h"
#include "http/metrics.h"
#include "model/model_nolocal.h"

/* Service t/NAME: "SPEC" is the spec's extra JSON (type, policies). */
static void svc(struct kpx_model *m, const char *name, const char *ip,
		const char *spec)
{
	int r = apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		      J("{'metadata':{'name':'%s','namespace':'t'},'spec':{"
			"'clusterIP':'%s','clusterIPs':['%s'],%s"
			"'ports':[{'name':'a','port':80,'nodePort':30080},"
			"{'name':'b','port':81,'nodePort':30081}]}}",
			name, ip, ip, spec));

	if (r)
		printf("# service %s: %d\n", name, r);
}

/* Slice of Service t/NAME with ports a, b and the endpoints EPS (JSON). */
static void slice(struct kpx_model *m, const char *name, const char *eps)
{
	int r = apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		      J("{'metadata':{'name':'%s-1','namespace':'t','labels':"
			"{'kubernetes.io/service-name':'%s'}},'addressType':'IPv4',"
			"'ports':[{'name':'a','port':8080},{'name':'b','port':8081}],"
			"'endpoints':[%s]}", name, name, eps));

	if (r)
		printf("# slice %s: %d\n", name, r);
}

#define EP(ip, node, cond) \
	"{'addresses':['" ip "'],'nodeName':'" node "','conditions':{" cond "}}"
#define READY "'ready':true"
#define NOT_READY "'ready':false,'serving':false"
#define TERMINATING "'ready':false,'serving':true,'terminating':true"

int main(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_metrics *mt = kpx_metrics_new();
	struct kpx_no_local nl;
	char *text;
	size_t len;

	set_node(m, "node-a");
	/* ITP Local, endpoints elsewhere only: 2 ports -> internal 2 */
	svc(m, "itp", "10.96.0.1", "'internalTrafficPolicy':'Local',");
	slice(m, "itp", EP("10.244.2.1", "node-b", READY));
	/* ETP Local NodePort, endpoints elsewhere: external 2 */
	svc(m, "etp", "10.96.0.2", "'type':'NodePort','externalTrafficPolicy':'Local',");
	slice(m, "etp", EP("10.244.2.2", "node-b", READY));
	/* both Local, endpoints elsewhere: internal 2, external 2 */
	svc(m, "both", "10.96.0.3",
	    "'type':'LoadBalancer','externalTrafficPolicy':'Local','internalTrafficPolicy':'Local',");
	slice(m, "both", EP("10.244.2.3", "node-b", READY));
	/* Local with a local endpoint: nothing */
	svc(m, "here", "10.96.0.4",
	    "'type':'NodePort','externalTrafficPolicy':'Local','internalTrafficPolicy':'Local',");
	slice(m, "here", EP("10.244.1.4", "node-a", READY) "," EP("10.244.2.4", "node-b", READY));
	/* a local endpoint serving and terminating is still local: nothing */
	svc(m, "term", "10.96.0.5", "'internalTrafficPolicy':'Local',");
	slice(m, "term", EP("10.244.1.5", "node-a", TERMINATING) "," EP("10.244.2.5", "node-b", READY));
	/* no usable endpoint anywhere ("has no endpoints", REJECT): nothing */
	svc(m, "none", "10.96.0.6", "'internalTrafficPolicy':'Local',");
	slice(m, "none", EP("10.244.2.6", "node-b", NOT_READY));
	svc(m, "noslice", "10.96.0.7", "'internalTrafficPolicy':'Local',");
	/* ETP Local on a ClusterIP Service without externalIPs does not apply */
	svc(m, "cip", "10.96.0.8", "'externalTrafficPolicy':'Local',");
	slice(m, "cip", EP("10.244.2.8", "node-b", READY));
	/* Cluster policies: nothing */
	svc(m, "cluster", "10.96.0.9", "'type':'NodePort',");
	slice(m, "cluster", EP("10.244.2.9", "node-b", READY));
	/* headless: skipped */
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'hl','namespace':'t'},'spec':{'clusterIP':'None',"
		"'internalTrafficPolicy':'Local','ports':[{'name':'a','port':80}]}}"));
	slice(m, "hl", EP("10.244.2.10", "node-b", READY));

	kpx_model_no_local_endpoints(m, &nl);
	ok(nl.internal == 4, "internal: itp (2 ports) + both (2 ports) = 4, got %u", nl.internal);
	ok(nl.external == 4, "external: etp (2 ports) + both (2 ports) = 4, got %u", nl.external);

	/* an endpoint of "itp" moves here: internal drops by its 2 ports */
	slice(m, "itp", EP("10.244.1.1", "node-a", READY));
	/* the terminating endpoint of "etp" elsewhere still counts as usable */
	slice(m, "etp", EP("10.244.2.2", "node-b", TERMINATING));
	kpx_model_no_local_endpoints(m, &nl);
	ok(nl.internal == 2 && nl.external == 4,
	   "after a local endpoint appears: internal 2, external 4 (got %u, %u)",
	   nl.internal, nl.external);

	/* another node's view: hostname node-b has every endpoint above */
	set_node(m, "node-b");
	kpx_model_no_local_endpoints(m, &nl);
	ok(nl.internal == 2 && nl.external == 0,
	   "as node-b: internal 2 (itp's endpoint left), external 0 (got %u, %u)",
	   nl.internal, nl.external);

	ok(nl.internal6 == 0 && nl.external6 == 0, "IPv4 Services only: no IPv6 part");

	/* an IPv6 ITP Local Service, endpoints elsewhere: IPv6 internal 2 */
	svc(m, "six", "fd00:10:96::c", "'ipFamilies':['IPv6'],'internalTrafficPolicy':'Local',");
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'six-1','namespace':'t','labels':"
		"{'kubernetes.io/service-name':'six'}},'addressType':'IPv6',"
		"'ports':[{'name':'a','port':8080},{'name':'b','port':8081}],"
		"'endpoints':[{'addresses':['fd00:10:244:2::c'],'nodeName':'node-a','conditions':{'ready':true}}]}"));
	kpx_model_no_local_endpoints(m, &nl);
	ok(nl.internal == 4 && nl.internal6 == 2 && nl.external == 0 && nl.external6 == 0,
	   "as node-b, an IPv6 Service's 2 ports added: internal 4 of which IPv6 2 (got %u, %u, %u, %u)",
	   nl.internal, nl.internal6, nl.external, nl.external6);

	kpx_metrics_set_families(mt, KPX_METRICS_IPV4 | KPX_METRICS_IPV6);
	kpx_metrics_no_local_endpoints(mt, 3, 5, 2, 1);
	text = kpx_metrics_render(mt, NULL, 0, NULL, 0, &len);
	ok(text && fx_matches("^kubeproxy_sync_proxy_rules_no_local_endpoints_total"
			   "\\{ip_family=\"IPv6\",traffic_policy=\"internal\"\\} 2$", text) &&
	   fx_matches("^kubeproxy_sync_proxy_rules_no_local_endpoints_total"
		      "\\{ip_family=\"IPv6\",traffic_policy=\"external\"\\} 1$", text),
	   "dual stack: each family's own counts, as each of kube-proxy's proxiers (IPv6 2, 1)");
	ok(text && fx_matches("^# TYPE kubeproxy_sync_proxy_rules_no_local_endpoints_total gauge$", text),
	   "rendered as a gauge");
	ok(text && fx_matches("^kubeproxy_sync_proxy_rules_no_local_endpoints_total"
			   "\\{ip_family=\"IPv4\",traffic_policy=\"internal\"\\} 3$", text),
	   "traffic_policy=\"internal\" 3");
	ok(text && fx_matches("^kubeproxy_sync_proxy_rules_no_local_endpoints_total"
			   "\\{ip_family=\"IPv4\",traffic_policy=\"external\"\\} 5$", text),
	   "traffic_policy=\"external\" 5");
	free(text);
	kpx_metrics_no_local_endpoints(NULL, 1, 1, 0, 0);	/* NULL-safe */

	kpx_metrics_free(mt);
	kpx_model_free(m);
	return tap_done();
}
