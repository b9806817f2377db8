/* SPDX-License-Identifier: GPL-2.0-only */
/* Minimal TAP output for kpx host unit tests. */
#ifndef _KPX_TAP_H
#define _KPX_TAP_H

#include <stdio.h>

static int tap_n, tap_fail;

#define ok(cond, ...) do {						\
	int _c = !!(cond);						\
	printf("%sok %d - ", _c ? "" : "not ", ++tap_n);		\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!_c) {							\
		tap_fail++;						\
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__,	\
		       #cond);						\
	}								\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}

#endif
