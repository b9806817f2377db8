// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx: a Kubernetes Service proxy in the kernel.  Module init and exit.
 *
 * Exit order: the genetlink family goes first (no more writers), then the
 * per-namespace state (NAT hooks, then tables), then rcu_barrier() waits for
 * the deferred frees, whose callbacks live in this module.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "netlink.h"
#include "pernet.h"
#include "masq.h"
#include "lb.h"

#define KPX_VERSION "0.1.0"

static int __init kpx_init(void)
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
	pr_info("kpx %s loaded\n", KPX_VERSION);
	return 0;

pernet:
	kpx_pernet_exit();
masq:
	kpx_masq_exit();
	rcu_barrier();
	return err;
}

static void __exit kpx_exit(void)
{
	kpx_genl_exit();
	kpx_pernet_exit();
	kpx_masq_exit();
	rcu_barrier();
}

module_init(kpx_init);
module_exit(kpx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kpx: Kubernetes Service proxy (netfilter DNAT)");
MODULE_VERSION(KPX_VERSION);
MODULE_ALIAS_GENL_FAMILY(KPX_GENL_NAME);
