// SPDX-License-Identifier: GPL-2.0-only
/*
 * log.c: line shape, escaping, verbosity gating, truncation.  TAP output.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"

#include "lib/tap.h"

static FILE *out;

/* Everything logged since the last call, NUL-terminated (static buffer). */
static const char *take(void)
{
	static char buf[16384];
	size_t n;

	fflush(out);
	rewind(out);
	n = fread(buf, 1, sizeof(buf) - 1, out);
	buf[n] = '\0';
	if (ftruncate(fileno(out), 0))
		abort();
	rewind(out);
	return buf;
}

static int matches(const char *s, const char *re)
{
	regex_t r;
	int m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return 0;
	m = !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	return m;
}

/* Number of '\n' in s. */
static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

int main(void)
{
	const char *s;
	char big[6000];
	int side = 0;

	printf("TAP version 13\n");

	out = tmpfile();
	if (!out)
		return 1;
	kpx_log_set_fd(fileno(out));

	kpx_info("sync", "applied %d changes", 3);
	s = take();
	ok(matches(s, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
		      "\\.[0-9]{3}Z level=info comp=sync "
		      "msg=\"applied 3 changes\"\n$"),
	   "info line shape: %.*s", (int)strcspn(s, "\n"), s);

	kpx_err("nl", "x");
	kpx_warn("k8s", "y");
	s = take();
	ok(strstr(s, " level=error comp=nl msg=\"x\"\n") &&
	   strstr(s, " level=warning comp=k8s msg=\"y\"\n") && lines(s) == 2,
	   "error and warning levels");

	kpx_info("sync", "a \"quoted\" \\ word\nsecond\tline\x01");
	s = take();
	ok(lines(s) == 1 &&
	   strstr(s, "msg=\"a \\\"quoted\\\" \\\\ word\\nsecond\\tline\\x01\"\n"),
	   "escaping keeps one line: %.*s", (int)strcspn(s, "\n"), s);

	kpx_log_verbosity = 0;
	kpx_dbg(2, "sync", "hidden %d", ++side);
	s = take();
	ok(*s == '\0' && side == 0,
	   "kpx_dbg(2) silent at verbosity 0, arguments not evaluated");
	kpx_log_verbosity = 2;
	kpx_dbg(2, "sync", "shown");
	kpx_dbg(4, "sync", "hidden");
	s = take();
	ok(lines(s) == 1 && strstr(s, "level=debug comp=sync msg=\"shown\""),
	   "verbosity 2 shows V=2, hides V=4");
	kpx_log_verbosity = 4;
	kpx_dbg(4, "sync", "deep");
	s = take();
	ok(lines(s) == 1 && strstr(s, "msg=\"deep\""), "verbosity 4 shows V=4");

	kpx_logkv(KPX_LOG_INFO, "sync", "synced", "services", "12",
		  "reason", "full resync", "empty", "", NULL);
	s = take();
	ok(strstr(s, "msg=\"synced\" services=12 reason=\"full resync\" "
		     "empty=\"\"\n") != NULL,
	   "key=value pairs, quoted when needed: %.*s",
	   (int)strcspn(s, "\n"), s);

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	kpx_info("sync", "%s", big);
	s = take();
	ok(lines(s) == 1 && strlen(s) <= 4096 &&
	   !strcmp(s + strlen(s) - 4, "...\n"),
	   "long message truncated to one line of at most 4096 bytes (%zu)",
	   strlen(s));

	kpx_info("two words", "m");
	s = take();
	ok(strstr(s, " comp=\"two words\" msg=\"m\"") != NULL,
	   "odd component quoted");

	return tap_done();
}
