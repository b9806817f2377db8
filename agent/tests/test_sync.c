// SPDX-License-Identifier: GPL-2.0-only
/*
 * sync.c: BoundedFrequencyRunner timing of kpx_sync_next_at(), and a dry
 * run sync that keeps its last state (second sync sends nothing).  TAP.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sync/sync.h"

#include "lib/tap.h"

#define MIN 1000
#define PERIOD 30000

static void next_at(bool synced, int64_t last, int64_t last_full, bool dirty,
		    int64_t want, const char *what)
{
	int64_t got = kpx_sync_next_at(synced, last, last_full, dirty, MIN, PERIOD);

	ok(got == want, "%s: %" PRId64 " (want %" PRId64 ")", what, got, want);
}

int main(void)
{
	struct kpx_model *m = kpx_model_new();
	struct kpx_sync *s = m ? kpx_sync_new(m, NULL, MIN, PERIOD) : NULL;

	printf("TAP version 13\n");
	next_at(false, 0, 0, false, INT64_MIN, "first sync is due at once");
	next_at(false, 0, 0, true, INT64_MIN, "first sync is due at once when dirty");
	next_at(true, 5000, 5000, false, 35000, "clean: next full sync after sync-period");
	next_at(true, 5000, 5000, true, 6000, "dirty: last + min-sync-period");
	next_at(true, 100000, 5000, true, 35000, "dirty but full sync is earlier: full sync time");
	next_at(true, 20000, 5000, false, 35000, "periodic counts from the last full sync");
	next_at(true, 34500, 5000, true, 35000, "dirty near the period: periodic wins");

	ok(s != NULL, "dry-run syncer created");
	if (s) {
		ok(kpx_sync_due(s) == INT64_MIN, "fresh syncer due at once");
		ok(kpx_sync_run(s) == 0, "empty dry-run sync has no errors");
		ok(kpx_sync_due(s) > 0, "after a clean sync nothing is due now");
	}
	kpx_sync_free(s);
	kpx_model_free(m);
	return tap_done();
}
