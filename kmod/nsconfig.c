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
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "nsconfig.h"
#include "netlink.h"

const struct nla_policy kpx_cfg_policy[KPX_CFG_A_MAX + 1] = {
	[KPX_CFG_A_LOCAL_CIDRS] = NLA_POLICY_NESTED(kpx_cidrs_policy),
	/* NUL-terminated: a longer name is EINVAL (NLA_STRING's is ERANGE) */
	[KPX_CFG_A_LOCAL_IFNAME] = { .type = NLA_NUL_STRING,
				     .len = IFNAMSIZ - 1 },
	[KPX_CFG_A_LOCAL_IFPREFIX] = { .type = NLA_NUL_STRING,
				       .len = IFNAMSIZ - 1 },
};

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
 * kpx_nl_set_config - KPX_CMD_SET_CONFIG doit
 * @skb: the request
 * @info: its attributes; KPX_A_CONFIG is required
 *
 * Absent settings keep their value; an empty list or "" clears one.
 *
 * Return: 0, -EINVAL (extack set) or -ENOMEM; nothing changes on error.
 */
int kpx_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	struct nlattr *tb[KPX_CFG_A_MAX + 1];
	struct kpx_cidrs *local = NULL;
	struct kpx_nscfg *cfg, *old;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, KPX_A_CONFIG)) {
		NL_SET_ERR_MSG(info->extack, "missing KPX_A_CONFIG");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, KPX_CFG_A_MAX, info->attrs[KPX_A_CONFIG],
			       kpx_cfg_policy, info->extack);
	if (err)
		return err;
	if (tb[KPX_CFG_A_LOCAL_CIDRS]) {
		err = kpx_cidrs_parse((const struct nlattr *const *)
				      &tb[KPX_CFG_A_LOCAL_CIDRS], 1, 0,
				      KPX_CIDRS_MAX, &local, info->extack);
		if (err)
			return err;
	}
	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL_ACCOUNT);
	if (!cfg) {
		kpx_cidrs_free(local);
		return -ENOMEM;
	}

	mutex_lock(&kn->lock);
	old = rcu_dereference_protected(kn->cfg, lockdep_is_held(&kn->lock));
	if (tb[KPX_CFG_A_LOCAL_CIDRS]) {
		cfg->local = local;
	} else if (old && old->local) {
		cfg->local = kpx_cidrs_dup(old->local);
		if (!cfg->local) {
			mutex_unlock(&kn->lock);
			kfree(cfg);
			return -ENOMEM;
		}
	}
	if (tb[KPX_CFG_A_LOCAL_IFNAME])
		nla_strscpy(cfg->ifname, tb[KPX_CFG_A_LOCAL_IFNAME],
			    sizeof(cfg->ifname));
	else if (old)
		strscpy(cfg->ifname, old->ifname, sizeof(cfg->ifname));
	if (tb[KPX_CFG_A_LOCAL_IFPREFIX])
		nla_strscpy(cfg->ifprefix, tb[KPX_CFG_A_LOCAL_IFPREFIX],
			    sizeof(cfg->ifprefix));
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
 * kpx_nl_get_config - KPX_CMD_GET_CONFIG doit: replies with KPX_A_CONFIG
 * @skb: the request
 * @info: the request's info
 *
 * Every setting is present in the reply (empty list and "" when unset).
 *
 * Return: 0, -ENOMEM or -EMSGSIZE.
 */
int kpx_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct kpx_net *kn = kpx_net(genl_info_net(info));
	const struct kpx_nscfg *cfg;
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;
	int err = -EMSGSIZE;

	/* a CIDR nest is at most 4 + 8 + 20 + 8 bytes; two names */
	msg = genlmsg_new(KPX_CIDRS_MAX * 40 + 2 * NLA_ALIGN(IFNAMSIZ) + 256,
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &kpx_family, 0, KPX_CMD_GET_CONFIG);
	if (!hdr)
		goto out;
	nest = nla_nest_start(msg, KPX_A_CONFIG);
	if (!nest)
		goto out;
	rcu_read_lock();
	cfg = rcu_dereference(kn->cfg);
	if (kpx_cidrs_put(msg, KPX_CFG_A_LOCAL_CIDRS, cfg ? cfg->local : NULL) ||
	    nla_put_string(msg, KPX_CFG_A_LOCAL_IFNAME, cfg ? cfg->ifname : "") ||
	    nla_put_string(msg, KPX_CFG_A_LOCAL_IFPREFIX,
			   cfg ? cfg->ifprefix : "")) {
		rcu_read_unlock();
		goto out;
	}
	rcu_read_unlock();
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
out:
	nlmsg_free(msg);
	return err;
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
