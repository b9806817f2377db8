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
 * ClusterIP).  The cases with an expect.json (the scenario's expected
 * behaviour as data, also asserted on a node by selftests/cases/run.sh) are
 * asserted from it instead.  Run from agent/.  TAP; exits non-zero on any
 * failure.
 *
 * Over 600 lines as one concern: one block of exact assertions per shared
 * case, the model's side of every scenario.
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

static void case07(void)
{
	const char *f = CASE("07");
	struct kpx_model *m;
	struct kpx_config c;

	ok_case(f, 0, "node-a",
		"10.96.60.40:80/tcp [masqnl] -> 10.244.2.70:8080\n"
		"192.0.2.11:30700/tcp [masq] -> 10.244.2.70:8080\n",
		"case07 setting B (primary): no 127.0.0.1 NodePort");
	m = at_step(f, 0, "node-a");
	case_config(&c, "node-a");
	case_nodeport_cidrs(&c, "0.0.0.0/0,::/0");
	kpx_model_set_config(m, &c);
	ok_state(m,
		 "10.96.60.40:80/tcp [masqnl] -> 10.244.2.70:8080\n"
		 "127.0.0.1:30700/tcp [masq] -> 10.244.2.70:8080\n"
		 "192.0.2.11:30700/tcp [masq] -> 10.244.2.70:8080\n",
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
		 "case07 127.0.0.2/32: no localhost NodePort (only a CIDR holding 127.0.0.1 gives one)");
	kpx_model_free(m);
}

/* Case 08 on node-b (node-a's phases are in expect.json). */
static void case08(void)
{
	const char *f = CASE("08");

	ok_case(f, 0, "node-b",
		"10.96.70.50:80/tcp [masqnl] ->\n"
		"192.0.2.12:30800/tcp [masq] ->\n"
		"198.51.100.50:80/tcp [masq] ->\n"
		"203.0.113.50:80/tcp [masq] ->\n"
		"10.96.70.50:514/udp [masqnl] ->\n"
		"192.0.2.12:30514/udp [masq] ->\n"
		"198.51.100.50:514/udp [masq] ->\n"
		"203.0.113.50:514/udp [masq] ->\n",
		"case08 node-b: the same on its own NodePorts");
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
		 "192.0.2.11:30443/tcp [masq] -> 10.244.1.130:8443 10.244.2.130:8443\n"
		 "198.51.100.60:443/tcp [masq] from=203.0.113.0/24 -> 10.244.1.130:8443 10.244.2.130:8443\n",
		 "case15: ranges on the LB IP only, not on the NodePort or ClusterIP");
	ok(case15_ranges(m, f, "[\"203.0.113.0/24\",\" 198.51.100.7/24 \"]") == 0,
	   "case15: ranges + 198.51.100.0/24 (host bits, blanks) accepted");
	ok_state_only(m, "198.51.100.60",
		      "198.51.100.60:443/tcp [masq] from=198.51.100.0/24,203.0.113.0/24 -> 10.244.1.130:8443 10.244.2.130:8443\n",
		      "case15: the added range, normalized and sorted");
	ok(case15_ranges(m, f, "[\"192.0.2.0/24\",\"fd00::/8\",\"bogus\"]") == 0,
	   "case15: a range with the node's IP, an IPv6 one and a bad one");
	ok_state_only(m, "198.51.100.60",
		      "198.51.100.60:443/tcp [masq] from=192.0.2.0/24,198.51.100.60/32 -> 10.244.1.130:8443 10.244.2.130:8443\n",
		      "case15: node in a range: the LB IP itself allowed (kube-proxy); IPv6 and bad ranges left out");
	ok(case15_ranges(m, f, "[]") == 0, "case15: ranges removed");
	ok_state_only(m, "198.51.100.60",
		      "198.51.100.60:443/tcp [masq] -> 10.244.1.130:8443 10.244.2.130:8443\n",
		      "case15: no ranges: no filter");
	kpx_model_free(m);
}

static void case19(void)
{
	const char *f = CASE("19");
	struct kpx_model *m;

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

/*
 * testdata/cases/NN/expect.json (format: selftests/cases/README.md), the
 * scenario's expected behaviour that the VM runner (selftests/cases/run.sh)
 * asserts on the node, asserted here against the model.  Each phase's
 * objects are rebuilt as its node: the steps up to its own, the objects the
 * phases so far restored to a step's version, the files they applied and
 * the objects they deleted, in their order.
 * (The runner's own checks, agent_running and log_clean, are the node's.)
 * Then:
 * - each frontend row: its backends, its action without backend
 *   (KPX_SVC_F_DROP_EMPTY: drop, else reject), its masquerade flags; with
 *   "complete", the model has no frontend the rows do not name;
 * - each probe row, on the frontend it reaches (an eTP Local external
 *   frontend's ClusterIP frontend for a client on the node or in the
 *   cluster CIDR, KPX_SVC_F_EXT_LOCAL): answered by exactly its backends;
 *   refused: no frontend, or one with no backend and no drop flag;
 *   dropped: no backend and the drop flag, or a source range the client is
 *   outside of; unanswered: no frontend or one with no backend (rows with
 *   "service": false name no Service and are the node's); the source a
 *   pod or the external client is seen with:
 *   masqueraded by KPX_SVC_F_MASQ, or by KPX_SVC_F_MASQ_NONLOCAL from
 *   outside the cluster CIDR, else kept ("hairpin" is the module's, per
 *   packet, and the node's own traffic reaches pods from the gateway
 *   address either way).
 * A phase with agent flags the model does not take, or one whose "agent"
 * is stopped or killed (the node keeps the former state), is reported
 * skipped.
 */

/* The clients' addresses, as selftests/lib.sh and case_lib.sh set them up:
 * the external client, and the node's source towards a VIP (kpx-node). */
#define CLI_ADDR "10.0.1.2"
#define NODE_SRC "10.0.0.1"
#define CLUSTER_CIDR "10.244.0.0/16"

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static size_t jlen(struct json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted, comma separated backends of @s ("-" none) into @buf. */
static const char *fe_backends(const struct kpx_service *s, char *buf, size_t len)
{
	char be[KPX_HOSTPORT_STRLEN], *v[4096];
	size_t i, n = s->nbackends < 4096 ? s->nbackends : 4096, off = 0;

	for (i = 0; i < n; i++)
		v[i] = strdup(kpx_hostport_str(s->family, &s->backends[i].addr,
					       s->backends[i].port, be, sizeof(be)));
	qsort(v, n, sizeof(v[0]), cmp_str);
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
					i ? "," : "", v[i]);
		free(v[i]);
	}
	if (!n)
		snprintf(buf, len, "-");
	return buf;
}

/* The sorted, comma separated strings of JSON array @a ("-" empty). */
static const char *want_list(struct json_object *a, char *buf, size_t len)
{
	const char *v[4096];
	size_t i, n = jlen(a) < 4096 ? jlen(a) : 4096, off = 0;

	for (i = 0; i < n; i++)
		v[i] = json_object_get_string(json_object_array_get_idx(a, i));
	qsort(v, n, sizeof(v[0]), cmp_str);
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
					i ? "," : "", v[i]);
	if (!n)
		snprintf(buf, len, "-");
	return buf;
}

/* The frontend "ADDR:PORT" @dest of @proto in @v, or NULL. */
static const struct kpx_service *find_fe(const struct kpx_service *v, size_t n,
					 const char *proto, const char *dest)
{
	char fe[KPX_SERVICE_STRLEN], want[KPX_SERVICE_STRLEN];
	size_t i;

	snprintf(want, sizeof(want), "%s/%s", dest, proto);
	for (i = 0; i < n; i++)
		if (!strcmp(kpx_service_str(&v[i], fe, sizeof(fe)), want))
			return &v[i];
	return NULL;
}

/* The ClusterIP frontend an eTP Local external frontend @s names. */
static const struct kpx_service *cluster_fe(const struct kpx_service *v, size_t n,
					    const struct kpx_service *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].family == s->family && v[i].protocol == s->protocol &&
		    v[i].port == s->cluster_port &&
		    !memcmp(&v[i].addr, &s->cluster_addr, sizeof(s->cluster_addr)))
			return &v[i];
	return NULL;
}

static const char *masq_of(uint32_t flags)
{
	if (flags & KPX_SVC_F_MASQ)
		return "always";
	if (flags & KPX_SVC_F_MASQ_NONLOCAL)
		return "off-cluster";
	return "never";
}

/*
 * The object "KIND NS NAME [STEP]" in @path ("-" NS: cluster scoped): its
 * version of STEP (0: the one without a step), else its last; a new
 * reference.
 */
static struct json_object *find_obj(const char *path, const char *spec)
{
	struct json_object *doc = json_object_from_file(path), *items, *it, *md, *found = NULL;
	char kind[64], ns[256], name[256];
	int step = -1;
	size_t i;

	if (!doc || sscanf(spec, "%63s %255s %255s %d", kind, ns, name, &step) < 3) {
		json_object_put(doc);
		return NULL;
	}
	items = jget(doc, "items");
	for (i = 0; i < jlen(items); i++) {
		it = json_object_array_get_idx(items, i);
		md = jget(it, "metadata");
		if (jstr(it, "kind") && !strcmp(jstr(it, "kind"), kind) && md &&
		    jstr(md, "name") && !strcmp(jstr(md, "name"), name) &&
		    !strcmp(jstr(md, "namespace") ? jstr(md, "namespace") : "-", ns) &&
		    (step < 0 || obj_step(it) == step))
			found = it;
	}
	if (found)
		json_object_get(found);
	json_object_put(doc);
	return found;
}

/*
 * The object @spec ("KIND NS NAME") names, for a delete of one the case
 * applied from a file: only its kind, namespace and name.
 */
static struct json_object *stub_obj(const char *spec)
{
	struct json_object *o, *md;
	char kind[64], ns[256], name[256];

	if (sscanf(spec, "%63s %255s %255s", kind, ns, name) != 3)
		return NULL;
	o = json_object_new_object();
	md = json_object_new_object();
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(md, "name", json_object_new_string(name));
	if (strcmp(ns, "-"))
		json_object_object_add(md, "namespace", json_object_new_string(ns));
	json_object_object_add(o, "metadata", md);
	return o;
}

/* Replays the phases up to @upto (index) of @phases into a model as @host. */
/* Whether agent flags @f only restate the model's configuration here
 * (--nodeport-addresses primary, which a case that means it says). */
static bool default_flags(struct json_object *f)
{
	const char *a = json_object_get_string(json_object_array_get_idx(f, 0));
	const char *b = json_object_get_string(json_object_array_get_idx(f, 1));

	return jlen(f) == 2 && a && b && !strcmp(a, "--nodeport-addresses") &&
	       !strcmp(b, "primary");
}

static struct kpx_model *phase_model(const char *dir, struct json_object *phases,
				     size_t upto, const char *host)
{
	struct kpx_model *m = kpx_model_new();
	char objects[512], path[512];
	int step = 0, bad;
	size_t p, i;

	snprintf(objects, sizeof(objects), "%s/objects.json", dir);
	set_node(m, host);
	bad = load_step(m, objects, 0);
	for (p = 0; p <= upto; p++) {
		struct json_object *ph = json_object_array_get_idx(phases, p), *a;
		struct json_object *st = jget(ph, "step");

		while (st && step < json_object_get_int(st))
			bad += load_step(m, objects, ++step);
		a = jget(ph, "restore");
		for (i = 0; i < jlen(a); i++) {
			const char *spec = json_object_get_string(json_object_array_get_idx(a, i));
			struct json_object *o = find_obj(objects, spec);

			if (!o) {
				printf("# %s: no object '%s' to restore\n", dir, spec);
				bad++;
				continue;
			}
			bad += kpx_model_apply(m, kind_of(o, ""), KPX_EV_MODIFIED, o) != 0;
			json_object_put(o);
		}
		a = jget(ph, "apply");
		for (i = 0; i < jlen(a); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 json_object_get_string(json_object_array_get_idx(a, i)));
			bad += load(m, path);
		}
		a = jget(ph, "delete");
		for (i = 0; i < jlen(a); i++) {
			const char *spec = json_object_get_string(json_object_array_get_idx(a, i));
			struct json_object *o = find_obj(objects, spec);

			if (!o)
				o = stub_obj(spec);	/* applied from a file */
			if (!o) {
				printf("# %s: no object '%s' to delete\n", dir, spec);
				bad++;
				continue;
			}
			bad += kpx_model_apply(m, kind_of(o, ""), KPX_EV_DELETED, o) != 0;
			json_object_put(o);
		}
	}
	if (bad)
		printf("# %s: %d object(s) rejected up to phase %zu\n", dir, bad, upto);
	return m;
}

/* A client's address: a pod of the case, the external client or the node. */
static const char *client_addr(struct json_object *pods, const char *from)
{
	size_t i;

	if (!strcmp(from, "cli"))
		return CLI_ADDR;
	if (!strcmp(from, "node"))
		return NODE_SRC;
	for (i = 0; i < jlen(pods); i++) {
		struct json_object *p = json_object_array_get_idx(pods, i);

		if (jstr(p, "name") && !strcmp(jstr(p, "name"), from))
			return json_object_get_string(json_object_array_get_idx(jget(p, "ip"), 0));
	}
	return NULL;
}

static bool in_cidr(const char *cidr_s, const char *addr)
{
	struct kpx_cidr c;
	unsigned char a[16];
	int fam;

	cidr(&c, cidr_s);
	fam = kpx_parse_addr(addr, 0, a);
	return fam == c.family && kpx_cidr_contains(&c, fam, a);
}

static bool in_ranges(const struct kpx_service *s, const char *addr)
{
	unsigned char a[16];
	int fam = kpx_parse_addr(addr, 0, a);
	size_t i;

	for (i = 0; i < s->nsource_ranges; i++)
		if (fam == s->family && kpx_cidr_contains(&s->source_ranges[i], fam, a))
			return true;
	return false;
}

static void expect_frontend(const char *what, const struct kpx_service *v, size_t n,
			    struct json_object *row)
{
	const char *proto = jstr(row, "protocol"), *dest = jstr(row, "destination");
	const char *empty = jstr(row, "empty"), *masq = jstr(row, "masquerade");
	const struct kpx_service *s = find_fe(v, n, proto, dest);
	char got[1 << 16], want[1 << 16];
	bool absent = jget(row, "absent") && json_object_get_boolean(jget(row, "absent"));

	if (absent || !s) {
		ok(absent == !s, "%s: %s %s %s", what, proto, dest, absent ? "absent" : "present");
		return;
	}
	fe_backends(s, got, sizeof(got));
	want_list(jget(row, "backends"), want, sizeof(want));
	ok(!strcmp(got, want), "%s: %s %s backends %s", what, proto, dest, want);
	if (strcmp(got, want))
		printf("# got %s\n", got);
	if (empty)
		ok(!strcmp(empty, s->flags & KPX_SVC_F_DROP_EMPTY ? "drop" : "reject"),
		   "%s: %s %s without backend: %s", what, proto, dest, empty);
	if (masq)
		ok(!strcmp(masq, masq_of(s->flags)), "%s: %s %s masquerades %s (flags 0x%x)",
		   what, proto, dest, masq, (unsigned int)s->flags);
}

static void expect_probe(const char *what, const struct kpx_service *v, size_t n,
			 struct json_object *pods, struct json_object *row)
{
	const char *from = jstr(row, "from"), *proto = jstr(row, "protocol");
	const char *dest = jstr(row, "destination"), *src = jstr(row, "source");
	const char *verdict = jstr(row, "verdict") ? jstr(row, "verdict") : "answered";
	const char *addr = client_addr(pods, from);
	const struct kpx_service *s = find_fe(v, n, proto, dest);
	char got[1 << 16], want[1 << 16];
	bool local = addr && (!strcmp(from, "node") || in_cidr(CLUSTER_CIDR, addr));

	if (jget(row, "service") && !json_object_get_boolean(jget(row, "service")))
		return; /* not a Service's address (a daemon on the node) */
	if (!addr) {
		ok(0, "%s: probe from unknown client '%s'", what, from);
		return;
	}
	if (s && (s->flags & KPX_SVC_F_EXT_LOCAL) && local && cluster_fe(v, n, s))
		s = cluster_fe(v, n, s);
	if (!strcmp(verdict, "unanswered")) {
		ok(!s || !s->nbackends, "%s: %s %s from %s unanswered", what, proto, dest, from);
		return;
	}
	if (!strcmp(verdict, "refused")) {
		ok(!s || (!s->nbackends && !(s->flags & KPX_SVC_F_DROP_EMPTY)),
		   "%s: %s %s from %s refused", what, proto, dest, from);
		return;
	}
	if (!s) {
		ok(0, "%s: %s %s from %s %s: no such frontend", what, proto, dest, from, verdict);
		return;
	}
	if (!strcmp(verdict, "dropped")) {
		ok((!s->nbackends && (s->flags & KPX_SVC_F_DROP_EMPTY)) ||
		   (s->nsource_ranges && !in_ranges(s, addr)),
		   "%s: %s %s from %s dropped", what, proto, dest, from);
		return;
	}
	ok(s->nbackends && (!s->nsource_ranges || in_ranges(s, addr)),
	   "%s: %s %s from %s answered", what, proto, dest, from);
	if (jget(row, "backends")) {
		fe_backends(s, got, sizeof(got));
		want_list(jget(row, "backends"), want, sizeof(want));
		ok(!strcmp(got, want), "%s: %s %s from %s: backends %s", what, proto, dest,
		   from, want);
		if (strcmp(got, want))
			printf("# got %s\n", got);
	}
	if (src && strcmp(from, "node") && strcmp(src, "hairpin")) {
		bool masq = (s->flags & KPX_SVC_F_MASQ) ||
			    ((s->flags & KPX_SVC_F_MASQ_NONLOCAL) && !in_cidr(CLUSTER_CIDR, addr));

		ok(!strcmp(src, masq ? "masqueraded" : "kept"), "%s: %s %s from %s: source %s",
		   what, proto, dest, from, src);
	}
}

/* Asserts testdata/cases/@nn/expect.json against the model. */
static void expect_case(const char *nn)
{
	char dir[256], path[512], what[512];
	struct json_object *x, *phases, *pods;
	const char *node = "node-a";
	size_t p, i;

	snprintf(dir, sizeof(dir), "../testdata/cases/%s", nn);
	snprintf(path, sizeof(path), "%s/expect.json", dir);
	x = json_object_from_file(path);
	phases = x ? jget(x, "phases") : NULL;
	if (!jlen(phases)) {
		ok(0, "case %s: %s has phases (run from agent/)", nn, path);
		json_object_put(x);
		return;
	}
	pods = jget(x, "pods");
	for (p = 0; p < jlen(phases); p++) {
		struct json_object *ph = json_object_array_get_idx(phases, p), *rows;
		struct kpx_model *m;
		struct kpx_service *v;
		size_t n;

		if (jstr(ph, "node"))
			node = jstr(ph, "node");
		snprintf(what, sizeof(what), "case %s %s (%s)", nn, jstr(ph, "desc"), node);
		if (jlen(jget(ph, "flags")) && !default_flags(jget(ph, "flags"))) {
			ok(1, "%s # SKIP agent flags %s not modelled here", what,
			   json_object_to_json_string(jget(ph, "flags")));
			continue;
		}
		/* the node keeps what the stopped agent left: not the model's */
		if (jstr(ph, "agent") && strcmp(jstr(ph, "agent"), "start") &&
		    strcmp(jstr(ph, "agent"), "restart")) {
			ok(1, "%s # SKIP the agent is down (%s): the node keeps its former state", what,
			   jstr(ph, "agent"));
			continue;
		}
		m = phase_model(dir, phases, p, node);
		if (kpx_model_desired(m, &v, &n)) {
			ok(0, "%s: desired state", what);
			kpx_model_free(m);
			continue;
		}
		rows = jget(ph, "frontends");
		for (i = 0; i < jlen(rows); i++)
			expect_frontend(what, v, n, json_object_array_get_idx(rows, i));
		if (jget(ph, "complete") && json_object_get_boolean(jget(ph, "complete"))) {
			size_t named = 0, j;

			for (j = 0; j < n; j++) {
				char fe[KPX_SERVICE_STRLEN];
				bool listed = false;

				kpx_service_str(&v[j], fe, sizeof(fe));
				for (i = 0; i < jlen(rows); i++) {
					struct json_object *r = json_object_array_get_idx(rows, i);

					listed |= find_fe(&v[j], 1, jstr(r, "protocol"),
							  jstr(r, "destination")) != NULL;
				}
				if (!listed)
					printf("# not in expect.json: %s\n", fe);
				named += listed;
			}
			ok(named == n, "%s: no frontend but those listed (%zu of %zu)", what,
			   named, n);
		}
		rows = jget(ph, "probes");
		for (i = 0; i < jlen(rows); i++)
			expect_probe(what, v, n, pods, json_object_array_get_idx(rows, i));
		kpx_services_free(v, n);
		kpx_model_free(m);
	}
	json_object_put(x);
}

/* The cases with an expect.json (the scenario's behaviour as data). */
static const char *const expect_cases[] = { "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "15", "18", "19", "30", "38", "39", "41" };

int main(void)
{
	size_t i;

	case04();
	case05();
	case07();
	case08();
	case15();
	case19();
	for (i = 0; i < sizeof(expect_cases) / sizeof(expect_cases[0]); i++)
		expect_case(expect_cases[i]);
	return tap_done();
}
