// SPDX-License-Identifier: GPL-2.0-only
/*
 * sync.c driving a data plane (dataplane.h) through the recording fake
 * (fakedp.h): the first sync dumps and sets every frontend then commits; a
 * second sync with nothing changed sends nothing; a changed Service sends
 * one set; a failed commit counts every change of that sync as failed and
 * makes the next sync full (dump again) and repair it; a deleted Service
 * sends one del.  With a data plane generation (the kpx module's): the
 * periodic re-check dumps nothing while only the agent changed the data
 * plane, and another writer's change is found at the next sync and
 * repaired; without one every periodic re-check dumps.  Also
 * kpx_dp_find() and kpx_dp_open() refusing an unknown mode.  TAP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/dataplane.h"
#include "base/duration.h"
#include "fakedp.h"
#include "sync/sync.h"
#include "testlib_model.h"

#define SVC "{'apiVersion':'v1','kind':'Service','metadata':{'name':'web','namespace':'default'," \
	"'uid':'u1','resourceVersion':'%d'},'spec':{'type':'ClusterIP','clusterIP':'10.96.0.10'," \
	"'clusterIPs':['10.96.0.10'],'ipFamilies':['IPv4'],'ports':[{'name':'http','protocol':'TCP','port':%d," \
	"'targetPort':8080}]}}"
#define EPS "{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice','metadata':{'name':'web-1'," \
	"'namespace':'default','uid':'e1','resourceVersion':'1','labels':{'kubernetes.io/service-name':'web'}}," \
	"'addressType':'IPv4','endpoints':[{'addresses':['10.244.1.2'],'conditions':{'ready':true}}]," \
	"'ports':[{'name':'http','protocol':'TCP','port':8080}]}"
#define NODE "{'apiVersion':'v1','kind':'Node','metadata':{'name':'node-a','uid':'n1','resourceVersion':'1'}," \
	"'status':{'addresses':[{'type':'InternalIP','address':'192.0.2.11'}]}}"

/* Every sync due as periodic (sync-period 0) over @g; returns the syncer. */
static struct kpx_sync *periodic_syncer(struct kpx_model *m, struct kpx_fakedp *g,
					bool generation, int64_t period)
{
	kpx_fakedp_init(g, generation ? "fake-gen" : "fake-nogen",
			KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	g->hold = true;
	g->has_generation = generation;
	return kpx_sync_new(m, &g->dp, 0, period);
}

static void test_generation(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_fakedp g;
	struct kpx_sync *s;
	int r;

	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(NODE));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(SVC, 1, 80));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(EPS));

	s = periodic_syncer(m, &g, true, 0);
	r = kpx_sync_run(s);
	ok(r == 0 && g.dumps == 1 && g.sets == 1 && g.generation == 2,
	   "generation: first sync dumps and sets (dumps %ld sets %ld generation %u)",
	   g.dumps, g.sets, g.generation);
	r = kpx_sync_run(s);
	r |= kpx_sync_run(s);
	ok(r == 0 && g.dumps == 1 && g.sets == 1 && g.generations == 6,
	   "generation unchanged: two periodic re-checks read it and dump nothing (dumps %ld, generation reads %ld)",
	   g.dumps, g.generations);
	apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, J(SVC, 2, 81));
	r = kpx_sync_run(s);
	r |= kpx_sync_run(s);
	ok(r == 0 && g.dumps == 1 && g.sets == 2 && g.dels == 1 && g.generation == 4,
	   "the agent's own set and del move it by 2; the next re-check still dumps nothing (dumps %ld generation %u)",
	   g.dumps, g.generation);
	kpx_sync_free(s);

	/* another writer, with a sync-period of an hour: found at the next sync */
	s = periodic_syncer(m, &g, true, 3600 * 1000);
	kpx_fakedp_load(&g, NULL, 0);
	r = kpx_sync_run(s);
	ok(r == 0 && g.dumps == 1 && g.sets == 1 && g.ntable == 1, "second syncer: programmed");
	kpx_fakedp_load(&g, NULL, 0);	/* kpxctl flush */
	g.generation++;
	r = kpx_sync_run(s);
	ok(r == 0 && g.dumps == 2 && g.sets == 2 && g.ntable == 1,
	   "another writer's flush: the next sync dumps and repairs it (dumps %ld sets %ld frontends %zu)",
	   g.dumps, g.sets, g.ntable);
	r = kpx_sync_run(s);
	ok(r == 0 && g.dumps == 2 && g.sets == 2, "then quiet again (dumps %ld)", g.dumps);
	kpx_sync_free(s);
	kpx_fakedp_free(&g);

	s = periodic_syncer(m, &g, false, 0);
	r = kpx_sync_run(s);
	r |= kpx_sync_run(s);
	r |= kpx_sync_run(s);
	ok(r == 0 && g.dumps == 3 && g.sets == 1,
	   "without a generation every periodic re-check dumps (dumps %ld sets %ld)",
	   g.dumps, g.sets);
	kpx_sync_free(s);
	kpx_fakedp_free(&g);
	kpx_model_free(m);
}

/*
 * The module loaded again (kpx_sync_dp_replaced()): empty, its settings
 * gone.  The next sync is due at once (not after sync-period), dumps,
 * sends the namespace settings again and re-programs every frontend; a
 * failed one is not retried in a loop.
 */
static bool fail_dump(struct kpx_fakedp *f, enum kpx_fakedp_call call)
{
	(void)f;
	return call == KPX_FAKEDP_DUMP;
}

static void test_replaced(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_fakedp g;
	struct kpx_sync *s;
	long cfg0;
	int r;

	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(NODE));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(SVC, 1, 80));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(EPS));
	s = periodic_syncer(m, &g, true, 3600 * 1000);
	r = kpx_sync_run(s);
	ok(r == 0 && g.ntable == 1 && g.set_configs >= 1, "replaced: first sync programs");
	cfg0 = g.set_configs;
	ok(kpx_sync_due(s) > kpx_now_ms() + 60 * 1000,
	   "replaced: nothing due before sync-period while nothing changes");
	kpx_fakedp_load(&g, NULL, 0);	/* rmmod kpx; insmod kpx */
	g.generation = 1;
	kpx_sync_dp_replaced(s);
	ok(kpx_sync_due(s) <= kpx_now_ms(), "replaced: a sync is due at once");
	r = kpx_sync_run(s);
	ok(r == 0 && g.dumps == 2 && g.sets == 2 && g.ntable == 1,
	   "replaced: that sync dumps and programs the frontend again (dumps %ld sets %ld frontends %zu)",
	   g.dumps, g.sets, g.ntable);
	ok(g.set_configs == cfg0 + 1, "replaced: the namespace settings are sent again (%ld)",
	   g.set_configs - cfg0);
	ok(kpx_sync_due(s) > kpx_now_ms() + 60 * 1000, "replaced: then quiet again");
	kpx_sync_dp_replaced(s);
	g.fail = fail_dump;
	r = kpx_sync_run(s);
	g.fail = NULL;
	ok(r < 0 && kpx_sync_due(s) > INT64_MIN,
	   "replaced, and that sync cannot dump: retried after min-sync-period, not at once in a loop (r %d)",
	   r);
	kpx_sync_free(s);
	kpx_fakedp_free(&g);
	kpx_model_free(m);
}

int main(void)
{
	struct kpx_fakedp f;
	struct kpx_model *m = kpx_model_new();
	struct kpx_sync *s;
	struct kpx_dp *dp;
	char err[256], last[KPX_SERVICE_STRLEN];
	int r;

	printf("TAP version 13\n");
	kpx_fakedp_init(&f, "fake", 0);
	ok(kpx_dp_find("kpx") != NULL && !strcmp(kpx_dp_find("kpx")->name, "kpx"),
	   "kpx mode is registered");
	ok(kpx_dp_find("userspace") == NULL, "unknown mode not found");
	r = kpx_dp_open("userspace", &dp, err, sizeof(err));
	ok(r == -EINVAL && strstr(err, "not known"), "open of an unknown mode: -EINVAL, \"%s\"", err);

	set_node(m, "node-a");
	ok(!apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(NODE)), "node applied");
	ok(!apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(SVC, 1, 80)), "service applied");
	ok(!apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(EPS)), "slice applied");
	s = kpx_sync_new(m, &f.dp, 1000, 30000);

	r = kpx_sync_run(s);
	ok(r == 0 && f.dumps == 1 && f.sets == 1 && f.dels == 0 && f.commits == 1,
	   "first sync: dump, 1 set, commit (r %d dumps %ld sets %ld commits %ld)",
	   r, f.dumps, f.sets, f.commits);
	kpx_service_str(&f.last_set, last, sizeof(last));
	ok(!strcmp(last, "10.96.0.10:80/tcp") && f.last_set.nbackends == 1,
	   "set 10.96.0.10:80/tcp with 1 backend (%s, %zu)", last, f.last_set.nbackends);

	r = kpx_sync_run(s);
	ok(r == 0 && f.dumps == 1 && f.sets == 1 && f.commits == 2,
	   "unchanged: no dump, no set, one (empty) commit");

	ok(!apply(m, KPX_KIND_SERVICE, KPX_EV_MODIFIED, J(SVC, 2, 81)), "port changed to 81");
	f.fail_commits = 1;
	r = kpx_sync_run(s);
	ok(r == 2 && f.sets == 2 && f.dels == 1, "failed commit: the set and the del count as failed (r %d)", r);
	ok(f.failed == 1 && f.fail_commits == 0 && !strcmp(f.dp.errmsg, "fake: commit refused"),
	   "the one injected failure was the commit (\"%s\")", f.dp.errmsg);
	ok(kpx_sync_due(s) <= kpx_now_ms() + 1000, "a failed sync is retried after min-sync-period");
	r = kpx_sync_run(s);
	ok(r == 0 && f.dumps == 2, "retry is a full sync: dumped again (dumps %ld)", f.dumps);
	kpx_service_str(&f.last_set, last, sizeof(last));
	ok(f.sets == 3 && !strcmp(last, "10.96.0.10:81/tcp"),
	   "retry re-sends the set (sets %ld, %s)", f.sets, last);

	ok(!apply(m, KPX_KIND_SERVICE, KPX_EV_DELETED, J(SVC, 3, 81)), "service deleted");
	f.dels = 0;
	r = kpx_sync_run(s);
	ok(r == 0 && f.dels == 1, "deleted Service: one del (dels %ld)", f.dels);

	kpx_sync_free(s);
	kpx_fakedp_free(&f);
	kpx_model_free(m);
	test_generation();
	test_replaced();
	return tap_done();
}
