// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's status report (kpx_sync_status(), /statusz's JSON) through
 * the recording fake data plane (fakedp.h), which refuses one frontend:
 *
 *  - after a sync, the report has the sync's counts, no failed change, the
 *    refused frontend with its Service and the data plane's reason, and
 *    against the data plane's table that frontend as missing (with the
 *    refusal as reason), nothing else;
 *  - a frontend deleted behind the agent's back is missing, with its
 *    Service's name; one with other backends differs; one no Service
 *    wants is unexpected;
 *  - without the data plane (other modes) nothing is compared;
 *  - a failed commit is the last sync's failed change, and the next good
 *    sync clears it;
 *  - /statusz's JSON carries all of it (kpxctl status reads those names).
 * TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"
#include "dp/dataplane.h"
#include "fakedp.h"
#include "http/statusz.h"
#include "lib/fixtures.h"
#include "sync/sync.h"
#include "testlib_model.h"

static int refuse_big(struct kpx_fakedp *f, const struct kpx_service *s)
{
	char key[KPX_SERVICE_STRLEN];

	kpx_service_str(s, key, sizeof(key));
	return strcmp(key, "10.96.0.20:80/tcp") ? 0 : -E2BIG;
}

/* "KEY SERVICE REASON" of each entry of @l, ";"-joined, into @buf. */
static const char *list_str(const struct kpx_status_list *l, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%s %s %s", i ? ";" : "", l->v[i].key,
			       l->v[i].name ? l->v[i].name : "-",
			       l->v[i].reason ? l->v[i].reason : "-");
	return buf;
}

static int status_of(struct kpx_sync *s, const struct kpx_service *v, size_t n, bool have,
		     struct kpx_status *st)
{
	return kpx_sync_status(s, v, n, have, st);
}

int main(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_service *copy;
	struct kpx_status st;
	struct kpx_fakedp f;
	struct kpx_sync *s;
	char buf[2048], *js;
	size_t n;
	long i;
	int r;

	printf("TAP version 13\n");
	kpx_log_set_fd(open("/dev/null", O_WRONLY));
	kpx_fakedp_init(&f, "fake", KPX_DP_CAP_DUMP | KPX_DP_CAP_CT_CLEANUP);
	f.hold = true;
	f.refuse = refuse_big;
	s = kpx_sync_new(m, &f.dp, 0, 60000);

	r = kpx_sync_status(s, NULL, 0, true, &st);
	ok(!r && !st.synced && !st.compared, "before the first sync: not synced, nothing compared");
	kpx_status_free(&st);

	set_node(m, "node-a");
	apply(m, KPX_KIND_NODE, KPX_EV_ADDED, J(FX_NODE));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "web", 1, "10.96.0.10"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "web", "web", FX_EP("10.244.1.2")));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "big", 1, "10.96.0.20"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "big", "big", FX_EP("10.244.1.3")));
	apply(m, KPX_KIND_SERVICE, KPX_EV_ADDED, J(FX_SVC, "db", 1, "10.96.0.30"));
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_ADDED, J(FX_EPS, "db", "db", FX_EP("10.244.1.4")));
	r = kpx_sync_run(s);
	ok(r == 0 && f.ntable == 2, "sync: two frontends programmed, one refused (%d, %zu)", r,
	   f.ntable);

	r = status_of(s, f.table, f.ntable, true, &st);
	ok(!r && st.synced && st.last_full && st.last_sets == 2 && st.last_errors == 0 &&
	   st.last_sync_ms > 1700000000000LL && st.desired == 3 && st.compared &&
	   st.programmed == 2,
	   "the last sync: full, 2 sets, 0 errors, wall-clock time; 3 desired, 2 programmed");
	ok_str(list_str(&st.refused, buf, sizeof(buf)),
	       "10.96.0.20:80/tcp default/big:http Argument list too long: fake: refused: 10.96.0.20:80/tcp",
	       "refused: the frontend, its Service and port, the data plane's reason");
	ok_str(list_str(&st.missing, buf, sizeof(buf)),
	       "10.96.0.20:80/tcp default/big:http Argument list too long: fake: refused: 10.96.0.20:80/tcp",
	       "missing: the refused frontend only, the refusal as reason");
	ok(st.failed.total == 0 && st.differ.total == 0 && st.unexpected.total == 0,
	   "no failed change, nothing held otherwise or unwanted");
	js = kpx_statusz_json(&st, "kpx");
	ok(js && fx_matches("\"mode\":\"kpx\"", js) &&
	   fx_matches("\"last_sync\":\\{\"time\":\"20[0-9-]+T[0-9:]+Z\"", js) &&
	   fx_matches("\"refused\":\\{\"total\":1,\"items\":\\[\\{\"frontend\":\"10.96.0.20:80/tcp\","
		      "\"service\":\"default/big:http\",\"kind\":\"cluster-ip\",\"reason\":", js) &&
	   fx_matches("\"unexpected\":\\{\"total\":0,\"items\":\\[\\]\\}", js),
	   "/statusz JSON: mode, last sync's time, refused with Service and kind, empty lists (%s)",
	   js ? js : "NULL");
	free(js);
	kpx_status_free(&st);

	/* behind the agent's back: web deleted, db's backend changed, a stray one */
	n = f.ntable;
	copy = calloc(n + 1, sizeof(*copy));
	for (size_t k = 0; k < n; k++)
		kpx_service_copy(&copy[k], &f.table[k]);
	{
		struct kpx_service key = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.10", 80);

		i = kpx_service_find(copy, n, &key);
		kpx_service_free(&copy[i]);
		memmove(&copy[i], &copy[i + 1], (n - i - 1) * sizeof(*copy));
		n--;
		key = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.30", 80);
		i = kpx_service_find(copy, n, &key);
		copy[i].backends[0].port = 9090;
		copy[n++] = fx_frontend(AF_INET, IPPROTO_TCP, "10.96.0.99", 80);
		kpx_service_set_name(&copy[n - 1], "other/stray:x");
	}
	r = status_of(s, copy, n, true, &st);
	ok(!r && st.programmed == 2, "against a changed data plane: 2 programmed");
	ok_str(list_str(&st.missing, buf, sizeof(buf)),
	       "10.96.0.10:80/tcp default/web:http -;"
	       "10.96.0.20:80/tcp default/big:http Argument list too long: fake: refused: 10.96.0.20:80/tcp",
	       "missing: the deleted frontend with its Service, and the refused one");
	ok_str(list_str(&st.differ, buf, sizeof(buf)), "10.96.0.30:80/tcp default/db:http -",
	       "differ: the frontend with another backend");
	ok_str(list_str(&st.unexpected, buf, sizeof(buf)), "10.96.0.99:80/tcp other/stray:x -",
	       "unexpected: the frontend no Service wants, with the name it carries");
	kpx_status_free(&st);
	kpx_services_free(copy, n);

	r = status_of(s, NULL, 0, false, &st);
	ok(!r && !st.compared && st.missing.total == 0 && st.refused.total == 1,
	   "without the data plane: nothing compared, the refusal still listed");
	kpx_status_free(&st);

	/* a failed commit: the last sync's failed change */
	apply(m, KPX_KIND_ENDPOINTSLICE, KPX_EV_MODIFIED,
	      J(FX_EPS, "web", "web", FX_EP("10.244.1.2") "," FX_EP("10.244.1.5")));
	f.fail_commits = 1;
	r = kpx_sync_run(s);
	r = status_of(s, f.table, f.ntable, true, &st);
	ok(!r && st.last_errors >= 1 && st.failed.total == 1 && st.failed.n == 1 &&
	   !strcmp(st.failed.v[0].key, "-") && st.failed.v[0].reason &&
	   !strncmp(st.failed.v[0].reason, "commit: ", 8) && st.differ.total == 1 &&
	   !strcmp(st.differ.v[0].key, "10.96.0.10:80/tcp"),
	   "a failed commit: counted, listed as the last sync's failure, web held otherwise (%u, %s)",
	   st.last_errors, st.failed.n ? st.failed.v[0].reason : "-");
	kpx_status_free(&st);
	r = kpx_sync_run(s);
	r = status_of(s, f.table, f.ntable, true, &st);
	ok(!r && st.last_errors == 0 && st.failed.total == 0 && st.differ.total == 0 &&
	   st.missing.total == 1,
	   "the next sync repairs it: no failure, nothing held otherwise, only the refused one missing");
	kpx_status_free(&st);

	kpx_sync_free(s);
	kpx_fakedp_free(&f);
	kpx_model_free(m);
	return tap_done();
}
