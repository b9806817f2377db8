/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node's interface addresses, kept current from rtnetlink
 * (RTM_NEWADDR / RTM_DELADDR on the RTNLGRP_IPV4_IFADDR and
 * RTNLGRP_IPV6_IFADDR groups) by libnl-route-3's cache manager: what
 * --nodeport-addresses CIDRs select from, as kube-proxy's
 * NodePortAddresses.GetNodeIPs() reads the host's addresses.  An address
 * added, moved in (a keepalived VIP) or removed is seen as soon as its
 * event is read from the descriptor the event loop polls.
 *
 *	a = kpx_addrs_open(&err);	// lists the addresses, subscribes
 *	poll(kpx_addrs_fd(a)) ...
 *	if (kpx_addrs_process(a) > 0)	// the set changed
 *		n = kpx_addrs_get(a, v, max);
 *	kpx_addrs_free(a);
 */
#ifndef KPX_HOST_ADDRS_H
#define KPX_HOST_ADDRS_H

#include <stddef.h>

#include "base/cidr.h"

struct kpx_addrs;

/*
 * Lists the node's IPv4 and IPv6 interface addresses and subscribes to
 * their changes; those of interface @skip_ifname (NULL: none) are left out
 * (the IPVS mode's dummy interface holding the VIPs: they are no node
 * addresses, as kube-proxy's IPVS mode leaves kube-ipvs0's out).  NULL
 * with *err a negative errno on failure.
 */
struct kpx_addrs *kpx_addrs_open(const char *skip_ifname, int *err);

/* The descriptor to poll for readability (events pending). */
int kpx_addrs_fd(const struct kpx_addrs *a);

/*
 * Reads the pending events without blocking.  Returns 1 when the address
 * set differs from the one kpx_addrs_get() returned last (or it was never
 * called), 0 when not, a negative errno when the socket failed (the
 * caller may go on with the last set).
 */
int kpx_addrs_process(struct kpx_addrs *a);

/*
 * The current addresses, distinct, ordered by kpx_cidr_cmp() (family,
 * then address; len is the address's full length, 32 or 128), into
 * v[0..max-1].  Returns how many there are (more than @max: only @max
 * written).
 */
size_t kpx_addrs_get(struct kpx_addrs *a, struct kpx_cidr *v, size_t max);

void kpx_addrs_free(struct kpx_addrs *a);

#endif
