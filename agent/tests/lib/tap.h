/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TAP output of the C unit tests (agent/tests, kmod/tests/host): ok(cond,
 * fmt, ...) prints "ok N - ..." or "not ok N - ..." (with the file and line
 * of a failure) and counts; tap_skip() prints a skipped check; main()
 * returns tap_done(), which prints the plan and is 0 when every check
 * passed.  Header-only: each test is one program.
 */
#ifndef KPX_TESTS_TAP_H
#define KPX_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_fail;

static void __attribute__((format(printf, 4, 5), unused))
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		tap_fail++;
		printf("#   failed at %s:%d\n", file, line);
	}
}

/* @cond is evaluated before the message's arguments (which may show what it set). */
#define ok(cond, ...)                                              \
	do {                                                       \
		int ok_pass_ = !!(cond);                           \
		tap_ok(ok_pass_, __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

/* A check that could not run here: "ok N - # SKIP why". */
static void __attribute__((format(printf, 1, 2), unused))
tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int __attribute__((unused)) tap_done(void)
{
	printf("1..%d\n", tap_n);
	if (tap_fail)
		printf("# %d of %d failed\n", tap_fail, tap_n);
	return tap_fail != 0;
}

#endif
