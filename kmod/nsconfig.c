// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx namespace settings: what counts as a "local" source for
 * KPX_SVC_F_MASQ_NONLOCAL (kube-proxy --detect-local-mode).  A SET builds a
 * new immutable object from the old one and the attributes given and
 * publishes it with RCU; the masquerade decision reads it per new
 * connection under rcu_read_lock().
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/kpx.h>

#include "nsconfig.h"

static void nscfg_free(struct kpx_nscfg *cfg)
{
	if (!cfg)
		return;
	kpx_cidrs_free(cfg->local);
	kfree(cfg);
}

static void nscfg_free_rcu(struct rcu_head *head)
{
	nscfg_free(container_of(head, struct kpx_nscfg, rcu));
}

/**
 * kpx_nscfg_set - replace the namespace's settings (KPX_CMD_SET_CONFIG)
 * @kn: the namespace's state
 * @req: the settings the request gives; req->local taken over, on error
 *	too
 *
 * A setting the request does not give keeps its value; an empty list or
 * "" clears one.  Readers see the old object or the new one.
 *
 * Return: 0 or -ENOMEM; nothing changes on error.
 */
int kpx_nscfg_set(struct kpx_net *kn, const struct kpx_nscfg_req *req)
{
	struct kpx_nscfg *cfg, *old;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL_ACCOUNT);
	if (!cfg) {
		kpx_cidrs_free(req->local);
		return -ENOMEM;
	}

	mutex_lock(&kn->lock);
	old = rcu_dereference_protected(kn->cfg, lockdep_is_held(&kn->lock));
	if (req->has_local) {
		cfg->local = req->local;
	} else if (old && old->local) {
		cfg->local = kpx_cidrs_dup(old->local);
		if (!cfg->local) {
			mutex_unlock(&kn->lock);
			kfree(cfg);
			return -ENOMEM;
		}
	}
	if (req->has_ifname)
		strscpy(cfg->ifname, req->ifname, sizeof(cfg->ifname));
	else if (old)
		strscpy(cfg->ifname, old->ifname, sizeof(cfg->ifname));
	if (req->has_ifprefix)
		strscpy(cfg->ifprefix, req->ifprefix, sizeof(cfg->ifprefix));
	else if (old)
		strscpy(cfg->ifprefix, old->ifprefix, sizeof(cfg->ifprefix));
	cfg->ifprefix_len = strlen(cfg->ifprefix);
	rcu_assign_pointer(kn->cfg, cfg);
	mutex_unlock(&kn->lock);
	if (old)
		call_rcu(&old->rcu, nscfg_free_rcu);
	return 0;
}

/**
 * kpx_nscfg_src_why - is a new connection's source "local", and by what?
 * @cfg: the namespace's settings (rcu_dereference()d), or NULL
 * @family: AF_INET or AF_INET6
 * @src: the original source address, network order
 * @in: the interface it entered through; NULL for a locally generated
 *	packet, which is local only by its address
 *
 * Call under rcu_read_lock().
 *
 * Return: KPX_EXP_SRC_CIDR, KPX_EXP_SRC_IFNAME or KPX_EXP_SRC_IFPREFIX for
 * a local source; KPX_EXP_SRC_NO_CONFIG or KPX_EXP_SRC_EXTERNAL else.
 */
u8 kpx_nscfg_src_why(const struct kpx_nscfg *cfg, u8 family,
		     const union kpx_addr *src, const struct net_device *in)
{
	if (!cfg)
		return KPX_EXP_SRC_NO_CONFIG;
	if (kpx_cidrs_match(cfg->local, family, src))
		return KPX_EXP_SRC_CIDR;
	if (!in)
		return KPX_EXP_SRC_EXTERNAL;
	if (cfg->ifname[0] && !strncmp(in->name, cfg->ifname, IFNAMSIZ))
		return KPX_EXP_SRC_IFNAME;
	if (cfg->ifprefix_len &&
	    !strncmp(in->name, cfg->ifprefix, cfg->ifprefix_len))
		return KPX_EXP_SRC_IFPREFIX;
	return KPX_EXP_SRC_EXTERNAL;
}

/**
 * kpx_nscfg_src_local - is a new connection's source "local"?
 * @cfg: the namespace's settings (rcu_dereference()d), or NULL
 * @family: AF_INET or AF_INET6
 * @src: the original source address, network order
 * @in: as for kpx_nscfg_src_why()
 *
 * Call under rcu_read_lock().
 */
bool kpx_nscfg_src_local(const struct kpx_nscfg *cfg, u8 family,
			 const union kpx_addr *src,
			 const struct net_device *in)
{
	return kpx_nscfg_src_is_local(kpx_nscfg_src_why(cfg, family, src, in));
}

/**
 * kpx_nscfg_destroy - free the settings at namespace exit
 * @kn: the namespace's state; no reader may be left
 */
void kpx_nscfg_destroy(struct kpx_net *kn)
{
	nscfg_free(rcu_dereference_protected(kn->cfg, 1));
	RCU_INIT_POINTER(kn->cfg, NULL);
}
