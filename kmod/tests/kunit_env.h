/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx_kunit_full.ko: bring the whole of kpx up and down around a KUnit
 * suite, as kpx.ko's module init and exit do (main.c is not linked in).
 */
#ifndef _KPX_KUNIT_ENV_H
#define _KPX_KUNIT_ENV_H

struct kunit_suite;
struct kpx_net;
struct kpx_key;
struct kpx_svc;
struct kpx_bset;
struct kpx_be_cfg;
struct kpx_svc_req;

/* A suite's .suite_init and .suite_exit. */
int kpx_test_suite_init(struct kunit_suite *suite);
void kpx_test_suite_exit(struct kunit_suite *suite);

struct kpx_svc *kpx_test_svc(struct kpx_net *kn, const struct kpx_key *key,
			     const struct kpx_bset **set);
void kpx_test_req(struct kpx_svc_req *req, const struct kpx_key *key,
		  struct kpx_be_cfg *cfg, u32 n);

#endif /* _KPX_KUNIT_ENV_H */
