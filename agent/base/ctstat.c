// SPDX-License-Identifier: GPL-2.0-only
/* The kernel's conntrack statistics (ctstat.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/ctstat.h"
#include "base/log.h"
#include "base/sysctl.h"

#define MAX_COLS 32

enum { C_ENTRIES, C_DROP, C_EARLY_DROP, C_INSERT_FAILED, C_INVALID, C_N };
static const char *const col_name[C_N] = {
	"entries", "drop", "early_drop", "insert_failed", "invalid",
};

int kpx_ctstat_read(const char *path, struct kpx_ctstat *st)
{
	int where[C_N], ncols = 0, i, lines = 0, r = 0;
	char line[1024], *tok, *save, *end;
	uint64_t v[C_N] = { 0 };
	FILE *f = fopen(path, "re");

	memset(st, 0, sizeof(*st));
	if (!f)
		return -errno;
	for (i = 0; i < C_N; i++)
		where[i] = -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EBADMSG;
	}
	for (tok = strtok_r(line, " \t\n", &save); tok && ncols < MAX_COLS;
	     tok = strtok_r(NULL, " \t\n", &save), ncols++)
		for (i = 0; i < C_N; i++)
			if (!strcmp(tok, col_name[i]))
				where[i] = ncols;
	if (where[C_ENTRIES] < 0)
		r = -EBADMSG;
	while (!r && fgets(line, sizeof(line), f)) {
		uint64_t x[MAX_COLS];
		int n = 0;

		for (tok = strtok_r(line, " \t\n", &save); tok && n < MAX_COLS;
		     tok = strtok_r(NULL, " \t\n", &save)) {
			errno = 0;
			x[n++] = strtoull(tok, &end, 16);
			if (errno || *end) {
				r = -EBADMSG;
				break;
			}
		}
		if (r || n != ncols) {
			r = -EBADMSG;
			break;
		}
		for (i = 0; i < C_N; i++) {
			if (where[i] < 0)
				continue;
			if (i == C_ENTRIES)
				v[i] = x[where[i]]; /* global, on each line */
			else
				v[i] += x[where[i]];
		}
		lines++;
	}
	fclose(f);
	if (!r && !lines)
		r = -EBADMSG;
	if (r)
		return r;
	st->entries = v[C_ENTRIES];
	st->drop = v[C_DROP];
	st->early_drop = v[C_EARLY_DROP];
	st->insert_failed = v[C_INSERT_FAILED];
	st->invalid = v[C_INVALID];
	return 0;
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n", name,
		help, name, name, v);
}

void kpx_ctstat_metrics(FILE *f, const char *path)
{
	struct kpx_ctstat st;

	if (kpx_ctstat_read(path, &st))
		return;
	fprintf(f,
		"# HELP kpx_conntrack_entries Conntrack entries in the node's table (/proc/net/stat/nf_conntrack)\n"
		"# TYPE kpx_conntrack_entries gauge\nkpx_conntrack_entries %" PRIu64
		"\n",
		st.entries);
	counter(f, "kpx_conntrack_drop_total",
		"Packets the kernel dropped because no conntrack entry could be made for them (table full at nf_conntrack_max)",
		st.drop);
	counter(f, "kpx_conntrack_early_drop_total",
		"Conntrack entries the kernel evicted early to make room for new ones (table full)",
		st.early_drop);
	counter(f, "kpx_conntrack_insert_failed_total",
		"Conntrack entries that could not be inserted (a clash with another CPU's entry for the same flow)",
		st.insert_failed);
	counter(f, "kpx_conntrack_invalid_total",
		"Packets conntrack could not match to a state (INVALID)",
		st.invalid);
}

/* A counter's growth; one lower than before was reset (nf_conntrack reloaded). */
static uint64_t growth(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;
}

bool kpx_ctstat_check(struct kpx_ctstat_check *c, const char *path,
		      const char *max_path, int64_t now_ms, int64_t interval_ms)
{
	struct kpx_ctstat st;
	uint64_t grew;
	long max = -1;

	if (kpx_ctstat_read(path, &st))
		return false;
	grew = c->have ? growth(st.drop, c->last.drop) +
				 growth(st.early_drop, c->last.early_drop) :
			 0;
	c->last = st;
	c->have = true;
	c->pending += grew;
	if (!c->pending ||
	    (c->logged_at && now_ms - c->logged_at < interval_ms))
		return false;
	if (max_path && kpx_sysctl_read(max_path, &max))
		max = -1;
	if (max >= 0)
		kpx_warn(
			"conntrack",
			"conntrack table full: %" PRIu64
			" packets dropped or entries evicted early since the last check (%" PRIu64
			" entries, nf_conntrack_max %ld): new connections fail until it drains; raise --conntrack-max-per-core or --conntrack-min",
			c->pending, st.entries, max);
	else
		kpx_warn(
			"conntrack",
			"conntrack table full: %" PRIu64
			" packets dropped or entries evicted early since the last check (%" PRIu64
			" entries): new connections fail until it drains; raise --conntrack-max-per-core or --conntrack-min",
			c->pending, st.entries);
	c->pending = 0;
	c->logged_at = now_ms ? now_ms : 1;
	return true;
}
