// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx CIDR lists: parsed from one or more nests of KPX_CIDRS_A_CIDR and
 * published with RCU as an immutable object.  It keeps the prefixes as
 * given (for dumps) and, for matching, the same address space as sorted,
 * disjoint intervals of 128-bit numbers: a source is matched with one
 * binary search, O(log n) whatever the number of prefixes (up to
 * KPX_SOURCE_RANGES_MAX) and however they overlap.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sort.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/socket.h>
#include <net/genetlink.h>
#include <linux/kpx.h>

#include "ranges.h"

static const struct nla_policy cidr_policy[KPX_CIDR_A_MAX + 1] = {
	[KPX_CIDR_A_FAMILY] = { .type = NLA_U16 },
	[KPX_CIDR_A_ADDR] = { .type = NLA_BINARY },	/* parse_cidr(): EINVAL */
	[KPX_CIDR_A_PREFIXLEN] = { .type = NLA_U8 },
};

/* The policy of a KPX_CIDRS_A_CIDR list, for NLA_POLICY_NESTED(). */
const struct nla_policy kpx_cidrs_policy[KPX_CIDRS_A_MAX + 1] = {
	[KPX_CIDRS_A_CIDR] = NLA_POLICY_NESTED(cidr_policy),
};

/* Parsing reschedules every this many prefixes. */
#define CIDR_STEP	1024

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

/* @addr as a 128-bit number (IPv4: its low 32 bits), host order. */
static void to_u128(u8 family, const union kpx_addr *addr, u64 *x)
{
	__be64 w[2];

	if (family == AF_INET) {
		x[0] = 0;
		x[1] = ntohl(addr->ip);
		return;
	}
	memcpy(w, addr->bytes, sizeof(w));
	x[0] = be64_to_cpu(w[0]);
	x[1] = be64_to_cpu(w[1]);
}

static int cmp_u128(const u64 *a, const u64 *b)
{
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	if (a[1] != b[1])
		return a[1] < b[1] ? -1 : 1;
	return 0;
}

static int iv_cmp(const void *a, const void *b)
{
	const struct kpx_cidr_iv *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return cmp_u128(x->lo, y->lo);
}

/* Fills l->iv from l->c: sorted by (family, lo), overlaps merged. */
static void build_intervals(struct kpx_cidrs *l)
{
	union kpx_addr last;
	u32 i, n = 0;

	for (i = 0; i < l->count; i++) {
		const struct kpx_cidr *c = &l->c[i];
		struct kpx_cidr_iv *v = &l->iv[i];
		int w;

		v->family = c->family;
		to_u128(c->family, &c->addr, v->lo);
		for (w = 0; w < 4; w++)
			last.all[w] = c->addr.all[w] | ~c->mask.all[w];
		to_u128(c->family, &last, v->hi);
	}
	sort(l->iv, l->count, sizeof(*l->iv), iv_cmp, NULL);
	for (i = 0; i < l->count; i++) {
		struct kpx_cidr_iv *cur = n ? &l->iv[n - 1] : NULL;
		const struct kpx_cidr_iv *v = &l->iv[i];

		if (cur && cur->family == v->family &&
		    cmp_u128(v->lo, cur->hi) <= 0) {
			if (cmp_u128(v->hi, cur->hi) > 0)
				memcpy(cur->hi, v->hi, sizeof(cur->hi));
			continue;
		}
		l->iv[n++] = *v;
	}
	l->niv = n;
}

/* A list with room for @n prefixes and their intervals, all zero. */
static struct kpx_cidrs *cidrs_alloc(u32 n)
{
	struct kpx_cidrs *l = NULL;
	size_t off = ALIGN(struct_size(l, c, n),
			   __alignof__(struct kpx_cidr_iv));

	l = kvzalloc(size_add(off, array_size(n, sizeof(struct kpx_cidr_iv))),
		     GFP_KERNEL_ACCOUNT);
	if (!l)
		return NULL;
	l->count = n;
	l->iv = (struct kpx_cidr_iv *)((u8 *)l + off);
	return l;
}

/**
 * kpx_cidrs_parse - parse KPX_CIDRS_A_CIDR lists into one
 * @lists: the nests (validated with kpx_cidrs_policy), in order
 * @nlists: number of entries of @lists
 * @family: AF_INET or AF_INET6 to require that family, 0 for either
 * @max: most prefixes over all the lists
 * @out: the new list, NULL when there is no prefix; kpx_cidrs_free() it
 *	(or kpx_cidrs_free_rcu() once published)
 * @extack: error report
 *
 * Linear in the size of the lists (plus the sort of the intervals);
 * reschedules every CIDR_STEP prefixes.  Charged to the caller's memory
 * cgroup.
 *
 * Return: 0, -EINVAL (malformed entry, more than @max, unknown attribute
 * in a list) or -ENOMEM.
 */
int kpx_cidrs_parse(const struct nlattr *const *lists, u32 nlists,
		    int family, u32 max, struct kpx_cidrs **out,
		    struct netlink_ext_ack *extack)
{
	struct kpx_cidrs *l;
	struct nlattr *a;
	u32 i, n = 0;
	int rem, err;

	*out = NULL;
	for (i = 0; i < nlists; i++) {
		nla_for_each_nested(a, lists[i], rem) {
			if (nla_type(a) != KPX_CIDRS_A_CIDR) {
				NL_SET_ERR_MSG_ATTR(extack, a,
						    "unknown attribute in CIDR list");
				return -EINVAL;
			}
			if (++n > max) {
				NL_SET_ERR_MSG_ATTR(extack, lists[i],
						    "too many CIDRs");
				return -EINVAL;
			}
		}
	}
	if (!n)
		return 0;
	l = cidrs_alloc(n);
	if (!l)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < nlists; i++) {
		nla_for_each_nested(a, lists[i], rem) {
			err = parse_cidr(a, family, &l->c[n++], extack);
			if (err) {
				kvfree(l);
				return err;
			}
			if (!(n % CIDR_STEP))
				cond_resched();
		}
	}
	build_intervals(l);
	*out = l;
	return 0;
}

/**
 * kpx_cidrs_dup - copy a list
 * @l: the list, or NULL
 *
 * Return: the copy (charged to the caller's memory cgroup), or NULL if @l
 * is NULL or memory is short.
 */
struct kpx_cidrs *kpx_cidrs_dup(const struct kpx_cidrs *l)
{
	struct kpx_cidrs *d;

	if (!l)
		return NULL;
	d = cidrs_alloc(l->count);
	if (!d)
		return NULL;
	memcpy(d->c, l->c, array_size(l->count, sizeof(l->c[0])));
	memcpy(d->iv, l->iv, array_size(l->niv, sizeof(l->iv[0])));
	d->niv = l->niv;
	return d;
}

/** kpx_cidrs_free - free a list no reader can see (NULL is fine). */
void kpx_cidrs_free(struct kpx_cidrs *l)
{
	kvfree(l);
}

static int put_cidr(struct sk_buff *skb, const struct kpx_cidr *cd)
{
	struct nlattr *c = nla_nest_start(skb, KPX_CIDRS_A_CIDR);

	if (!c ||
	    nla_put_u16(skb, KPX_CIDR_A_FAMILY, cd->family) ||
	    nla_put(skb, KPX_CIDR_A_ADDR, cd->family == AF_INET ? 4 : 16,
		    &cd->addr) ||
	    nla_put_u8(skb, KPX_CIDR_A_PREFIXLEN, cd->plen)) {
		if (c)
			nla_nest_cancel(skb, c);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, c);
	return 0;
}

/**
 * kpx_cidrs_put_part - put a part of a CIDR list as nest @type
 * @skb: the message
 * @type: the nest's attribute type
 * @l: the list, or NULL (an empty nest)
 * @pos: the first prefix to put; advanced past the last one put
 * @room: most bytes the nest may take
 *
 * Puts as many prefixes from *@pos on as fit the message and @room.
 *
 * Return: 0, or -EMSGSIZE (nothing added) if not even the nest with one
 * further prefix fits.
 */
int kpx_cidrs_put_part(struct sk_buff *skb, int type,
		       const struct kpx_cidrs *l, u32 *pos, u32 room)
{
	u32 i = *pos, n = l ? l->count : 0;
	struct nlattr *list;

	list = nla_nest_start(skb, type);
	if (!list)
		return -EMSGSIZE;
	for (; i < n; i++) {
		if (skb_tail_pointer(skb) - (u8 *)list > room ||
		    put_cidr(skb, &l->c[i]))
			break;
	}
	if (i == *pos && i < n) {
		nla_nest_cancel(skb, list);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, list);
	*pos = i;
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
	struct nlattr *list;
	u32 i;

	list = nla_nest_start(skb, type);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; l && i < l->count; i++) {
		if (put_cidr(skb, &l->c[i])) {
			nla_nest_cancel(skb, list);
			return -EMSGSIZE;
		}
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
	struct kpx_cidr_iv x;
	u32 lo = 0, hi;

	if (!l)
		return false;
	x.family = family;
	to_u128(family, addr, x.lo);
	/* The last interval starting at or before x. */
	hi = l->niv;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (iv_cmp(&l->iv[mid], &x) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && l->iv[lo - 1].family == family &&
	       cmp_u128(x.lo, l->iv[lo - 1].hi) <= 0;
}

/**
 * kpx_cidrs_free_rcu - free an unpublished list after a grace period
 * @l: the list, or NULL
 */
void kpx_cidrs_free_rcu(struct kpx_cidrs *l)
{
	if (l)
		kvfree_rcu(l, rcu);
}

/**
 * kpx_svc_ranges - apply a frontend's source ranges to a new connection
 * @svc: the frontend
 * @src: the connection's original source, network order (an IPv4 address
 *	in the first word, as in union nf_inet_addr)
 *
 * Counts nothing (the NAT hook counts a refused source in FILTERED).
 * Call under rcu_read_lock().
 *
 * Return: KPX_EXP_RANGES_NONE, _ALLOWED or _DENIED (the connection must be
 * dropped).
 */
u8 kpx_svc_ranges(const struct kpx_svc *svc, const union kpx_addr *src)
{
	const struct kpx_cidrs *l = rcu_dereference(svc->ranges);

	if (!l)
		return KPX_EXP_RANGES_NONE;
	if (kpx_cidrs_match(l, svc->key.family, src))
		return KPX_EXP_RANGES_ALLOWED;
	return KPX_EXP_RANGES_DENIED;
}
