/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx frontend table. */
#ifndef _KPX_SVC_H
#define _KPX_SVC_H

#include "kpx.h"
#include "name.h"

/**
 * struct kpx_svc_req - one SET of a frontend, parsed and validated
 * @key: the frontend, built with kpx_key_init()
 * @flags: KPX_SVC_F_*
 * @cfg: backends of @key's family, sorted by kpx_be_cfg_sort(); the
 *	caller's, only read
 * @n: number of entries in @cfg, at most KPX_BACKENDS_MAX
 * @ranges: the new source ranges (NULL: none); a SET always takes them
 *	over, on error too
 * @scfg: scheduler and affinity settings
 * @cluster: the ClusterIP frontend key of a KPX_SVC_F_EXT_LOCAL frontend
 * @has_cluster: @cluster is given (else the frontend names none)
 * @name: the name and kind the SET gives (neither: kept)
 */
struct kpx_svc_req {
	struct kpx_key key;
	u32 flags;
	struct kpx_be_cfg *cfg;
	u32 n;
	struct kpx_cidrs *ranges;
	struct kpx_sched_cfg scfg;
	struct kpx_key cluster;
	bool has_cluster;
	struct kpx_name_req name;
};

int kpx_svc_table_init(struct kpx_net *kn);
void kpx_svc_table_destroy(struct kpx_net *kn);
struct kpx_svc *kpx_svc_lookup(struct kpx_net *kn, const struct kpx_key *key);
int __kpx_svc_set(struct kpx_net *kn, const struct kpx_svc_req *req);
struct kpx_svc *kpx_svc_cluster(struct kpx_net *kn,
				const struct kpx_svc *svc);
int kpx_svc_del(struct kpx_net *kn, const struct kpx_key *key);
void kpx_svc_flush(struct kpx_net *kn);

#ifdef KPX_TEST_HOOKS
/*
 * Test builds only (kmod/tests/Kbuild): __kpx_svc_set() calls it, with
 * kn->lock held, for a new frontend once it is on the dump list (@step 1)
 * and once it is in the table too, before the generation changes (@step 2),
 * so a test can hold a creation in either state while dumps run.
 */
extern void (*kpx_test_svc_hook)(const struct kpx_svc *svc, int step);
#endif

#endif /* _KPX_SVC_H */
