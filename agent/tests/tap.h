/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TAP output for the agent's unit tests: ok(cond, fmt, ...) prints
 * "ok N - ..." or "not ok N - ..." and counts failures; a test's main()
 * returns tap_status() (0 when every check passed).
 */
#ifndef KPX_TESTS_TAP_H
#define KPX_TESTS_TAP_H

#include <stdbool.h>
#include <stdio.h>

static int test_no, failures;

#define ok(cond, ...)							\
	do {								\
		bool ok_ = (cond);					\
		test_no++;						\
		if (!ok_)						\
			failures++;					\
		printf("%sok %d - ", ok_ ? "" : "not ", test_no);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} while (0)

#endif
