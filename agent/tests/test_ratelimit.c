// SPDX-License-Identifier: GPL-2.0-only
/*
 * ratelimit.c: client-go token bucket semantics (starts full with burst,
 * refills at qps, never above burst, waits reported in ms, qps <= 0 off).  TAP.
 */
#include <stdbool.h>
#include <stdio.h>

#include "base/ratelimit.h"

#include "lib/tap.h"

int main(void)
{
	struct kpx_ratelimit rl;
	int i, n;
	long long w;

	printf("TAP version 13\n");
	kpx_ratelimit_init(&rl, 5, 10, 1000);
	for (n = 0; n < 20 && !kpx_ratelimit_take(&rl, 1000); n++)
		;
	ok(n == 10, "burst 10: 10 requests at once (%d)", n);
	w = kpx_ratelimit_take(&rl, 1000);
	ok(w == 200, "qps 5: next token in 200 ms (%lld)", w);
	ok(kpx_ratelimit_take(&rl, 1199) > 0, "not yet at 199 ms");
	ok(kpx_ratelimit_take(&rl, 1200) == 0, "one token at 200 ms");
	ok(kpx_ratelimit_take(&rl, 1200) == 200, "then 200 ms again");
	/* 10 s idle refills to burst only. */
	for (n = 0; n < 50 && !kpx_ratelimit_take(&rl, 11200); n++)
		;
	ok(n == 10, "idle: refills up to burst, not beyond (%d)", n);
	/* Sustained: 100 requests over time take ~ (100 - 10) / 5 s. */
	kpx_ratelimit_init(&rl, 5, 10, 0);
	{
		long long t = 0;

		for (i = 0; i < 100; i++) {
			while ((w = kpx_ratelimit_take(&rl, t)))
				t += w;
		}
		ok(t >= 17900 && t <= 18100, "100 requests at qps 5 burst 10: %lld ms (~18 s)", t);
	}
	kpx_ratelimit_init(&rl, 0, 0, 0);
	for (n = 0; n < 1000 && !kpx_ratelimit_take(&rl, 0); n++)
		;
	ok(n == 1000, "qps 0: unlimited");
	kpx_ratelimit_init(&rl, -1, 10, 0);
	ok(kpx_ratelimit_take(&rl, 0) == 0, "qps < 0: unlimited");
	kpx_ratelimit_init(&rl, 1000, 0, 0);
	ok(kpx_ratelimit_take(&rl, 0) == 0 && kpx_ratelimit_take(&rl, 0) == 1,
	   "burst 0 taken as 1; qps 1000: 1 ms wait");
	return tap_done();
}
