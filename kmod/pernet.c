// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx per-network-namespace lifetime: the frontend table, /proc/net/kpx and
 * the NAT hooks exist once per namespace.  At exit the hooks go first
 * (pre_exit), then, after the grace period the netns core waits for between
 * pre_exit and exit, the table is freed.
 */
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "pernet.h"
#include "hook.h"
#include "proc.h"
#include "svc.h"

unsigned int kpx_net_id __read_mostly;

static int __net_init kpx_net_init(struct net *net)
{
	struct kpx_net *kn = kpx_net(net);
	int err;

	err = kpx_svc_table_init(kn);
	if (err)
		return err;
	err = kpx_proc_init(net);
	if (err)
		goto destroy;
	err = kpx_hooks_register(net);
	if (err)
		goto proc;
	return 0;

proc:
	kpx_proc_exit(net);
destroy:
	kpx_svc_table_destroy(kn);
	return err;
}

static void __net_exit kpx_net_pre_exit(struct net *net)
{
	kpx_hooks_unregister(net);
}

static void __net_exit kpx_net_exit(struct net *net)
{
	kpx_proc_exit(net);
	kpx_svc_table_destroy(kpx_net(net));
}

static struct pernet_operations kpx_net_ops = {
	.init = kpx_net_init,
	.pre_exit = kpx_net_pre_exit,
	.exit = kpx_net_exit,
	.id = &kpx_net_id,
	.size = sizeof(struct kpx_net),
};

int kpx_pernet_init(void)
{
	return register_pernet_subsys(&kpx_net_ops);
}

void kpx_pernet_exit(void)
{
	unregister_pernet_subsys(&kpx_net_ops);
}
