/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's conntrack statistics (/proc/net/stat/nf_conntrack, the
 * agent's network namespace): what tells a full table from a dead backend.
 * The file has a header line naming the columns, then one line per
 * possible CPU, each column a hex number; "entries" is the table's entry
 * count (the same on every line), the others are per-CPU event counts,
 * summed here.  Columns a kernel lacks read as 0 (6.1 and 6.12 have all
 * of those below).
 */
#ifndef KPX_CTSTAT_H
#define KPX_CTSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define KPX_CTSTAT_PATH "/proc/net/stat/nf_conntrack"

struct kpx_ctstat {
	uint64_t entries; /* conntrack entries now */
	uint64_t drop; /* packets dropped: no entry could be made (table full) */
	uint64_t early_drop; /* entries evicted early to make room (table full) */
	uint64_t insert_failed; /* entries that lost an insertion race */
	uint64_t invalid; /* packets conntrack could not track (INVALID) */
};

/*
 * Reads and sums @path (KPX_CTSTAT_PATH) into *st.  0, -ENOENT (no
 * conntrack in this namespace yet), -errno, or -EBADMSG when the file does
 * not have the header and hex lines described above.
 */
int kpx_ctstat_read(const char *path, struct kpx_ctstat *st);

/*
 * The statistics as Prometheus text: kpx_conntrack_entries (gauge) and
 * kpx_conntrack_drop_total, kpx_conntrack_early_drop_total,
 * kpx_conntrack_insert_failed_total, kpx_conntrack_invalid_total
 * (counters since the conntrack module loaded).  Nothing when the file
 * cannot be read.
 */
void kpx_ctstat_metrics(FILE *f, const char *path);

/*
 * The "table full" log, called from the event loop: when drop or
 * early_drop grew since the previous call, one warning "conntrack table
 * full" with how many, the entry count and nf_conntrack_max (@max_path,
 * read if it can be), at most once per @interval_ms; growth within the
 * interval is added to the next warning.  Pure but for the reads; the
 * state lives in *c (zero it first).  Returns true when it logged.
 */
struct kpx_ctstat_check {
	bool have; /* last holds a reading */
	struct kpx_ctstat last;
	uint64_t pending;  /* drops not logged yet */
	int64_t logged_at; /* monotonic ms of the last warning, 0: never */
};
bool kpx_ctstat_check(struct kpx_ctstat_check *c, const char *path,
		      const char *max_path, int64_t now_ms,
		      int64_t interval_ms);

#endif
