/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx frontend names: KPX_SVC_A_NAME and KPX_SVC_A_KIND, the Service a
 * frontend belongs to, for people only (never read by the packet path).
 */
#ifndef _KPX_NAME_H
#define _KPX_NAME_H

#include <linux/types.h>
#include <net/netlink.h>

struct kpx_svc;
struct seq_file;

/*
 * A frontend's name and kind, replaced as a whole with
 * rcu_replace_pointer() and freed after a grace period.  kpx_svc.name is
 * NULL for a frontend with neither.
 */
struct kpx_name {
	struct rcu_head rcu;
	u8 kind;		/* enum kpx_svc_kind */
	char str[];		/* "" for none */
};

/* What a SET says about them: each part absent (kept) or given. */
struct kpx_name_req {
	const char *str;	/* NULL: absent; "": clear */
	bool has_kind;
	u8 kind;
};

int kpx_name_parse(struct nlattr **tb, struct kpx_name_req *req,
		   struct netlink_ext_ack *extack);
bool kpx_name_req_any(const struct kpx_name_req *req);
struct kpx_name *kpx_name_build(const struct kpx_name *old,
				const struct kpx_name_req *req);
int kpx_name_put(struct sk_buff *skb, const struct kpx_svc *svc);
void kpx_name_show(struct seq_file *seq, const struct kpx_svc *svc);

#endif /* _KPX_NAME_H */
