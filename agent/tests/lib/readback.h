/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The check of the fallback modes' readers (test_nft_read, test_ipt_read):
 * the frontends a mode's rule builders wrote, read back from that mode's
 * kernel state.  Header-only, as tap.h, whose counters it uses.
 */
#ifndef KPX_TESTS_READBACK_H
#define KPX_TESTS_READBACK_H

#include <stdlib.h>
#include <string.h>

#include "base/service.h"
#include "tap.h"

static int readback_cmp(const void *a, const void *b)
{
	return kpx_service_key_cmp(a, b);
}

/*
 * Every frontend of @w (@nw) of @family (0: both) is in @got (@ngot, sorted
 * here) with the configuration, Service name and kind written, and @got holds
 * no other.
 */
static void __attribute__((unused))
readback_check(const char *what, const struct kpx_service *w, size_t nw,
	       int family, struct kpx_service *got, size_t ngot)
{
	char k[KPX_SERVICE_STRLEN];
	size_t expect = 0;

	qsort(got, ngot, sizeof(*got), readback_cmp);
	for (size_t i = 0; i < nw; i++) {
		const struct kpx_service *g;
		long at;

		if (family && w[i].family != family)
			continue;
		expect++;
		kpx_service_str(&w[i], k, sizeof(k));
		at = kpx_service_find(got, ngot, &w[i]);
		ok(at >= 0, "%s: %s read back", what, k);
		if (at < 0)
			continue;
		g = &got[at];
		ok(kpx_service_same_config(&w[i], g),
		   "%s: %s: flags 0x%x (0x%x written), %zu backends (%zu), %zu ranges (%zu), scheduler '%s' ('%s'), affinity %u (%u)",
		   what, k, g->flags, w[i].flags, g->nbackends, w[i].nbackends,
		   g->nsource_ranges, w[i].nsource_ranges, g->scheduler,
		   w[i].scheduler, g->affinity_timeout, w[i].affinity_timeout);
		ok((!w[i].name && !g->name) || (w[i].name && g->name &&
						!strcmp(w[i].name, g->name)),
		   "%s: %s: Service '%s' ('%s' written)", what, k,
		   g->name ? g->name : "(none)",
		   w[i].name ? w[i].name : "(none)");
		ok(g->kind == w[i].kind, "%s: %s: kind %s", what, k,
		   kpx_kind_name(g->kind));
	}
	ok(ngot == expect, "%s: %zu frontends, no other (%zu)", what, expect,
	   ngot);
}

#endif
