// SPDX-License-Identifier: GPL-2.0-only
/* The benchmarks' KPX_CMD_SET_SERVICE requests (setmsg.h). */
#include <arpa/inet.h>
#include <linux/kpx.h>
#include <netinet/in.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <sys/socket.h>

#include "setmsg.h"

struct nlattr *kpx_set_begin(struct nl_msg *m, int fam, uint8_t proto,
			     uint32_t vip, uint16_t port)
{
	struct nlattr *svc;

	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, fam, 0, 0,
			 KPX_CMD_SET_SERVICE, KPX_GENL_VERSION))
		return NULL;
	svc = nla_nest_start(m, KPX_A_SERVICE);
	if (!svc || nla_put_u16(m, KPX_SVC_A_FAMILY, AF_INET) ||
	    nla_put_u8(m, KPX_SVC_A_PROTOCOL, proto) ||
	    nla_put(m, KPX_SVC_A_ADDR, 4, &vip) ||
	    nla_put_u16(m, KPX_SVC_A_PORT, htons(port)))
		return NULL;
	return svc;
}

int kpx_set_put_be(struct nl_msg *m, uint32_t addr, uint16_t port)
{
	struct nlattr *be = nla_nest_start(m, KPX_BACKENDS_A_BACKEND);

	if (!be || nla_put(m, KPX_BE_A_ADDR, 4, &addr) ||
	    nla_put_u16(m, KPX_BE_A_PORT, htons(port)) ||
	    nla_nest_end(m, be) < 0)
		return -1;
	return 0;
}
