// SPDX-License-Identifier: GPL-2.0-only
/*
 * A full sync and a partial sync of the same change send the same changes:
 * one model's events are applied to two models, each synced to its own
 * recording fake (fakedp.h, with a journal of the changes sent), one with
 * an hour's sync-period (every sync after the first is partial) and one
 * with none and no generation (every sync dumps and diffs every key); after
 * each change the two journals must be equal, and equal to the changes
 * that change means (written out below).  The changes: an endpoint added,
 * a port renumbered (a SET and a DEL), a second Service claiming the same
 * ClusterIP and port (its frontend loses to "default/web": nothing sent;
 * then wins once web goes), a Service deleted.  TAP.
 */
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "dp/dataplane.h"
#include "fakedp.h"
#include "sync/sync.h"
#include "testlib_model.h"

/* clang-format off */
#define SVC "{'apiVersion':'v1','kind':'Service','metadata':{'name':'%s','namespace':'default'," \
	"'uid':'u-%s','resourceVersion':'%d'},'spec':{'type':'ClusterIP','clusterIP':'10.96.0.10'," \
	"'clusterIPs':['10.96.0.10'],'ipFamilies':['IPv4'],'ports':[{'name':'http','protocol':'TCP','port':%d," \
	"'targetPort':8080}]}}"
#define EPS "{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice','metadata':{'name':'%s-1'," \
	"'namespace':'default','uid':'e-%s','resourceVersion':'%d','labels':{'kubernetes.io/service-name':'%s'}}," \
	"'addressType':'IPv4','endpoints':[%s]," \
	"'ports':[{'name':'http','protocol':'TCP','port':8080}]}"
#define EP(ip) "{'addresses':['" ip "'],'conditions':{'ready':true}}"
#define NODE "{'apiVersion':'v1','kind':'Node','metadata':{'name':'node-a','uid':'n1','resourceVersion':'1'}," \
	"'status':{'addresses':[{'type':'InternalIP','address':'192.0.2.11'}]}}"
/* clang-format on */

/* One model, its syncer and its fake, journaled. */
struct side {
	struct kpx_model *m;
	struct kpx_fakedp f;
	struct kpx_sync *s;
	struct kpx_strbuf journal;
};

static void side_init(struct side *d, int64_t period)
{
	memset(d, 0, sizeof(*d));
	d->m = kpx_model_new();
	kpx_fakedp_init(&d->f, "fake", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	d->f.hold = true;
	d->f.journal = &d->journal;
	d->s = kpx_sync_new(d->m, &d->f.dp, 0, period);
	set_node(d->m, "node-a");
}

static void side_free(struct side *d)
{
	kpx_sync_free(d->s);
	kpx_fakedp_free(&d->f);
	kpx_model_free(d->m);
	kpx_strbuf_free(&d->journal);
}

/* Applies one event to both models (J() objects are consumed: made twice). */
#define BOTH(kind, ev, ...)                              \
	do {                                             \
		apply(part.m, kind, ev, J(__VA_ARGS__)); \
		apply(full.m, kind, ev, J(__VA_ARGS__)); \
	} while (0)

static struct side part, full;

/* Syncs both sides; their journals must be @want. */
static void sync_both(const char *want, const char *desc)
{
	long dumps = full.f.dumps, pdumps = part.f.dumps;
	int r;

	kpx_strbuf_reset(&part.journal);
	kpx_strbuf_reset(&full.journal);
	r = kpx_sync_run(part.s);
	r |= kpx_sync_run(full.s);
	ok(r == 0 && full.f.dumps == dumps + 1 && part.f.dumps == pdumps,
	   "%s: the full sync dumped, the partial one did not (dumps %ld, %ld)",
	   desc, full.f.dumps, part.f.dumps);
	ok_str(part.journal.s ? part.journal.s : "",
	       full.journal.s ? full.journal.s : "",
	       "  the partial sync sends what the full sync sends");
	ok_str(full.journal.s ? full.journal.s : "", want,
	       "  and that is the change");
}

int main(void)
{
	printf("TAP version 13\n");
	side_init(&part, 3600 * 1000);
	side_init(&full, 0);
	BOTH(KPX_KIND_NODE, KPX_EV_ADDED, NODE);
	BOTH(KPX_KIND_SERVICE, KPX_EV_ADDED, SVC, "web", "web", 1, 80);
	BOTH(KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, EPS, "web", "web", 1, "web",
	     EP("10.244.1.2"));
	ok(!kpx_sync_run(part.s) && !kpx_sync_run(full.s) &&
		   part.f.ntable == 1 && full.f.ntable == 1,
	   "first syncs: one frontend each");

	BOTH(KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED, EPS, "web", "web", 2,
	     "web", EP("10.244.1.2") "," EP("10.244.1.3"));
	sync_both(
		"set 10.96.0.10:80/tcp flags=0xa backends=[10.244.1.2:8080@1 10.244.1.3:8080@1]\n",
		"an endpoint added");

	BOTH(KPX_KIND_SERVICE, KPX_EV_MODIFIED, SVC, "web", "web", 2, 81);
	sync_both(
		"del 10.96.0.10:80/tcp\n"
		"set 10.96.0.10:81/tcp flags=0xa backends=[10.244.1.2:8080@1 10.244.1.3:8080@1]\n",
		"the port renumbered");

	BOTH(KPX_KIND_SERVICE, KPX_EV_ADDED, SVC, "zz", "zz", 1, 81);
	BOTH(KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, EPS, "zz", "zz", 1, "zz",
	     EP("10.244.9.9"));
	sync_both(
		"",
		"a second Service on the same ClusterIP and port (loses the key)");

	BOTH(KPX_KIND_SERVICE, KPX_EV_DELETED, SVC, "web", "web", 3, 81);
	sync_both(
		"set 10.96.0.10:81/tcp flags=0xa backends=[10.244.9.9:8080@1]\n",
		"the first claimant deleted (the second takes the key)");

	BOTH(KPX_KIND_SERVICE, KPX_EV_DELETED, SVC, "zz", "zz", 2, 81);
	sync_both("del 10.96.0.10:81/tcp\n", "the last Service deleted");

	ok(part.f.ntable == 0 && full.f.ntable == 0, "both data planes empty");
	side_free(&part);
	side_free(&full);
	return tap_done();
}
