/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dummy interface kpx-ipvs0 that holds every IPVS virtual address, so
 * that the node accepts packets to it (IPVS hooks LOCAL_IN and LOCAL_OUT),
 * as kube-proxy's kube-ipvs0; through libnl-route-3 (rtnl_link, rtnl_addr).
 * Errors: negative errno.
 */
#ifndef KPX_IPVS_LINK_H
#define KPX_IPVS_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>

struct nl_sock;

/* An address: family and bytes in network order. */
struct kpx_ipvs_ip {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
};

/* Orders by (family, address): for qsort and bsearch. */
int kpx_ipvs_ip_cmp(const void *a, const void *b);

/* A connected NETLINK_ROUTE socket, or NULL. */
struct nl_sock *kpx_ipvs_rtnl_open(void);

/* kpx-ipvs0's ifindex, or -ENODEV when it does not exist. */
int kpx_ipvs_link_index(struct nl_sock *sk);
/* Creates kpx-ipvs0 (type dummy) if missing, sets it up; its ifindex. */
int kpx_ipvs_link_ensure(struct nl_sock *sk);
/* Deletes kpx-ipvs0 (and so its addresses); 0 if it did not exist. */
int kpx_ipvs_link_delete(struct nl_sock *sk);
/* The same for the interface @name (kube-proxy's kube-ipvs0). */
int kpx_ipvs_link_index_of(struct nl_sock *sk, const char *name);
int kpx_ipvs_link_delete_name(struct nl_sock *sk, const char *name);

/*
 * The addresses of the node: those on @ifindex into *on (sorted), those on
 * any other interface into *other (sorted); both malloc'd.
 */
int kpx_ipvs_addrs(struct nl_sock *sk, int ifindex, struct kpx_ipvs_ip **on,
		   size_t *non, struct kpx_ipvs_ip **other, size_t *nother);
/* Adds @ip/32 or /128 (no DAD) on @ifindex; 0 if already there. */
int kpx_ipvs_addr_add(struct nl_sock *sk, int ifindex, const struct kpx_ipvs_ip *ip);
/* Removes it; 0 if it was not there. */
int kpx_ipvs_addr_del(struct nl_sock *sk, int ifindex, const struct kpx_ipvs_ip *ip);

#endif
