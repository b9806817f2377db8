// SPDX-License-Identifier: GPL-2.0-only
/*
 * The shared cases (../testdata/cases/NN: scenario.md, objects.json) as
 * model tests: each case's objects are applied step by step (objects with
 * no step first, then step 1, 2, ... as watch events), and the desired
 * frontends, backends, flags and source ranges of node-a (and node-b or
 * node-c where the scenario differs) are asserted exactly, as its
 * scenario.md states the expected behaviour.  Configuration: kube-proxy's
 * defaults (--detect-local-mode=ClusterCIDR, --cluster-cidr=10.244.0.0/16,
 * --nodeport-addresses primary) unless a test says otherwise; so ClusterIPs
 * carry [masqnl] (kube-proxy masquerades off-cluster sources to a
 * ClusterIP).  Run from agent/.  TAP; exits non-zero on any failure.
 */
#include "testlib_model.h"

/* case NN's objects, relative to agent/ */
#define CASE(nn) "../testdata/cases/" nn "/objects.json"

/* A model of case file @path up to and including @step, as node @host. */
static struct kpx_model *at_step(const char *path, int step, const char *host)
{
	struct kpx_model *m = kpx_model_new();
	int s, bad = 0;

	set_node(m, host);
	for (s = 0; s <= step; s++)
		bad += load_step(m, path, s);
	if (bad)
		printf("# %s: %d object(s) rejected up to step %d\n", path, bad, step);
	return m;
}

/* Asserts the state of case @path at @step on @host. */
static void ok_case(const char *path, int step, const char *host,
		    const char *want, const char *desc)
{
	struct kpx_model *m = at_step(path, step, host);

	ok_state(m, want, desc);
	kpx_model_free(m);
}

static void ok_case_hc(const char *path, int step, const char *host,
		       const char *want, const char *desc)
{
	struct kpx_model *m = at_step(path, step, host);

	ok_hc(m, want, desc);
	kpx_model_free(m);
}

static void case01(void)
{
	const char *f = CASE("01");
	struct kpx_model *m = at_step(f, 1, "node-a");

	ok_state(m,
		 "10.96.0.53:53/tcp [masqnl] ->\n"
		 "10.96.0.53:53/udp [masqnl] ->\n",
		 "case01 step 1: empty slice: TCP and UDP frontends with no backend, no drop flag (reject)");
	ok(load_step(m, f, 2) == 0 && kpx_model_dirty(m), "case01: step 2 slice update applied, dirty");
	ok_state(m,
		 "10.96.0.53:53/tcp [masqnl] -> 10.244.1.5:53\n"
		 "10.96.0.53:53/udp [masqnl] -> 10.244.1.5:53\n",
		 "case01 step 2: the ready pod is the backend of both ports");
	kpx_model_free(m);
	ok_case(f, 2, "node-b",
		"10.96.0.53:53/tcp [masqnl] -> 10.244.1.5:53\n"
		"10.96.0.53:53/udp [masqnl] -> 10.244.1.5:53\n",
		"case01 step 2 node-b: same (ClusterIP, Cluster policy)");
}

static void case02(void)
{
	const char *f = CASE("02");

	ok_case(f, 1, "node-b", "10.96.12.25:8125/udp [masqnl] -> 10.244.1.20:8125\n",
		"case02 step 1: one sink");
	ok_case(f, 2, "node-b", "10.96.12.25:8125/udp [masqnl] ->\n",
		"case02 step 2: scaled to zero: no backend, reject (no drop flag)");
	ok_case(f, 2, "node-a", "10.96.12.25:8125/udp [masqnl] ->\n",
		"case02 step 2 node-a: same");
}

static void case03(void)
{
	const char *f = CASE("03");

	ok_case(f, 1, "node-a",
		"10.96.20.30:80/tcp [masqnl] -> 10.244.1.30:8080 10.244.1.31:8080 10.244.2.30:8080\n"
		"10.96.20.31:80/tcp [masqnl] -> 10.244.1.30:8080 10.244.1.31:8080 10.244.2.30:8080\n"
		"192.0.2.11:30080/tcp -> 10.244.1.30:8080 10.244.1.31:8080\n",
		"case03 step 1 node-a: cart 3 pods; cart-public NodePort eTP Local: node-a's two pods, no SNAT");
	ok_case(f, 2, "node-a",
		"10.96.20.30:80/tcp [masqnl] -> 10.244.1.31:8080 10.244.2.30:8080\n"
		"10.96.20.31:80/tcp [masqnl] -> 10.244.1.30:8080 10.244.1.31:8080 10.244.2.30:8080\n"
		"192.0.2.11:30080/tcp -> 10.244.1.30:8080 10.244.1.31:8080\n",
		"case03 step 2 node-a: 10.244.1.30 leaves cart at once");
	ok_case(f, 2, "node-b",
		"10.96.20.30:80/tcp [masqnl] -> 10.244.1.31:8080 10.244.2.30:8080\n"
		"10.96.20.31:80/tcp [masqnl] -> 10.244.1.30:8080 10.244.1.31:8080 10.244.2.30:8080\n"
		"192.0.2.12:30080/tcp -> 10.244.2.30:8080\n",
		"case03 node-b: its NodePort uses only its own pod");
}

static void case04(void)
{
	const char *f = CASE("04");

	ok_case(f, 0, "node-a",
		"10.96.30.10:80/tcp [masqnl] -> 10.244.1.40:8080 10.244.1.41:8080\n"
		"10.96.30.10:443/tcp [masqnl] -> 10.244.1.40:8443 10.244.1.41:8443\n"
		"192.0.2.11:30180/tcp -> 10.244.1.40:8080 10.244.1.41:8080\n"
		"192.0.2.11:30543/tcp -> 10.244.1.40:8443 10.244.1.41:8443\n"
		"198.51.100.40:80/tcp -> 10.244.1.40:8080 10.244.1.41:8080\n"
		"198.51.100.40:443/tcp -> 10.244.1.40:8443 10.244.1.41:8443\n",
		"case04 node-a: NodePorts and LB IP to the local pods, no masquerade (client IP kept)");
	ok_case(f, 0, "node-b",
		"10.96.30.10:80/tcp [masqnl] -> 10.244.1.40:8080 10.244.1.41:8080\n"
		"10.96.30.10:443/tcp [masqnl] -> 10.244.1.40:8443 10.244.1.41:8443\n"
		"192.0.2.12:30180/tcp [drop] ->\n"
		"192.0.2.12:30543/tcp [drop] ->\n"
		"198.51.100.40:80/tcp [drop] ->\n"
		"198.51.100.40:443/tcp [drop] ->\n",
		"case04 node-b: no local endpoint: external frontends drop, ClusterIP serves all");
	ok_case_hc(f, 0, "node-a", "shop/storefront:32100 local=2 healthy\n",
		   "case04 node-a: health check 32100 with 2 local endpoints (200)");
	ok_case_hc(f, 0, "node-b", "shop/storefront:32100 local=0 healthy\n",
		   "case04 node-b: health check with 0 local endpoints (503)");
}

static void case05(void)
{
	const char *f = CASE("05");

	ok_case(f, 1, "node-a",
		"10.96.40.20:80/tcp [masqnl] -> 10.244.2.50:8080\n"
		"192.0.2.11:30280/tcp -> 10.244.1.50:8080\n"
		"198.51.100.41:80/tcp -> 10.244.1.50:8080\n",
		"case05 step 1 node-a: ClusterIP ready only; external falls back to the local serving+terminating pod, not .51");
	ok_case(f, 1, "node-b",
		"10.96.40.20:80/tcp [masqnl] -> 10.244.2.50:8080\n"
		"192.0.2.12:30280/tcp -> 10.244.2.50:8080\n"
		"198.51.100.41:80/tcp -> 10.244.2.50:8080\n",
		"case05 step 1 node-b: the new ready pod");
	ok_case_hc(f, 1, "node-a", "shop/checkout:32200 local=0 healthy\n",
		   "case05 step 1 node-a: only terminating pods local: 503");
	ok_case_hc(f, 1, "node-b", "shop/checkout:32200 local=1 healthy\n",
		   "case05 step 1 node-b: 200 with 1");
	ok_case(f, 2, "node-a",
		"10.96.40.20:80/tcp [masqnl] -> 10.244.1.50:8080\n"
		"192.0.2.11:30280/tcp -> 10.244.1.50:8080\n"
		"198.51.100.41:80/tcp -> 10.244.1.50:8080\n",
		"case05 step 2 node-a: cluster-wide fallback to the serving+terminating pod");
	ok_case(f, 2, "node-b",
		"10.96.40.20:80/tcp [masqnl] -> 10.244.1.50:8080\n"
		"192.0.2.12:30280/tcp [drop] ->\n"
		"198.51.100.41:80/tcp [drop] ->\n",
		"case05 step 2 node-b: no usable local endpoint: external dropped");
	ok_case_hc(f, 2, "node-a", "shop/checkout:32200 local=0 healthy\n",
		   "case05 step 2 node-a: 503");
	ok_case_hc(f, 2, "node-b", "shop/checkout:32200 local=0 healthy\n",
		   "case05 step 2 node-b: 503");
}

static void case06(void)
{
	const char *f = CASE("06");

	ok_case(f, 1, "node-a",
		"10.96.50.30:6000/tcp [masqnl] -> 10.244.1.60:6000\n"
		"192.0.2.11:30600/tcp [masqnl] -> 10.244.1.60:6000\n",
		"case06 step 1: ClusterIP and NodePort (hairpin SNAT is the module's, per packet)");
	ok_case(f, 2, "node-a",
		"10.96.50.30:6000/tcp [masqnl] -> 10.244.1.60:6000 10.244.1.61:6000\n"
		"192.0.2.11:30600/tcp [masqnl] -> 10.244.1.60:6000 10.244.1.61:6000\n",
		"case06 step 2: two pods");
}

static void case07(void)
{
	const char *f = CASE("07");
	struct kpx_model *m;
	struct kpx_config c;

	ok_case(f, 0, "node-a",
		"10.96.60.40:80/tcp [masqnl] -> 10.244.2.70:8080\n"
		"192.0.2.11:30700/tcp [masqnl] -> 10.244.2.70:8080\n",
		"case07 setting B (primary): no 127.0.0.1 NodePort");
	m = at_step(f, 0, "node-a");
	case_config(&c, "node-a");
	cidr(&c.nodeport_cidrs[0], "0.0.0.0/0");
	cidr(&c.nodeport_cidrs[1], "::/0");
	c.n_nodeport_cidrs = 2;
	c.nodeport_primary = false;
	kpx_model_set_config(m, &c);
	ok_state(m,
		 "10.96.60.40:80/tcp [masqnl] -> 10.244.2.70:8080\n"
		 "127.0.0.1:30700/tcp [masq] -> 10.244.2.70:8080\n"
		 "192.0.2.11:30700/tcp [masqnl] -> 10.244.2.70:8080\n",
		 "case07 setting A (all addresses): 127.0.0.1 NodePort, always masqueraded; no ::1");
	c.n_nodeport_cidrs = 1;
	cidr(&c.nodeport_cidrs[0], "127.0.0.0/8");
	kpx_model_set_config(m, &c);
	ok_state(m,
		 "10.96.60.40:80/tcp [masqnl] -> 10.244.2.70:8080\n"
		 "127.0.0.1:30700/tcp [masq] -> 10.244.2.70:8080\n",
		 "case07 nodeport-addresses 127.0.0.0/8 only: just the localhost NodePort");
	cidr(&c.nodeport_cidrs[0], "127.0.0.2/32");
	kpx_model_set_config(m, &c);
	ok_state(m, "10.96.60.40:80/tcp [masqnl] -> 10.244.2.70:8080\n",
		 "case07 127.0.0.2/32 (#142129): no localhost NodePort");
	kpx_model_free(m);
}

static void case08(void)
{
	const char *f = CASE("08");
	static const char *const a =
		"10.96.70.50:80/tcp [masqnl] ->\n"
		"192.0.2.11:30800/tcp [masqnl] ->\n"
		"198.51.100.50:80/tcp [masqnl] ->\n"
		"203.0.113.50:80/tcp [masqnl] ->\n"
		"10.96.70.50:514/udp [masqnl] ->\n"
		"192.0.2.11:30514/udp [masqnl] ->\n"
		"198.51.100.50:514/udp [masqnl] ->\n"
		"203.0.113.50:514/udp [masqnl] ->\n";

	ok_case(f, 0, "node-a", a,
		"case08 node-a: every frontend (ClusterIP, NodePort, LB IP, externalIP; TCP and UDP) empty, no drop: reject");
	ok_case(f, 0, "node-b",
		"10.96.70.50:80/tcp [masqnl] ->\n"
		"192.0.2.12:30800/tcp [masqnl] ->\n"
		"198.51.100.50:80/tcp [masqnl] ->\n"
		"203.0.113.50:80/tcp [masqnl] ->\n"
		"10.96.70.50:514/udp [masqnl] ->\n"
		"192.0.2.12:30514/udp [masqnl] ->\n"
		"198.51.100.50:514/udp [masqnl] ->\n"
		"203.0.113.50:514/udp [masqnl] ->\n",
		"case08 node-b: the same on its own NodePorts");
}

static void case09(void)
{
	const char *f = CASE("09");

	ok_case(f, 1, "node-a", "10.96.80.60:8080/tcp [masqnl] -> 10.244.1.90:8080\n",
		"case09 step 1 node-a: the local pod");
	ok_case(f, 1, "node-b", "10.96.80.60:8080/tcp [drop,masqnl] ->\n",
		"case09 step 1 node-b: iTP Local, no local endpoint, some elsewhere: drop");
	ok_case(f, 2, "node-a", "10.96.80.60:8080/tcp [masqnl] ->\n",
		"case09 step 2 node-a: no endpoints at all: reject");
	ok_case(f, 2, "node-b", "10.96.80.60:8080/tcp [masqnl] ->\n",
		"case09 step 2 node-b: reject");
}

static void case10(void)
{
	ok_case(CASE("10"), 0, "node-a",
		"10.96.90.70:80/tcp [masqnl] -> 10.244.1.100:8080 10.244.2.100:8080 10.244.2.101:8081\n"
		"10.96.90.70:9100/tcp [masqnl] -> 10.244.1.100:9100 10.244.2.100:9100 10.244.2.101:9100\n",
		"case10: web has 3 backends with per-slice ports, metrics 3 on 9100");
}

/* Sets spec.loadBalancerSourceRanges of the case15 Service and applies it. */
static int case15_ranges(struct kpx_model *m, const char *f, const char *ranges)
{
	struct json_object *doc = json_object_from_file(f), *items, *svc, *spec;
	int ret;

	items = json_object_object_get(doc, "items");
	svc = json_object_array_get_idx(items, 0);
	spec = json_object_object_get(svc, "spec");
	json_object_object_add(spec, "loadBalancerSourceRanges",
			       json_tokener_parse(ranges));
	ret = kpx_model_apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, svc);
	json_object_put(doc);
	return ret;
}

static void case15(void)
{
	const char *f = CASE("15");
	struct kpx_model *m = at_step(f, 0, "node-a");

	ok_state(m,
		 "10.96.140.120:443/tcp [masqnl] -> 10.244.1.130:8443 10.244.2.130:8443\n"
		 "192.0.2.11:30443/tcp [masqnl] -> 10.244.1.130:8443 10.244.2.130:8443\n"
		 "198.51.100.60:443/tcp [masqnl] from=203.0.113.0/24 -> 10.244.1.130:8443 10.244.2.130:8443\n",
		 "case15: ranges on the LB IP only, not on the NodePort or ClusterIP");
	ok(case15_ranges(m, f, "[\"203.0.113.0/24\",\" 198.51.100.7/24 \"]") == 0,
	   "case15: ranges + 198.51.100.0/24 (host bits, blanks) accepted");
	ok_state_only(m, "198.51.100.60",
		      "198.51.100.60:443/tcp [masqnl] from=198.51.100.0/24,203.0.113.0/24 -> 10.244.1.130:8443 10.244.2.130:8443\n",
		      "case15: the added range, normalized and sorted");
	ok(case15_ranges(m, f, "[\"192.0.2.0/24\",\"fd00::/8\",\"bogus\"]") == 0,
	   "case15: a range with the node's IP, an IPv6 one and a bad one");
	ok_state_only(m, "198.51.100.60",
		      "198.51.100.60:443/tcp [masqnl] from=192.0.2.0/24,198.51.100.60/32 -> 10.244.1.130:8443 10.244.2.130:8443\n",
		      "case15: node in a range: the LB IP itself allowed (kube-proxy); IPv6 and bad ranges left out");
	ok(case15_ranges(m, f, "[]") == 0, "case15: ranges removed");
	ok_state_only(m, "198.51.100.60",
		      "198.51.100.60:443/tcp [masqnl] -> 10.244.1.130:8443 10.244.2.130:8443\n",
		      "case15: no ranges: no filter");
	kpx_model_free(m);
}

static void case18(void)
{
	const char *f = CASE("18");
	struct kpx_model *m = at_step(f, 0, "node-a");
	struct json_object *doc, *sl, *eps;
	struct kpx_service *v;
	size_t n, i, j, left = 0;
	int bad = 0;

	ok(kpx_model_desired(m, &v, &n) == 0 && n == 1 && v[0].nbackends == 400,
	   "case18: one frontend with 400 backends over 4 slices");
	for (i = 0; n == 1 && i < v[0].nbackends; i++)
		bad += v[0].backends[i].port != 8080;
	ok(n == 1 && bad == 0 &&
	   v[0].flags == (KPX_SVC_F_MASQ_NONLOCAL | KPX_SVC_F_CLUSTER_IP),
	   "case18: all on 8080, flags masqnl, cluster-ip");
	kpx_services_free(v, n);
	doc = json_object_from_file(f);
	sl = json_object_array_get_idx(json_object_object_get(doc, "items"), 2);
	ok(kpx_model_apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_DELETED, sl) == 0,
	   "case18: DELETE slice %s",
	   json_object_get_string(json_object_object_get(json_object_object_get(sl, "metadata"), "name")));
	eps = json_object_object_get(sl, "endpoints");
	ok(kpx_model_desired(m, &v, &n) == 0 && n == 1 && v[0].nbackends == 300,
	   "case18: 300 backends left");
	for (i = 0; n == 1 && i < json_object_array_length(eps); i++) {
		const char *a = json_object_get_string(json_object_array_get_idx(
			json_object_object_get(json_object_array_get_idx(eps, i),
					       "addresses"), 0));
		struct in_addr ia;

		inet_pton(AF_INET, a, &ia);
		for (j = 0; j < v[0].nbackends; j++)
			left += v[0].backends[j].addr.v4.s_addr == ia.s_addr;
	}
	ok(left == 0, "case18: none of the deleted slice's 100 endpoints remain");
	kpx_services_free(v, n);
	json_object_put(doc);
	kpx_model_free(m);
}

static void case19(void)
{
	const char *f = CASE("19");
	struct kpx_model *m;

	ok_case(f, 1, "node-a",
		"10.96.180.150:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080\n"
		"10.96.180.151:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080\n",
		"case19 step 1 node-a: zone-1 hints; pricing-local its two pods");
	ok_case(f, 1, "node-b",
		"10.96.180.150:80/tcp [masqnl] -> 10.244.2.160:8080 10.244.3.160:8080\n"
		"10.96.180.151:80/tcp [masqnl] -> 10.244.2.160:8080\n",
		"case19 step 1 node-b: the endpoints hinted for zone-2 (one in zone-3); pricing-local its own");
	ok_case(f, 1, "node-c",
		"10.96.180.150:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080 10.244.2.160:8080 10.244.3.160:8080\n"
		"10.96.180.151:80/tcp [masqnl] -> 10.244.3.160:8080\n",
		"case19 step 1 node-c: nothing hinted for zone-3: all four; iTP Local wins over hints");
	/* objects.json's step 2 slice replaces 10.244.3.160 by the unhinted
	 * 10.244.3.161 (4 endpoints; scenario.md speaks of five) */
	ok_case(f, 2, "node-a",
		"10.96.180.150:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080 10.244.2.160:8080 10.244.3.161:8080\n"
		"10.96.180.151:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080\n",
		"case19 step 2 node-a: an unhinted endpoint: hints ignored, all endpoints");
	m = at_step(f, 2, "node-b");
	ok(apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'pricing-extra','namespace':'shop','labels':"
		   "{'kubernetes.io/service-name':'pricing'}},'addressType':'IPv4',"
		   "'ports':[{'name':'http','port':8080}],'endpoints':[{'addresses':"
		   "['10.244.3.160'],'nodeName':'node-c','hints':{'forZones':"
		   "[{'name':'zone-2'}],'forNodes':[{'name':'node-c'}],'future':1}}]}")) == 0,
	   "case19: a second slice with the hinted 10.244.3.160 (forNodes and unknown hint fields accepted)");
	ok_state_only(m, "10.96.180.150",
		      "10.96.180.150:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080 10.244.2.160:8080 10.244.3.160:8080 10.244.3.161:8080\n",
		      "case19 step 2 node-b: all five endpoints (one unhinted)");
	kpx_model_free(m);
	/* the zone label removed from node-a's Node: hints ignored there */
	m = at_step(f, 1, "node-a");
	ok(apply(m, KPX_KIND_NODE, KPX_EV_MODIFIED,
		 J("{'metadata':{'name':'node-a','labels':{'kubernetes.io/hostname':'node-a'}},"
		   "'status':{'addresses':[{'type':'InternalIP','address':'192.0.2.11'}]}}")) == 0 &&
	   kpx_model_dirty(m), "case19: node-a loses its zone label: dirty");
	ok_state_only(m, "10.96.180.150",
		      "10.96.180.150:80/tcp [masqnl] -> 10.244.1.160:8080 10.244.1.161:8080 10.244.2.160:8080 10.244.3.160:8080\n",
		      "case19: node-a without a zone: all endpoints");
	kpx_model_free(m);
}

int main(void)
{
	case01();
	case02();
	case03();
	case04();
	case05();
	case06();
	case07();
	case08();
	case09();
	case10();
	case15();
	case18();
	case19();
	return done_testing();
}
