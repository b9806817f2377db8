// SPDX-License-Identifier: GPL-2.0-only
/*
 * Desired vs actual frontends: one merge walk over two sorted arrays.
 */
#include <errno.h>
#include <stdlib.h>

#include "reconcile.h"

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
