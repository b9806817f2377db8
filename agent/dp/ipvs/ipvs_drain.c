// SPDX-License-Identifier: GPL-2.0-only
/*
 * Draining destinations, as kube-proxy's graceful termination: a removed
 * backend of a TCP/SCTP frontend is kept at weight 0 until its connections
 * end, then reaped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_priv.h"
#include "dp/ipvs/ipvs_rules.h"

/* --- draining destinations ----------------------------------------------------- */

static bool same_svc(const struct kpx_ipvs_svc *a, const struct kpx_ipvs_svc *b)
{
	return a->family == b->family && a->protocol == b->protocol && a->port == b->port &&
	       !memcmp(&a->addr, &b->addr, a->family == AF_INET ? 4 : 16);
}

/* Remembers that @is has quiesced destinations to delete later; 0 or -ENOMEM. */
int ipvs_drain_add(struct dp_ipvs *v, const struct kpx_ipvs_svc *is)
{
	size_t i;

	for (i = 0; i < v->ndrain; i++)
		if (same_svc(&v->drain[i], is))
			return 0;
	if (v->ndrain == v->capdrain) {
		size_t cap = v->capdrain ? 2 * v->capdrain : 16;
		struct kpx_ipvs_svc *d = realloc(v->drain, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		v->drain = d;
		v->capdrain = cap;
	}
	v->drain[v->ndrain++] = *is;
	return 0;
}

/*
 * Deletes the quiesced destinations IPVS counts no connection to (see
 * kpx_ipvs_dest_drains()); a service stays on the list while one of its
 * quiesced destinations still has connections.  Errors are logged: the
 * next commit tries again.
 */
void ipvs_reap(struct dp_ipvs *v)
{
	size_t i = 0, j, nd;

	while (i < v->ndrain) {
		struct kpx_ipvs_dest *d = NULL;
		bool keep = false;
		int r;

		r = kpx_ipvs_dest_dump(v->ipvs, &v->drain[i], &d, &nd);
		if (r) {
			nd = 0;
			/* service gone (deleted, or cleaned up): nothing to drain */
			keep = r != -ESRCH && r != -ENOENT;
		}
		for (j = 0; j < nd; j++) {
			if (d[j].weight)
				continue;
			if (!kpx_ipvs_dest_reapable(&d[j])) {
				keep = true;
				continue;
			}
			r = kpx_ipvs_dest_del(v->ipvs, &v->drain[i], &d[j]);
			if (r && r != -ENOENT) {
				kpx_warn("ipvs", "deleting a drained destination: %s", strerror(-r));
				keep = true;
			}
		}
		free(d);
		if (keep)
			i++;
		else
			v->drain[i] = v->drain[--v->ndrain];
	}
}
