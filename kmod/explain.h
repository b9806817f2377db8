/* SPDX-License-Identifier: GPL-2.0-only */
/* kpx KPX_CMD_EXPLAIN: the packet path's decision, read-only. */
#ifndef _KPX_EXPLAIN_H
#define _KPX_EXPLAIN_H

#include <linux/skbuff.h>

#include "kpx.h"

struct kpx_flow;

int kpx_explain_fill(struct sk_buff *msg, struct kpx_net *kn,
		     const struct kpx_flow *f, __be16 dport);

#endif /* _KPX_EXPLAIN_H */
