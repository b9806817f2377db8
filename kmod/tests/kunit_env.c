// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx_kunit_full.ko: the module's own code (every object of kpx.ko but
 * main.o) with KUnit suites that drive it as userspace and the packet path
 * do.  KUnit runs a module's suites while the module is still coming up,
 * before any module_init, so each suite brings kpx up in its suite_init
 * with kpx.ko's own steps (kpx_core_init(), core.c) and down in its
 * suite_exit (kpx_core_exit()).
 * The genl family is named "kpx": do not load this module next to kpx.ko.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <net/genetlink.h>

#include "kpx.h"
#include "svc.h"
#include "lb.h"
#include "core.h"
#include "kunit_env.h"

/**
 * kpx_test_suite_init - a suite's suite_init: register what kpx.ko's init
 * registers
 * @suite: the suite (unused)
 *
 * Return: 0 or the first error (everything undone).
 */
int kpx_test_suite_init(struct kunit_suite *suite)
{
	return kpx_core_init();
}

/**
 * kpx_test_suite_exit - a suite's suite_exit: undo kpx_test_suite_init(),
 * in kpx.ko's exit order
 * @suite: the suite (unused)
 */
void kpx_test_suite_exit(struct kunit_suite *suite)
{
	kpx_core_exit();
}

/**
 * kpx_test_svc - a frontend and its backend set, for a test that holds
 * the namespace's config mutex (which keeps both)
 * @kn: the namespace; kn->lock held
 * @key: the frontend's key
 * @set: if not NULL, set to the frontend's current backend set (NULL
 *	without the frontend or without backends)
 *
 * Return: the frontend, or NULL.
 */
struct kpx_svc *kpx_test_svc(struct kpx_net *kn, const struct kpx_key *key,
			     const struct kpx_bset **set)
{
	struct kpx_svc *svc;

	lockdep_assert_held(&kn->lock);
	rcu_read_lock();
	svc = kpx_svc_lookup(kn, key);
	rcu_read_unlock();
	if (set)
		*set = svc ? rcu_dereference_protected(svc->bset,
						       lockdep_is_held(&kn->lock)) :
			     NULL;
	return svc;
}

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of kpx's frontend table and netlink family");

/**
 * kpx_test_req - a SET of one frontend, for kpx_net_svc_set()
 * @req: filled: no flags, source ranges, ClusterIP frontend or name, the
 *	default scheduler settings
 * @key: the frontend's key
 * @cfg: its backends, sorted by kpx_be_cfg_sort()
 * @n: number of entries in @cfg
 */
void kpx_test_req(struct kpx_svc_req *req, const struct kpx_key *key,
		  struct kpx_be_cfg *cfg, u32 n)
{
	memset(req, 0, sizeof(*req));
	req->key = *key;
	req->cfg = cfg;
	req->n = n;
	kpx_sched_cfg_default(&req->scfg);
}
