/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Durations as kube spells them on its command line ("1s", "500ms",
 * "1m30s", "1.5h") and the monotonic clock the agent schedules with.
 */
#ifndef KPX_DURATION_H
#define KPX_DURATION_H

#include <stdint.h>
#include <time.h>

/*
 * Parses a Go time.ParseDuration string into *ms (milliseconds, rounded
 * down): one or more <decimal number><unit> terms, unit one of ns, us, µs,
 * ms, s, m, h; "0" alone is allowed.  Negative durations are rejected.
 * Returns 0, or -EINVAL for a malformed string, -ERANGE when it overflows.
 */
int kpx_parse_duration(const char *s, int64_t *ms);

/* CLOCK_MONOTONIC in milliseconds. */
static inline int64_t kpx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
