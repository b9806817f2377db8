// SPDX-License-Identifier: GPL-2.0-only
/*
 * kpx-ipvs0 and its addresses through libnl-route-3 (see ipvs_link.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_addr.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include "dp/ipvs/ipvs_link.h"
#include "dp/ipvs/ipvs_rules.h"

static int nle_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case 0: return 0;
	case NLE_EXIST: return -EEXIST;
	case NLE_OBJ_NOTFOUND: case NLE_NOADDR: case NLE_NODEV: return -ENODEV;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_PERM: case NLE_NOACCESS: return -EPERM;
	case NLE_INVAL: return -EINVAL;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	default: return -EIO;
	}
}

int kpx_ipvs_ip_cmp(const void *a, const void *b)
{
	const struct kpx_ipvs_ip *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(&x->addr, &y->addr, x->family == AF_INET ? 4 : 16);
}

struct nl_sock *kpx_ipvs_rtnl_open(void)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (sk && nl_connect(sk, NETLINK_ROUTE) < 0) {
		nl_socket_free(sk);
		sk = NULL;
	}
	return sk;
}

int kpx_ipvs_link_index(struct nl_sock *sk)
{
	return kpx_ipvs_link_index_of(sk, KPX_IPVS_LINK);
}

int kpx_ipvs_link_index_of(struct nl_sock *sk, const char *name)
{
	struct rtnl_link *link = NULL;
	int r = rtnl_link_get_kernel(sk, 0, name, &link);

	if (r < 0)
		return r == -NLE_OBJ_NOTFOUND || r == -NLE_NODEV ? -ENODEV : nle_errno(r);
	r = rtnl_link_get_ifindex(link);
	rtnl_link_put(link);
	return r;
}

int kpx_ipvs_link_ensure(struct nl_sock *sk)
{
	struct rtnl_link *link = NULL, *chg;
	int r = rtnl_link_get_kernel(sk, 0, KPX_IPVS_LINK, &link);

	if (r < 0) {
		link = rtnl_link_alloc();
		if (!link)
			return -ENOMEM;
		rtnl_link_set_name(link, KPX_IPVS_LINK);
		r = rtnl_link_set_type(link, "dummy");
		if (!r) {
			rtnl_link_set_flags(link, IFF_UP);
			r = rtnl_link_add(sk, link, NLM_F_CREATE);
		}
		rtnl_link_put(link);
		if (r < 0)
			return nle_errno(r);
		return kpx_ipvs_link_index(sk);
	}
	if (!(rtnl_link_get_flags(link) & IFF_UP)) {
		chg = rtnl_link_alloc();
		if (!chg) {
			rtnl_link_put(link);
			return -ENOMEM;
		}
		rtnl_link_set_flags(chg, IFF_UP);
		r = rtnl_link_change(sk, link, chg, 0);
		rtnl_link_put(chg);
		if (r < 0) {
			rtnl_link_put(link);
			return nle_errno(r);
		}
	}
	r = rtnl_link_get_ifindex(link);
	rtnl_link_put(link);
	return r;
}

int kpx_ipvs_link_delete(struct nl_sock *sk)
{
	return kpx_ipvs_link_delete_name(sk, KPX_IPVS_LINK);
}

int kpx_ipvs_link_delete_name(struct nl_sock *sk, const char *name)
{
	struct rtnl_link *link = NULL;
	int r = rtnl_link_get_kernel(sk, 0, name, &link);

	if (r < 0)
		return 0;
	r = rtnl_link_delete(sk, link);
	rtnl_link_put(link);
	return nle_errno(r);
}

struct ipvec {
	struct kpx_ipvs_ip *v;
	size_t n, cap;
};

static int push(struct ipvec *a, const struct kpx_ipvs_ip *ip)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		void *p = realloc(a->v, cap * sizeof(*a->v));

		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = cap;
	}
	a->v[a->n++] = *ip;
	return 0;
}

int kpx_ipvs_addrs(struct nl_sock *sk, int ifindex, struct kpx_ipvs_ip **on,
		   size_t *non, struct kpx_ipvs_ip **other, size_t *nother)
{
	struct ipvec a = { 0 }, b = { 0 };
	struct nl_cache *cache = NULL;
	struct nl_object *o;
	int r = rtnl_addr_alloc_cache(sk, &cache);

	if (r < 0)
		return nle_errno(r);
	for (o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *ra = (struct rtnl_addr *)o;
		struct nl_addr *l = rtnl_addr_get_local(ra);
		struct kpx_ipvs_ip ip = { .family = rtnl_addr_get_family(ra) };
		size_t len = ip.family == AF_INET ? 4 : 16;

		if ((ip.family != AF_INET && ip.family != AF_INET6) || !l ||
		    nl_addr_get_len(l) != len)
			continue;
		memcpy(&ip.addr, nl_addr_get_binary_addr(l), len);
		r = push(rtnl_addr_get_ifindex(ra) == ifindex ? &a : &b, &ip);
		if (r)
			break;
	}
	nl_cache_free(cache);
	if (r) {
		free(a.v);
		free(b.v);
		return r;
	}
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), kpx_ipvs_ip_cmp);
	if (b.n)
		qsort(b.v, b.n, sizeof(*b.v), kpx_ipvs_ip_cmp);
	*on = a.v;
	*non = a.n;
	*other = b.v;
	*nother = b.n;
	return 0;
}

static struct rtnl_addr *mk_addr(int ifindex, const struct kpx_ipvs_ip *ip)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *l;
	int len = ip->family == AF_INET ? 4 : 16;

	if (!a)
		return NULL;
	l = nl_addr_build(ip->family, &ip->addr, (size_t)len);
	if (!l) {
		rtnl_addr_put(a);
		return NULL;
	}
	nl_addr_set_prefixlen(l, len * 8);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_local(a, l);
	nl_addr_put(l);
	if (ip->family == AF_INET6)
		rtnl_addr_set_flags(a, IFA_F_NODAD);
	return a;
}

int kpx_ipvs_addr_add(struct nl_sock *sk, int ifindex, const struct kpx_ipvs_ip *ip)
{
	struct rtnl_addr *a = mk_addr(ifindex, ip);
	int r;

	if (!a)
		return -ENOMEM;
	r = nle_errno(rtnl_addr_add(sk, a, 0));
	rtnl_addr_put(a);
	return r == -EEXIST ? 0 : r;
}

int kpx_ipvs_addr_del(struct nl_sock *sk, int ifindex, const struct kpx_ipvs_ip *ip)
{
	struct rtnl_addr *a = mk_addr(ifindex, ip);
	int r;

	if (!a)
		return -ENOMEM;
	r = nle_errno(rtnl_addr_delete(sk, a, 0));
	rtnl_addr_put(a);
	return r == -ENODEV ? 0 : r;
}
