/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kube-proxy's IPVS mode state, for kpx-agent --cleanup (as kube-proxy
 * --cleanup, without flushing IPVS services that are not its own): its
 * virtual servers (those on kube-ipvs0's addresses, and those on a node
 * address at a port of its KUBE-NODE-PORT-* sets: the NodePorts),
 * kube-ipvs0, and its ipsets (KUBE-CLUSTER-IP, KUBE-LOOP-BACK, ... and the
 * IPv6 KUBE-6-* ones).  Its iptables chains are the iptables mode's
 * cleanup (dp/ipt/ipt_kubeproxy.h), run before this one.
 */
#ifndef KPX_IPVS_KUBEPROXY_H
#define KPX_IPVS_KUBEPROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KPX_KUBE_IPVS_LINK "kube-ipvs0"

/* Whether @name is one of kube-proxy's ipsets (either family). */
bool kpx_ipvs_kubeproxy_set(const char *name);

/* kube-proxy's ipsets and NodePorts, read from "ipset save" output. */
struct kpx_kube_sets {
	char (*names)[64];	/* its sets present */
	size_t nnames;
	struct kpx_kube_port {
		uint8_t protocol;	/* IPPROTO_TCP, _UDP, _SCTP */
		uint16_t port;
	} *ports;		/* members of KUBE-NODE-PORT-*: its NodePorts */
	size_t nports;
};

/* Parses @save into @out (malloc'd; kpx_kube_sets_free()).  0 or -ENOMEM. */
int kpx_kube_sets_parse(const char *save, struct kpx_kube_sets *out);
void kpx_kube_sets_free(struct kpx_kube_sets *s);
/* Whether (@protocol, @port) is one of kube-proxy's NodePorts in @s. */
bool kpx_kube_sets_nodeport(const struct kpx_kube_sets *s, uint8_t protocol, uint16_t port);

#endif
