// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_sync_status(): the agent's view against the data plane's (sync.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/service.h"
#include "base/status.h"
#include "sync/fecache.h"
#include "sync/sync.h"
#include "sync/sync_priv.h"

/* The refusal of @key's frontend (s->refused is sorted by key), or NULL. */
static const struct refused *refused_of(const struct kpx_sync *s,
					const struct kpx_service *key)
{
	size_t lo = 0, hi = s->nrefused;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = kpx_service_key_cmp(&s->refused[mid].fe, key);

		if (!c)
			return &s->refused[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* "refused: <errno>: <message>" of @r into @buf. */
static const char *refused_why(const struct refused *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", strerror(-r->err), r->msg ? ": " : "",
		 r->msg ? r->msg : "");
	return buf;
}

static int copy_failed(const struct kpx_status_list *from,
		       struct kpx_status_list *to)
{
	for (size_t i = 0; i < from->n; i++) {
		struct kpx_status_fe *e;
		struct kpx_service none = { 0 };

		if (kpx_status_add(to, &none, from->v[i].name,
				   from->v[i].reason))
			return -ENOMEM;
		e = &to->v[to->n - 1];
		memcpy(e->key, from->v[i].key, sizeof(e->key));
		e->kind = from->v[i].kind;
	}
	to->total = from->total;
	return 0;
}

/* The lists of desired against @dp (both sorted by key). */
static int compare(struct kpx_sync *s, const struct kpx_service *dp, size_t ndp,
		   struct kpx_status *st)
{
	struct kpx_service *want;
	size_t nwant, i = 0, j = 0;
	char why[512];
	int r;

	r = kpx_fecache_keys(s->fc, &want, &nwant);
	if (r)
		return r;
	while (!r && (i < nwant || j < ndp)) {
		int c = i == nwant ? 1 :
			j == ndp   ? -1 :
				     kpx_service_key_cmp(&want[i], &dp[j]);
		const struct kpx_service *d;
		const struct refused *rf;

		if (c > 0) {
			r = kpx_status_add(&st->unexpected, &dp[j++], NULL,
					   NULL);
			continue;
		}
		d = kpx_fecache_get(s->fc, &want[i]);
		rf = refused_of(s, &want[i]);
		if (c < 0)
			r = kpx_status_add(
				&st->missing, d ? d : &want[i], NULL,
				rf ? refused_why(rf, why, sizeof(why)) : NULL);
		else if (d && !kpx_service_same_config(d, &dp[j]))
			r = kpx_status_add(
				&st->differ, d, NULL,
				rf ? refused_why(rf, why, sizeof(why)) : NULL);
		i++;
		if (!c)
			j++;
	}
	free(want);
	return r;
}

int kpx_sync_status(struct kpx_sync *s, const struct kpx_service *dp,
		    size_t ndp, bool have_dp, struct kpx_status *st)
{
	char why[512];
	int r = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&s->lock);
	st->synced = s->synced;
	st->last_sync_ms = s->last_wall_ms;
	st->last_duration_s = s->last_dur;
	st->last_full = s->last_was_full;
	st->last_errors = s->last_errors;
	st->last_sets = s->last_sets;
	st->last_dels = s->last_dels;
	st->desired = kpx_fecache_count(s->fc);
	r = copy_failed(&s->failed, &st->failed);
	for (size_t i = 0; !r && i < s->nrefused; i++)
		r = kpx_status_add(
			&st->refused, &s->refused[i].fe,
			s->refused[i].fe.name ? s->refused[i].fe.name :
						s->refused[i].name,
			refused_why(&s->refused[i], why, sizeof(why)));
	if (!r && have_dp && s->synced) {
		st->compared = true;
		st->programmed = ndp;
		r = compare(s, dp, ndp, st);
	}
	pthread_mutex_unlock(&s->lock);
	if (r)
		kpx_status_free(st);
	return r;
}
