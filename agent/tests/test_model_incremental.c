// SPDX-License-Identifier: GPL-2.0-only
/*
 * Incremental syncs equal full recomputes.  A long seeded random
 * sequence of Service / EndpointSlice / Node events and configuration
 * changes (adds, updates, deletes, slices moving between Services by their
 * kubernetes.io/service-name label, frontend keys claimed by two Services
 * (shared ClusterIPs, NodePorts, an externalIP equal to a ClusterIP),
 * dual stack, eTP/iTP Local, health-check ports, topology hints,
 * terminating endpoints, relists, failing changes and commits) is synced
 * through the recording fake data plane (fakedp.h: holding what was
 * committed, failing sets and commits at random); after each sync without
 * errors the fake's state must equal a from-scratch kpx_model_desired() of
 * the same model, and the partial syncs must be most of them.  The same
 * events drive the frontend cache alone, whose per-Service status (the
 * no-local-endpoints counts and the health-check servers) must equal the
 * model's full walks after every step.  Then: a one-endpoint
 * change costs exactly one SET, with 10 and with 2,000 Services.  TAP;
 * KPX_TEST_SEED=N picks another sequence.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp/dataplane.h"
#include "fakedp.h"
#include "sync/fecache.h"
#include "base/log.h"
#include "sync/sync.h"
#include "testlib_model.h"

/* ---- Random failures of the fake data plane (fakedp.h) ------------------ */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;	/* xorshift64 */
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned int pick(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rnd(s) % n);
}

/* The fake's fail_arg: injected failures, percent of the calls. */
struct chaos {
	uint64_t *rng;
	int set_pct, commit_pct;
};

/* Draws one number per set_service() and commit(), failing or not. */
static bool random_failure(struct kpx_fakedp *f, enum kpx_fakedp_call call)
{
	struct chaos *c = f->fail_arg;

	if (call == KPX_FAKEDP_SET)
		return (int)pick(c->rng, 100) < c->set_pct;
	if (call == KPX_FAKEDP_COMMIT)
		return (int)pick(c->rng, 100) < c->commit_pct;
	return false;
}

/*
 * A fake holding what was committed, all or nothing as the batching modes;
 * KPX_DP_CAP_CT_CLEANUP: sync.c must not touch the host's conntrack table.
 */
static void fake_init(struct kpx_fakedp *f, struct chaos *c)
{
	kpx_fakedp_init(f, "fake", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	f->hold = true;
	f->fail = random_failure;
	f->fail_arg = c;
}

/* The fake's committed state equals kpx_model_desired(); else prints the
 * first difference. */
static bool same_as_desired(struct kpx_fakedp *f, struct kpx_model *m)
{
	struct kpx_service *v;
	size_t n, i;
	char a[KPX_SERVICE_STRLEN], b[KPX_SERVICE_STRLEN];
	bool same;

	if (kpx_model_desired(m, &v, &n))
		return false;
	same = n == f->ntable;
	if (!same)
		printf("# %zu frontends desired, %zu programmed\n", n, f->ntable);
	for (i = 0; same && i < n; i++) {
		if (kpx_service_key_cmp(&v[i], &f->table[i]) ||
		    !kpx_service_same_config(&v[i], &f->table[i])) {
			printf("# first difference: desired %s, programmed %s\n",
			       kpx_service_str(&v[i], a, sizeof(a)),
			       kpx_service_str(&f->table[i], b, sizeof(b)));
			same = false;
		}
	}
	kpx_services_free(v, n);
	return same;
}

static int count_one(void *arg, const char *name)
{
	void **a = arg;
	struct kpx_service *v;
	size_t n;

	if (kpx_model_service_frontends(a[0], name, &v, &n))
		return -ENOMEM;
	*(size_t *)a[1] += n;
	kpx_services_free(v, n);
	return 0;
}

/* The frontends of all Services before the tie-break: more than the
 * desired ones when some key is claimed twice. */
static size_t claimed(struct kpx_model *m)
{
	size_t n = 0;
	void *a[2] = { m, &n };

	kpx_model_for_each_service(m, count_one, a);
	return n;
}

/* ---- Random objects ------------------------------------------------------ */

#define NNAMES 6	/* Services s0..s5 in namespaces a and b */
static const char *const nss[2] = { "a", "b" };
static const char *const cips4[4] = { "10.96.0.1", "10.96.0.2", "10.96.0.3", "10.96.0.4" };
static const char *const cips6[2] = { "fd00::1", "fd00::2" };
static const char *const zones[3] = { "zone-a", "zone-b", "zone-c" };
static const char *const nodes[3] = { "node-a", "node-b", "node-c" };

static struct json_object *rand_service(uint64_t *r, const char *ns, int idx)
{
	static const char *const types[3] = { "ClusterIP", "NodePort", "LoadBalancer" };
	const char *type = types[pick(r, 3)];
	bool dual = !pick(r, 4), headless = !pick(r, 20), lb = !strcmp(type, "LoadBalancer");
	bool etp = pick(r, 2) && strcmp(type, "ClusterIP"), itp = !pick(r, 4);
	char ips[96], ports[512], extra[512];
	const char *c4 = cips4[pick(r, 4)], *c6 = cips6[pick(r, 2)];
	int np = 30000 + (int)pick(r, 3), n = 0;

	if (headless)
		snprintf(ips, sizeof(ips), "'clusterIP':'None','clusterIPs':['None']");
	else if (dual)
		snprintf(ips, sizeof(ips), "'clusterIP':'%s','clusterIPs':['%s','%s']", c4, c4, c6);
	else
		snprintf(ips, sizeof(ips), "'clusterIP':'%s','clusterIPs':['%s']", c4, c4);
	n += snprintf(ports + n, sizeof(ports) - n,
		      "{'name':'http','protocol':'TCP','port':%d,'targetPort':8080%s%.0d}",
		      80 + (int)pick(r, 2), strcmp(type, "ClusterIP") ? ",'nodePort':" : "",
		      strcmp(type, "ClusterIP") ? np : 0);
	if (pick(r, 2))
		n += snprintf(ports + n, sizeof(ports) - n,
			      ",{'name':'dns','protocol':'UDP','port':53,'targetPort':5353%s%.0d}",
			      strcmp(type, "ClusterIP") ? ",'nodePort':" : "",
			      strcmp(type, "ClusterIP") ? np + 10 : 0);
	n = 0;
	extra[0] = '\0';
	if (!pick(r, 3))	/* may equal another Service's ClusterIP */
		n += snprintf(extra + n, sizeof(extra) - n, ",'externalIPs':['%s']",
			      pick(r, 2) ? "192.0.2.50" : cips4[pick(r, 4)]);
	if (etp)
		n += snprintf(extra + n, sizeof(extra) - n, ",'externalTrafficPolicy':'Local'%s",
			      lb ? ",'healthCheckNodePort':32000" : "");
	if (itp)
		n += snprintf(extra + n, sizeof(extra) - n, ",'internalTrafficPolicy':'Local'");
	if (lb && pick(r, 2))
		n += snprintf(extra + n, sizeof(extra) - n,
			      ",'loadBalancerSourceRanges':['%s']",
			      pick(r, 2) ? "198.51.100.0/24" : "192.0.2.0/24");
	if (!pick(r, 4))
		n += snprintf(extra + n, sizeof(extra) - n,
			      ",'sessionAffinity':'ClientIP','sessionAffinityConfig':{'clientIP':{'timeoutSeconds':60}}");
	return J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'s%d','namespace':'%s',"
		 "'uid':'u-%s-%d','resourceVersion':'%u'%s},'spec':{'type':'%s',%s,"
		 "'ports':[%s]%s},'status':{'loadBalancer':{%s}}}",
		 idx, ns, ns, idx, pick(r, 100000),
		 !pick(r, 6) ? ",'annotations':{'kpx.io/scheduler':'rr'}" : "",
		 type, ips, ports, extra,
		 lb ? (pick(r, 2) ? "'ingress':[{'ip':'203.0.113.7'}]" :
			"'ingress':[{'ip':'203.0.113.8'},{'ip':'10.96.0.2'}]") : "");
}

/* One endpoint: random address, node, conditions and hints. */
static int rand_endpoint(uint64_t *r, char *buf, size_t len, bool v6)
{
	static const char *const conds[5] = {
		"'ready':true", "'ready':false,'serving':true,'terminating':true",
		"'ready':false,'serving':false,'terminating':true", "",
		"'ready':true,'serving':true,'terminating':false" };
	char hints[160] = "";
	unsigned int h = pick(r, 6);

	if (h == 1 || h == 2)
		snprintf(hints, sizeof(hints), ",'hints':{'forZones':[{'name':'%s'}]}",
			 zones[pick(r, 3)]);
	else if (h == 3)
		snprintf(hints, sizeof(hints), ",'hints':{'forZones':[{'name':'%s'}],'forNodes':[{'name':'%s'}]}",
			 zones[pick(r, 3)], nodes[pick(r, 3)]);
	if (v6)
		return snprintf(buf, len, "{'addresses':['fd00:244::%x'],'nodeName':'%s','conditions':{%s}%s}",
				1 + pick(r, 12), nodes[pick(r, 3)], conds[pick(r, 5)], hints);
	return snprintf(buf, len, "{'addresses':['10.244.%u.%u'],'nodeName':'%s','conditions':{%s}%s}",
			pick(r, 3), 1 + pick(r, 12), nodes[pick(r, 3)], conds[pick(r, 5)], hints);
}

/* Slice "sN-K" of namespace @ns labelled for Service s<owner>. */
static struct json_object *rand_slice(uint64_t *r, const char *ns, int idx,
				      int k, int owner)
{
	char eps[2048];
	bool v6 = !pick(r, 4);
	int i, n = 0, neps = (int)pick(r, 5);

	eps[0] = '\0';
	for (i = 0; i < neps; i++) {
		if (i)
			n += snprintf(eps + n, sizeof(eps) - n, ",");
		n += rand_endpoint(r, eps + n, sizeof(eps) - n, v6);
	}
	return J("{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice','metadata':{"
		 "'name':'s%d-%d','namespace':'%s','uid':'e-%s-%d-%d','resourceVersion':'%u',"
		 "'labels':{'kubernetes.io/service-name':'s%d'}},'addressType':'%s',"
		 "'endpoints':[%s],'ports':[{'name':'http','protocol':'TCP','port':%d}%s]}",
		 idx, k, ns, ns, idx, k, pick(r, 100000), owner, v6 ? "IPv6" : "IPv4",
		 eps, 8080 + (int)pick(r, 2),
		 pick(r, 2) ? ",{'name':'dns','protocol':'UDP','port':5353}" : "");
}

static struct json_object *rand_node(uint64_t *r, const char *name)
{
	return J("{'apiVersion':'v1','kind':'Node','metadata':{'name':'%s','uid':'n-%s',"
		 "'resourceVersion':'%u','labels':{'topology.kubernetes.io/zone':'%s'}},"
		 "'spec':{'podCIDRs':['10.244.%u.0/24']},'status':{'addresses':["
		 "{'type':'InternalIP','address':'192.0.2.%u'}%s]}}",
		 name, name, pick(r, 100000), zones[pick(r, 3)], pick(r, 3),
		 11 + pick(r, 2), pick(r, 2) ? ",{'type':'InternalIP','address':'fd00:1::11'}" : "");
}

static void rand_config(uint64_t *r, struct kpx_model *m)
{
	struct kpx_config c;

	case_config(&c, "node-a");
	c.masquerade_all = !pick(r, 4);
	if (!pick(r, 3))
		c.detect_local = KPX_DETECT_LOCAL_NODE_CIDR;
	if (!pick(r, 3)) {
		cidr(&c.nodeport_cidrs[0], pick(r, 2) ? "127.0.0.0/8" : "192.0.2.0/24");
		c.n_nodeport_cidrs = 1;
		c.nodeport_primary = false;
	}
	kpx_model_set_config(m, &c);
}

/* A relist of the Services: each kept (re-added, maybe changed) or dropped. */
static void relist_services(uint64_t *r, struct kpx_model *m)
{
	int ns, i;

	kpx_model_relist_begin(m, KPX_KIND_SERVICE);
	for (ns = 0; ns < 2; ns++)
		for (i = 0; i < NNAMES; i++)
			if (pick(r, 3))
				apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
				      rand_service(r, nss[ns], i));
	kpx_model_relist_end(m, KPX_KIND_SERVICE);
}

/* One random event. */
static void rand_event(uint64_t *r, struct kpx_model *m)
{
	const char *ns = nss[pick(r, 2)];
	int idx = (int)pick(r, NNAMES), k = (int)pick(r, 2);
	unsigned int what = pick(r, 100);

	if (what < 25) {
		apply(m, KPX_KIND_SERVICE, pick(r, 2) ? KPX_EV_ADDED : KPX_EV_MODIFIED,
		      rand_service(r, ns, idx));
	} else if (what < 32) {
		apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED, rand_service(r, ns, idx));
	} else if (what < 72) {	/* mostly its own Service, sometimes another */
		apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
		      rand_slice(r, ns, idx, k, pick(r, 5) ? idx : (int)pick(r, NNAMES)));
	} else if (what < 82) {
		apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_DELETED,
		      rand_slice(r, ns, idx, k, idx));
	} else if (what < 90) {
		apply(m, KPX_KIND_NODE, KPX_EV_MODIFIED,
		      rand_node(r, nodes[pick(r, 2)]));	/* own or another */
	} else if (what < 93) {
		rand_config(r, m);
	} else if (what < 95) {
		relist_services(r, m);
	} else {
		apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		      rand_slice(r, ns, idx, k, idx));
	}
}

static void test_random(uint64_t seed, int steps)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_fakedp f;
	uint64_t r = seed;
	struct chaos c = { .rng = &r };
	struct kpx_sync *s;
	int i, e, syncs = 0, errsyncs = 0, checked = 0, bad = 0, first_bad = -1;
	int shared = 0;
	long dumps0;
	size_t fronts = 0;

	fake_init(&f, &c);
	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, rand_node(&r, "node-a"));
	s = kpx_sync_new(m, &f.dp, 0, 1000LL * 1000 * 1000);
	for (i = 0; i < steps; i++) {
		int nev = 1 + (int)pick(&r, 4), ret;

		for (e = 0; e < nev; e++)
			rand_event(&r, m);
		/* failures in a tenth of the syncs */
		c.set_pct = !pick(&r, 20) ? 30 : 0;
		c.commit_pct = !pick(&r, 20) ? 100 : 0;
		ret = kpx_sync_run(s);
		syncs++;
		if (ret) {
			errsyncs++;
			continue;
		}
		checked++;
		fronts += f.ntable;
		shared += claimed(m) > f.ntable;
		if (!same_as_desired(&f, m)) {
			bad++;
			if (first_bad < 0)
				first_bad = i;
		}
	}
	ok(!bad, "seed %llu: %d syncs, %d with injected errors, %d checked: programmed == kpx_model_desired() after each (%d differ, first at step %d)",
	   (unsigned long long)seed, syncs, errsyncs, checked, bad, first_bad);
	ok(checked > steps / 2, "most syncs were checked (%d of %d)", checked, syncs);
	ok(shared > checked / 4 && fronts > 10 * (size_t)checked,
	   "the states were not trivial: %zu frontends on average, a key claimed twice in %d",
	   fronts / (checked ? checked : 1), shared);
	ok(f.dumps < syncs / 3, "most syncs were partial: %ld dumps in %d syncs",
	   f.dumps, syncs);
	ok(errsyncs > 0 && f.failed >= errsyncs,
	   "failures were injected: %ld failed sets and commits in %d syncs", f.failed, errsyncs);
	dumps0 = f.dumps;
	c.set_pct = c.commit_pct = 0;
	f.sets = f.dels = 0;
	kpx_sync_run(s);
	ok(f.sets == 0 && f.dels == 0 && f.dumps == dumps0,
	   "a partial sync with nothing changed sends nothing (sets %ld dels %ld)",
	   f.sets, f.dels);
	kpx_sync_free(s);
	kpx_model_free(m);
	kpx_fakedp_free(&f);
}

/* ---- The cost of one endpoint change ------------------------------------- */

static struct json_object *bench_service(int i)
{
	return J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'svc%d','namespace':'n',"
		 "'uid':'u%d','resourceVersion':'1'},'spec':{'type':'ClusterIP',"
		 "'clusterIP':'10.96.%d.%d','clusterIPs':['10.96.%d.%d'],"
		 "'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080}]}}",
		 i, i, i / 250, 1 + i % 250, i / 250, 1 + i % 250);
}

static struct json_object *bench_slice(int i, int last)
{
	return J("{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice','metadata':{"
		 "'name':'svc%d-x','namespace':'n','uid':'e%d','resourceVersion':'1',"
		 "'labels':{'kubernetes.io/service-name':'svc%d'}},'addressType':'IPv4',"
		 "'endpoints':[{'addresses':['10.244.0.1'],'conditions':{'ready':true}},"
		 "{'addresses':['10.244.1.%d'],'conditions':{'ready':true}}],"
		 "'ports':[{'name':'http','protocol':'TCP','port':8080}]}",
		 i, i, i, last);
}

static void test_one_change(int nsvc)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_fakedp f;
	uint64_t r = 1;
	struct chaos c = { .rng = &r };
	struct kpx_sync *s;
	int i, ret;

	fake_init(&f, &c);
	set_node(m, "node-a");
	for (i = 0; i < nsvc; i++) {
		apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, bench_service(i));
		apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, bench_slice(i, 2));
	}
	s = kpx_sync_new(m, &f.dp, 0, 1000LL * 1000 * 1000);
	ret = kpx_sync_run(s);
	ok(!ret && f.sets == nsvc && f.ntable == (size_t)nsvc,
	   "%d Services: first sync sets %d frontends (%ld)", nsvc, nsvc, f.sets);
	f.sets = f.dels = 0;
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED, bench_slice(nsvc / 2, 3));
	ret = kpx_sync_run(s);
	ok(!ret && f.sets == 1 && f.dels == 0 && f.dumps == 1,
	   "%d Services: one endpoint changed -> 1 SET, 0 DEL, no dump (sets %ld dels %ld dumps %ld)",
	   nsvc, f.sets, f.dels, f.dumps);
	ok(same_as_desired(&f, m), "%d Services: programmed == desired after it", nsvc);
	kpx_sync_free(s);
	kpx_model_free(m);
	kpx_fakedp_free(&f);
}

/* A key of two Services: the first by namespace/name wins; when it goes,
 * the other takes the key in a partial sync. */
static void test_collision(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_fakedp f;
	uint64_t r = 1;
	struct chaos c = { .rng = &r };
	struct kpx_sync *s;

	fake_init(&f, &c);
	set_node(m, "node-a");
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, bench_service(7));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, bench_slice(7, 7));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED,
	      J("{'apiVersion':'v1','kind':'Service','metadata':{'name':'svc8','namespace':'n',"
		"'uid':'u8','resourceVersion':'1'},'spec':{'type':'ClusterIP',"
		"'clusterIP':'10.96.0.8','clusterIPs':['10.96.0.8'],"
		"'ports':[{'name':'http','protocol':'TCP','port':80,'targetPort':8080}]}}"));
	/* n/svc7's ClusterIP is 10.96.0.8 too */
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, bench_slice(8, 8));
	s = kpx_sync_new(m, &f.dp, 0, 1000LL * 1000 * 1000);
	kpx_sync_run(s);
	ok(f.ntable == 1 && f.table[0].nbackends == 2 &&
	   f.table[0].backends[1].addr.v4.s_addr == inet_addr("10.244.1.7"),
	   "shared 10.96.0.8:80: n/svc7 wins (backend 10.244.1.7)");
	apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED, bench_service(7));
	f.sets = f.dels = 0;
	kpx_sync_run(s);
	ok(f.ntable == 1 && f.sets == 1 && f.dels == 0 && f.dumps == 1 &&
	   f.table[0].backends[1].addr.v4.s_addr == inet_addr("10.244.1.8"),
	   "winner deleted: n/svc8 takes the key in a partial sync (1 SET, backend 10.244.1.8)");
	f.sets = f.dels = 0;
	apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED, bench_service(8));
	kpx_sync_run(s);
	ok(f.ntable == 0 && f.sets == 0 && f.dels == 1,
	   "last claimant deleted: 1 DEL (sets %ld dels %ld)", f.sets, f.dels);
	kpx_sync_free(s);
	kpx_model_free(m);
	kpx_fakedp_free(&f);
}

/* Whether two health-check lists are equal, field by field. */
static bool same_hcs(const struct kpx_hc_service *a, size_t na,
		     const struct kpx_hc_service *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (kpx_hc_service_cmp(&a[i], &b[i]) || a[i].port != b[i].port ||
		    a[i].local_endpoints != b[i].local_endpoints ||
		    a[i].healthy != b[i].healthy)
			return false;
	return true;
}

/*
 * The cache's status sums (kpx_fecache_no_local(), kpx_fecache_healthchecks())
 * against the model's walks after each of @steps random steps, partial
 * updates between occasional full ones.
 */
static void test_status(uint64_t seed, int steps)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_fecache *fc = kpx_fecache_new();
	struct kpx_hc_service *hv, *wv;
	struct kpx_no_local nl, want;
	struct kpx_service *keys;
	size_t hn, wn, nkeys;
	uint64_t r = seed;
	int i, e, bad = 0, first_bad = -1, with_nl = 0, with_hc = 0, partial = 0;
	unsigned int max_nl = 0;

	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, rand_node(&r, "node-a"));
	for (i = 0; i < steps; i++) {
		int nev = 1 + (int)pick(&r, 4);

		for (e = 0; e < nev; e++)
			rand_event(&r, m);
		partial += !kpx_fecache_sync(fc, m, !pick(&r, 50), &keys, &nkeys);
		free(keys);
		kpx_fecache_no_local(fc, &nl);
		kpx_model_no_local_endpoints(m, &want);
		if (kpx_fecache_healthchecks(fc, &hv, &hn) ||
		    kpx_model_healthchecks(m, &wv, &wn)) {
			fprintf(stderr, "test_status: out of memory\n");
			exit(1);
		}
		if (nl.internal != want.internal || nl.external != want.external ||
		    !same_hcs(hv, hn, wv, wn)) {
			bad++;
			if (first_bad < 0)
				first_bad = i;
		}
		with_nl += want.internal + want.external > 0;
		with_hc += wn > 0;
		if (want.internal + want.external > max_nl)
			max_nl = want.internal + want.external;
		free(hv);
		free(wv);
	}
	ok(!bad, "seed %llu: %d steps: the cache's no-local counts and health checks == the model's walks after each (%d differ, first at step %d)",
	   (unsigned long long)seed, steps, bad, first_bad);
	ok(partial > steps / 2 && with_nl > steps / 4 && with_hc > steps / 4 && max_nl > 2,
	   "the states were not trivial: %d partial updates, no-local Service ports in %d steps (up to %u), health checks in %d",
	   partial, with_nl, max_nl, with_hc);
	kpx_fecache_free(fc);
	kpx_model_free(m);
}

int main(void)
{
	const char *e = getenv("KPX_TEST_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : 0x9e3779b97f4a7c15ull;

	printf("TAP version 13\n");
	kpx_log_set_fd(-1);
	test_random(seed, 3000);
	test_random(seed * 3 + 1, 1500);
	test_status(seed, 3000);
	test_collision();
	test_one_change(10);
	test_one_change(2000);
	return tap_done();
}
