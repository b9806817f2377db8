/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kube-proxy's own iptables state, for kpx-agent --cleanup (as kube-proxy
 * --cleanup): the chains its iptables and ipvs modes create, in every
 * table, and the rules of other chains that jump to them.  Pure: text in,
 * text out; dp_ipt.c runs iptables-save and iptables-restore --noflush.
 *
 * kube-proxy's chains: KUBE-SERVICES, KUBE-EXTERNAL-SERVICES,
 * KUBE-NODEPORTS, KUBE-POSTROUTING, KUBE-FORWARD, KUBE-MARK-MASQ,
 * KUBE-PROXY-FIREWALL, KUBE-PROXY-CANARY, and KUBE-SVC-*, KUBE-SVL-*,
 * KUBE-EXT-*, KUBE-FW-*, KUBE-SEP-*, KUBE-XLB-* (iptables mode);
 * KUBE-LOAD-BALANCER, KUBE-NODE-PORT, KUBE-SOURCE-RANGES-FIREWALL,
 * KUBE-IPVS-FILTER, KUBE-IPVS-OUT-FILTER (ipvs mode).  The kubelet's
 * (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-MARK-DROP) and every other
 * chain are kept, their rules too unless they jump to one of these.
 */
#ifndef KPX_IPT_KUBEPROXY_H
#define KPX_IPT_KUBEPROXY_H

#include <stdbool.h>
#include <stddef.h>
#include "base/strbuf.h"

/* Whether @name (no leading ':') is one of kube-proxy's chains. */
bool kpx_ipt_kubeproxy_chain(const char *name, size_t len);

/*
 * From iptables-save output @save (any tables), the iptables-restore
 * --noflush input that removes kube-proxy's state: per table that has
 * some, its chains declared (flushed), the other chains' rules jumping
 * (-j, -g) to them deleted (-D), the chains deleted (-X), COMMIT.
 * Nothing is appended when there is nothing; *nchains (if not NULL) is
 * the number of chains removed.  0 or -ENOMEM.
 */
int kpx_ipt_kubeproxy_cleanup_text(const char *save, struct kpx_strbuf *out, size_t *nchains);

#endif
