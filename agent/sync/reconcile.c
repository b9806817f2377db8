// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one diff of every sync (reconcile.h): each candidate key's desired
 * frontend against the programmed one; and a list of changes applied to
 * the sorted record of the programmed state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync/reconcile.h"

/* The frontend with @key's key in @v[0..n-1] (sorted), or NULL. */
static const struct kpx_service *lookup(const struct kpx_service *v, size_t n,
					const struct kpx_service *key)
{
	long i = kpx_service_find(v, n, key);

	return i >= 0 ? &v[i] : NULL;
}

bool kpx_reconcile_one(const struct kpx_service *want,
		       const struct kpx_service *have, struct kpx_op *op)
{
	if (want && (!have || !kpx_service_same_config(want, have)))
		*op = (struct kpx_op){ KPX_OP_SET, want };
	else if (!want && have)
		*op = (struct kpx_op){ KPX_OP_DEL, have };
	else
		return false;
	return true;
}

long kpx_reconcile(kpx_desired_fn *want, const void *src,
		   const struct kpx_service *keys, size_t nkeys,
		   const struct kpx_service *actual, size_t nactual,
		   struct kpx_op **ops)
{
	struct kpx_op *v = malloc((nkeys + 1) * sizeof(*v));	/* +1: no malloc(0) */
	size_t i, n = 0;

	*ops = v;
	if (!v)
		return -ENOMEM;
	for (i = 0; i < nkeys; i++)
		n += kpx_reconcile_one(want(src, &keys[i]),
				       lookup(actual, nactual, &keys[i]), &v[n]);
	return (long)n;
}

int kpx_reconcile_keys(const struct kpx_service *a, size_t na,
		       const struct kpx_service *b, size_t nb,
		       struct kpx_service **keys, size_t *n)
{
	struct kpx_service *v = NULL;
	size_t i = 0, j = 0, k = 0;

	*keys = NULL;
	*n = 0;
	if (!na && !nb)
		return 0;
	v = malloc((na + nb) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (i < na || j < nb) {
		const struct kpx_service *next;

		if (j == nb || (i < na && kpx_service_key_cmp(&a[i], &b[j]) <= 0))
			next = &a[i++];
		else
			next = &b[j++];
		if (!k || kpx_service_key_cmp(&v[k - 1], next))
			v[k++] = kpx_service_key(next);
	}
	*keys = v;
	*n = k;
	return 0;
}

static void free_all(struct kpx_service *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		kpx_service_free(&v[i]);
	free(v);
}

int kpx_reconcile_apply(struct kpx_service **actual, size_t *nactual,
			const struct kpx_op *ops, size_t nops)
{
	struct kpx_service *cur = *actual, *copies, *nv;
	size_t i, j = 0, k = 0, ins = 0, del = 0, n = *nactual;
	long at;

	copies = calloc(nops ? nops : 1, sizeof(*copies));
	if (!copies)
		return -ENOMEM;
	for (i = 0; i < nops; i++) {
		at = kpx_service_find(cur, n, ops[i].service);
		if (ops[i].type == KPX_OP_DEL) {
			del += at >= 0;
			continue;
		}
		ins += at < 0;
		if (kpx_service_copy(&copies[i], ops[i].service)) {
			free_all(copies, i);
			return -ENOMEM;
		}
	}
	if (!ins && !del) {	/* replacements in place */
		for (i = 0; i < nops; i++) {
			if (ops[i].type != KPX_OP_SET)
				continue;
			at = kpx_service_find(cur, n, ops[i].service);
			kpx_service_free(&cur[at]);
			cur[at] = copies[i];
		}
		free(copies);
		return 0;
	}
	nv = malloc((n + ins - del + 1) * sizeof(*nv));
	if (!nv) {
		free_all(copies, nops);
		return -ENOMEM;
	}
	for (i = 0; i < nops; i++) {	/* merge: ops and cur are sorted */
		while (j < n && kpx_service_key_cmp(&cur[j], ops[i].service) < 0)
			nv[k++] = cur[j++];
		if (j < n && !kpx_service_key_cmp(&cur[j], ops[i].service))
			kpx_service_free(&cur[j++]);
		if (ops[i].type == KPX_OP_SET)
			nv[k++] = copies[i];
	}
	while (j < n)
		nv[k++] = cur[j++];
	free(copies);
	free(cur);
	*actual = nv;
	*nactual = k;
	return 0;
}
