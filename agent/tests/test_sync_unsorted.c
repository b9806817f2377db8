// SPDX-License-Identifier: GPL-2.0-only
/*
 * A full sync against a data plane whose dump is not in key order (the
 * kpx module dumps in insertion order: a Service added after others with
 * greater keys comes last) must see that everything is already right and
 * send nothing.  Regression test: kpx_reconcile() merges two sorted arrays,
 * so an unsorted dump made every full sync delete and re-add frontends
 * (found by selftests/kpx_agent_faults.sh).  TAP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane.h"
#include "sync.h"
#include "testlib_model.h"

struct fake {
	struct kpx_dp dp;
	struct kpx_service *table;	/* what dump() returns, in this order */
	size_t n;
	int dumps, sets, dels;
};

static struct fake *F(struct kpx_dp *dp)
{
	return (struct fake *)dp;
}

/* The table in reverse key order, copied (sync.c frees what it gets). */
static int f_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n)
{
	struct fake *f = F(dp);
	struct kpx_service *v = calloc(f->n ? f->n : 1, sizeof(*v));
	size_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < f->n; i++) {
		v[i] = f->table[f->n - 1 - i];
		v[i].backends = NULL;
		v[i].source_ranges = NULL;
		if (f->table[f->n - 1 - i].nbackends) {
			size_t sz = v[i].nbackends * sizeof(*v[i].backends);

			v[i].backends = malloc(sz);
			if (!v[i].backends)
				abort();
			memcpy(v[i].backends, f->table[f->n - 1 - i].backends, sz);
		}
	}
	f->dumps++;
	*out = v;
	*n = f->n;
	return 0;
}

static int f_set_config(struct kpx_dp *dp, const struct kpx_ns_config *c)
{
	(void)dp;
	(void)c;
	return 0;
}

static int f_set(struct kpx_dp *dp, const struct kpx_service *s)
{
	(void)s;
	F(dp)->sets++;
	return 0;
}

static int f_del(struct kpx_dp *dp, const struct kpx_service *key)
{
	(void)key;
	F(dp)->dels++;
	return 0;
}

static int f_commit(struct kpx_dp *dp)
{
	(void)dp;
	return 0;
}

static const struct kpx_dp_ops fake_ops = {
	.name = "fake-unsorted",
	.dump = f_dump,
	.set_config = f_set_config,
	.set_service = f_set,
	.del_service = f_del,
	.commit = f_commit,
};

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
	struct fake f = { .dp = { .ops = &fake_ops } };
	struct kpx_model *m = kpx_model_new();
	struct kpx_sync *s;
	size_t i;
	int r;

	printf("TAP version 13\n");
	set_node(m, "node-a");
	for (i = 0; i < 4; i++) {
		apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(SVC, svcs[i][0], svcs[i][1], svcs[i][1]));
		apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED,
		      J(EPS, svcs[i][0], svcs[i][0], svcs[i][2]));
	}
	/* the module already holds exactly the desired state */
	r = kpx_model_desired(m, &f.table, &f.n);
	ok(r == 0 && f.n == 4, "4 frontends desired (r %d, n %zu)", r, f.n);
	s = kpx_sync_new(m, &f.dp, 1000, 30000);
	r = kpx_sync_run(s);
	ok(r == 0 && f.dumps == 1, "first sync is full: one dump (r %d)", r);
	ok(f.sets == 0 && f.dels == 0,
	   "a dump in reverse key order already right: no set, no del (sets %d dels %d)",
	   f.sets, f.dels);
	kpx_sync_free(s);
	kpx_services_free(f.table, f.n);
	kpx_model_free(m);
	return done_testing();
}
