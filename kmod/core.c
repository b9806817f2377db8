// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx's bring-up and tear-down, shared by the module (main.c) and the KUnit
 * environment (tests/kunit_env.c), so that both run the same steps.
 *
 * Exit order: the genetlink family goes first (no more writers), then the
 * per-namespace state (NAT hooks, then tables), then rcu_barrier() waits for
 * the deferred frees, whose callbacks live in this module.
 */
#include <linux/rcupdate.h>

#include "core.h"
#include "lb.h"
#include "masq.h"
#include "netlink.h"
#include "pernet.h"

/**
 * kpx_core_init - register the schedulers, the masquerade hooks, the
 * per-namespace state and the genetlink family, in that order
 *
 * Return: 0, or the first error with everything done so far undone.
 */
int kpx_core_init(void)
{
	int err;

	kpx_lb_init();
	err = kpx_masq_init();
	if (err)
		return err;
	err = kpx_pernet_init();
	if (err)
		goto masq;
	err = kpx_genl_init();
	if (err)
		goto pernet;
	return 0;

pernet:
	kpx_pernet_exit();
masq:
	kpx_masq_exit();
	rcu_barrier();
	return err;
}

/**
 * kpx_core_exit - undo kpx_core_init(), in the exit order above; returns
 * after the last deferred free of kpx's objects has run
 */
void kpx_core_exit(void)
{
	kpx_genl_exit();
	kpx_pernet_exit();
	kpx_masq_exit();
	rcu_barrier();
}
