/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx scheduling in the module: per-set scheduler data built at SET time,
 * per-frontend ClientIP affinity tables, the packet-path decision, and the
 * "lc" accounting (counted on the packet path, recounted by one conntrack
 * walk shared by every namespace).
 */
#ifndef _KPX_LB_H
#define _KPX_LB_H

#include "kpx.h"

/*
 * Scheduler data of one backend set, immutable, freed with the set.
 * Built by kpx_lb_attach() before the set is published.
 */
struct kpx_mh_tab;

struct kpx_sched_data {
	u8 id;			/* enum kpx_sched_id */
	u32 mh_size;		/* entries of mh[] */
	const u16 *mh;		/* Maglev table: backend indexes (mh) */
	struct kpx_mh_tab *mht;	/* mh's owner, shared with later sets */
	u32 wrr_total;		/* sum of weights (wrr) */
	u32 wrr_stride;
	u32 *wrr_prefix;	/* prefix sums of weights (wrr) */
};

/* A frontend's ClientIP affinity table; RCU-freed, entries under lock. */
struct kpx_affk;

void kpx_lb_init(void);
void kpx_sched_cfg_default(struct kpx_sched_cfg *scfg);
int kpx_lb_attach(struct kpx_net *kn, struct kpx_bset *set,
		  const struct kpx_bset *old, const struct kpx_sched_cfg *scfg);
void kpx_lb_net_pre_exit(struct kpx_net *kn);
void kpx_sched_data_free(struct kpx_sched_data *sd);
struct kpx_affk *kpx_aff_prepare(const struct kpx_svc *svc,
				 const struct kpx_sched_cfg *scfg);
void kpx_aff_commit(struct kpx_svc *svc, struct kpx_affk *fresh,
		    const struct kpx_bset *set);
void kpx_aff_stop(struct kpx_svc *svc);
void kpx_aff_release(struct kpx_svc *svc);
void kpx_aff_free(struct kpx_affk *fresh);
u64 kpx_aff_evictions(const struct kpx_svc *svc);
/*
 * What kpx_schedule() saw when it only looks (KPX_CMD_EXPLAIN): the
 * affinity state (enum kpx_explain_affinity) and the entry's age, and how
 * sure the pick is (enum kpx_explain_pick).
 */
struct kpx_peek {
	u8 aff;
	u8 pick;
	u64 aff_age_ms;
};

struct kpx_backend *kpx_schedule(struct kpx_svc *svc,
				 const struct kpx_bset *set,
				 const union kpx_addr *client,
				 struct kpx_peek *peek);
void kpx_lc_scan_init(struct kpx_net *kn);
void kpx_lc_scan_kick(struct kpx_net *kn, const struct kpx_sched_cfg *scfg);
void kpx_lb_connected(const struct kpx_bset *set, struct kpx_backend *be);
void kpx_lc_svc_unlink(struct kpx_net *kn, struct kpx_svc *svc);
void kpx_lc_scan_stop(struct kpx_net *kn);
void kpx_lc_exit(void);

#ifdef KPX_TEST_HOOKS
/*
 * Test builds only (kmod/tests/Kbuild): the recount's slice budget
 * (frontends + backends), a hook it calls between two slices of its walk
 * of @kn (kn->lock not held; @zero: step 1, else step 3), one pass run in
 * the caller's context (none left queued), and its mutex.
 */
extern unsigned int kpx_test_lc_budget;
extern void (*kpx_test_lc_hook)(struct kpx_net *kn, bool zero);
void kpx_test_lc_pass(void);
struct mutex *kpx_test_lc_mutex(void);
#endif

#endif /* _KPX_LB_H */
