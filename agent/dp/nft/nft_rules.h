/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * --proxy-mode nftables: the rule text, as pure functions of the desired
 * state (no kernel access).  dp_nft.c sends what these write through
 * libnftables, one buffer = one transaction.
 *
 * Layout (kube-proxy's nftables mode, KEP-3866, in tables of our own:
 * "ip kpx" and "ip6 kpx", KPX_NFT_TABLE):
 *
 *   maps   service-ips            daddr . l4proto . dport : goto svc-<K>
 *          no-endpoint-services   daddr . l4proto . dport : goto reject-chain | drop
 *            (elements of both commented with the Service, kpx_nft_name_comment())
 *          firewall-ips           daddr . l4proto . dport : goto fw-<K>
 *   sets   local-cidrs            ns_config local prefixes (interval)
 *          cluster-ips            addresses of KPX_SVC_F_CLUSTER_IP frontends
 *   base   filter-prerouting  (filter, prerouting, dstnat - 10): firewall-check
 *          filter-input       (filter, -110): endpoints-check, 127/8 guard
 *          filter-forward     (filter, -110): endpoints-check, cluster-ips-check
 *          filter-output      (filter, output, -110): endpoints, firewall
 *          filter-output-post-dnat (filter, output, -90): cluster-ips-check
 *          nat-prerouting (nat, dstnat), nat-output (nat, -100): services
 *          nat-postrouting    (nat, srcnat): masquerading
 *   svc-<K>    masquerade marking per the flags, ClientIP affinity
 *              (ip saddr @aff-<K>__<B> goto ep-<K>__<B>), then
 *              "numgen random mod N vmap" (or inc / jhash) to ep chains
 *   ep-<K>__<B>  hairpin mark, update @aff-..., "dnat to" the backend
 *   fw-<K>     "ip saddr != { source ranges } drop"
 *
 * <K> is "<proto>-<addr>-<port>" and <B> "<addr>-<port>" with the
 * address in text form, ':' written as '-' (a one-to-one mapping of
 * inet_ntop() output; nft identifiers may not hold ':').
 *
 * Masquerade uses mark bit KPX_NFT_MASQ_MARK (kube-proxy's default
 * --iptables-masquerade-bit 14): set in the nat chains, cleared and
 * masqueraded in nat-postrouting.
 */
#ifndef KPX_NFT_RULES_H
#define KPX_NFT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include "base/service.h"
#include "dp/dataplane.h"
#include "base/strbuf.h"

#define KPX_NFT_TABLE "kpx"
#define KPX_NFT_MASQ_MARK (kpx_dp_params()->masq_mark)

/* "ip" for AF_INET, "ip6" for AF_INET6. */
const char *kpx_nft_family(int family);

/*
 * Deletes our table of @family if it exists and creates it with the
 * skeleton above (empty maps, chains, the default ns_config chain): the
 * first commit of an agent, as kube-proxy's first sync.
 */
void kpx_nft_gen_table(struct kpx_strbuf *b, int family);

/*
 * Rewrites the local-cidrs set and the mark-nonlocal chain of @family from
 * @c (kube-proxy --detect-local-mode; only @c's prefixes of @family).
 * @fresh: the table was created in this transaction (nothing to flush).
 */
void kpx_nft_gen_config(struct kpx_strbuf *b, int family,
			const struct kpx_ns_config *c, bool fresh);

/* Scheduling expression chosen for a frontend's scheduler name. */
enum kpx_nft_sched {
	KPX_NFT_SCHED_RANDOM,	/* "", "random": numgen random (weighted) */
	KPX_NFT_SCHED_RR,	/* "rr", "wrr": numgen inc (weighted for wrr) */
	KPX_NFT_SCHED_SH,	/* "sh": jhash of the source address */
};

/*
 * The expression used for @name; *@supported false when nftables has no
 * equivalent ("lc", "mh", unknown) and random is used instead.
 */
enum kpx_nft_sched kpx_nft_sched(const char *name, bool *supported);

/*
 * Changes one frontend from @old (as last committed; NULL: absent) to @new
 * (NULL: delete).  Both non-NULL must have the same key.  Flushes the
 * old chains, deletes the chains, sets and map elements that @new does not
 * have, creates @new's; affinity sets of backends kept (same timeout) are
 * kept, with their entries.  Writes nothing when both are NULL.
 */
void kpx_nft_gen_service(struct kpx_strbuf *b, const struct kpx_service *old,
			 const struct kpx_service *new);

/*
 * Adds (@add) or deletes @addr (network byte order) in the cluster-ips set:
 * the addresses of the KPX_SVC_F_CLUSTER_IP frontends, where a new
 * connection left undNATed (a port no frontend has) is rejected, as
 * kube-proxy's nftables mode does.
 */
void kpx_nft_gen_cluster_ip(struct kpx_strbuf *b, int family, const void *addr,
			    bool add);

/* "delete table <family> kpx" (for cleanup; the table must exist). */
void kpx_nft_gen_delete_table(struct kpx_strbuf *b, int family);

/* The svc-<K> chain name of @s into @buf; returns @buf. */
const char *kpx_nft_svc_chain(const struct kpx_service *s, char *buf, size_t len);

#define KPX_NFT_NAMELEN 160

/*
 * The Service of a frontend as its map element's comment, the way
 * kube-proxy's nftables mode comments its elements ("ns/name:port"), with
 * the kind after a space: ' comment "demo/web:http cluster-ip"' into @buf,
 * "" without a name (or one nft could not quote: a quote, backslash or
 * space, or longer than a comment holds).  nft_read.c reads it back.
 */
#define KPX_NFT_COMMENT_MAX 128	/* NFT_USERDATA_MAXLEN is 256 */
void kpx_nft_name_comment(const struct kpx_service *s, char *buf, size_t len);

#endif
