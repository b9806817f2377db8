// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx frontend names (KPX_SVC_A_NAME, KPX_SVC_A_KIND): checked, merged
 * with what the frontend had (an absent part is kept), put in dumps and
 * shown in /proc/net/kpx/services.
 */
#include <linux/err.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/kpx.h>

#include "kpx.h"
#include "name.h"

static const char *const kind_names[] = KPX_SVC_KIND_NAMES;

static_assert(ARRAY_SIZE(kind_names) == KPX_SVC_KIND_MAX + 1);

/**
 * kpx_name_parse - check the name and kind of a SET
 * @tb: the KPX_A_SERVICE nest, parsed with its policy (which bounds the
 *	name's length and makes sure it ends with a NUL)
 * @req: filled; points into the request
 * @extack: the error message
 *
 * The name must be visible ASCII (0x21..0x7e): /proc's columns stay
 * separated by spaces and every record on one line.
 *
 * Return: 0 or -EINVAL.
 */
int kpx_name_parse(struct nlattr **tb, struct kpx_name_req *req,
		   struct netlink_ext_ack *extack)
{
	struct nlattr *a = tb[KPX_SVC_A_NAME];
	const char *p;

	memset(req, 0, sizeof(*req));
	if (a) {
		req->str = nla_data(a);
		for (p = req->str; *p; p++) {
			if (*p < 0x21 || *p > 0x7e) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "name must be visible ASCII, without space or control characters");
				return -EINVAL;
			}
		}
	}
	a = tb[KPX_SVC_A_KIND];
	if (a) {
		req->kind = nla_get_u8(a);
		req->has_kind = true;
		if (req->kind > KPX_SVC_KIND_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, a, "unknown frontend kind");
			return -EINVAL;
		}
	}
	return 0;
}

/* Does @req change anything (else the frontend keeps its name)? */
bool kpx_name_req_any(const struct kpx_name_req *req)
{
	return req && (req->str || req->has_kind);
}

/**
 * kpx_name_build - the name a frontend has after a SET
 * @old: what it had (NULL: none)
 * @req: what the SET says, kpx_name_req_any()
 *
 * Return: a new object (GFP_KERNEL_ACCOUNT, at most KPX_SVC_NAME_MAX bytes
 * of string), NULL when the frontend is left with neither a name nor a
 * kind, or ERR_PTR(-ENOMEM).
 */
struct kpx_name *kpx_name_build(const struct kpx_name *old,
				const struct kpx_name_req *req)
{
	const char *str = req->str ? req->str : (old ? old->str : "");
	u8 kind = req->has_kind ? req->kind : (old ? old->kind : 0);
	size_t len = strnlen(str, KPX_SVC_NAME_MAX - 1);
	struct kpx_name *nm;

	if (!len && !kind)
		return NULL;
	nm = kmalloc(struct_size(nm, str, len + 1), GFP_KERNEL_ACCOUNT);
	if (!nm)
		return ERR_PTR(-ENOMEM);
	nm->kind = kind;
	memcpy(nm->str, str, len);
	nm->str[len] = '\0';
	return nm;
}

/* KPX_SVC_A_NAME (if any) and KPX_SVC_A_KIND of @svc; under RCU. */
int kpx_name_put(struct sk_buff *skb, const struct kpx_svc *svc)
{
	const struct kpx_name *nm = rcu_dereference(svc->name);

	if (nm && nm->str[0] && nla_put_string(skb, KPX_SVC_A_NAME, nm->str))
		return -EMSGSIZE;
	return nla_put_u8(skb, KPX_SVC_A_KIND, nm ? nm->kind : 0);
}

/* /proc's " Service Kind" columns of @svc, "-" for none; under RCU. */
void kpx_name_show(struct seq_file *seq, const struct kpx_svc *svc)
{
	const struct kpx_name *nm = rcu_dereference(svc->name);

	seq_printf(seq, " %s %s", nm && nm->str[0] ? nm->str : "-",
		   kind_names[nm ? nm->kind : 0]);
}
