// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frontends the data plane refused (sync.h): each logged once with its
 * Service, counted, held back until --sync-period or its next change, and
 * retried then; the other Services' changes go on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"
#include "base/log.h"
#include "http/metrics.h"
#include "sync/sync_priv.h"

/* ---- Refused frontends (sync.h) ----------------------------------------- */

/* The index of @key's entry in s->refused, or where it would go (*found). */
static size_t refused_at(const struct kpx_sync *s,
			 const struct kpx_service *key, bool *found)
{
	size_t lo = 0, hi = s->nrefused;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kpx_service_key_cmp(&s->refused[mid].fe, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->nrefused &&
		 !kpx_service_key_cmp(&s->refused[lo].fe, key);
	return lo;
}

static void refused_drop(struct kpx_sync *s, size_t i)
{
	sync_refused_clear(&s->refused[i]);
	memmove(&s->refused[i], &s->refused[i + 1],
		(s->nrefused - i - 1) * sizeof(*s->refused));
	s->nrefused--;
}

/*
 * Whether the SET @op is held back: its frontend was refused with this
 * very value less than sync-period ago.
 */
bool sync_refused_hold(const struct kpx_sync *s, const struct kpx_op *op,
			 int64_t now)
{
	bool found;
	size_t i = refused_at(s, op->service, &found);

	return found && now - s->refused[i].at < s->period &&
	       kpx_service_same_config(&s->refused[i].fe, op->service);
}

/*
 * The data plane refused the SET @op with @err: records it (replacing an
 * older entry of its key) and logs it, once per refused value, with its
 * Service's name.  Without memory for the record the refusal is logged
 * and retried at the next sync like any change.
 */
void sync_refused_add(struct kpx_sync *s, const struct kpx_op *op, int err,
			int64_t now)
{
	char key[KPX_SERVICE_STRLEN], period[32];
	const char *msg = kpx_dp_errmsg(s->dp);
	const char *name = kpx_fecache_owner(s->fc, op->service);
	struct refused e = { .at = now, .err = err };
	bool found, again;
	size_t i = refused_at(s, op->service, &found);

	again = found && s->refused[i].err == err &&
		kpx_service_same_config(&s->refused[i].fe, op->service);
	kpx_service_str(op->service, key, sizeof(key));
	snprintf(period, sizeof(period), "%gs", s->period / 1000.0);
	if (again) {
		s->refused[i].at = now;
		kpx_dbg(2, "sync", "Service %s: frontend %s still refused: %s%s%s",
			  s->refused[i].name, key, strerror(-err), *msg ? ": " : "", msg);
		return;
	}
	kpx_err("sync", "Service %s: frontend %s refused by the %s data plane: %s%s%s; the other Services are programmed, this one is retried every %s or when it changes",
		name ? name : "(none)", key, s->dp->ops->name, strerror(-err),
		*msg ? ": " : "", msg, period);
	if (kpx_service_copy(&e.fe, op->service) ||
	    !(e.name = strdup(name ? name : "(none)")) ||
	    (*msg && !(e.msg = strdup(msg)))) {
		kpx_service_free(&e.fe);
		return;
	}
	if (found) {
		sync_refused_clear(&s->refused[i]);
		s->refused[i] = e;
		return;
	}
	if (s->nrefused == s->caprefused) {
		size_t cap = s->caprefused ? 2 * s->caprefused : 4;
		struct refused *v = realloc(s->refused, cap * sizeof(*v));

		if (!v) {
			sync_refused_clear(&e);
			return;
		}
		s->refused = v;
		s->caprefused = cap;
	}
	memmove(&s->refused[i + 1], &s->refused[i],
		(s->nrefused - i) * sizeof(*s->refused));
	s->refused[i] = e;
	s->nrefused++;
}

/*
 * How many refused frontends are within the data plane's documented limits
 * (its check_service() takes them): refusals a data plane of another
 * version would give, unlike a Service over a documented limit, which is
 * that one Service's problem however small the cluster.
 */
size_t sync_refused_unexpected(struct kpx_sync *s)
{
	size_t i, n = 0;

	if (!s->dp || !s->dp->ops->check_service)
		return s->nrefused;
	for (i = 0; i < s->nrefused; i++)
		if (!s->dp->ops->check_service(s->dp, &s->refused[i].fe))
			n++;
	s->dp->errmsg[0] = '\0';
	return n;
}

/* The change @op was applied: its frontend is no longer refused. */
void sync_refused_done(struct kpx_sync *s, const struct kpx_op *op)
{
	char key[KPX_SERVICE_STRLEN];
	bool found;
	size_t i = refused_at(s, op->service, &found);

	if (!found)
		return;
	if (op->type == KPX_OP_SET)
		kpx_info("sync", "Service %s: frontend %s programmed (no longer refused)",
			 s->refused[i].name, kpx_service_str(op->service, key, sizeof(key)));
	refused_drop(s, i);
}

static int op_key_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(((const struct kpx_op *)a)->service,
				   ((const struct kpx_op *)b)->service);
}

/*
 * Adds to *ops (sorted by key) a SET for each refused frontend that is due
 * again (last tried at least sync-period before @now) and not already
 * planned, with its Service's current value; forgets those that are no
 * longer desired or already programmed as desired.  Returns the new number
 * of ops, or -ENOMEM (*ops unchanged).
 */
long sync_refused_retry(struct kpx_sync *s, struct kpx_op **ops, long nops,
			  int64_t now)
{
	const struct kpx_service *want, *have;
	struct kpx_op *v, *extra, op;
	size_t i = 0, n = 0;
	long at;

	if (!s->nrefused)
		return nops;
	extra = malloc(s->nrefused * sizeof(*extra));
	if (!extra)
		return -ENOMEM;
	while (i < s->nrefused) {
		struct refused *e = &s->refused[i];
		struct kpx_op key = { KPX_OP_SET, &e->fe };

		if (nops && bsearch(&key, *ops, nops, sizeof(**ops), op_key_cmp)) {
			i++;	/* planned: a change, or a DEL */
			continue;
		}
		want = kpx_fecache_get(s->fc, &e->fe);
		at = kpx_service_find(s->actual, s->nactual, &e->fe);
		have = at >= 0 ? &s->actual[at] : NULL;
		if (!kpx_reconcile_one(want, have, &op) || op.type == KPX_OP_DEL) {
			refused_drop(s, i);	/* right, or no longer desired */
			continue;
		}
		if (now - e->at >= s->period)
			extra[n++] = op;
		i++;
	}
	if (!n) {
		free(extra);
		return nops;
	}
	v = realloc(*ops, (nops + n) * sizeof(*v));
	if (!v) {
		free(extra);
		return -ENOMEM;
	}
	memcpy(v + nops, extra, n * sizeof(*v));
	free(extra);
	qsort(v, nops + n, sizeof(*v), op_key_cmp);
	*ops = v;
	return nops + (long)n;
}

