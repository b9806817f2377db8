// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the model's kube-proxy policy on small inline objects:
 * frontend kinds and families, --nodeport-addresses, masquerade flags and
 * --detect-local-mode (kpx_model_ns_config()), traffic policies, endpoint
 * conditions, PreferSameNode, ipMode Proxy, health-check counts, and which
 * Node changes make the state dirty.  TAP; exits non-zero on any failure.
 */
#include "testlib_model.h"

static const char *NODE_A =
	"{'metadata':{'name':'node-a','labels':{'topology.kubernetes.io/zone':'zone-1'}},"
	"'spec':{'podCIDRs':['10.244.1.0/24','fd00:10:244:1::/64']},"
	"'status':{'addresses':[{'type':'Hostname','address':'node-a'},"
	"{'type':'ExternalIP','address':'203.0.113.11'},"
	"{'type':'InternalIP','address':'192.0.2.11'},"
	"{'type':'InternalIP','address':'192.0.2.111'},"
	"{'type':'InternalIP','address':'2001:db8::11'}]}}";

static struct kpx_model *model_a(void)
{
	struct kpx_model *m = kpx_model_new();

	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J("%s", NODE_A));
	return m;
}

/*
 * KPX_SVC_F_CLUSTER_IP is on every ClusterIP frontend (10.96.0.0/12,
 * fd00:10:96::/108 in these tests) and on no other: the module then refuses
 * undefined ports of those addresses only (as kube-proxy's nftables mode).
 */
static void cluster_ip_flags(struct kpx_model *m, const char *what)
{
	char fe[KPX_SERVICE_STRLEN];
	struct kpx_service *v;
	size_t n, i;
	int bad = 0, cips = 0;

	if (kpx_model_desired(m, &v, &n)) {
		ok(0, "%s: desired state", what);
		return;
	}
	for (i = 0; i < n; i++) {
		const char *s = kpx_service_str(&v[i], fe, sizeof(fe));
		bool cip = !strncmp(s, "10.96.", 6) || !strncmp(s, "[fd00:10:96::", 13);

		cips += cip;
		if (cip != !!(v[i].flags & KPX_SVC_F_CLUSTER_IP)) {
			printf("# %s: flags 0x%x\n", s, (unsigned int)v[i].flags);
			bad++;
		}
	}
	ok(bad == 0 && cips > 0,
	   "%s: KPX_SVC_F_CLUSTER_IP on the %d ClusterIP frontends only", what, cips);
	kpx_services_free(v, n);
}

/* A dual-stack LoadBalancer with one port of each protocol. */
static void test_dual_stack_kinds(void)
{
	struct kpx_model *m = model_a();

	ok(apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
		 J("{'metadata':{'name':'ds','namespace':'t'},'spec':{'type':'LoadBalancer',"
		   "'clusterIPs':['10.96.1.1','fd00:10:96::1'],'ipFamilies':['IPv4','IPv6'],"
		   "'externalIPs':['203.0.113.5','2001:db8:5::5','not-an-ip'],"
		   "'ports':[{'name':'a','port':3868,'protocol':'SCTP','nodePort':31868},"
		   "{'name':'u','port':53,'protocol':'UDP','nodePort':31053}]},"
		   "'status':{'loadBalancer':{'ingress':[{'ip':'198.51.100.1'},"
		   "{'ip':'2001:db8:1::1','ipMode':'VIP'},{'ip':'198.51.100.2','ipMode':'Proxy'},"
		   "{'hostname':'lb.example.com'}]}}}")) == 0,
	   "dual: LoadBalancer with SCTP and UDP ports accepted");
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'ds-4','namespace':'t','labels':{'kubernetes.io/service-name':'ds'}},"
		"'addressType':'IPv4','ports':[{'name':'a','port':3868,'protocol':'SCTP'},"
		"{'name':'u','port':5353,'protocol':'UDP'}],'endpoints':[{'addresses':['10.244.2.1'],'nodeName':'node-b'}]}"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'ds-6','namespace':'t','labels':{'kubernetes.io/service-name':'ds'}},"
		"'addressType':'IPv6','ports':[{'name':'a','port':3868,'protocol':'SCTP'},"
		"{'name':'u','port':5353,'protocol':'UDP'}],'endpoints':[{'addresses':['fd00:10:244:2::1'],'nodeName':'node-b'}]}"));
	ok_state(m,
		 "10.96.1.1:53/udp [masqnl] -> 10.244.2.1:5353\n"
		 "192.0.2.11:31053/udp [masq] -> 10.244.2.1:5353\n"
		 "198.51.100.1:53/udp [masq] -> 10.244.2.1:5353\n"
		 "203.0.113.5:53/udp [masq] -> 10.244.2.1:5353\n"
		 "10.96.1.1:3868/sctp [masqnl] -> 10.244.2.1:3868\n"
		 "192.0.2.11:31868/sctp [masq] -> 10.244.2.1:3868\n"
		 "198.51.100.1:3868/sctp [masq] -> 10.244.2.1:3868\n"
		 "203.0.113.5:3868/sctp [masq] -> 10.244.2.1:3868\n"
		 "[2001:db8::11]:31053/udp [masq] -> [fd00:10:244:2::1]:5353\n"
		 "[2001:db8:1::1]:53/udp [masq] -> [fd00:10:244:2::1]:5353\n"
		 "[2001:db8:5::5]:53/udp [masq] -> [fd00:10:244:2::1]:5353\n"
		 "[fd00:10:96::1]:53/udp -> [fd00:10:244:2::1]:5353\n"
		 "[2001:db8::11]:31868/sctp [masq] -> [fd00:10:244:2::1]:3868\n"
		 "[2001:db8:1::1]:3868/sctp [masq] -> [fd00:10:244:2::1]:3868\n"
		 "[2001:db8:5::5]:3868/sctp [masq] -> [fd00:10:244:2::1]:3868\n"
		 "[fd00:10:96::1]:3868/sctp -> [fd00:10:244:2::1]:3868\n",
		 "dual: per family ClusterIP, primary NodePort, LB IP (not ipMode Proxy), externalIP; "
		 "each family's slice; UDP and SCTP; IPv6 ClusterIP unflagged (--cluster-cidr has no IPv6 prefix)");
	cluster_ip_flags(m, "dual");
	/* single-stack IPv4 Service: IPv6 external addresses are left out */
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'ds','namespace':'t'},'spec':{'type':'LoadBalancer',"
		"'clusterIPs':['10.96.1.1'],'externalIPs':['2001:db8:5::5'],"
		"'ports':[{'name':'u','port':53,'protocol':'UDP','nodePort':31053}]},"
		"'status':{'loadBalancer':{'ingress':[{'ip':'2001:db8:1::1'}]}}}"));
	ok_state(m,
		 "10.96.1.1:53/udp [masqnl] -> 10.244.2.1:5353\n"
		 "192.0.2.11:31053/udp [masq] -> 10.244.2.1:5353\n",
		 "dual: IPv4-only Service: IPv6 externalIP and LB IP ignored");
	kpx_model_free(m);
}

static const char *WEB =
	"{'metadata':{'name':'web','namespace':'t'},'spec':{'type':'NodePort',"
	"'clusterIPs':['10.96.2.2'],'ports':[{'name':'http','port':80,'nodePort':30080}]%s}}";
static const char *WEB_EPS =
	"{'metadata':{'name':'web-1','namespace':'t','labels':{'kubernetes.io/service-name':'web'}},"
	"'addressType':'IPv4','ports':[{'name':'http','port':8080}],'endpoints':["
	"{'addresses':['10.244.1.1'],'nodeName':'node-a'},"
	"{'addresses':['10.244.2.1'],'nodeName':'node-b'}]}";

static void test_nodeport_addresses(void)
{
	struct kpx_model *m = model_a();
	struct kpx_config c;

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(WEB, ""));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J("%s", WEB_EPS));
	ok_state_only(m, ":30080",
		      "192.0.2.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "np: primary: the first InternalIP (not the ExternalIP listed first); "
		      "IPv4-only Service: no IPv6 NodePort");
	case_config(&c, "node-a");
	cidr(&c.nodeport_cidrs[0], "192.0.2.0/24");
	cidr(&c.nodeport_cidrs[1], "203.0.113.0/24");
	c.n_nodeport_cidrs = 2;
	kpx_model_set_config(m, &c);
	ok(!kpx_model_localhost_nodeports(m), "np: no CIDR holds 127.0.0.1: route_localnet not needed");
	cidr(&c.nodeport_cidrs[2], "127.0.0.0/8");
	c.n_nodeport_cidrs = 3;
	kpx_model_set_config(m, &c);
	ok(kpx_model_localhost_nodeports(m), "np: 127.0.0.0/8: localhost NodePorts (route_localnet)");
	ok_state_only(m, "127.0.0.1:",
		      "127.0.0.1:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "np: 127.0.0.1 NodePort: masqueraded, cluster set");
	c.n_nodeport_cidrs = 2;
	kpx_model_set_config(m, &c);
	ok_state_only(m, ":30080",
		      "192.0.2.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n"
		      "192.0.2.111:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n"
		      "203.0.113.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "np: CIDRs: every Internal/ExternalIP inside them, no IPv6");
	c.nodeport_primary = true;
	kpx_model_set_config(m, &c);
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'web','namespace':'t'},'spec':{'type':'NodePort',"
		"'clusterIPs':['10.96.2.2','fd00:10:96::2'],'ports':[{'name':'http','port':80,'nodePort':30080}]}}"));
	ok_state_only(m, "[2001",
		      "[2001:db8::11]:30080/tcp [masq] ->\n",
		      "np: dual-stack Service, primary plus CIDRs: the IPv6 primary too (no IPv6 endpoint: reject)");
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, J(WEB, ""));
	/* the ExternalIP is the primary when there is no InternalIP */
	apply(m, KPX_KIND_NODE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'node-a'},'status':{'addresses':["
		"{'type':'ExternalIP','address':'203.0.113.11'}]}}"));
	set_node(m, "node-a");
	ok_state_only(m, ":30080",
		      "203.0.113.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "np: primary falls back to the ExternalIP");
	{
		char ips[4][INET6_ADDRSTRLEN];

		ok(kpx_model_nodeport_ips(m, ips, 4) == 1 && !strcmp(ips[0], "203.0.113.11"),
		   "np: health-check bind addresses = the NodePort addresses");
	}
	apply(m, KPX_KIND_NODE, KPX_EV_DELETED, J("{'metadata':{'name':'node-a'}}"));
	ok_state_only(m, ":30080",
		      "203.0.113.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "np: own Node deleted: its NodePort stays on the last-seen address");
	{
		struct kpx_model *m2 = kpx_model_new();

		set_node(m2, "node-a");
		apply(m2, KPX_KIND_SERVICE, KPX_EV_ADDED, J(WEB, ""));
		apply(m2, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J("%s", WEB_EPS));
		ok_state(m2, "10.96.2.2:80/tcp [masqnl] -> 10.244.1.1:8080 10.244.2.1:8080\n",
			 "np: own Node never seen: no NodePort frontend");
		kpx_model_free(m2);
	}
	kpx_model_free(m);
}

static void test_masquerade(void)
{
	struct kpx_model *m = model_a();
	struct kpx_ns_config nc;
	struct kpx_config c;

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(WEB, ",'externalTrafficPolicy':'Local'"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J("%s", WEB_EPS));
	case_config(&c, "node-a");
	c.masquerade_all = true;
	kpx_model_set_config(m, &c);
	ok_state_only(m, "/tcp",
		      "10.96.2.2:80/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n"
		      "192.0.2.11:30080/tcp -> 10.244.1.1:8080\n",
		      "masq: --masquerade-all masquerades the ClusterIP; eTP Local keeps the client IP");
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, J(WEB, ""));
	ok_state_only(m, "10.96.2.2:80",
		      "10.96.2.2:80/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "masq: eTP Cluster + masquerade-all: ClusterIP [masq]");
	ok_state_only(m, "192.0.2.11:30080",
		      "192.0.2.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "masq: eTP Cluster + masquerade-all: NodePort [masq]");
	/* no local detector: the ClusterIP is not masqueraded at all */
	case_config(&c, "node-a");
	c.detect_local = KPX_DETECT_LOCAL_NONE;
	kpx_model_set_config(m, &c);
	ok_state_only(m, "/tcp",
		      "10.96.2.2:80/tcp -> 10.244.1.1:8080 10.244.2.1:8080\n"
		      "192.0.2.11:30080/tcp [masq] -> 10.244.1.1:8080 10.244.2.1:8080\n",
		      "masq: no local detector: ClusterIP unflagged, external frontends masq (everything masqueraded)");
	kpx_model_ns_config(m, &nc);
	ok(nc.nlocal_cidrs == 0 && !nc.local_ifname[0] && !nc.local_ifprefix[0],
	   "ns: mode none: nothing local");
	/* ClusterCIDR with an IPv4 CIDR only: the IPv6 ClusterIP is not flagged */
	case_config(&c, "node-a");
	kpx_model_set_config(m, &c);
	kpx_model_ns_config(m, &nc);
	ok(nc.nlocal_cidrs == 1 && nc.local_cidrs[0].family == AF_INET &&
	   nc.local_cidrs[0].len == 16 && ntohl(nc.local_cidrs[0].addr.v4.s_addr) == 0x0af40000,
	   "ns: ClusterCIDR: 10.244.0.0/16");
	c.detect_local = KPX_DETECT_LOCAL_NODE_CIDR;
	kpx_model_set_config(m, &c);
	kpx_model_ns_config(m, &nc);
	ok(nc.nlocal_cidrs == 2 && nc.local_cidrs[0].len == 24 &&
	   ntohl(nc.local_cidrs[0].addr.v4.s_addr) == 0x0af40100 &&
	   nc.local_cidrs[1].family == AF_INET6 && nc.local_cidrs[1].len == 64,
	   "ns: NodeCIDR: the own Node's podCIDRs (v4 and v6)");
	c.detect_local = KPX_DETECT_LOCAL_BRIDGE;
	snprintf(c.pod_bridge_interface, sizeof(c.pod_bridge_interface), "cni0");
	kpx_model_set_config(m, &c);
	kpx_model_ns_config(m, &nc);
	ok(nc.nlocal_cidrs == 0 && !strcmp(nc.local_ifname, "cni0") && !nc.local_ifprefix[0],
	   "ns: BridgeInterface: cni0");
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'web','namespace':'t'},'spec':{'clusterIPs':"
		"['10.96.2.2','fd00:10:96::2'],'ports':[{'name':'http','port':80}]}}"));
	ok_state_only(m, "[fd00:10:96::2]",
		      "[fd00:10:96::2]:80/tcp [masqnl] ->\n",
		      "masq: interface detection applies to the IPv6 ClusterIP too");
	c.detect_local = KPX_DETECT_LOCAL_IFPREFIX;
	snprintf(c.pod_interface_prefix, sizeof(c.pod_interface_prefix), "veth");
	kpx_model_set_config(m, &c);
	kpx_model_ns_config(m, &nc);
	ok(nc.nlocal_cidrs == 0 && !nc.local_ifname[0] && !strcmp(nc.local_ifprefix, "veth"),
	   "ns: InterfaceNamePrefix: veth");
	kpx_model_free(m);
}

static void test_conditions_and_policies(void)
{
	struct kpx_model *m = model_a();

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'p','namespace':'t'},'spec':{'type':'LoadBalancer',"
		"'clusterIPs':['10.96.3.3'],'internalTrafficPolicy':'Local',"
		"'externalTrafficPolicy':'Local','healthCheckNodePort':32000,"
		"'ports':[{'name':'a','port':80,'nodePort':30001},{'name':'b','port':81,'nodePort':30002}]},"
		"'status':{'loadBalancer':{'ingress':[{'ip':'198.51.100.3'}]}}}"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'p-1','namespace':'t','labels':{'kubernetes.io/service-name':'p'}},"
		"'addressType':'IPv4','ports':[{'name':'a','port':8080},{'name':'b','port':8081}],'endpoints':["
		"{'addresses':['10.244.1.1'],'nodeName':'node-a'},"
		"{'addresses':['10.244.1.2'],'nodeName':'node-a','conditions':{'ready':false,'serving':true,'terminating':true}},"
		"{'addresses':['10.244.2.1'],'nodeName':'node-b'}]}"));
	ok_state_only(m, ":80/",
		      "10.96.3.3:80/tcp [masqnl] -> 10.244.1.1:8080\n"
		      "198.51.100.3:80/tcp -> 10.244.1.1:8080\n",
		      "pol: iTP and eTP Local: local ready endpoint only");
	ok_hc(m, "t/p:32000 local=1 healthy\n", "pol: health check counts 1 (distinct address over 2 ports)");
	/* the local ready one becomes terminating but serving */
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'p-1','namespace':'t','labels':{'kubernetes.io/service-name':'p'}},"
		"'addressType':'IPv4','ports':[{'name':'a','port':8080}],'endpoints':["
		"{'addresses':['10.244.1.1'],'nodeName':'node-a','conditions':{'ready':false,'serving':true,'terminating':true}},"
		"{'addresses':['10.244.1.2'],'nodeName':'node-a','conditions':{'ready':false,'serving':false,'terminating':true}},"
		"{'addresses':['10.244.2.1'],'nodeName':'node-b'}]}"));
	ok_state_only(m, ":80/",
		      "10.96.3.3:80/tcp [masqnl] -> 10.244.1.1:8080\n"
		      "198.51.100.3:80/tcp -> 10.244.1.1:8080\n",
		      "pol: no local ready: local serving+terminating (KEP-1669 per scope), not the non-serving one");
	ok_state_only(m, ":81/",
		      "10.96.3.3:81/tcp [masqnl] ->\n"
		      "198.51.100.3:81/tcp ->\n",
		      "pol: port b no longer in the slice: no endpoints anywhere: reject");
	ok_hc(m, "t/p:32000 local=0 healthy\n", "pol: health check: terminating endpoints do not count");
	/* NodePort type with eTP Local: no health check; ClusterIP type with
	 * eTP Local and no externalIPs: policy does not apply */
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'p','namespace':'t'},'spec':{'type':'ClusterIP',"
		"'clusterIPs':['10.96.3.3'],'externalTrafficPolicy':'Local','healthCheckNodePort':32000,"
		"'ports':[{'name':'a','port':80}]}}"));
	ok_hc(m, "", "pol: ClusterIP type: no health check");
	ok_state(m, "10.96.3.3:80/tcp [masqnl] -> 10.244.2.1:8080\n",
		 "pol: ClusterIP: cluster set = the ready node-b endpoint");
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'p','namespace':'t'},'spec':{'type':'ClusterIP',"
		"'clusterIPs':['10.96.3.3'],'externalTrafficPolicy':'Local','externalIPs':['203.0.113.3'],"
		"'ports':[{'name':'a','port':80}]}}"));
	ok_state_only(m, "203.0.113.3",
		      "203.0.113.3:80/tcp -> 10.244.1.1:8080\n",
		      "pol: ClusterIP type with externalIPs: eTP Local applies to the externalIP");
	kpx_model_free(m);
}

static void test_prefer_same_node(void)
{
	struct kpx_model *m = model_a();
	static const char *svc_fmt =
		"{'metadata':{'name':'n','namespace':'t'},'spec':{'clusterIPs':['10.96.4.4'],"
		"'trafficDistribution':'%s','ports':[{'port':80}]}}";
	static const char *eps_fmt =
		"{'metadata':{'name':'n-1','namespace':'t','labels':{'kubernetes.io/service-name':'n'}},"
		"'addressType':'IPv4','ports':[{'port':8080}],'endpoints':["
		"{'addresses':['10.244.1.1'],'nodeName':'node-a','hints':{'forNodes':[{'name':'node-a'}],'forZones':[{'name':'zone-1'}]}},"
		"{'addresses':['10.244.1.2'],'nodeName':'node-x','hints':{'forNodes':[{'name':'%s'}],'forZones':[{'name':'zone-1'}]}},"
		"{'addresses':['10.244.2.1'],'nodeName':'node-b','hints':{'forNodes':[{'name':'node-b'}],'forZones':[{'name':'zone-2'}]}}]}";

	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(svc_fmt, "PreferSameNode"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(eps_fmt, "node-x"));
	ok_state(m, "10.96.4.4:80/tcp [masqnl] -> 10.244.1.1:8080\n",
		 "topo: PreferSameNode: the endpoint hinted for this node");
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED, J(eps_fmt, "node-b"));
	ok_state(m, "10.96.4.4:80/tcp [masqnl] -> 10.244.1.1:8080\n",
		 "topo: another endpoint hinted for node-b: still only ours");
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, J(svc_fmt, "PreferClose"));
	ok_state(m, "10.96.4.4:80/tcp [masqnl] -> 10.244.1.1:8080\n",
		 "topo: the hints decide, not the Service field (as kube-proxy)");
	apply(m, KPX_KIND_NODE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'node-a','labels':{'topology.kubernetes.io/zone':'zone-1'}}}"));
	set_node(m, "node-x");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'node-x','labels':{'topology.kubernetes.io/zone':'zone-1'}}}"));
	ok_state(m, "10.96.4.4:80/tcp [masqnl] -> 10.244.1.1:8080 10.244.1.2:8080\n",
		 "topo: node-x in zone-1 with no node hint for it: the zone-1 hints");
	set_node(m, "node-a");
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, J(svc_fmt, "PreferSameNode"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
	      J("{'metadata':{'name':'n-1','namespace':'t','labels':{'kubernetes.io/service-name':'n'}},"
		"'addressType':'IPv4','ports':[{'port':8080}],'endpoints':["
		"{'addresses':['10.244.1.1'],'nodeName':'node-a','hints':{'forZones':[{'name':'zone-1'}]}},"
		"{'addresses':['10.244.2.1'],'nodeName':'node-b','hints':{'forNodes':[{'name':'node-b'}],'forZones':[{'name':'zone-2'}]}},"
		"{'addresses':['10.244.2.2'],'nodeName':'node-b','conditions':{'ready':false}}]}"));
	ok_state(m, "10.96.4.4:80/tcp [masqnl] -> 10.244.1.1:8080\n",
		 "topo: a node hint missing: falls back to zone hints (unready unhinted endpoint ignored)");
	kpx_model_free(m);
}

static void test_dirty_nodes(void)
{
	struct kpx_model *m = model_a();
	struct kpx_service *v;
	size_t n;

	kpx_model_desired(m, &v, &n);
	kpx_services_free(v, n);
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'node-b','labels':{'topology.kubernetes.io/zone':'zone-2'}}}"));
	ok(!kpx_model_dirty(m), "dirty: another Node does not make the state dirty");
	apply(m, KPX_KIND_NODE, KPX_EV_MODIFIED, J("%s", NODE_A));
	ok(kpx_model_dirty(m), "dirty: the own Node does");
	{
		char ips[4][INET6_ADDRSTRLEN];
		struct kpx_config c;

		ok(kpx_model_nodeport_ips(m, ips, 4) == 2 && !strcmp(ips[0], "192.0.2.11") &&
		   !strcmp(ips[1], "2001:db8::11"), "np: primary bind addresses, both families");
		case_config(&c, "node-a");
		case_nodeport_cidrs(&c, "0.0.0.0/0");
		kpx_model_set_config(m, &c);
		ok(kpx_model_nodeport_ips(m, ips, 2) == 2 && !strcmp(ips[0], "203.0.113.11") &&
		   !strcmp(ips[1], "192.0.2.11"),
		   "np: 0.0.0.0/0: IPv4 addresses in Node order, capped at max, never 127.0.0.1");
	}
	kpx_model_desired(m, &v, &n);
	kpx_services_free(v, n);
	kpx_model_relist_begin(m, KPX_KIND_NODE);
	kpx_model_relist_end(m, KPX_KIND_NODE);
	ok(!kpx_model_dirty(m), "dirty: the own Node dropped by a relist: kept as last seen, nothing changes");
	kpx_model_free(m);
}

/*
 * Every external frontend of an eTP Local Service (NodePort on the
 * node's address, LoadBalancer IP) carries KPX_SVC_F_EXT_LOCAL and the key
 * of the same port's ClusterIP frontend, so that the module serves pods and
 * the node itself with all endpoints; the ClusterIP has neither.  Case 04's
 * objects (shop/storefront), on node-b (no local endpoint) and node-a.
 */
static void ext_local_one(const char *host)
{
	static const struct {
		const char *fe, *cluster;
	} want[] = {
		{ "10.96.30.10:80/tcp", "" },
		{ "10.96.30.10:443/tcp", "" },
		{ "192.0.2.%s:30180/tcp", "10.96.30.10:80" },
		{ "192.0.2.%s:30543/tcp", "10.96.30.10:443" },
		{ "198.51.100.40:80/tcp", "10.96.30.10:80" },
		{ "198.51.100.40:443/tcp", "10.96.30.10:443" },
	};
	const char *nip = !strcmp(host, "node-a") ? "11" : "12";
	char fe[KPX_SERVICE_STRLEN], cl[KPX_HOSTPORT_STRLEN], exp[64];
	struct kpx_model *m = kpx_model_new();
	struct kpx_service *v;
	size_t n, i;
	int bad = 0;

	set_node(m, host);
	if (load_step(m, "../testdata/cases/04/objects.json",
		      -1) || kpx_model_desired(m, &v, &n)) {
		ok(0, "ext-local %s: case 04 loaded", host);
		kpx_model_free(m);
		return;
	}
	ok(n == 6, "ext-local %s: 6 frontends (%zu)", host, n);
	for (i = 0; i < n && i < 6; i++) {
		const struct kpx_service *s = &v[i];
		bool ext = want[i].cluster[0] != '\0';

		snprintf(exp, sizeof(exp), want[i].fe, nip);
		kpx_service_str(s, fe, sizeof(fe));
		cl[0] = '\0';
		if (s->cluster_port)
			kpx_hostport_str(s->family, &s->cluster_addr,
					 s->cluster_port, cl, sizeof(cl));
		if (strcmp(fe, exp) || ext != !!(s->flags & KPX_SVC_F_EXT_LOCAL) ||
		    strcmp(cl, want[i].cluster)) {
			printf("# %s: flags 0x%x cluster '%s' (want %s '%s')\n", fe,
			       (unsigned int)s->flags, cl, exp, want[i].cluster);
			bad++;
		}
	}
	ok(bad == 0, "ext-local %s: KPX_SVC_F_EXT_LOCAL and the ClusterIP key on the "
	   "NodePort and LB IP frontends only", host);
	/* the key takes part in the comparison that decides a SET */
	if (n >= 3) {
		struct kpx_service t = v[2];

		ok(kpx_service_same_config(&t, &v[2]), "ext-local %s: same config", host);
		t.cluster_port++;
		ok(!kpx_service_same_config(&t, &v[2]),
		   "ext-local %s: another cluster port is a change", host);
		t = v[2];
		t.cluster_addr.v4.s_addr ^= htonl(1);
		ok(!kpx_service_same_config(&t, &v[2]),
		   "ext-local %s: another cluster address is a change", host);
	}
	kpx_services_free(v, n);
	kpx_model_free(m);
}

static void test_ext_local(void)
{
	ext_local_one("node-b");
	ext_local_one("node-a");
}

int main(void)
{
	test_dual_stack_kinds();
	test_nodeport_addresses();
	test_masquerade();
	test_conditions_and_policies();
	test_prefer_same_node();
	test_dirty_nodes();
	test_ext_local();
	return tap_done();
}
