// SPDX-License-Identifier: GPL-2.0-only
/*
 * The own Node and the node's addresses in the model: a deleted own Node
 * stays in use as last seen (NodePort frontends, NodeCIDR local detection)
 * until it is back, a relist without it included; --nodeport-addresses
 * CIDRs select among the interface addresses (kpx_model_set_local_addrs():
 * added, moved, removed at run time) while "primary" follows the Node.
 * TAP; exits non-zero on any failure.
 */
#include "testlib_model.h"

static const char *NODE_A =
	"{'metadata':{'name':'node-a'},'spec':{'podCIDRs':['%s']},"
	"'status':{'addresses':[{'type':'InternalIP','address':'%s'},"
	"{'type':'InternalIP','address':'2001:db8:1::11'}]}}";
static const char *GW =
	"{'metadata':{'name':'gw','namespace':'shop'},'spec':{'type':'NodePort',"
	"'clusterIPs':['10.96.185.10'],'ports':[{'name':'http','port':80,'nodePort':30320}]}}";
static const char *GW_EPS =
	"{'metadata':{'name':'gw-1','namespace':'shop','labels':{'kubernetes.io/service-name':'gw'}},"
	"'addressType':'IPv4','ports':[{'name':'http','port':8080}],'endpoints':["
	"{'addresses':['10.244.1.185'],'nodeName':'node-a'}]}";

static void config(struct kpx_model *m, enum kpx_detect_local mode, const char *np)
{
	struct kpx_config c;

	case_config(&c, "node-a");
	c.detect_local = mode;
	if (np)
		case_nodeport_cidrs(&c, np);
	kpx_model_set_config(m, &c);
}

static struct kpx_model *model_gw(enum kpx_detect_local mode, const char *np)
{
	struct kpx_model *m = kpx_model_new();

	config(m, mode, np);
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(NODE_A, "10.244.1.0/24", "192.0.2.11"));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J("%s", GW));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J("%s", GW_EPS));
	return m;
}

static const char *local_cidr(struct kpx_model *m, char *buf, size_t len)
{
	struct kpx_ns_config nc;

	kpx_model_ns_config(m, &nc);
	if (nc.nlocal_cidrs != 1)
		return "none";
	return cidr_str(&nc.local_cidrs[0], buf, len);
}

static void take_dirty(struct kpx_model *m)
{
	char **v;
	size_t n, i;
	bool all;

	if (!kpx_model_take_dirty(m, &v, &n, &all)) {
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
	}
}

static void test_node_deleted(void)
{
	struct kpx_model *m = model_gw(KPX_DETECT_LOCAL_NODE_CIDR, NULL);
	const char *np = "192.0.2.11:30320/tcp [masq] -> 10.244.1.185:8080\n";
	size_t na, nc;
	char b[64];

	ok_state_only(m, ":30320", np, "node: the NodePort on the Node's InternalIP");
	ok(!strcmp(local_cidr(m, b, sizeof(b)), "10.244.1.0/24"), "node: NodeCIDR 10.244.1.0/24");
	take_dirty(m);
	apply(m, KPX_KIND_NODE, KPX_EV_DELETED, J(NODE_A, "10.244.1.0/24", "192.0.2.11"));
	ok_state_only(m, ":30320", np, "node: own Node deleted: its NodePort stays (last seen)");
	ok(!strcmp(local_cidr(m, b, sizeof(b)), "10.244.1.0/24"),
	   "node: own Node deleted: NodeCIDR detection keeps its pod CIDR");
	ok(kpx_model_own_node(m, &na, &nc) && na == 2 && nc == 1,
	   "node: the last-seen Node is the own Node (2 addresses, 1 pod CIDR)");
	ok(!kpx_model_dirty(m), "node: nothing to resync for the deletion");
	kpx_model_relist_begin(m, KPX_KIND_NODE);
	kpx_model_relist_end(m, KPX_KIND_NODE);
	ok_state_only(m, ":30320", np, "node: a relist without it: still the last-seen Node");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(NODE_A, "10.244.7.0/24", "192.0.2.11"));
	ok(kpx_model_dirty(m) && !strcmp(local_cidr(m, b, sizeof(b)), "10.244.7.0/24"),
	   "node: registered again with pod CIDR 10.244.7.0/24: NodeCIDR follows (%s)", b);
	apply(m, KPX_KIND_NODE, KPX_EV_MODIFIED, J(NODE_A, "10.244.7.0/24", "192.0.2.31"));
	ok_state_only(m, ":30320", "192.0.2.31:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "node: a Node MODIFIED with a new InternalIP: the NodePort moves (primary)");
	/* another Node's deletion is no own Node */
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED,
	      J("{'metadata':{'name':'node-b'},'status':{'addresses':[{'type':'InternalIP','address':'192.0.2.12'}]}}"));
	apply(m, KPX_KIND_NODE, KPX_EV_DELETED, J("{'metadata':{'name':'node-b'}}"));
	ok_state_only(m, ":30320", "192.0.2.31:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "node: node-b deleted: nothing changes");
	kpx_model_free(m);
}

static void addrs(struct kpx_cidr *v, size_t n, const char *const *s)
{
	size_t i;
	char b[64];

	for (i = 0; i < n; i++) {
		snprintf(b, sizeof(b), "%s/%s", s[i], strchr(s[i], ':') ? "128" : "32");
		cidr(&v[i], b);
	}
}

static void test_local_addrs(void)
{
	struct kpx_model *m = model_gw(KPX_DETECT_LOCAL_CLUSTER_CIDR, "192.0.2.0/24");
	static const char *const s1[] = { "10.0.0.5", "127.0.0.1", "192.0.2.11", "fe80::1" };
	static const char *const s2[] = { "192.0.2.11", "192.0.2.21", "10.0.0.5" };
	static const char *const s3[] = { "192.0.2.21", "192.0.2.31" };
	static const char *const s4[] = { "192.0.2.31" };
	char ips[4][INET6_ADDRSTRLEN];
	struct kpx_cidr v[8];

	ok_state_only(m, ":30320", "192.0.2.11:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: before the interface addresses are known: the Node's inside the CIDR");
	addrs(v, 4, s1);
	ok(kpx_model_set_local_addrs(m, v, 4) == 0,
	   "local: interface addresses with the same selection: no change");
	addrs(v, 3, s2);
	take_dirty(m);
	ok(kpx_model_set_local_addrs(m, v, 3) == 1 && kpx_model_dirty(m),
	   "local: 192.0.2.21 added (a VIP, not in the Node): changed, dirty");
	ok_state_only(m, ":30320",
		      "192.0.2.11:30320/tcp [masq] -> 10.244.1.185:8080\n"
		      "192.0.2.21:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: served on the new address too; 10.0.0.5 outside the CIDR is not");
	ok(kpx_model_nodeport_ips(m, ips, 4) == 2 && !strcmp(ips[1], "192.0.2.21"),
	   "local: the health-check addresses follow (2)");
	addrs(v, 2, s3);
	ok(kpx_model_set_local_addrs(m, v, 2) == 1, "local: renumbered to .31, .11 gone");
	ok_state_only(m, ":30320",
		      "192.0.2.21:30320/tcp [masq] -> 10.244.1.185:8080\n"
		      "192.0.2.31:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: .21 and .31 served, .11 no longer");
	addrs(v, 1, s4);
	ok(kpx_model_set_local_addrs(m, v, 1) == 1, "local: .21 moved away");
	ok_state_only(m, ":30320", "192.0.2.31:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: .31 only");
	ok(kpx_model_set_local_addrs(m, v, 1) == 0, "local: the same again: no change");
	/* primary: the Node object, not the host */
	config(m, KPX_DETECT_LOCAL_CLUSTER_CIDR, NULL);
	addrs(v, 3, s2);
	take_dirty(m);
	ok(kpx_model_set_local_addrs(m, v, 3) == 0 && kpx_model_dirty(m),
	   "local: primary: an interface address added changes no NodePort, but a sync is due (health-check binds)");
	take_dirty(m);
	ok(kpx_model_set_local_addrs(m, v, 3) == 0 && !kpx_model_dirty(m),
	   "local: the same addresses again: no sync due");
	ok_state_only(m, ":30320", "192.0.2.11:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: primary: the Node's InternalIP only");
	/* all: every interface address but loopback and link-local */
	{
		struct kpx_config c;

		case_config(&c, "node-a");
		case_nodeport_cidrs(&c, "0.0.0.0/0,::/0");
		kpx_model_set_config(m, &c);
	}
	addrs(v, 4, s1);
	kpx_model_set_local_addrs(m, v, 4);
	ok_state_only(m, ":30320",
		      "10.0.0.5:30320/tcp [masq] -> 10.244.1.185:8080\n"
		      "127.0.0.1:30320/tcp [masq] -> 10.244.1.185:8080\n"
		      "192.0.2.11:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: all: every interface address, no fe80::, 127.0.0.1 as the localhost NodePort (masq)");
	ok(kpx_model_nodeport_ips(m, ips, 4) == 0,
	   "local: all: health checks on the wildcard (0 addresses: both families)");
	ok(kpx_model_localhost_nodeports(m), "local: all: localhost NodePorts (route_localnet wanted)");
	/* the same with iptables.localhostNodePorts false */
	{
		struct kpx_config c;

		case_config(&c, "node-a");
		cidr(&c.nodeport_cidrs[0], "0.0.0.0/0");
		cidr(&c.nodeport_cidrs[1], "::/0");
		c.n_nodeport_cidrs = 2;
		c.nodeport_primary = false;
		c.no_localhost_nodeports = true;
		kpx_model_set_config(m, &c);
	}
	ok_state_only(m, ":30320",
		      "10.0.0.5:30320/tcp [masq] -> 10.244.1.185:8080\n"
		      "192.0.2.11:30320/tcp [masq] -> 10.244.1.185:8080\n",
		      "local: all, localhostNodePorts false: no 127.0.0.1 NodePort");
	ok(!kpx_model_localhost_nodeports(m), "local: localhostNodePorts false: no route_localnet");
	kpx_model_free(m);
}

int main(void)
{
	test_node_deleted();
	test_local_addrs();
	return tap_done();
}
