/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The benchmarks' KPX_CMD_SET_SERVICE requests (ctbench, mhbench,
 * genlbench): an IPv4 frontend and its backends, built with libnl.
 */
#ifndef KPX_BENCH_SETMSG_H
#define KPX_BENCH_SETMSG_H

#include <stdint.h>
#include <netlink/msg.h>

/*
 * kpx_set_begin() - put the genetlink header of a KPX_CMD_SET_SERVICE for
 * family @fam into @m and open its KPX_A_SERVICE with the frontend's
 * family (AF_INET), @proto, @vip (network order) and @port (host order).
 * Return: the open nest, for the caller's further attributes and its
 * nla_nest_end(); NULL if @m is too small.
 */
struct nlattr *kpx_set_begin(struct nl_msg *m, int fam, uint8_t proto,
			     uint32_t vip, uint16_t port);

/*
 * kpx_set_put_be() - one KPX_BACKENDS_A_BACKEND, IPv4 @addr (network
 * order) and @port (host order), in the backend list open in @m.
 * Return: 0, or -1 if @m is too small.
 */
int kpx_set_put_be(struct nl_msg *m, uint32_t addr, uint16_t port);

#endif
