/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx_kunit_full.ko: bring the whole of kpx up and down around a KUnit
 * suite, as kpx.ko's module init and exit do (main.c is not linked in).
 */
#ifndef _KPX_KUNIT_ENV_H
#define _KPX_KUNIT_ENV_H

struct kunit_suite;

/* A suite's .suite_init and .suite_exit. */
int kpx_test_suite_init(struct kunit_suite *suite);
void kpx_test_suite_exit(struct kunit_suite *suite);

#endif /* _KPX_KUNIT_ENV_H */
