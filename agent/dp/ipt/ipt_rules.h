/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --proxy-mode iptables, the pure part: iptables-restore input (for
 * iptables-restore --noflush / ip6tables-restore --noflush) from frontends,
 * and the reading of iptables-save output.  No process, no kernel state:
 * dp_ipt.c runs the tools, agent/tests/test_dp_ipt.c checks the text.
 *
 * The chains follow kube-proxy's iptables mode (pkg/proxy/iptables) under
 * the prefix KPX- so that the two never touch each other's rules:
 *
 *   nat    PREROUTING, OUTPUT -> KPX-SERVICES: per frontend with backends
 *            "-d VIP -p P --dport N -j KPX-SVC-<h>" (KPX-FW-<h> with
 *            source ranges), commented with its Service and kind
 *            ("demo/web:http cluster-ip", as kube-proxy's "ns/name:port")
 *            or, without a name, its key ("tcp 10.96.0.10:80"); the
 *            filter rules of a frontend too, with what they do after it
 *          KPX-FW-<h>: "-s RANGE -j KPX-SVC-<h>" per range; other sources
 *            fall through undNATed and are dropped in filter
 *          KPX-SVC-<h>: masquerade marks (KPX_SVC_F_MASQ: all;
 *            KPX_SVC_F_MASQ_NONLOCAL: -> KPX-MASQ-NONLOCAL), ClientIP
 *            affinity ("-m recent --rcheck --seconds T --reap" per
 *            endpoint), then "-m statistic --mode random --probability"
 *            to KPX-SEP-<h'> (weighted: w_i / sum of w_j for j >= i)
 *          KPX-SEP-<h'>: "-s BACKEND -j KPX-MARK-MASQ" (hairpin), DNAT
 *            (with "-m recent --set" when affinity)
 *          KPX-MASQ-NONLOCAL: RETURN for local sources (struct
 *            kpx_ns_config: CIDRs, -i IFNAME, -i PREFIX+), else mark
 *          KPX-MARK-MASQ: "-j MARK --or-mark 0x4000"
 *          POSTROUTING -> KPX-POSTROUTING: RETURN unmarked, clear the
 *            mark, MASQUERADE
 *   filter INPUT, FORWARD, OUTPUT (ctstate NEW) -> KPX-SERVICES:
 *            frontends without backends: REJECT (DROP with
 *            KPX_SVC_F_DROP_EMPTY; with source ranges, others DROP);
 *            frontends with source ranges: DROP what nat did not
 *            translate (kube-proxy's KUBE-PROXY-FIREWALL)
 *          FORWARD (every packet) -> KPX-FORWARD: while
 *            nf_conntrack_tcp_be_liberal is 0, "-m conntrack --ctstate
 *            INVALID -j DROP", as kube-proxy's KUBE-FORWARD: a forwarded
 *            reply segment conntrack cannot match to its entry's window
 *            would otherwise leave untranslated, with the backend's
 *            address, and draw a RST from the client that resets the
 *            backend.  Forwarded packets only, and of every flow, Service
 *            traffic or not (kube-proxy's scope); empty when liberal
 *
 * <h> is kpx_ipt_hash() of the frontend key, <h'> of the key and the
 * backend.  KPX-SERVICES, KPX-FORWARD, KPX-MASQ-NONLOCAL, KPX-MARK-MASQ
 * and KPX-POSTROUTING are rewritten by every restore; KPX-SVC/FW/SEP chains
 * only for the frontends asked for (kube-proxy's partial sync, KEP-3453).
 */
#ifndef KPX_IPT_RULES_H
#define KPX_IPT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/service.h"
#include "dp/dataplane.h"
#include "base/strbuf.h"

/* iptables' chain name limit (XT_EXTENSION_MAXNAMELEN 29, with the NUL). */
#define KPX_IPT_CHAIN_LEN 29
/* The masquerade mark: 1 << --iptables-masquerade-bit (default 14, 0x4000). */
#define KPX_IPT_MASQ_MARK (kpx_dp_params()->masq_mark)

typedef char kpx_ipt_chain_t[KPX_IPT_CHAIN_LEN];

/*
 * The first 16 characters of base32 (RFC 4648 alphabet) of the SHA-256 of
 * @s, as kube-proxy's portProtoHash(): stable across restarts and
 * versions.  @out gets 17 bytes.
 */
void kpx_ipt_hash(const char *s, char out[17]);

/*
 * Whether the Service name @name goes into a rule comment as it is
 * (kpx_ipt_parse_frontends() reads it back): not empty, no quote,
 * backslash or space.  Without, comments name the frontend's key.
 */
bool kpx_ipt_name_ok(const char *name);

/* Chain names of a frontend: "KPX-SVC-" / "KPX-FW-" + hash of its key. */
void kpx_ipt_chain_svc(const struct kpx_service *s, kpx_ipt_chain_t out);
void kpx_ipt_chain_fw(const struct kpx_service *s, kpx_ipt_chain_t out);
/* "KPX-SEP-" + hash of the frontend key and "ADDR:PORT" of backend @b. */
void kpx_ipt_chain_sep(const struct kpx_service *s, const struct kpx_backend *b,
		       kpx_ipt_chain_t out);

/*
 * All nat chains of frontend @s (SVC, FW when it has source ranges, one
 * SEP per backend; none without backends) appended to *v (realloc'd, *n
 * updated).  0 or -ENOMEM.
 */
/*
 * The ClusterIP frontend in @v (@n, sorted by kpx_service_key_cmp) that
 * the eTP Local external frontend @s names (KPX_SVC_F_EXT_LOCAL,
 * cluster_addr, cluster_port): its chain is the target of @s's in-cluster
 * short-circuit.  NULL: none, or @s is no such frontend.
 */
const struct kpx_service *kpx_ipt_cluster_frontend(const struct kpx_service *v, size_t n,
						   const struct kpx_service *s);

int kpx_ipt_frontend_chains(const struct kpx_service *s, kpx_ipt_chain_t **v,
			    size_t *n);

/* Hook rules from the built-in chains (KPX_IPT_HOOK_*). */
enum {
	KPX_IPT_HOOK_NAT_PREROUTING,
	KPX_IPT_HOOK_NAT_OUTPUT,
	KPX_IPT_HOOK_NAT_POSTROUTING,
	KPX_IPT_HOOK_FILTER_INPUT,
	KPX_IPT_HOOK_FILTER_FORWARD,
	KPX_IPT_HOOK_FILTER_OUTPUT,
	KPX_IPT_HOOK_FILTER_KPX_FORWARD,	/* FORWARD -> KPX-FORWARD */
	KPX_IPT_NHOOKS
};
#define KPX_IPT_HOOKS_ALL ((1U << KPX_IPT_NHOOKS) - 1)

/* What a restore for one family writes. */
struct kpx_ipt_gen {
	int family;			/* AF_INET or AF_INET6 */
	/* The whole state to have, sorted; other families are skipped. */
	const struct kpx_service *svcs;
	size_t n;
	/*
	 * Per svcs[i]: write its KPX-SVC/FW/SEP chains (flush and refill).
	 * NULL: all (a full restore).
	 */
	const bool *write;
	const struct kpx_ns_config *cfg;	/* NULL: nothing local */
	/* nat chains to flush and delete (-X): gone frontends and backends. */
	const kpx_ipt_chain_t *del_nat;
	size_t ndel_nat;
	/* filter chains to flush and delete (stale KPX- chains). */
	const kpx_ipt_chain_t *del_filter;
	size_t ndel_filter;
	/* KPX_IPT_HOOK_* bits of the jump rules to insert (missing ones). */
	unsigned int add_hooks;
	/*
	 * KPX-FORWARD drops conntrack INVALID packets: true unless
	 * nf_conntrack_tcp_be_liberal is set (kpx_ct_tcp_be_liberal()).
	 */
	bool drop_invalid;
};

/*
 * The iptables-restore --noflush input for @g into @out ("*filter ...
 * COMMIT *nat ... COMMIT").  0 or -ENOMEM, -EINVAL (a frontend of another
 * protocol than TCP, UDP, SCTP).
 */
int kpx_ipt_restore_text(const struct kpx_ipt_gen *g, struct kpx_strbuf *out);

/*
 * What iptables-save output says about our state in one family: the KPX-
 * chains and jumps, but not the ipvs mode's KPX-IPVS* ones (dp_ipvs.c keeps
 * and cleans those), so neither mode deletes a chain the other references.
 */
struct kpx_ipt_saved {
	kpx_ipt_chain_t *nat, *filter;	/* KPX- chains declared */
	size_t nnat, nfilter;
	unsigned int hooks;		/* KPX_IPT_HOOK_* jump rules present */
	/* The built-in chains' rules that jump to a KPX- chain, "-A ..." lines. */
	char **jumps_nat, **jumps_filter;
	size_t njumps_nat, njumps_filter;
};

/* Parses iptables-save output (all tables).  0 or -ENOMEM. */
int kpx_ipt_parse_save(const char *text, struct kpx_ipt_saved *out);
void kpx_ipt_saved_free(struct kpx_ipt_saved *s);

/*
 * The restore input that removes everything of @s (kpx-agent --cleanup):
 * the jump rules (-D), then each KPX- chain flushed and deleted.  Empty
 * when there is nothing.  0 or -ENOMEM.
 */
int kpx_ipt_cleanup_text(const struct kpx_ipt_saved *s, struct kpx_strbuf *out);

/*
 * The martian drop kube-proxy installs with route_localnet=1 (CVE-2020-8558):
 * appends to filter chain @chain (hooked where new
 * connections are seen: INPUT at least) the iptables-restore rule dropping
 * packets to 127.0.0.0/8 whose source is outside 127.0.0.0/8 unless their
 * conntrack state is RELATED, ESTABLISHED or DNAT: only the node itself may
 * use a loopback destination.  IPv4 only.  Used by the iptables and ipvs
 * modes.
 */
void kpx_ipt_localnet_drop(struct kpx_strbuf *b, const char *chain);

/* True when an IPv4 frontend's VIP is in 127.0.0.0/8 (needs route_localnet). */
bool kpx_ipt_is_localhost(const struct kpx_service *s);

#endif
