// SPDX-License-Identifier: GPL-2.0-only
/*
 * The node's interface addresses from rtnetlink, on libnl-route-3's cache
 * manager (see addrs.h): one NETLINK_ROUTE socket, the "route/addr" cache
 * filled by a dump and kept current by the address groups' events.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/cache.h>
#include <netlink/route/addr.h>

#include "host/addrs.h"
#include "base/log.h"

#define COMP "addrs"
/* Addresses compared for a change; a node has far fewer. */
#define ADDRS_MAX 1024

struct kpx_addrs {
	struct nl_sock *sk;
	struct nl_cache_mngr *mngr;
	struct nl_cache *cache;
	bool fresh;		/* never returned by kpx_addrs_get() */
	char skip[IF_NAMESIZE];	/* addresses of this interface left out */
	size_t nlast;
	struct kpx_cidr *last;	/* ADDRS_MAX, as last returned */
};

struct collect {
	struct kpx_cidr *v;
	size_t n, max;
	int skip;		/* ifindex, 0 none */
};

static void collect_one(struct nl_object *o, void *arg)
{
	struct collect *c = arg;
	struct nl_addr *local = rtnl_addr_get_local((struct rtnl_addr *)o);
	struct kpx_cidr x;
	int fam;

	if (!local || (c->skip && rtnl_addr_get_ifindex((struct rtnl_addr *)o) == c->skip))
		return;
	fam = nl_addr_get_family(local);
	if ((fam != AF_INET && fam != AF_INET6) ||
	    nl_addr_get_len(local) != (fam == AF_INET ? 4U : 16U))
		return;
	memset(&x, 0, sizeof(x));
	x.family = fam;
	x.len = fam == AF_INET ? 32 : 128;
	memcpy(&x.addr, nl_addr_get_binary_addr(local), nl_addr_get_len(local));
	if (c->n < c->max)
		c->v[c->n] = x;
	c->n++;
}

/* The cache's addresses, sorted and distinct, into @v (@max); the count. */
static size_t collect(struct kpx_addrs *a, struct kpx_cidr *v, size_t max)
{
	struct collect c = { .v = v, .max = max };
	size_t i, k = 0, n;

	if (a->skip[0])
		c.skip = (int)if_nametoindex(a->skip);	/* 0 while absent */

	nl_cache_foreach(a->cache, collect_one, &c);
	n = c.n < max ? c.n : max;
	qsort(v, n, sizeof(*v), kpx_cidr_cmp);
	for (i = 0; i < n; i++)
		if (!k || kpx_cidr_cmp(&v[k - 1], &v[i]))
			v[k++] = v[i];
	return c.n > max ? c.n - (n - k) : k;
}

static void changed_cb(struct nl_cache *cache, struct nl_object *o, int action,
		       void *arg)
{
	(void)cache;
	(void)o;
	(void)action;
	(void)arg;
}

struct kpx_addrs *kpx_addrs_open(const char *skip_ifname, int *err)
{
	struct kpx_addrs *a = calloc(1, sizeof(*a));
	int r = -ENOMEM;

	if (!a || !(a->last = calloc(ADDRS_MAX, sizeof(*a->last))))
		goto fail;
	if (skip_ifname)
		snprintf(a->skip, sizeof(a->skip), "%s", skip_ifname);
	a->sk = nl_socket_alloc();
	if (!a->sk)
		goto fail;
	r = nl_cache_mngr_alloc(a->sk, NETLINK_ROUTE, NL_AUTO_PROVIDE, &a->mngr);
	if (r < 0)
		goto fail_nl;
	r = nl_cache_mngr_add(a->mngr, "route/addr", changed_cb, a, &a->cache);
	if (r < 0)
		goto fail_nl;
	r = nl_socket_set_nonblocking(a->sk);
	if (r < 0)
		goto fail_nl;
	a->fresh = true;
	kpx_info(COMP, "watching the node's interface addresses (rtnetlink)");
	return a;
fail_nl:
	kpx_err(COMP, "rtnetlink address watch: %s", nl_geterror(r));
	r = -EIO;
fail:
	*err = r;
	kpx_addrs_free(a);
	return NULL;
}

int kpx_addrs_fd(const struct kpx_addrs *a)
{
	return nl_cache_mngr_get_fd(a->mngr);
}

/* Lists the addresses again into the cache (after lost events). */
static int relist(struct kpx_addrs *a)
{
	struct nl_sock *sk = nl_socket_alloc();
	int r = -NLE_NOMEM;

	if (sk && !(r = nl_connect(sk, NETLINK_ROUTE)))
		r = nl_cache_refill(sk, a->cache);
	if (sk)
		nl_socket_free(sk);
	if (r < 0)
		kpx_err(COMP, "listing the interface addresses again: %s", nl_geterror(r));
	return r < 0 ? r : 0;
}

int kpx_addrs_process(struct kpx_addrs *a)
{
	struct kpx_cidr *cur;
	size_t n;
	int r;

	r = nl_cache_mngr_data_ready(a->mngr);
	if (r < 0 && r != -NLE_AGAIN) {
		kpx_err(COMP, "rtnetlink address events: %s", nl_geterror(r));
		/* events lost (ENOBUFS): list again on a socket of its own */
		if (r != -NLE_NOMEM && r != -NLE_MSG_OVERFLOW)
			return -EIO;
		if (relist(a))
			return -EIO;
	}
	if (a->fresh)
		return 1;
	cur = calloc(ADDRS_MAX, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	n = collect(a, cur, ADDRS_MAX);
	if (n > ADDRS_MAX)
		n = ADDRS_MAX;
	r = n != a->nlast || memcmp(cur, a->last, n * sizeof(*cur));
	free(cur);
	return r;
}

size_t kpx_addrs_get(struct kpx_addrs *a, struct kpx_cidr *v, size_t max)
{
	size_t n = collect(a, a->last, ADDRS_MAX), k;

	a->nlast = n < ADDRS_MAX ? n : ADDRS_MAX;
	a->fresh = false;
	k = a->nlast < max ? a->nlast : max;
	memcpy(v, a->last, k * sizeof(*v));
	return n;
}

void kpx_addrs_free(struct kpx_addrs *a)
{
	if (!a)
		return;
	if (a->mngr)
		nl_cache_mngr_free(a->mngr);	/* frees the cache */
	if (a->sk)
		nl_socket_free(a->sk);
	free(a->last);
	free(a);
}
