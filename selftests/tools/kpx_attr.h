/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Attributes of the kpx family that the genetlink tools (kpx_genl,
 * kpx_fuzz) put the same way.
 */
#ifndef KPX_SELFTEST_ATTR_H
#define KPX_SELFTEST_ATTR_H

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <linux/kpx.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

/*
 * kpx_put_cidr() - one KPX_CIDRS_A_CIDR (@family, @addr of that family's
 * length, @prefixlen) in the prefix list open in @m.
 * Return: 0, or -EMSGSIZE if @m is too small.
 */
static inline int kpx_put_cidr(struct nl_msg *m, int family, const void *addr,
			       int prefixlen)
{
	struct nlattr *c = nla_nest_start(m, KPX_CIDRS_A_CIDR);

	if (!c || nla_put_u16(m, KPX_CIDR_A_FAMILY, (uint16_t)family) ||
	    nla_put(m, KPX_CIDR_A_ADDR, family == AF_INET6 ? 16 : 4, addr) ||
	    nla_put_u8(m, KPX_CIDR_A_PREFIXLEN, (uint8_t)prefixlen))
		return -EMSGSIZE;
	nla_nest_end(m, c);
	return 0;
}

#endif
