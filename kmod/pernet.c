// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx per-network-namespace lifetime: the frontend table and /proc/net/kpx
 * exist once per namespace.  The NAT hooks (and with them conntrack) are
 * only switched on by the namespace's first SET, so namespaces kpx does not
 * serve (a node's pods) pay nothing.  At exit the hooks go first (pre_exit),
 * then, after the grace period the netns core waits for between pre_exit
 * and exit, the table is freed.
 */
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "pernet.h"
#include "hook.h"
#include "proc.h"
#include "svc.h"
#include "lb.h"
#include "masq.h"
#include "nsconfig.h"
#include "stats.h"
#include "backend.h"
#include "ct.h"
#include "ranges.h"

unsigned int kpx_net_id __read_mostly;

static int __net_init kpx_net_init(struct net *net)
{
	struct kpx_net *kn = kpx_net(net);
	int err;

	kn->net = net;
	kn->stats = kpx_stats_alloc();
	if (!kn->stats)
		return -ENOMEM;
	kpx_lc_scan_init(kn);
	err = kpx_svc_table_init(kn);
	if (err)
		goto free_stats;
	err = kpx_proc_init(net);
	if (err)
		goto destroy;
	return 0;

destroy:
	kpx_svc_table_destroy(kn);
free_stats:
	kpx_stats_free(kn->stats);
	return err;
}

/*
 * Switches translation on in a namespace, once; kn->lock held.  Return: 0
 * or the errno of kpx_hooks_register() or kpx_masq_register().
 */
static int net_hooks_enable(struct kpx_net *kn)
{
	int err;

	lockdep_assert_held(&kn->lock);
	if (kn->hooks_on)
		return 0;
	err = kpx_hooks_register(kn->net);
	if (err)
		return err;
	err = kpx_masq_register(kn->net);
	if (err) {
		kpx_hooks_unregister(kn->net);
		return err;
	}
	kn->hooks_on = true;
	return 0;
}

/**
 * kpx_net_svc_set - create or replace a frontend (KPX_CMD_SET_SERVICE)
 * @kn: the namespace's state
 * @req: the frontend, its backends and settings; req->ranges taken over
 *
 * Under kn->lock: the namespace's first SET switches its NAT hooks on
 * (they stay on, whatever follows), then __kpx_svc_set() changes the
 * table.
 *
 * Return: 0, an errno of the hooks' registration (nothing changed), or
 * one of __kpx_svc_set().
 */
int kpx_net_svc_set(struct kpx_net *kn, const struct kpx_svc_req *req)
{
	int err;

	mutex_lock(&kn->lock);
	err = net_hooks_enable(kn);
	if (err)
		kpx_cidrs_free(req->ranges);
	else
		err = __kpx_svc_set(kn, req);
	mutex_unlock(&kn->lock);
	return err;
}

static void __net_exit kpx_net_pre_exit(struct net *net)
{
	struct kpx_net *kn = kpx_net(net);

	kpx_lc_scan_stop(kn);
	kpx_lb_net_pre_exit(kn);
	/* No writer is left: the netns or the genl family is going away. */
	mutex_lock(&kn->lock);
	if (kn->hooks_on) {
		kpx_masq_unregister(net);
		kpx_hooks_unregister(net);
	}
	kn->hooks_on = false;
	mutex_unlock(&kn->lock);
	kpx_ct_net_exit(kn);	/* queued conntrack cleanups */
}

static void __net_exit kpx_net_exit(struct net *net)
{
	kpx_proc_exit(net);
	kpx_svc_table_destroy(kpx_net(net));
	kpx_nscfg_destroy(kpx_net(net));
	kpx_stats_free(kpx_net(net)->stats);
}

static struct pernet_operations kpx_net_ops = {
	.init = kpx_net_init,
	.pre_exit = kpx_net_pre_exit,
	.exit = kpx_net_exit,
	.id = &kpx_net_id,
	.size = sizeof(struct kpx_net),
};

/**
 * kpx_pernet_init - set up the per-namespace state and the deferred frees
 *
 * Return: 0 or an errno; nothing is left registered on error.
 */
int kpx_pernet_init(void)
{
	int err = kpx_free_wq_init();

	if (err)
		return err;
	err = register_pernet_subsys(&kpx_net_ops);
	if (err)
		kpx_free_wq_exit();
	return err;
}

/**
 * kpx_pernet_exit - tear every namespace's state down
 *
 * Returns once every deferred free of the tables has run.
 */
void kpx_pernet_exit(void)
{
	kpx_lc_exit();	/* its walk reads every namespace's state */
	unregister_pernet_subsys(&kpx_net_ops);
	kpx_free_wq_exit();
}
