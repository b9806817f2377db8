// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctstat.c: /proc/net/stat/nf_conntrack read as 6.1 and 6.12 write it
 * (header, one hex line per CPU; "entries" global, the rest summed), bad
 * files refused, the metrics' names and values, and the "table full" log
 * at most once per interval with the drops in between added up.  TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/ctstat.h"
#include "base/log.h"

#include "lib/tap.h"

#define HDR \
	"entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n"

static char dir[] = "/tmp/kpx-ctstat-XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* The two CPUs' lines with @drop0 and @drop1 in the drop column. */
static const char *stat_file(unsigned int drop0, unsigned int drop1)
{
	static char text[1024];

	snprintf(
		text, sizeof(text),
		HDR
		"00001000  00000000 00000000 00000000 0000000a 00000000 00000000 00000000 00000000 00000002 %08x 00000001 00000000  00000000 00000000 00000000 00000000\n"
		"00001000  00000000 00000000 00000000 00000005 00000000 00000000 00000000 00000000 00000001 %08x 00000000 00000000  00000000 00000000 00000000 00000000\n",
		drop0, drop1);
	return put("nf_conntrack", text);
}

static int count_lines(const char *path, const char *needle)
{
	char line[2048];
	int n = 0;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	struct kpx_ctstat_check c = { 0 };
	struct kpx_ctstat st;
	char logp[256], maxp[256], *text = NULL;
	const char *p;
	size_t len = 0;
	FILE *f;
	int fd, r;

	printf("TAP version 13\n");
	if (!mkdtemp(dir))
		return 1;
	p = stat_file(0x10, 0x20);
	r = kpx_ctstat_read(p, &st);
	ok(r == 0 && st.entries == 4096 && st.drop == 0x30 &&
		   st.early_drop == 1 && st.insert_failed == 3 &&
		   st.invalid == 15,
	   "read: entries from one line (%llu), drop, early_drop, insert_failed, invalid summed over CPUs",
	   (unsigned long long)st.entries);
	ok(kpx_ctstat_read("/nonexistent/nf_conntrack", &st) == -ENOENT,
	   "missing file: -ENOENT");
	ok(kpx_ctstat_read(put("bad1", "entries drop\n0000zz 00000001\n"),
			   &st) == -EBADMSG,
	   "a non-hex value: -EBADMSG");
	ok(kpx_ctstat_read(put("bad2", "entries drop\n00000001\n"), &st) ==
		   -EBADMSG,
	   "a line shorter than the header: -EBADMSG");
	ok(kpx_ctstat_read(put("bad3", "found drop\n00000001 00000002\n"),
			   &st) == -EBADMSG,
	   "no entries column: -EBADMSG");
	ok(kpx_ctstat_read(put("bad4", HDR), &st) == -EBADMSG,
	   "no CPU line: -EBADMSG");
	r = kpx_ctstat_read(
		put("old",
		    "entries drop\n00000003 00000004\n00000003 00000001\n"),
		&st);
	ok(r == 0 && st.entries == 3 && st.drop == 5 && st.early_drop == 0,
	   "a kernel without some columns: those read 0");

	f = open_memstream(&text, &len);
	kpx_ctstat_metrics(f, stat_file(0x10, 0x20));
	fclose(f);
	ok(text &&
		   strstr(text,
			  "# TYPE kpx_conntrack_entries gauge\nkpx_conntrack_entries 4096\n") &&
		   strstr(text,
			  "# TYPE kpx_conntrack_drop_total counter\nkpx_conntrack_drop_total 48\n") &&
		   strstr(text, "kpx_conntrack_early_drop_total 1\n") &&
		   strstr(text, "kpx_conntrack_insert_failed_total 3\n") &&
		   strstr(text, "kpx_conntrack_invalid_total 15\n"),
	   "metrics: names, types and values");
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	kpx_ctstat_metrics(f, "/nonexistent/nf_conntrack");
	fclose(f);
	ok(len == 0, "metrics: nothing without the file");
	free(text);

	snprintf(logp, sizeof(logp), "%s/log", dir);
	fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	kpx_log_set_fd(fd);
	snprintf(maxp, sizeof(maxp), "%s", put("max", "4096\n"));
	ok(!kpx_ctstat_check(&c, stat_file(0, 0), maxp, 1000, 60000),
	   "check: first reading, nothing");
	ok(!kpx_ctstat_check(&c, stat_file(0, 0), maxp, 2000, 60000),
	   "check: no drops, nothing");
	ok(kpx_ctstat_check(&c, stat_file(5, 2), maxp, 3000, 60000),
	   "check: drops grew: logged");
	ok(!kpx_ctstat_check(&c, stat_file(9, 2), maxp, 4000, 60000) &&
		   !kpx_ctstat_check(&c, stat_file(9, 9), maxp, 30000, 60000),
	   "check: more drops within the interval: not logged again");
	ok(kpx_ctstat_check(&c, stat_file(9, 10), maxp, 63001, 60000),
	   "check: after the interval: logged again");
	ok(!kpx_ctstat_check(&c, stat_file(9, 10), maxp, 200000, 60000),
	   "check: no drops since: nothing");
	ok(!kpx_ctstat_check(&c, stat_file(0, 0), maxp, 300000, 60000),
	   "check: counters back to 0 (nf_conntrack reloaded): not a table full");
	close(fd);
	kpx_log_set_fd(2);
	ok(count_lines(logp, "conntrack table full") == 2 &&
		   count_lines(logp,
			       "conntrack table full: 7 packets dropped") ==
			   1 &&
		   count_lines(logp,
			       "conntrack table full: 12 packets dropped") ==
			   1 &&
		   count_lines(logp, "nf_conntrack_max 4096") == 2,
	   "log: two warnings, 7 then the 12 of the interval added up, with nf_conntrack_max");
	for (r = 0; r < 8; r++) {
		static const char *const names[] = { "nf_conntrack", "bad1",
						     "bad2",	     "bad3",
						     "bad4",	     "old",
						     "max",	     "log" };
		char path[300];

		snprintf(path, sizeof(path), "%s/%s", dir, names[r]);
		unlink(path);
	}
	rmdir(dir);
	return tap_done();
}
