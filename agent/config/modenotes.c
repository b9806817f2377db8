// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fallback modes' own settings (ipvs.strictARP, the IPVS timeouts,
 * the masquerade bits, iptables.localhostNodePorts) where they do not
 * apply: one line each at start-up, for the mode in use, instead of
 * silence.  See config.h.
 */
#include <string.h>

#include "base/log.h"
#include "config/config.h"

static bool is(const char *mode, const char *name)
{
	return !strcmp(mode, name);
}

void kpx_config_mode_notes(const struct kpx_config *c, const char *mode)
{
	bool ipvs = is(mode, "ipvs"), kpx = is(mode, "kpx");

	if (c->ipvs_strict_arp && !ipvs)
		kpx_info("config", "ipvs.strictARP: not applicable in the %s mode (it stops ARP replies for the VIPs that the ipvs mode puts on its dummy device; this mode puts no Service IP on an interface)",
			 mode);
	if (c->n_ipvs_exclude && !ipvs)
		kpx_info("config", "ipvs.excludeCIDRs: not applicable in the %s mode (IPVS services kpx must not take for stale ones; this mode deletes no IPVS service but kpx's own)",
			 mode);
	if ((c->ipvs_tcp_s || c->ipvs_tcpfin_s || c->ipvs_udp_s) && !ipvs)
		kpx_info("config", "ipvs.tcpTimeout, tcpFinTimeout, udpTimeout: not applicable in the %s mode (IPVS's own connection table; this mode's connections follow the conntrack timeouts, conntrack.*)",
			 mode);
	if (c->ipt_masq_bit != 14 && (kpx || is(mode, "nftables")))
		kpx_info("config", "iptables.masqueradeBit %d: not applicable in the %s mode (%s)",
			 c->ipt_masq_bit, mode, kpx ?
			 "kpx.ko source-NATs in the kernel without a packet mark" :
			 "the nftables mode's mark is nftables.masqueradeBit");
	if (c->nft_masq_bit != 14 && !is(mode, "nftables"))
		kpx_info("config", "nftables.masqueradeBit %d: not applicable in the %s mode (%s)",
			 c->nft_masq_bit, mode, kpx ?
			 "kpx.ko source-NATs in the kernel without a packet mark" :
			 "this mode's mark is iptables.masqueradeBit");
	if (c->no_localhost_nodeports && ipvs)
		kpx_info("config", "iptables.localhostNodePorts false: the ipvs mode serves no 127.0.0.1 NodePort in any case");
	else if (c->no_localhost_nodeports &&
		 kpx_cidrs_hold_localhost(c->nodeport_cidrs, c->n_nodeport_cidrs))
		kpx_info("config", "iptables.localhostNodePorts false: no NodePort on 127.0.0.1 although --nodeport-addresses holds it");
}
