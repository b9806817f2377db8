// SPDX-License-Identifier: GPL-2.0-only
/*
 * kube-style duration parsing (Go's time.ParseDuration grammar).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/duration.h"

static const struct {
	const char *name;
	double ns;
} units[] = {
	/* Longest first where one unit is a prefix of another ("ms" vs "m"). */
	{ "ns", 1 },
	{ "us", 1e3 },
	{ "\xc2\xb5s", 1e3 },	/* U+00B5 micro sign */
	{ "\xce\xbcs", 1e3 },	/* U+03BC Greek small letter mu */
	{ "ms", 1e6 },
	{ "s", 1e9 },
	{ "m", 60e9 },
	{ "h", 3600e9 },
};

int kpx_parse_duration(const char *s, int64_t *ms)
{
	double total_ns = 0;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "0")) {
		*ms = 0;
		return 0;
	}
	while (*s) {
		double ipart = 0, frac = 0, scale = 1;
		bool digits = false;
		size_t i, ulen = 0;
		double unit = 0;

		for (; *s >= '0' && *s <= '9'; s++, digits = true)
			ipart = ipart * 10 + (*s - '0');
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
				frac += (*s - '0') * (scale /= 10);
		if (!digits)
			return -EINVAL;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].name);

			if (l > ulen && !strncmp(s, units[i].name, l)) {
				ulen = l;
				unit = units[i].ns;
			}
		}
		if (!ulen)
			return -EINVAL;
		s += ulen;
		total_ns += (ipart + frac) * unit;
		if (total_ns > 9.2e18)	/* Go's limit: int64 nanoseconds */
			return -ERANGE;
	}
	/* Round to whole nanoseconds first: 1.1 * 1e9 is not exact. */
	*ms = (int64_t)(total_ns + 0.5) / 1000000;
	return 0;
}
