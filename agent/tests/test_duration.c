// SPDX-License-Identifier: GPL-2.0-only
/*
 * duration.c: kube-style durations ("1s", "500ms", "1m30s").  TAP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/duration.h"

#include "lib/tap.h"

static void good(const char *s, int64_t want)
{
	int64_t ms = -1;
	int r = kpx_parse_duration(s, &ms);

	ok(r == 0 && ms == want, "\"%s\" = %" PRId64 " ms (got %d, %" PRId64 ")",
	   s, want, r, ms);
}

static void bad(const char *s, int want)
{
	int64_t ms = 12345;
	int r = kpx_parse_duration(s, &ms);

	ok(r == want && ms == 12345, "\"%s\" rejected with %d (got %d)", s, want, r);
}

int main(void)
{
	printf("TAP version 13\n");
	good("1s", 1000);
	good("500ms", 500);
	good("1m30s", 90000);
	good("1h", 3600000);
	good("1.5h", 5400000);
	good("0", 0);
	good("0s", 0);
	good("1.1s", 1100);
	good(".5s", 500);
	good("2h45m0.5s", 9900500);
	good("1500us", 1);
	good("2000000ns", 2);
	good("1\xc2\xb5s", 0);
	good("30s", 30000);
	bad("", -EINVAL);
	bad("1", -EINVAL);
	bad("s", -EINVAL);
	bad("-1s", -EINVAL);
	bad("1x", -EINVAL);
	bad("1s ", -EINVAL);
	bad("1.s5", -EINVAL);
	bad("1d", -EINVAL);
	bad("3000000h", -ERANGE);
	return tap_done();
}
