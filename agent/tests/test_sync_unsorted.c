// SPDX-License-Identifier: GPL-2.0-only
/*
 * A full sync against a data plane whose dump is not in key order (the
 * kpx module dumps in insertion order: a Service added after others with
 * greater keys comes last) must see that everything is already right and
 * send nothing.  Regression test: kpx_reconcile() looks keys up in the
 * sorted dump, so an unsorted one made every full sync delete and re-add
 * frontends (found by selftests/kpx_agent_faults.sh).  The fake data plane
 * (fakedp.h) holds the desired state and dumps it in reverse key order.
 * TAP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp/dataplane.h"
#include "fakedp.h"
#include "sync/sync.h"
#include "testlib_model.h"

#define SVC "{'metadata':{'name':'%s','namespace':'t'},'spec':{'clusterIP':'%s'," \
	"'clusterIPs':['%s'],'ports':[{'name':'p','port':80,'targetPort':8080}]}}"
#define EPS "{'metadata':{'name':'%s-1','namespace':'t','labels':" \
	"{'kubernetes.io/service-name':'%s'}},'addressType':'IPv4'," \
	"'endpoints':[{'addresses':['%s'],'conditions':{'ready':true}}]," \
	"'ports':[{'name':'p','port':8080}]}"

int main(void)
{
	static const char *const svcs[][3] = {
		{ "a", "10.96.0.1", "10.244.1.1" },
		{ "b", "10.96.0.2", "10.244.1.2" },
		{ "c", "10.96.0.3", "10.244.1.3" },
		{ "d", "10.96.1.1", "10.244.1.4" },
	};
	struct kpx_fakedp f;
	struct kpx_model *m = kpx_model_new();
	struct kpx_service *want;
	struct kpx_sync *s;
	size_t i, n;
	int r;

	printf("TAP version 13\n");
	kpx_fakedp_init(&f, "fake-unsorted", 0);
	f.dump_order = KPX_FAKEDP_DUMP_REVERSED;
	set_node(m, "node-a");
	for (i = 0; i < 4; i++) {
		apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(SVC, svcs[i][0], svcs[i][1], svcs[i][1]));
		apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		      J(EPS, svcs[i][0], svcs[i][0], svcs[i][2]));
	}
	/* the module already holds exactly the desired state */
	r = kpx_model_desired(m, &want, &n);
	ok(r == 0 && n == 4, "4 frontends desired (r %d, n %zu)", r, n);
	r = kpx_fakedp_load(&f, want, n);
	kpx_services_free(want, n);
	ok(r == 0 && f.ntable == 4, "the fake holds them (r %d, n %zu)", r, f.ntable);
	s = kpx_sync_new(m, &f.dp, 1000, 30000);
	r = kpx_sync_run(s);
	ok(r == 0 && f.dumps == 1, "first sync is full: one dump (r %d)", r);
	ok(f.sets == 0 && f.dels == 0,
	   "a dump in reverse key order already right: no set, no del (sets %ld dels %ld)",
	   f.sets, f.dels);
	r = f.dp.ops->dump(&f.dp, &want, &n);
	ok(r == 0 && n == 4 && kpx_service_key_cmp(&want[0], &want[3]) > 0,
	   "the fake's dump was in reverse key order (r %d, n %zu)", r, n);
	if (!r)
		kpx_services_free(want, n);
	kpx_sync_free(s);
	kpx_fakedp_free(&f);
	kpx_model_free(m);
	return tap_done();
}
