// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx netlink attributes of scheduling and affinity: parsing of
 * KPX_SVC_A_SCHEDULER, _MH_SIZE, _AFFINITY_TIMEOUT, _AFFINITY_MAX in SET,
 * and their dump with KPX_SVC_A_AFFINITY_EVICTIONS.  The policy entries
 * (plain types; ranges are checked here so that errors are EINVAL as the
 * contract says) are in netlink.c's svc_policy.
 */
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "lb.h"
#include "lb_nl.h"
#include "sched.h"
#include "maglev.h"

#define AFF_TIMEOUT_MAX	86400
#define AFF_MAX_MAX	(1U << 20)

/**
 * kpx_sched_cfg_parse - scheduler settings of a SET
 * @tb: the parsed KPX_A_SERVICE nest
 * @n: number of backends of the request
 * @scfg: filled in; absent attributes take their defaults
 * @extack: for the error message
 *
 * The Maglev size is checked whatever the scheduler (dumps carry it) and
 * used only by "mh".
 *
 * Return: 0 or -EINVAL (unknown scheduler, size not a prime in range or
 * not above @n with "mh", timeout above 86400, affinity max 0 or above 2^20).
 */
int kpx_sched_cfg_parse(struct nlattr **tb, u32 n, struct kpx_sched_cfg *scfg,
			struct netlink_ext_ack *extack)
{
	struct nlattr *a;
	int id;

	kpx_sched_cfg_default(scfg);
	a = tb[KPX_SVC_A_SCHEDULER];
	if (a) {
		id = kpx_sched_by_name(nla_data(a));
		if (id < 0) {
			NL_SET_ERR_MSG_ATTR(extack, a, "unknown scheduler");
			return -EINVAL;
		}
		scfg->id = id;
	}
	a = tb[KPX_SVC_A_MH_SIZE];
	if (a) {
		u32 size = nla_get_u32(a);

		if (size < KPX_MH_SIZE_MIN || size > KPX_MH_SIZE_MAX ||
		    !kpx_is_prime(size)) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "mh size must be a prime in KPX_MH_SIZE_MIN..KPX_MH_SIZE_MAX");
			return -EINVAL;
		}
		scfg->mh_size = size;
	}
	if (scfg->id == KPX_SCHED_MH && n >= scfg->mh_size) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_SVC_A_BACKENDS],
				    "mh size must exceed the number of backends");
		return -EINVAL;
	}
	a = tb[KPX_SVC_A_AFFINITY_TIMEOUT];
	if (a) {
		scfg->aff_timeout = nla_get_u32(a);
		if (scfg->aff_timeout > AFF_TIMEOUT_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "affinity timeout must be 0..86400");
			return -EINVAL;
		}
	}
	a = tb[KPX_SVC_A_AFFINITY_MAX];
	if (a) {
		scfg->aff_max = nla_get_u32(a);
		if (!scfg->aff_max || scfg->aff_max > AFF_MAX_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "affinity max must be 1..1048576");
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * kpx_sched_cfg_put - dump a frontend's scheduling attributes
 * @skb: the message
 * @svc: the frontend, under rcu_read_lock()
 *
 * Return: 0 or -EMSGSIZE.
 */
int kpx_sched_cfg_put(struct sk_buff *skb, const struct kpx_svc *svc)
{
	struct kpx_sched_cfg c = svc->scfg;

	if (nla_put_string(skb, KPX_SVC_A_SCHEDULER, kpx_sched_name(c.id)) ||
	    nla_put_u32(skb, KPX_SVC_A_MH_SIZE, c.mh_size) ||
	    nla_put_u32(skb, KPX_SVC_A_AFFINITY_TIMEOUT, c.aff_timeout) ||
	    nla_put_u32(skb, KPX_SVC_A_AFFINITY_MAX, c.aff_max) ||
	    nla_put_u64_64bit(skb, KPX_SVC_A_AFFINITY_EVICTIONS,
			      kpx_aff_evictions(svc), KPX_SVC_A_PAD))
		return -EMSGSIZE;
	return 0;
}

/** kpx_be_active - KPX_BE_A_ACTIVE of @be (0 unless its frontend is lc). */
u32 kpx_be_active(const struct kpx_backend *be)
{
	int a = atomic_read(&be->active);

	return a > 0 ? a : 0;
}
