/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pure parts of --proxy-mode ipvs (dp_ipvs.c): the mapping of a
 * struct kpx_service onto an IPVS virtual service, the ipset entries that
 * carry what IPVS cannot (flags, source ranges, hairpin), the text of
 * `ipset restore` and `iptables-restore --noflush` input, and the parsing
 * of `ipset save` output to read our state back.  No I/O.
 *
 * Names: ipsets KPX-IPVS-<SET> (IPv4) and KPX-IPVS6-<SET> (IPv6); iptables
 * chains KPX-IPVS-* in the nat and mangle tables of both families (the
 * iptables mode's KPX-* chains are other names); masquerade mark 0x4000
 * (kube-proxy --iptables-masquerade-bit 14).
 *
 * The ruleset (per family), as kube-proxy's IPVS mode but with our names:
 *   nat PREROUTING  -> KPX-IPVS-PREROUTING: frontends in MASQ get the mark;
 *                      in MASQ-NONLOCAL, via KPX-IPVS-NONLOCAL, unless the
 *                      source is local (local CIDRs, -i interface / prefix+)
 *   nat OUTPUT      -> KPX-IPVS-OUTPUT: the same, local = local CIDRs only;
 *                      and a node process whose source is the VIP itself
 *                      (the kernel picks it: the VIP is on kpx-ipvs0) is
 *                      masqueraded (SVC src,dst), as kube-proxy does
 *   nat POSTROUTING -> KPX-IPVS-POSTROUTING: hairpin (LOOP dst,dst,src) is
 *                      masqueraded; marked packets too (mark cleared)
 *   mangle PREROUTING, OUTPUT -> KPX-IPVS-FILTER: new connections to an
 *                      EMPTY-DROP frontend, or to an FW frontend from a
 *                      source not in FW-SRC, are dropped (before IPVS: its
 *                      LOCAL_OUT hook runs before the filter table's)
 *   filter INPUT    -> KPX-IPVS-INPUT (kube-proxy's KUBE-IPVS-FILTER):
 *                      first (IPv4) the CVE-2020-8558
 *                      martian drop (kpx_ipt_localnet_drop(); a no-op
 *                      unless route_localnet is set: the agent sets it for
 *                      localhost NodePorts, which this mode does not serve,
 *                      see kpx_ipvs_serves()); then packets
 *                      to a frontend (SVC dst,dst) RETURN, and new
 *                      connections to any other port or protocol of an
 *                      address on kpx-ipvs0 (IPS dst) are REJECTed, so a
 *                      host daemon on 0.0.0.0 does not answer on a
 *                      ClusterIP / external / LB IP and undefined ports of
 *                      a ClusterIP are refused.  The filter table's INPUT
 *                      (priority 0) runs before IPVS's LOCAL_IN hooks, so
 *                      the destination there is still the VIP; a node
 *                      client's packets to a VIP that IPVS does not take in
 *                      LOCAL_OUT go through lo and INPUT too.
 *   filter FORWARD  -> KPX-IPVS-FORWARD: while nf_conntrack_tcp_be_liberal
 *                      is 0, packets conntrack marks INVALID are dropped,
 *                      as kube-proxy's KUBE-FORWARD rule: a forwarded reply
 *                      segment outside its entry's window is never sent on
 *                      untranslated.  Forwarded packets of every flow, as
 *                      kube-proxy's; the filter table's FORWARD (priority
 *                      0) runs before IPVS's FORWARD hook (reply NAT).
 */
#ifndef KPX_IPVS_RULES_H
#define KPX_IPVS_RULES_H

#include <stdbool.h>
#include <stdio.h>
#include "dp/ipvs/ipvs_nl.h"
#include "base/service.h"
#include "dp/dataplane.h"

/* Our ipsets, per family. */
enum kpx_ipvs_set {
	KPX_IPVS_SET_SVC,	  /* hash:ip,port + comment: every frontend (ownership) */
	KPX_IPVS_SET_MASQ,	  /* hash:ip,port: KPX_SVC_F_MASQ */
	KPX_IPVS_SET_MASQ_NONLOCAL, /* hash:ip,port: KPX_SVC_F_MASQ_NONLOCAL */
	KPX_IPVS_SET_EMPTY_DROP,  /* hash:ip,port: KPX_SVC_F_DROP_EMPTY and no backend */
	KPX_IPVS_SET_FW,	  /* hash:ip,port: frontends with source ranges */
	KPX_IPVS_SET_FW_SRC,	  /* hash:ip,port,net: (VIP, port, allowed source) */
	KPX_IPVS_SET_LOOP,	  /* hash:ip,port,ip: (backend, port, backend) hairpin */
	KPX_IPVS_SET_IPS,	  /* hash:ip: every address on kpx-ipvs0 (KUBE-IPVS-IPS) */
	KPX_IPVS_SET_N
};

#define KPX_IPVS_LINK "kpx-ipvs0"
#define KPX_IPVS_MASQ_MARK (kpx_dp_params()->masq_mark)
#define KPX_IPVS_COMMENT_MAX 256	/* ipset: IPSET_MAX_COMMENT_SIZE 255 */
/* One ipset entry: "SETNAME ENTRY[ comment "..."]". */
#define KPX_IPVS_LINE_MAX (KPX_IPVS_COMMENT_MAX + 80)

/* "KPX-IPVS-SVC" / "KPX-IPVS6-SVC"; NULL for a bad family or set. */
const char *kpx_ipvs_set_name(int family, enum kpx_ipvs_set set);

/*
 * The IPVS scheduler for a kpx one (KPX_SVC_A_SCHEDULER): rr, wrr, lc, sh
 * and mh are IPVS's own; "" and "random" have no IPVS equivalent and map
 * to "rr", kube-proxy's IPVS default (*fallback set true).  NULL for an
 * unknown name.
 */
const char *kpx_ipvs_sched(const char *kpx_sched, bool *fallback);

/*
 * The IPVS service for @s: key, scheduler, and ClientIP affinity as IPVS
 * persistence (IP_VS_SVC_F_PERSISTENT, timeout = affinity_timeout s).
 * -EINVAL for an unknown scheduler.
 */
int kpx_ipvs_svc_of(const struct kpx_service *s, struct kpx_ipvs_svc *out);

/*
 * The ipset entries of frontend @s, one "SETNAME ENTRY[ comment "..."]" per
 * line into @lines (at most @max), hairpin (LOOP) entries excluded: they
 * are shared by frontends with a common backend (kpx_ipvs_loop_entry()).
 * Returns the count, or -ENOSPC.
 */
int kpx_ipvs_entries(const struct kpx_service *s, char (*lines)[KPX_IPVS_LINE_MAX],
		     int max);
/* Entries a frontend may need: 5 + its source ranges (+1 for a /0 split). */
static inline int kpx_ipvs_entries_max(const struct kpx_service *s)
{
	return 6 + (int)s->nsource_ranges;
}

/* The LOOP entry of backend @b of a frontend (family, protocol) into @line. */
void kpx_ipvs_loop_entry(int family, uint8_t protocol, const struct kpx_backend *b,
			 char *line, size_t len);

/*
 * The backend of @s with @b's address and port (weights not compared), or
 * NULL.  @s may be NULL: a frontend not committed yet has no backend (the
 * first commit of every new frontend asks this).
 */
const struct kpx_backend *kpx_ipvs_find_backend(const struct kpx_service *s,
						const struct kpx_backend *b);

/*
 * Writes "add LINE\n" (`ipset restore` input) for the LOOP entry of each
 * backend of @s that @old lacks; @old is the frontend as committed, NULL
 * for a new one (then every backend).  Returns the number of lines.
 */
int kpx_ipvs_loop_adds(FILE *f, const struct kpx_service *old,
		       const struct kpx_service *s);

/*
 * `ipset -exist restore` input creating every set of both families
 * (idempotent).
 */
void kpx_ipvs_ipset_create(FILE *f);

/*
 * Writes "add LINE" for the lines of @new not in @old and (into @dels)
 * "del LINE" for those of @old not in @new: the minimal change of a
 * frontend's entries.  Either list may be empty.
 */
void kpx_ipvs_ipset_diff(FILE *adds, FILE *dels,
			 char (*old)[KPX_IPVS_LINE_MAX], int nold,
			 char (*new)[KPX_IPVS_LINE_MAX], int nnew);

/*
 * `ipset -exist restore` input for the IPS set of @family: "VERB SET ADDR"
 * with @verb "add" or "del", @addr in network order (4 or 16 bytes).
 */
void kpx_ipvs_ips_cmd(FILE *f, const char *verb, int family, const void *addr);

/* `ipset restore` input emptying both families' IPS sets. */
void kpx_ipvs_ips_flush(FILE *f);

/*
 * `iptables-restore --noflush` (family AF_INET) or ip6tables-restore
 * (AF_INET6) input for the whole constant ruleset: every KPX-IPVS chain
 * declared (so flushed) and filled; @c says what a local source is;
 * @drop_invalid: KPX-IPVS-FORWARD drops conntrack INVALID packets (false:
 * it stays empty).  The jumps from the built-in chains are not in it
 * (kpx_ipvs_jumps).
 */
void kpx_ipvs_iptables_rules(FILE *f, int family, const struct kpx_ns_config *c,
			     bool drop_invalid);

/*
 * Can IPVS serve frontend @s?  Not on a loopback address (127.0.0.0/8,
 * ::1: the 127.0.0.1 NodePorts of --nodeport-addresses): IPVS's NAT
 * transmit refuses a loopback source towards a non-local destination
 * (crosses_local_route_boundary()), so a node client would hang and only
 * other hosts (with route_localnet=1, CVE-2020-8558) could use it.
 * kube-proxy's IPVS mode does not create them either.
 */
bool kpx_ipvs_serves(const struct kpx_service *s);

/* The jumps from built-in chains: table, chain, target. */
struct kpx_ipvs_jump {
	const char *table, *chain, *target;
};
extern const struct kpx_ipvs_jump kpx_ipvs_jumps[];
extern const size_t kpx_ipvs_njumps;

/* Input deleting every KPX-IPVS chain (after the jumps are gone). */
void kpx_ipvs_iptables_delete(FILE *f);

/* One parsed `ipset save` "add" line of one of our sets. */
struct kpx_ipvs_entry {
	enum kpx_ipvs_set set;
	int family;
	uint8_t protocol;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;			/* the first IP, network order */
	uint16_t port;		/* host order */
	struct kpx_cidr net;	/* FW_SRC: the allowed source */
	char comment[KPX_IPVS_COMMENT_MAX];	/* SVC only */
};

/*
 * Parses one line of `ipset save`.  1 = an entry of our sets in @e, 0 =
 * another line (create, other sets, our IPS sets: addresses, not
 * frontends), -EINVAL = one of our sets but malformed.
 */
int kpx_ipvs_parse_save_line(const char *line, struct kpx_ipvs_entry *e);

/*
 * The SVC entry comment: kpx settings IPVS does not keep ("f=FLAGS
 * s=SCHED m=MH_SIZE x=AFFINITY_MAX", then " c=ADDR/PORT" for a frontend with
 * a cluster frontend key, then " k=KIND n=NAMESPACE/NAME:PORT" for one with
 * a Service name), written by kpx_ipvs_comment() (for kpx_ipvs_entries())
 * and read back by kpx_ipvs_comment_parse() into @s (flags, scheduler,
 * mh_size, affinity_max, cluster_addr/port, kind and name; @s->family must
 * be set).  -EINVAL if malformed, -ENOMEM.  ipvs_read.c holds both.
 */
void kpx_ipvs_comment(const struct kpx_service *s, char *buf, size_t len);
int kpx_ipvs_comment_parse(const char *comment, struct kpx_service *s);

/*
 * Every entry of our sets in `ipset save` output @text (cut in place), as
 * kpx_ipvs_parse_save_line() reads them; @bad (may be NULL) is called with
 * each malformed one.  *out malloc'd.  0 or -ENOMEM.
 */
int kpx_ipvs_parse_save(char *text, void (*bad)(const char *line),
			struct kpx_ipvs_entry **out, size_t *n);

/*
 * IPVS service @is with its destinations @d (@nd; quiesced ones, weight 0,
 * are draining, not backends) and our set entries @e (@ne: source ranges)
 * as a frontend into @s, normalized; @comment is its SVC entry's (NULL:
 * none, IPVS's scheduler is taken).  0 or -ENOMEM.
 */
int kpx_ipvs_frontend(const struct kpx_ipvs_svc *is, const char *comment,
		      const struct kpx_ipvs_dest *d, size_t nd,
		      const struct kpx_ipvs_entry *e, size_t ne, struct kpx_service *s);

/*
 * Does a backend taken away from a @protocol frontend drain instead of
 * going at once?  A deleted IPVS destination breaks its established
 * connections (expire_nodest_conn), while a deleted endpoint's must keep
 * working: TCP and SCTP destinations are quiesced (weight 0: no new
 * connection) and deleted once IPVS counts no connection to them, as
 * kube-proxy's IPVS graceful termination does; UDP ones go at once (the
 * syncer clears their conntrack entries), as kube-proxy's.
 */
bool kpx_ipvs_dest_drains(uint8_t protocol);

/*
 * Is @d (from kpx_ipvs_dest_dump()) a drained destination: quiesced
 * (weight 0; frontends' own backends have weight >= 1) and with no active
 * or inactive connection left?
 */
bool kpx_ipvs_dest_reapable(const struct kpx_ipvs_dest *d);

#endif
