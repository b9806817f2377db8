/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx KPX_CMD_EXPLAIN: the packet path's decision, read-only. */
#ifndef _KPX_EXPLAIN_H
#define _KPX_EXPLAIN_H

#include <net/genetlink.h>
#include <linux/kpx.h>

extern const struct nla_policy kpx_explain_policy[KPX_EXP_A_MAX + 1];

int kpx_nl_explain(struct sk_buff *skb, struct genl_info *info);

#endif /* _KPX_EXPLAIN_H */
