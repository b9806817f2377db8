// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx CIDR lists: parsed from a nest of KPX_CIDRS_A_CIDR, published with
 * RCU as an immutable array and matched linearly (at most KPX_CIDRS_MAX
 * entries, each one masked compare of four words).
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/socket.h>
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "ranges.h"
#include "stats.h"

static const struct nla_policy cidr_policy[KPX_CIDR_A_MAX + 1] = {
	[KPX_CIDR_A_FAMILY] = { .type = NLA_U16 },
	[KPX_CIDR_A_ADDR] = { .type = NLA_BINARY },	/* parse_cidr(): EINVAL */
	[KPX_CIDR_A_PREFIXLEN] = { .type = NLA_U8 },
};

static void make_mask(union kpx_addr *mask, unsigned int plen)
{
	unsigned int i;

	memset(mask, 0, sizeof(*mask));
	for (i = 0; i < 4 && plen; i++) {
		unsigned int b = min(plen, 32U);

		mask->all[i] = htonl(b == 32 ? ~0U : ~(~0U >> b));
		plen -= b;
	}
}

static int parse_cidr(const struct nlattr *nest, int family,
		      struct kpx_cidr *c, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[KPX_CIDR_A_MAX + 1];
	unsigned int alen, i;
	u16 fam;
	int err;

	err = nla_parse_nested(tb, KPX_CIDR_A_MAX, nest, cidr_policy, extack);
	if (err)
		return err;
	if (!tb[KPX_CIDR_A_FAMILY] || !tb[KPX_CIDR_A_ADDR] ||
	    !tb[KPX_CIDR_A_PREFIXLEN]) {
		NL_SET_ERR_MSG_ATTR(extack, nest,
				    "CIDR needs a family, an address and a prefix length");
		return -EINVAL;
	}
	fam = nla_get_u16(tb[KPX_CIDR_A_FAMILY]);
	if (fam != AF_INET && fam != AF_INET6) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_CIDR_A_FAMILY],
				    "CIDR family must be AF_INET or AF_INET6");
		return -EINVAL;
	}
	if (family && fam != family) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_CIDR_A_FAMILY],
				    "CIDR family must be the frontend's");
		return -EINVAL;
	}
	alen = fam == AF_INET ? 4 : 16;
	if (nla_len(tb[KPX_CIDR_A_ADDR]) != alen) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_CIDR_A_ADDR],
				    "CIDR address length does not match family");
		return -EINVAL;
	}
	c->family = fam;
	c->plen = nla_get_u8(tb[KPX_CIDR_A_PREFIXLEN]);
	if (c->plen > alen * 8) {
		NL_SET_ERR_MSG_ATTR(extack, tb[KPX_CIDR_A_PREFIXLEN],
				    "CIDR prefix length out of range");
		return -EINVAL;
	}
	memset(&c->addr, 0, sizeof(c->addr));
	memcpy(c->addr.bytes, nla_data(tb[KPX_CIDR_A_ADDR]), alen);
	make_mask(&c->mask, c->plen);
	for (i = 0; i < 4; i++) {
		if (c->addr.all[i] & ~c->mask.all[i]) {
			NL_SET_ERR_MSG_ATTR(extack, tb[KPX_CIDR_A_ADDR],
					    "CIDR has bits set past its prefix length");
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * kpx_cidrs_parse - parse a KPX_CIDRS_A_CIDR list
 * @list: the nest, or NULL
 * @family: AF_INET or AF_INET6 to require that family, 0 for either
 * @out: the new list, NULL when @list is NULL or empty; kfree() it (or
 *	kpx_cidrs_free_rcu() once published)
 * @extack: error report
 *
 * Return: 0, -EINVAL (malformed entry, more than KPX_CIDRS_MAX, unknown
 * attribute in the list) or -ENOMEM.
 */
int kpx_cidrs_parse(const struct nlattr *list, int family,
		    struct kpx_cidrs **out, struct netlink_ext_ack *extack)
{
	struct kpx_cidrs *l;
	struct nlattr *a;
	u32 n = 0;
	int rem, err;

	*out = NULL;
	if (!list)
		return 0;
	nla_for_each_nested(a, list, rem) {
		if (nla_type(a) != KPX_CIDRS_A_CIDR) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "unknown attribute in CIDR list");
			return -EINVAL;
		}
		n++;
	}
	if (n > KPX_CIDRS_MAX) {
		NL_SET_ERR_MSG_ATTR(extack, list, "too many CIDRs");
		return -EINVAL;
	}
	if (!n)
		return 0;
	l = kzalloc(struct_size(l, c, n), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->count = n;
	n = 0;
	nla_for_each_nested(a, list, rem) {
		err = parse_cidr(a, family, &l->c[n++], extack);
		if (err) {
			kfree(l);
			return err;
		}
	}
	*out = l;
	return 0;
}

/**
 * kpx_cidrs_put - put a CIDR list as nest @type (empty nest if @l is NULL)
 * @skb: the message
 * @type: the nest's attribute type
 * @l: the list, or NULL
 *
 * Return: 0 or -EMSGSIZE (the nest is cancelled).
 */
int kpx_cidrs_put(struct sk_buff *skb, int type, const struct kpx_cidrs *l)
{
	struct nlattr *list, *c;
	u32 i;

	list = nla_nest_start(skb, type);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; l && i < l->count; i++) {
		c = nla_nest_start(skb, KPX_CIDRS_A_CIDR);
		if (!c ||
		    nla_put_u16(skb, KPX_CIDR_A_FAMILY, l->c[i].family) ||
		    nla_put(skb, KPX_CIDR_A_ADDR,
			    l->c[i].family == AF_INET ? 4 : 16,
			    &l->c[i].addr) ||
		    nla_put_u8(skb, KPX_CIDR_A_PREFIXLEN, l->c[i].plen)) {
			nla_nest_cancel(skb, list);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, c);
	}
	nla_nest_end(skb, list);
	return 0;
}

/**
 * kpx_cidrs_match - is @addr in one of the prefixes of @l?
 * @l: the list, or NULL (matches nothing)
 * @family: @addr's family
 * @addr: network order; for AF_INET only the first word is read
 */
bool kpx_cidrs_match(const struct kpx_cidrs *l, u8 family,
		     const union kpx_addr *addr)
{
	u32 i;

	for (i = 0; l && i < l->count; i++) {
		const struct kpx_cidr *c = &l->c[i];

		if (c->family != family)
			continue;
		if (family == AF_INET) {
			if ((addr->ip & c->mask.ip) == c->addr.ip)
				return true;
			continue;
		}
		if (!((addr->all[0] & c->mask.all[0]) ^ c->addr.all[0]) &&
		    !((addr->all[1] & c->mask.all[1]) ^ c->addr.all[1]) &&
		    !((addr->all[2] & c->mask.all[2]) ^ c->addr.all[2]) &&
		    !((addr->all[3] & c->mask.all[3]) ^ c->addr.all[3]))
			return true;
	}
	return false;
}

/**
 * kpx_cidrs_free_rcu - free an unpublished list after a grace period
 * @l: the list, or NULL
 */
void kpx_cidrs_free_rcu(struct kpx_cidrs *l)
{
	if (l)
		kfree_rcu(l, rcu);
}

/**
 * kpx_svc_filtered - apply a frontend's source ranges to a new connection
 * @kn: the namespace's state
 * @svc: the frontend
 * @src: the connection's original source, network order (an IPv4 address
 *	in the first word, as in union nf_inet_addr)
 *
 * Counts a refused source in the frontend's and the namespace's FILTERED.
 * Call under rcu_read_lock().
 *
 * Return: true if the connection must be dropped.
 */
bool kpx_svc_filtered(struct kpx_net *kn, struct kpx_svc *svc,
		      const void *src)
{
	const struct kpx_cidrs *l = rcu_dereference(svc->ranges);
	union kpx_addr a = {};

	if (!l)
		return false;
	memcpy(a.bytes, src, svc->key.family == AF_INET ? 4 : 16);
	if (kpx_cidrs_match(l, svc->key.family, &a))
		return false;
	kpx_stat_inc2(svc->stats, kn->stats, filtered);
	return true;
}
