// SPDX-License-Identifier: GPL-2.0-only
/*
 * sync.c driving a data plane (dataplane.h) through the recording fake
 * (fakedp.h): the first sync dumps and sets every frontend then commits; a
 * second sync with nothing changed sends nothing; a changed Service sends
 * one set; a failed commit counts every change of that sync as failed and
 * makes the next sync full (dump again) and repair it; a deleted Service
 * sends one del.  Also
 * kpx_dp_find() and kpx_dp_open() refusing an unknown mode.  TAP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane.h"
#include "duration.h"
#include "fakedp.h"
#include "sync.h"
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
	return done_testing();
}
