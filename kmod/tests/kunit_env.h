/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx_kunit_full.ko: bring the whole of kpx up and down around a KUnit
 * suite, as kpx.ko's module init and exit do (main.c is not linked in).
 */
#ifndef _KPX_KUNIT_ENV_H
#define _KPX_KUNIT_ENV_H

int kpx_test_up(void);
void kpx_test_down(void);

#endif /* _KPX_KUNIT_ENV_H */
