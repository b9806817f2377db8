// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx: a Kubernetes Service proxy in the kernel.  Module init and exit.
 * The steps are kpx_core_init() and kpx_core_exit() (core.c).
 */
#include <linux/module.h>
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "core.h"

#define KPX_VERSION "0.1.0"

static int __init kpx_init(void)
{
	int err;

	err = kpx_core_init();
	if (err)
		return err;
	pr_info("kpx %s loaded\n", KPX_VERSION);
	return 0;
}

static void __exit kpx_exit(void)
{
	kpx_core_exit();
}

module_init(kpx_init);
module_exit(kpx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kpx: Kubernetes Service proxy (netfilter DNAT)");
MODULE_VERSION(KPX_VERSION);
MODULE_ALIAS_GENL_FAMILY(KPX_GENL_NAME);
