// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for model.c: the object cache and the desired frontends, on
 * real API documents (../testdata, paths relative to agent/) and on small
 * inline objects.  TAP output; exits non-zero on any failure.
 *
 * Over 600 lines as one concern: the cache's handling of each kind of
 * object and event, and the frontends it yields.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "testlib_model.h"

/* A Service: @ips a JSON list body, @ports one, @extra more spec fields. */
static struct json_object *svc(const char *ns, const char *name,
			       const char *ips, const char *ports,
			       const char *extra)
{
	return J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'%s',"
		 "'namespace':'%s','resourceVersion':'1'},'spec':{'type':"
		 "'ClusterIP','clusterIPs':[%s],'ports':[%s]%s}}",
		 name, ns, ips, ports, extra ? extra : "");
}

static struct json_object *slice(const char *ns, const char *name,
				 const char *service, const char *type,
				 const char *ports, const char *eps)
{
	return J("{'metadata':{'name':'%s','namespace':'%s','labels':"
		 "{'kubernetes.io/service-name':'%s'}},'addressType':'%s',"
		 "'ports':[%s],'endpoints':[%s]}",
		 name, ns, service, type, ports, eps);
}

/* Log lines written by the model, captured in a temporary file. */
static FILE *logf_;

static void log_capture(void)
{
	logf_ = tmpfile();
	kpx_log_set_fd(fileno(logf_));
}

/* Everything logged since the last call. */
static char *log_take(void)
{
	static char buf[8192];
	size_t n;

	fflush(logf_);
	rewind(logf_);
	n = fread(buf, 1, sizeof(buf) - 1, logf_);
	buf[n] = 0;
	if (ftruncate(fileno(logf_), 0))
		buf[0] = 0;
	rewind(logf_);
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_real_objects(void)
{
	struct kpx_model *m = kpx_model_new();

	ok(load(m, "../testdata/real-objects/02-services-kind-metallb-2026.json") == 0,
	   "real: 5 Services (kind + MetalLB) accepted");
	ok(load(m, "../testdata/real-objects/01-endpointslicelist-kind-2020.json") == 0,
	   "real: EndpointSliceList (managedFields, legacy topology) accepted");
	ok(kpx_model_dirty(m), "real: dirty after loading");
	ok_state(m,
		 "10.96.0.1:443/tcp -> 192.0.2.10:6443\n"
		 "10.96.0.10:53/tcp -> 10.244.0.3:53 10.244.0.4:53\n"
		 "10.96.0.10:9153/tcp -> 10.244.0.3:9153 10.244.0.4:9153\n"
		 "10.96.199.145:9443/tcp ->\n"
		 "10.96.199.145:18000/tcp ->\n"
		 "10.96.199.145:18001/tcp ->\n"
		 "10.96.199.145:19001/tcp ->\n"
		 "10.96.234.211:80/tcp ->\n"
		 "198.51.100.205:80/tcp ->\n"
		 "10.96.0.10:53/udp -> 10.244.0.3:53 10.244.0.4:53\n"
		 "10.96.91.35:5300/udp ->\n"
		 "198.51.100.208:5300/udp ->\n",
		 "real: kubernetes, kube-dns (dns/dns-tcp/metrics by name), LB Services' ClusterIPs "
		 "and MetalLB ingress IPs (eTP Local, no endpoints anywhere: reject; no config: no NodePorts)");
	ok_hc(m, "gateway-system/envoy-shop-storefront-http:32751 local=0 healthy\n"
		 "gateway-system/envoy-shop-storefront-udp:31739 local=0 healthy\n",
		 "real: the two eTP Local LB Services get health checks, 0 local endpoints");
	ok(!kpx_model_dirty(m), "real: desired() clears dirty");

	/* GKE slice during a rollout: the ready:false terminating pod is out */
	ok(load(m, "../testdata/real-objects/03-endpointslice-terminating-gke.json") == 0,
	   "real: GKE terminating slice accepted");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 svc("default", "web-service", "'10.96.0.50'",
		     "{'port':80,'targetPort':80}", NULL)) == 0,
	   "real: unnamed-port Service for the GKE slice");
	{
		char *s = render(m);

		ok(strstr(s, "10.96.0.50:80/tcp -> 10.244.1.202:80\n") != NULL,
		   "real: only the ready endpoint of the GKE slice (unnamed port \"\" = \"\")");
		free(s);
	}
	kpx_model_free(m);
}

static void test_case10(void)
{
	struct kpx_model *m = kpx_model_new();

	ok(load(m, "../testdata/cases/10/objects.json") == 0,
	   "case10: objects accepted (Service, 2 slices, 2 Nodes)");
	ok_state(m,
		 "10.96.90.70:80/tcp -> 10.244.1.100:8080 10.244.2.100:8080 10.244.2.101:8081\n"
		 "10.96.90.70:9100/tcp -> 10.244.1.100:9100 10.244.2.100:9100 10.244.2.101:9100\n",
		 "case10: named targetPort: each backend has its own slice's port");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 slice("shop", "search-metrics-only", "search", "IPv4",
		       "{'name':'metrics','protocol':'TCP','port':9100}",
		       "{'addresses':['10.244.1.150'],'conditions':{'ready':true}}")) == 0,
	   "case10: slice with only the metrics port");
	ok_state(m,
		 "10.96.90.70:80/tcp -> 10.244.1.100:8080 10.244.2.100:8080 10.244.2.101:8081\n"
		 "10.96.90.70:9100/tcp -> 10.244.1.100:9100 10.244.1.150:9100 10.244.2.100:9100 10.244.2.101:9100\n",
		 "case10: metrics-only slice feeds metrics, not web");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_DELETED,
		 J("{'metadata':{'name':'search-n3o4p','namespace':'shop'}}")) == 0,
	   "case10: DELETE slice search-n3o4p");
	ok(kpx_model_dirty(m), "case10: dirty after DELETE");
	ok_state(m,
		 "10.96.90.70:80/tcp -> 10.244.1.100:8080 10.244.2.100:8080\n"
		 "10.96.90.70:9100/tcp -> 10.244.1.100:9100 10.244.1.150:9100 10.244.2.100:9100\n",
		 "case10: the canary leaves web and metrics");
	kpx_model_free(m);
}

static void test_case08(void)
{
	struct kpx_model *m = kpx_model_new();

	ok(load(m, "../testdata/cases/08/objects.json") == 0,
	   "case08: placeholder slice (endpoints null, no ports) accepted");
	ok_state(m,
		 "10.96.70.50:80/tcp ->\n"
		 "198.51.100.50:80/tcp [masq] ->\n"
		 "203.0.113.50:80/tcp [masq] ->\n"
		 "10.96.70.50:514/udp ->\n"
		 "198.51.100.50:514/udp [masq] ->\n"
		 "203.0.113.50:514/udp [masq] ->\n",
		 "case08 (no config): ClusterIP, LB IP, externalIP with 0 backends, no drop flag: reject");
	kpx_model_free(m);
}

static const char *HTTP = "{'name':'http','port':80,'targetPort':'web'}";
static const char *EP1 = "{'addresses':['10.244.1.1'],'conditions':{'ready':true}}";

static void test_skipped(void)
{
	struct kpx_model *m = kpx_model_new();

	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "h-1", "h", "IPv4", "{'name':'http','port':8080}", EP1));
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 svc("t", "h", "'None'", HTTP, ",'clusterIP':'None'")) == 0,
	   "skip: headless Service accepted");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'h2','namespace':'t'},'spec':{'clusterIP':'None',"
		   "'ports':[{'port':80}]}}")) == 0,
	   "skip: headless via clusterIP only");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'p','namespace':'t','labels':"
		   "{'service.kubernetes.io/service-proxy-name':'other'}},"
		   "'spec':{'clusterIPs':['10.96.5.1'],'ports':[{'port':80}]}}")) == 0,
	   "skip: service-proxy-name Service accepted");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'x','namespace':'t'},'spec':{'type':'ExternalName',"
		   "'externalName':'db.example.com'}}")) == 0,
	   "skip: ExternalName Service accepted");
	ok_state(m, "", "skip: headless, proxy-name and ExternalName yield nothing");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'p','namespace':'t','labels':{'app':'p'}},"
		   "'spec':{'type':'NodePort','clusterIPs':['10.96.5.1'],'ports':[{'port':80}]}}")) == 0,
	   "skip: label removed (MODIFIED)");
	ok_state(m, "10.96.5.1:80/tcp ->\n",
		 "skip: then the Service gets its frontend (NodePort, default TCP)");
	kpx_model_free(m);
}

static void test_conditions(void)
{
	struct kpx_model *m = kpx_model_new();

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      svc("t", "s", "'10.96.1.1'", HTTP, NULL));
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 slice("t", "s-1", "s", "IPv4", "{'name':'http','port':8080,'protocol':'TCP'}",
		       "{'addresses':['10.244.1.1'],'conditions':{'ready':true}},"
		       "{'addresses':['10.244.1.2'],'conditions':{'ready':false}},"
		       "{'addresses':['10.244.1.3'],'conditions':{}},"
		       "{'addresses':['10.244.1.4']},"
		       "{'addresses':['10.244.1.5'],'conditions':{'ready':null}},"
		       "{'addresses':['10.244.1.6'],'conditions':{'ready':false,"
		       "'serving':true,'terminating':true}},"
		       "{'addresses':['10.244.1.7','10.244.1.8'],'nodeName':'10.0.0.1'},"
		       "{'addresses':[]}")) == 0,
	   "cond: slice with mixed conditions accepted");
	ok_state(m,
		 "10.96.1.1:80/tcp -> 10.244.1.1:8080 10.244.1.3:8080 10.244.1.4:8080 "
		 "10.244.1.5:8080 10.244.1.7:8080\n",
		 "cond: ready true/nil/absent in, ready false out, addresses[0] only");
	kpx_model_free(m);
}

static void test_merge(void)
{
	struct kpx_model *m = kpx_model_new();

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      svc("t", "s", "'10.96.1.1'",
		  "{'name':'http','port':80},{'name':'dns','port':53,'protocol':'UDP'}", NULL));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "s-1", "s", "IPv4",
		    "{'name':'http','port':8080},{'name':'dns','port':5353,'protocol':'TCP'}",
		    "{'addresses':['10.244.1.1']},{'addresses':['10.244.1.2']}"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "s-2", "s", "IPv4", "{'name':'http','port':8080}",
		    "{'addresses':['10.244.1.2']},{'addresses':['10.244.1.3']}"));
	/* same name in another namespace, and a slice without the label */
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("u", "s-1", "s", "IPv4", "{'name':'http','port':8080}",
		    "{'addresses':['10.244.9.9']}"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'orphan','namespace':'t'},'addressType':'IPv4',"
		"'ports':[{'name':'http','port':8080}],'endpoints':[{'addresses':['10.244.8.8']}]}"));
	ok_state(m,
		 "10.96.1.1:80/tcp -> 10.244.1.1:8080 10.244.1.2:8080 10.244.1.3:8080\n"
		 "10.96.1.1:53/udp ->\n",
		 "merge: two slices merged, duplicate once; other ns, unlabelled, protocol mismatch ignored");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_DELETED,
		 J("{'metadata':{'name':'s-2','namespace':'t'}}")) == 0,
	   "merge: DELETE slice s-2");
	ok_state(m,
		 "10.96.1.1:80/tcp -> 10.244.1.1:8080 10.244.1.2:8080\n"
		 "10.96.1.1:53/udp ->\n",
		 "merge: s-2's own backend gone, shared one stays");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
		 slice("t", "s-1", "other", "IPv4", "{'name':'http','port':8080}",
		       "{'addresses':['10.244.1.1']}")) == 0,
	   "merge: slice s-1 relabelled to another Service");
	ok_state(m, "10.96.1.1:80/tcp ->\n10.96.1.1:53/udp ->\n",
		 "merge: relabelled slice no longer feeds the Service");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED,
		 J("{'metadata':{'name':'s','namespace':'t'}}")) == 0 &&
	   apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED,
		 J("{'metadata':{'name':'never','namespace':'t'}}")) == 0,
	   "merge: DELETE of a Service and of an unknown one");
	ok_state(m, "", "merge: nothing left");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED,
		 J("{'metadata':{'name':'s','namespace':'t'}}")) == 0 &&
	   !kpx_model_dirty(m), "merge: DELETE of an unknown object: not dirty");
	kpx_model_free(m);
}

static void test_dual_stack(void)
{
	struct kpx_model *m = kpx_model_new();

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      svc("t", "ds", "'10.96.1.1','fd00:10:96::1'", HTTP,
		  ",'ipFamilies':['IPv4','IPv6'],'ipFamilyPolicy':'PreferDualStack'"));
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 slice("t", "ds-v4", "ds", "IPv4", "{'name':'http','port':8080}",
		       "{'addresses':['10.244.1.1']}")) == 0 &&
	   apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 slice("t", "ds-v6", "ds", "IPv6", "{'name':'http','port':8080}",
		       "{'addresses':['fd00:10:244::1']}")) == 0 &&
	   apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 slice("t", "ds-fqdn", "ds", "FQDN", "{'name':'http','port':8080}",
		       "{'addresses':['pod.example.com']}")) == 0,
	   "dual: IPv4, IPv6 and FQDN slices accepted");
	ok_state(m,
		 "10.96.1.1:80/tcp -> 10.244.1.1:8080\n"
		 "[fd00:10:96::1]:80/tcp -> [fd00:10:244::1]:8080\n",
		 "dual: each ClusterIP gets only its family's slice; FQDN ignored");
	kpx_model_free(m);
}

static void test_malformed(void)
{
	struct kpx_model *m = kpx_model_new();
	const char *good = "10.96.1.1:80/tcp -> 10.244.1.1:8080\n";
	static const char *const bad_ports[] = {
		"{'name':'http','port':'eighty'}",
		"{'name':'http','port':70000}",
		"{'name':'http','port':0}",
		"{'name':'http','port':80.5}",
		"{'name':'http'}",
		"{'name':'http','port':80,'protocol':'ICMP'}",
		"{'name':7,'port':80}",
		"'http'",
	};
	char *log;
	size_t i;

	log_capture();
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "s", "'10.96.1.1'", HTTP, NULL));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "s-1", "s", "IPv4", "{'name':'http','port':8080}",
		    "{'addresses':['10.244.1.1']}"));
	ok_state(m, good, "bad: the good version");
	log_take();

	for (i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++) {
		int ret = apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
				svc("t", "s", "'10.96.1.1'", bad_ports[i], NULL));

		log = log_take();
		ok(ret == -EINVAL && count_lines(log) == 1 &&
		   strstr(log, "t/s") && strstr(log, "spec.ports[0]") &&
		   strstr(log, "keeping the previous version"),
		   "bad: port %s: -EINVAL, one log line naming t/s and the field", bad_ports[i]);
	}
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 svc("t", "s", "'10.96.1.300'", HTTP, NULL)) == -EINVAL &&
	   strstr(log_take(), "spec.clusterIPs[0]"), "bad: clusterIP 10.96.1.300");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 svc("t", "s", "'10.96.1.1','fd00::zz'", HTTP, NULL)) == -EINVAL &&
	   strstr(log_take(), "spec.clusterIPs[1]"), "bad: second clusterIP fd00::zz");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'s','namespace':'t'},'spec':{'clusterIPs':['10.96.1.1'],"
		   "'ports':{'port':80}}}")) == -EINVAL &&
	   strstr(log_take(), "spec.ports is not an array"), "bad: ports is an object");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'s','namespace':'t','labels':'x'},'spec':{}}")) == -EINVAL,
	   "bad: labels is a string");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'s','namespace':'t'},'spec':[]}")) == -EINVAL,
	   "bad: spec is an array");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 J("{'metadata':{'namespace':'t'},'spec':{'clusterIP':'10.96.1.2'}}")) == -EINVAL &&
	   strstr(log_take(), "metadata.name"), "bad: missing metadata.name");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J("[1,2]")) == -EINVAL &&
	   apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J("{'metadata':{'name':5}}")) == -EINVAL &&
	   kpx_model_apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, NULL) == -EINVAL &&
	   apply(m, KPX_KIND_MAX, KPX_EV_ADDED,
		 J("{'metadata':{'name':'a','namespace':'t'}}")) == -EINVAL,
	   "bad: not an object, numeric name, null, unknown kind");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'s-1','namespace':'t'},'endpoints':[]}")) == -EINVAL &&
	   apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'s-1','namespace':'t'},'addressType':'IPv4',"
		   "'endpoints':7}")) == -EINVAL,
	   "bad: slice without addressType, endpoints not an array");
	ok(!kpx_model_dirty(m), "bad: rejected objects leave the state clean");
	ok_state(m, good, "bad: previous good Service and slice kept");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'s','namespace':'t','annotations':{'x':'y'},"
		   "'managedFields':[{'fieldsV1':{'f:spec':{}}}]},'spec':{'clusterIPs':"
		   "['10.96.1.1'],'ports':[{'name':'http','port':80,'appProtocol':'h2c',"
		   "'future':{'a':[1]}}],'newField':true},'status':7}")) == 0,
	   "bad: unknown fields and annotations are ignored");
	ok_state(m, good, "bad: same state after the odd-but-valid version");
	kpx_log_set_fd(2);
	fclose(logf_);
	kpx_model_free(m);
}

/*
 * An endpoint or a port of an EndpointSlice that does not decode costs only
 * itself: the others are kept, one line names the slice.
 */
static void test_bad_endpoint(void)
{
	struct kpx_model *m = kpx_model_new();
	static const char *const bad_eps[] = {
		"{'addresses':['fd00::1']}",
		"{'addresses':['10.244.1.x']}",
		"{'addresses':['10.244.1.256']}",
		"{'addresses':[7]}",
		"{'addresses':'10.244.1.9'}",
		"{'addresses':['10.244.1.9'],'conditions':{'ready':'yes'}}",
		"{'addresses':['10.244.1.9'],'nodeName':5}",
		"{'addresses':['10.244.1.9'],'hints':{'forZones':'a'}}",
		"'10.244.1.9'",
	};
	char eps[512], *log;
	size_t i;

	log_capture();
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "s", "'10.96.1.1'", HTTP, NULL));
	for (i = 0; i < sizeof(bad_eps) / sizeof(bad_eps[0]); i++) {
		snprintf(eps, sizeof(eps), "{'addresses':['10.244.1.1']},%s,"
			 "{'addresses':['10.244.1.3']}", bad_eps[i]);
		ok(apply(m, KPX_KIND_ENDPOINTSLICE, i ? KPX_EV_MODIFIED : KPX_EV_ADDED,
			 slice("t", "s-1", "s", "IPv4", "{'name':'http','port':8080}",
			       eps)) == 0,
		   "bad endpoint %s: the slice is taken", bad_eps[i]);
		ok_state(m, "10.96.1.1:80/tcp -> 10.244.1.1:8080 10.244.1.3:8080\n",
			 "bad endpoint: the other two endpoints are backends");
		log = log_take();
		ok(count_lines(log) == 1 && strstr(log, "EndpointSlice t/s-1") &&
		   strstr(log, "endpoints[1]"),
		   "bad endpoint: one line naming the slice and endpoints[1]");
	}
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
		 slice("t", "s-1", "s", "IPv4",
		       "{'name':'http','port':-1},{'name':'http','port':8080},"
		       "{'name':'x','port':81,'protocol':'ICMP'}",
		       "{'addresses':['10.244.1.2']}")) == 0,
	   "bad port: the slice is taken");
	ok_state(m, "10.96.1.1:80/tcp -> 10.244.1.2:8080\n",
		 "bad port: the good port is used");
	log = log_take();
	ok(count_lines(log) == 1 && strstr(log, "t/s-1") && strstr(log, "2 endpoint") &&
	   strstr(log, "ports[2]"), "bad port: one line, 2 left out, the last named");
	/* addresses as Kubernetes parses them (netutils.ParseIPSloppy) */
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
		 slice("t", "s-1", "s", "IPv4", "{'name':'http','port':8080}",
		       "{'addresses':['010.244.001.004']},{'addresses':['10.244.1.0005']}")) == 0,
	   "sloppy: the slice is taken");
	ok_state(m, "10.96.1.1:80/tcp -> 10.244.1.4:8080 10.244.1.5:8080\n",
		 "sloppy: 010.244.001.004 is 10.244.1.4 (decimal), 10.244.1.0005 is 10.244.1.5");
	ok(!strstr(log_take(), "left out"), "sloppy: nothing left out");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
		 svc("t", "s", "'010.096.001.010'", HTTP, NULL)) == 0,
	   "sloppy: a clusterIP with leading zeros is taken");
	ok_state(m, "10.96.1.10:80/tcp -> 10.244.1.4:8080 10.244.1.5:8080\n",
		 "sloppy: clusterIP 010.096.001.010 is 10.96.1.10");
	kpx_log_set_fd(2);
	fclose(logf_);
	kpx_model_free(m);
}

/* kpx_parse_addr(): netutils.ParseIPSloppy's forms, and what it refuses. */
static void test_parse_addr(void)
{
	static const struct {
		const char *in, *want;	/* want NULL: -EINVAL */
	} cases[] = {
		{ "10.1.2.3", "10.1.2.3" },
		{ "010.001.002.003", "10.1.2.3" },
		{ "0000255.0.0.00", "255.0.0.0" },
		{ "::ffff:010.001.002.003", "::ffff:10.1.2.3" },
		{ "fd00::0001", "fd00::1" },
		{ "256.1.2.3", NULL },
		{ "1.2.3", NULL },
		{ "1.2.3.4.", NULL },
		{ "1..2.3", NULL },
		{ "0x1.2.3.4", NULL },
		{ " 1.2.3.4", NULL },
		{ "1.2.3.4/32", NULL },
		{ "", NULL },
		{ "fd00::1%eth0", NULL },
		{ "::ffff:1.2.3.256", NULL },
	};
	unsigned char a[16];
	char buf[INET6_ADDRSTRLEN];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fam = kpx_parse_addr(cases[i].in, 0, a);

		if (!cases[i].want)
			ok(fam == -EINVAL, "parse_addr \"%s\": -EINVAL (%d)", cases[i].in, fam);
		else
			ok(fam > 0 && inet_ntop(fam, a, buf, sizeof(buf)) &&
			   !strcmp(buf, cases[i].want),
			   "parse_addr \"%s\" = %s", cases[i].in, cases[i].want);
	}
	ok(kpx_parse_addr("010.1.2.3", AF_INET6, a) == -EINVAL,
	   "parse_addr: family mismatch refused");
}

static void test_relist(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_service *v;
	size_t n;
	int null_fd;

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "a", "'10.96.1.1'", HTTP, NULL));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "b", "'10.96.1.2'", HTTP, NULL));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "c", "'10.96.1.3'", HTTP, NULL));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "a-1", "a", "IPv4", "{'name':'http','port':8080}", EP1));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "a-2", "a", "IPv4", "{'name':'http','port':8080}",
		    "{'addresses':['10.244.1.2']}"));
	ok_state(m,
		 "10.96.1.1:80/tcp -> 10.244.1.1:8080 10.244.1.2:8080\n"
		 "10.96.1.2:80/tcp ->\n10.96.1.3:80/tcp ->\n", "relist: before");

	kpx_model_relist_begin(m, KPX_KIND_SERVICE);
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "a", "'10.96.1.1'", HTTP, NULL));
	null_fd = open("/dev/null", O_WRONLY);
	kpx_log_set_fd(null_fd);
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 svc("t", "c", "'10.96.1.3'", "{'port':'x'}", NULL)) == -EINVAL,
	   "relist: malformed new version of c rejected");
	kpx_log_set_fd(2);
	close(null_fd);
	kpx_model_relist_end(m, KPX_KIND_SERVICE);
	ok(kpx_model_dirty(m), "relist: dirty after dropping b");
	ok_state(m,
		 "10.96.1.1:80/tcp -> 10.244.1.1:8080 10.244.1.2:8080\n"
		 "10.96.1.3:80/tcp ->\n",
		 "relist: b dropped, a kept, c (still listed) kept at its last good version");

	kpx_model_relist_begin(m, KPX_KIND_ENDPOINTSLICE);
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "a-2", "a", "IPv4", "{'name':'http','port':8080}",
		    "{'addresses':['10.244.1.2']}"));
	kpx_model_relist_end(m, KPX_KIND_ENDPOINTSLICE);
	ok_state(m, "10.96.1.1:80/tcp -> 10.244.1.2:8080\n10.96.1.3:80/tcp ->\n",
		 "relist: vanished slice a-1 dropped, Services untouched");

	kpx_model_relist_begin(m, KPX_KIND_NODE);
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'node-a','labels':{'topology.kubernetes.io/zone':'zone-1'}}}"));
	kpx_model_relist_end(m, KPX_KIND_NODE);
	ok(!kpx_model_dirty(m), "relist: Nodes do not make the state dirty");

	kpx_model_relist_begin(m, KPX_KIND_SERVICE);
	kpx_model_relist_end(m, KPX_KIND_SERVICE);
	kpx_model_relist_end(m, KPX_KIND_SERVICE);	/* unpaired: no-op */
	ok(kpx_model_desired(m, &v, &n) == 0 && n == 0, "relist: empty relist drops every Service");
	kpx_services_free(v, n);
	kpx_model_free(m);
}

static void test_duplicate_vip(void)
{
	struct kpx_model *m = kpx_model_new();

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "b", "'10.96.1.1'", HTTP, NULL));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, svc("t", "a", "'10.96.1.1'", HTTP, NULL));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "a-1", "a", "IPv4", "{'name':'http','port':8080}", EP1));
	ok_state(m, "10.96.1.1:80/tcp -> 10.244.1.1:8080\n",
		 "dup VIP: one frontend, from the first Service by name");
	kpx_model_free(m);
}

static void test_order(void)
{
	struct kpx_model *m = kpx_model_new();

	ok(!kpx_model_dirty(m), "order: a new model is clean");
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      slice("t", "sc-1", "sc", "IPv4",
		    "{'name':'assoc','port':3868,'protocol':'SCTP'}", EP1));
	ok(kpx_model_dirty(m), "order: dirty after a slice");
	ok_state(m, "", "order: a slice alone yields nothing");
	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 svc("t", "sc", "'10.96.1.9'",
		     "{'name':'assoc','port':3868,'protocol':'SCTP'}", NULL)) == 0,
	   "order: Service after its slice");
	ok_state(m, "10.96.1.9:3868/sctp -> 10.244.1.1:3868\n",
		 "order: the earlier slice feeds it (SCTP)");
	kpx_model_free(m);
}

/* 10k Services x 2 ports, one slice of 100 endpoints each. */
static void test_scale(void)
{
	enum { NSVC = 10000, NEP = 100 };
	struct kpx_model *m = kpx_model_new();
	struct kpx_service *v = NULL;
	struct timespec t0, t1;
	size_t n = 0, i, total = 0, bad = 0;
	static char eps[NEP * 96];
	char name[32], sname[48], ip[32];
	int j, len, fails = 0;

	for (i = 0; i < NSVC; i++) {
		snprintf(name, sizeof(name), "svc-%zu", i);
		snprintf(ip, sizeof(ip), "'10.96.%zu.%zu'", i / 250, i % 250 + 1);
		fails += apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
			       svc("scale", name, ip,
				   "{'name':'http','port':80},{'name':'dns','port':53,'protocol':'UDP'}",
				   NULL)) != 0;
		for (j = 0, len = 0; j < NEP; j++)
			len += snprintf(eps + len, sizeof(eps) - len,
					"%s{'addresses':['10.%zu.%zu.%d'],'conditions':{'ready':true}}",
					j ? "," : "", 100 + i / 250, i % 250, j + 1);
		snprintf(sname, sizeof(sname), "%s-abcde", name);
		fails += apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
			       slice("scale", sname, name, "IPv4",
				     "{'name':'http','port':8080},{'name':'dns','port':5353,'protocol':'UDP'}",
				     eps)) != 0;
	}
	ok(fails == 0, "scale: %d Services and %d slices accepted", NSVC, NSVC);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(kpx_model_desired(m, &v, &n) == 0, "scale: desired computed");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# desired for %zu frontends took %.1f ms\n", n,
	       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	for (i = 0; i < n; i++) {
		total += v[i].nbackends;
		bad += v[i].nbackends != NEP ||
		       v[i].backends[0].port != (v[i].protocol == IPPROTO_TCP ? 8080 : 5353);
	}
	ok(n == 2 * NSVC && total == 2UL * NSVC * NEP && bad == 0,
	   "scale: %zu frontends, %zu backends, each 100 with its target port", n, total);
	if (n == 2 * NSVC) {
		/* TCP first; svc-1234 is 10.96.4.235: its TCP frontend is #1234 */
		char fe[KPX_SERVICE_STRLEN], be[KPX_HOSTPORT_STRLEN];
		const struct kpx_service *s = &v[1234];

		kpx_service_str(s, fe, sizeof(fe));
		kpx_hostport_str(AF_INET, &s->backends[99].addr, s->backends[99].port,
				 be, sizeof(be));
		ok(!strcmp(fe, "10.96.4.235:80/tcp") && !strcmp(be, "10.104.234.100:8080"),
		   "scale: spot check %s last backend %s", fe, be);
	}
	kpx_services_free(v, n);
	kpx_model_free(m);
}

int main(void)
{
	test_real_objects();
	test_case10();
	test_case08();
	test_skipped();
	test_conditions();
	test_merge();
	test_dual_stack();
	test_malformed();
	test_bad_endpoint();
	test_parse_addr();
	test_relist();
	test_duplicate_vip();
	test_order();
	test_scale();
	return tap_done();
}
