// SPDX-License-Identifier: GPL-2.0-only
/*
 * Desired vs actual frontends: one merge walk over two sorted arrays; and
 * applying a list of changes to the sorted actual state.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync/reconcile.h"

long kpx_reconcile(const struct kpx_service *desired, size_t ndesired,
		   const struct kpx_service *actual, size_t nactual,
		   struct kpx_op **ops)
{
	size_t i = 0, j = 0, n = 0;
	struct kpx_op *v;

	/* At most one op per frontend of either side; +1 avoids malloc(0). */
	v = malloc((ndesired + nactual + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;

	while (i < ndesired || j < nactual) {
		int c;

		if (i == ndesired)
			c = 1;
		else if (j == nactual)
			c = -1;
		else
			c = kpx_service_key_cmp(&desired[i], &actual[j]);

		if (c < 0) {
			v[n++] = (struct kpx_op){ KPX_OP_SET, &desired[i++] };
		} else if (c > 0) {
			v[n++] = (struct kpx_op){ KPX_OP_DEL, &actual[j++] };
		} else {
			if (!kpx_service_same_config(&desired[i], &actual[j]))
				v[n++] = (struct kpx_op){ KPX_OP_SET,
							  &desired[i] };
			i++;
			j++;
		}
	}
	*ops = v;
	return (long)n;
}

int kpx_frontend_copy(struct kpx_service *dst, const struct kpx_service *src)
{
	*dst = *src;
	dst->backends = NULL;
	dst->source_ranges = NULL;
	if (src->nbackends) {
		dst->backends = malloc(src->nbackends * sizeof(*src->backends));
		if (!dst->backends)
			goto nomem;
		memcpy(dst->backends, src->backends,
		       src->nbackends * sizeof(*src->backends));
	}
	if (src->nsource_ranges) {
		dst->source_ranges = malloc(src->nsource_ranges *
					    sizeof(*src->source_ranges));
		if (!dst->source_ranges)
			goto nomem;
		memcpy(dst->source_ranges, src->source_ranges,
		       src->nsource_ranges * sizeof(*src->source_ranges));
	}
	return 0;
nomem:
	free(dst->backends);
	memset(dst, 0, sizeof(*dst));
	return -ENOMEM;
}

static void free_all(struct kpx_service *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		kpx_service_free(&v[i]);
	free(v);
}

static int key_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/* The index of @key in @v[0..n-1], or -1. */
static long find(const struct kpx_service *v, size_t n,
		 const struct kpx_service *key)
{
	const struct kpx_service *p = n ? bsearch(key, v, n, sizeof(*v),
						  key_cmp) : NULL;

	return p ? p - v : -1;
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
		at = find(cur, n, ops[i].service);
		if (ops[i].type == KPX_OP_DEL) {
			del += at >= 0;
			continue;
		}
		ins += at < 0;
		if (kpx_frontend_copy(&copies[i], ops[i].service)) {
			free_all(copies, i);
			return -ENOMEM;
		}
	}
	if (!ins && !del) {	/* replacements in place */
		for (i = 0; i < nops; i++) {
			if (ops[i].type != KPX_OP_SET)
				continue;
			at = find(cur, n, ops[i].service);
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
