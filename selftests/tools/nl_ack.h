/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Extended netlink ACKs for the tools that talk to the kpx family (the
 * selftests and bench/tools): the socket options, for C libraries whose
 * linux/netlink.h predates them, and one call that turns both on.
 */
#ifndef KPX_SELFTEST_NL_ACK_H
#define KPX_SELFTEST_NL_ACK_H

#include <linux/netlink.h>
#include <sys/socket.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

/*
 * kpx_nl_ext_ack() - ask the kernel of netlink socket @fd for extack
 * messages (NETLINK_EXT_ACK) and for errors that do not echo the request
 * (NETLINK_CAP_ACK: a request can be megabytes).  Best effort: a kernel
 * without them answers with plain errors.
 */
static inline void kpx_nl_ext_ack(int fd)
{
	int one = 1;

	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
}

#endif
