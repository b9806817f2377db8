/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) */
/*
 * kpx: a Kubernetes Service proxy in the kernel.  Generic netlink interface.
 *
 * Family name KPX_GENL_NAME ("kpx"), version KPX_GENL_VERSION.  The header is
 * the specification: this comment describes every command and attribute.  The
 * interface is append-only: attributes and commands are only ever added at the
 * end of their enum, never renumbered or removed.
 *
 * State is per network namespace: every command acts on the namespace of the
 * netlink socket that sends it.
 *
 * Who may program: the mutations (KPX_CMD_SET_SERVICE, KPX_CMD_DEL_SERVICE,
 * KPX_CMD_FLUSH, KPX_CMD_SET_CONFIG) need CAP_NET_ADMIN in the initial user
 * namespace, whatever network namespace they act on (GENL_ADMIN_PERM, as
 * IPVS requires): a user who owns a user namespace (unshare -Urn) can read
 * but not program its own network namespace, so it cannot make the kernel
 * hold frontends, backend sets or Maglev tables on its behalf.  Every read
 * (KPX_CMD_GET_*, /proc/net/kpx) needs no privilege.  As a second line of
 * defence every allocation made for a request is charged to the sender's
 * memory cgroup (GFP_KERNEL_ACCOUNT) and bounded by the limits below.
 *
 * Byte order: addresses and ports are in network byte order (as on the wire);
 * every other integer is in host byte order.
 *
 * Commands
 * --------
 *
 * KPX_CMD_SET_SERVICE (doit; needs CAP_NET_ADMIN in the initial user ns)
 *   Creates the frontend named by its key, or replaces it.  The backend list
 *   given replaces the whole backend set atomically: a packet sees the old set
 *   or the new one, never a mix.  Backends present in both sets (same address
 *   and port) keep their counters.  An absent KPX_SVC_A_BACKENDS means "no
 *   backends": new connections to the frontend are then rejected with
 *   ICMP/ICMPv6 port unreachable (or dropped with KPX_SVC_F_DROP_EMPTY).
 *
 *     KPX_A_SERVICE: NLA_NESTED
 *       KPX_SVC_A_FAMILY: u16, AF_INET or AF_INET6                  (key)
 *       KPX_SVC_A_PROTOCOL: u8, IPPROTO_TCP, IPPROTO_UDP or
 *                           IPPROTO_SCTP                            (key)
 *       KPX_SVC_A_ADDR: binary, 4 bytes (AF_INET) or 16 (AF_INET6),
 *                       the VIP, network byte order                  (key)
 *       KPX_SVC_A_PORT: be16, the frontend port, not 0               (key)
 *       KPX_SVC_A_FLAGS: u32, optional, KPX_SVC_F_*; unknown bits are
 *                        rejected
 *       KPX_SVC_A_BACKENDS: NLA_NESTED, optional, at most
 *                           KPX_BACKENDS_MAX entries; absent or empty:
 *                           no backend
 *         KPX_BACKENDS_A_BACKEND: NLA_NESTED, one per backend, no duplicates
 *           KPX_BE_A_ADDR: binary, same length as the frontend's family
 *           KPX_BE_A_PORT: be16, target port, not 0
 *           KPX_BE_A_WEIGHT: u32, optional, 1..KPX_WEIGHT_MAX, default 1
 *       KPX_SVC_A_SOURCE_RANGES: nest of KPX_CIDRS_A_CIDR, optional, at most
 *           KPX_SOURCE_RANGES_MAX with the top-level KPX_A_SOURCE_RANGES;
 *           when present and not empty, new connections from other sources
 *           are dropped (Service.spec.loadBalancerSourceRanges, which has
 *           no limit of its own); prefixes may overlap or repeat; matched
 *           in O(log n) per new connection
 *       KPX_SVC_A_SCHEDULER: string, optional, "random" (default), "rr",
 *           "wrr", "lc", "sh" (source hash), "mh" (Maglev), as IPVS names
 *           them; unknown names are rejected with EINVAL
 *       KPX_SVC_A_MH_SIZE: u32, optional, largest Maglev lookup table size,
 *           a prime in KPX_MH_SIZE_MIN..KPX_MH_SIZE_MAX, default 65537; the
 *           table has the smallest of a list of primes (251, 509, ...,
 *           1048573, each about twice the last) above 100 x the backends,
 *           at most this; only with "mh"
 *       KPX_SVC_A_AFFINITY_TIMEOUT: u32, optional, seconds; 0 (default) =
 *           no session affinity; else ClientIP affinity with this timeout
 *           (Service.spec.sessionAffinityConfig.clientIP.timeoutSeconds,
 *           1..86400): a client address keeps its backend while it opens
 *           new connections within the timeout of its last new connection
 *       KPX_SVC_A_AFFINITY_MAX: u32, optional, most affinity entries kept
 *           for the frontend (default KPX_AFFINITY_MAX_DEFAULT); the oldest
 *           entry is evicted to make room
 *       KPX_SVC_A_CLUSTER_ADDR: binary, 4 or 16 bytes (the frontend's
 *           family), network order, and KPX_SVC_A_CLUSTER_PORT: be16, not
 *           0: the key (with the frontend's family and protocol) of the
 *           Service's ClusterIP frontend.  Both are required with
 *           KPX_SVC_F_EXT_LOCAL and refused without it, and must not name
 *           the frontend itself.
 *       KPX_SVC_A_NAME: NUL-terminated string, optional, at most
 *           KPX_SVC_NAME_MAX - 1 bytes: the Service the frontend belongs
 *           to, for people (kpxctl list, /proc/net/kpx/services), as an
 *           iptables rule carries a comment.  The agent writes
 *           "namespace/name:port" (kube-proxy's ServicePortName: just
 *           "namespace/name" for an unnamed port); the module only checks
 *           it: visible ASCII (0x21..0x7e), no space, newline or other
 *           control character, else EINVAL with an extack message (a
 *           longer or unterminated string: EINVAL from the policy check).
 *           Never used to match or schedule packets.
 *       KPX_SVC_A_KIND: u8, optional, enum kpx_svc_kind: which of the
 *           Service's addresses the frontend is (ClusterIP, NodePort, ...);
 *           a value past KPX_SVC_KIND_MAX is EINVAL.  Descriptive only, as
 *           KPX_SVC_A_NAME.
 *       Both are kept across SETs that leave them out: a SET without
 *       KPX_SVC_A_NAME keeps the frontend's name, one without
 *       KPX_SVC_A_KIND its kind (a new frontend starts with none).  An
 *       empty KPX_SVC_A_NAME ("") clears the name, KPX_SVC_KIND_NONE the
 *       kind.
 *     KPX_A_BACKENDS: NLA_NESTED, optional, may repeat; same layout as
 *                     KPX_SVC_A_BACKENDS, whose entries it extends.  One
 *                     attribute holds at most 64 KiB (about 2000 IPv6
 *                     backends), so a larger set is sent as KPX_SVC_A_BACKENDS
 *                     plus as many top-level KPX_A_BACKENDS as needed; the
 *                     KPX_BACKENDS_MAX limit and the duplicate check apply to
 *                     the union.  At most KPX_BACKEND_LISTS_MAX of them,
 *                     none empty (EINVAL).
 *     KPX_A_SOURCE_RANGES: NLA_NESTED, optional, may repeat; same layout
 *                     as KPX_SVC_A_SOURCE_RANGES, whose entries it extends
 *                     (a list of more than about 1,600 IPv6 prefixes does
 *                     not fit one attribute); at most
 *                     KPX_SOURCE_RANGE_LISTS_MAX of them, none empty, and
 *                     KPX_SOURCE_RANGES_MAX prefixes in all.
 *
 * KPX_CMD_DEL_SERVICE (doit; CAP_NET_ADMIN in the initial user ns)
 *   Deletes the frontend named by the four key attributes of KPX_A_SERVICE.
 *   Established TCP connections keep their NAT binding (conntrack); the
 *   conntrack entries of a UDP or SCTP frontend are deleted with it, as are
 *   those of a UDP/SCTP backend a SET removes, and a UDP/SCTP frontend that
 *   gets its first backends loses its entries without DNAT (stale flows,
 *   kube-proxy's conntrack cleanup).
 *
 * KPX_CMD_GET_SERVICE (dumpit; no privilege needed)
 *   Dumps every frontend of the namespace, one message each, carrying
 *   KPX_A_SERVICE with every SET attribute (the optional ones with their
 *   value or default; KPX_SVC_A_CLUSTER_* only with KPX_SVC_F_EXT_LOCAL,
 *   KPX_SVC_A_NAME only when the frontend has a name; KPX_SVC_A_KIND
 *   always, KPX_SVC_KIND_NONE without a kind: a module without names
 *   leaves both out)
 *   plus the read-only counters:
 *       KPX_SVC_A_CONNS: u64, new connections scheduled to a backend
 *       KPX_SVC_A_REJECTS: u64, new connections refused for want of a backend
 *           (those KPX_SVC_F_DROP_EMPTY dropped included)
 *       KPX_SVC_A_DROPS: u64, of those, the ones dropped rather than
 *           refused (KPX_SVC_F_DROP_EMPTY: externalTrafficPolicy Local
 *           without a local endpoint); a module older than this attribute
 *           leaves it out
 *       KPX_SVC_A_FILTERED: u64, new connections dropped by
 *           KPX_SVC_A_SOURCE_RANGES
 *       KPX_SVC_A_AFFINITY_EVICTIONS: u64, affinity entries evicted for room
 *       KPX_BE_A_CONNS (in each backend): u64, new connections sent to it
 *       KPX_BE_A_ACTIVE (in each backend): u32, connections to it that are
 *           still open (used by "lc"): a new connection counts at once, a
 *           closed one stops counting at the next conntrack recount, about
 *           a second later
 *   A frontend whose source ranges or backends do not fit one message is
 *   dumped as several consecutive messages with the same key: first the
 *   source ranges, each message with a further part of
 *   KPX_SVC_A_SOURCE_RANGES, then the backends, each message with a further
 *   part of KPX_SVC_A_BACKENDS (the other attributes and the counters
 *   repeat); userspace concatenates both lists.  The first message always
 *   has KPX_SVC_A_SOURCE_RANGES (empty if there are none); a continuation
 *   message has it only if it carries ranges.  Any reader buffer of at least
 *   one page (NLMSG_GOODSIZE) receives every frontend.
 *   A dump interrupted by a concurrent change is flagged NLM_F_DUMP_INTR;
 *   userspace retries it.
 *
 * KPX_CMD_GET_STATS (doit; no privilege needed)
 *   Replies with KPX_A_STATS, the namespace's totals:
 *       KPX_STATS_A_SERVICES: u32, frontends
 *       KPX_STATS_A_BACKENDS: u32, backends over all frontends
 *       KPX_STATS_A_CONNS: u64, new connections scheduled
 *       KPX_STATS_A_REJECTS: u64, new connections refused (no backend)
 *       KPX_STATS_A_DROPS: u64, new connections dropped (no backend and
 *                          KPX_SVC_F_DROP_EMPTY, or NAT setup failure)
 *       KPX_STATS_A_FILTERED: u64, new connections dropped by source ranges
 *       KPX_STATS_A_GENERATION: u32, the frontend table's generation: it
 *                          changes, by exactly 1 (skipping 0 when it wraps),
 *                          with every successful KPX_CMD_SET_SERVICE,
 *                          KPX_CMD_DEL_SERVICE and KPX_CMD_FLUSH of the
 *                          namespace, whoever sends it.  A writer that
 *                          counts its own changes can tell from it that
 *                          nobody else changed the table, without a dump.
 *                          Never 0.  A module without it leaves the
 *                          attribute out.
 *       KPX_STATS_A_INVALID_DROPS: u64, packets dropped because conntrack
 *                          marked them INVALID (a TCP segment outside the
 *                          window, say) while they belong to a flow kpx
 *                          DNATed (the entry their tuple names has a
 *                          destination NAT binding to a kpx frontend).
 *                          Untranslated they would reach the client with
 *                          the backend's address and draw a RST.
 *                          Other INVALID packets are not touched.  The
 *                          counterpart of kube-proxy's
 *                          kubeproxy_iptables_ct_state_invalid_dropped_packets_total.
 *                          A module without it leaves the attribute out.
 *       KPX_STATS_A_CT_DELETED4, KPX_STATS_A_CT_DELETED6: u64, IPv4 and
 *                          IPv6 conntrack entries the module's cleanup of
 *                          stale UDP and SCTP entries (KPX_CMD_DEL_SERVICE,
 *                          KPX_CMD_SET_SERVICE) deleted since the namespace's
 *                          first use.  The counterpart of kube-proxy's
 *                          kubeproxy_conntrack_reconciler_deleted_entries_total.
 *                          A module without them leaves the attributes out.
 *
 * KPX_CMD_FLUSH (doit; CAP_NET_ADMIN in the initial user ns)
 *   Deletes every frontend of the namespace.
 *
 * KPX_CMD_SET_CONFIG (doit; CAP_NET_ADMIN in the initial user ns)
 *   Sets the namespace's settings, replacing those given (an absent
 *   attribute leaves its setting unchanged; an empty nest clears a list).
 *     KPX_A_CONFIG: NLA_NESTED
 *       KPX_CFG_A_LOCAL_CIDRS: nest of KPX_CIDRS_A_CIDR, at most
 *             KPX_CIDRS_MAX: sources in these prefixes are "local" (pods
 *             of this cluster: kube-proxy --detect-local-mode=ClusterCIDR
 *             or NodeCIDR, from --cluster-cidr or the Node's podCIDRs)
 *       KPX_CFG_A_LOCAL_IFNAME: string, at most IFNAMSIZ - 1 bytes;
 *             packets entering through this interface are local
 *             (--detect-local-mode=BridgeInterface); "" clears it
 *       KPX_CFG_A_LOCAL_IFPREFIX: string, at most IFNAMSIZ - 1 bytes;
 *             packets entering through an interface whose name starts
 *             with it are local (InterfaceNamePrefix); "" clears it
 *   Locally generated packets (LOCAL_OUT) are never "local" for
 *   masquerade purposes unless their source is in a local prefix.
 *
 * KPX_CMD_GET_CONFIG (doit; no privilege needed)
 *   Replies with KPX_A_CONFIG as set.
 *
 * KPX_CMD_CT_SYNC (doit; CAP_NET_ADMIN in the initial user ns)
 *   Returns once the conntrack cleanups of the namespace's earlier UDP and
 *   SCTP changes (see KPX_CMD_DEL_SERVICE) are done.  Those run after the
 *   change has been answered, batched (one conntrack walk for every change
 *   made meanwhile, after an RCU grace period); a client that must see the
 *   stale entries gone (kpxctl, tests) sends this after its changes.  No
 *   attributes.  A module without this command answers EOPNOTSUPP.
 *
 * KPX_CMD_EXPLAIN (doit; no privilege needed)
 *   What the packet path would do now with the first packet of a new
 *   connection, computed by the function the NAT hook itself calls, in
 *   read-only mode: no counter, rr/wrr cursor, lc count or affinity entry
 *   changes, nothing is allocated but the reply, and the work is bounded
 *   (one frontend lookup, at most two source-range searches, one affinity
 *   peek, one pick), done under RCU in the sender's network namespace.
 *   The answer holds for the next connection only while nothing else
 *   changes the state (another connection, a SET, an affinity expiry).
 *     KPX_A_EXPLAIN: NLA_NESTED
 *       KPX_EXP_A_FAMILY: u16, AF_INET or AF_INET6
 *       KPX_EXP_A_PROTOCOL: u8, IPPROTO_TCP, IPPROTO_UDP or IPPROTO_SCTP
 *       KPX_EXP_A_SRC_ADDR, KPX_EXP_A_DST_ADDR: binary, 4 or 16 bytes
 *           (the family's), network order
 *       KPX_EXP_A_SRC_PORT, KPX_EXP_A_DST_PORT: be16
 *       KPX_EXP_A_IIF: u32, optional, the ifindex (in the sender's
 *           namespace) the packet enters through (PRE_ROUTING); absent:
 *           an interface that matches no local-interface setting
 *       KPX_EXP_A_LOCAL_OUT: flag, optional, the connection is made by
 *           the node itself (LOCAL_OUT); not with KPX_EXP_A_IIF
 *   The reply carries KPX_A_EXPLAIN with:
 *       KPX_EXP_A_VERDICT: u8, enum kpx_explain_verdict, always
 *       KPX_EXP_A_FRONTEND: nest of enum kpx_svc_attr, the frontend the
 *           destination matched: its key (FAMILY, PROTOCOL, ADDR, PORT),
 *           FLAGS, SCHEDULER, AFFINITY_TIMEOUT, NAME and KIND if it has
 *           them, and its counters CONNS, REJECTS, FILTERED as now
 *       KPX_EXP_A_SCHED_FRONTEND: the same for the ClusterIP frontend
 *           whose backends serve the connection (eTP Local short cut);
 *           absent when the matched frontend serves it
 *       KPX_EXP_A_SHORT_CIRCUIT: u8, 1 if the eTP Local short cut applies
 *       KPX_EXP_A_SOURCE: u8, enum kpx_explain_source, whether the source
 *           is local (KPX_CMD_SET_CONFIG) and by which setting
 *       KPX_EXP_A_SOURCE_RANGES: u8, enum kpx_explain_ranges
 *       KPX_EXP_A_AFFINITY: u8, enum kpx_explain_affinity; with
 *           KPX_EXP_AFF_HIT, KPX_EXP_A_AFFINITY_AGE: u64, milliseconds
 *           since the entry was last refreshed (the timeout counts from
 *           there)
 *       KPX_EXP_A_SCHEDULER: string, the serving frontend's scheduler
 *       KPX_EXP_A_BACKENDS: u32, backends of the serving frontend
 *       KPX_EXP_A_PICK: u8, enum kpx_explain_pick: how sure the backend is
 *       KPX_EXP_A_BACKEND: nest of enum kpx_backend_attr (ADDR, PORT,
 *           WEIGHT, CONNS, ACTIVE): the backend the connection would get;
 *           absent with KPX_EXP_PICK_RANDOM and without KPX_EXP_V_DNAT
 *       KPX_EXP_A_MASQ: u8, enum kpx_explain_masq (with KPX_EXP_V_DNAT;
 *           with KPX_EXP_PICK_RANDOM, for a backend that is not the
 *           client: a hairpin pick is masqueraded too)
 *       KPX_EXP_A_COUNTERS: u32, KPX_EXP_C_* bits: the counters the
 *           connection would add one to
 *   Errors: EINVAL (a missing or malformed attribute, a port of 0, both
 *   KPX_EXP_A_IIF and KPX_EXP_A_LOCAL_OUT; extack names it), ENODEV (no
 *   such ifindex in the namespace), ENOMEM, EMSGSIZE.  A module without
 *   the command answers EOPNOTSUPP.
 *
 * A CIDR (KPX_CIDRS_A_CIDR nest):
 *   KPX_CIDR_A_FAMILY: u16, AF_INET or AF_INET6
 *   KPX_CIDR_A_ADDR: binary, 4 or 16 bytes, network order; bits past the
 *       prefix length must be zero
 *   KPX_CIDR_A_PREFIXLEN: u8, 0..32 or 0..128
 *
 * Errors
 * ------
 * Every reply is an ACK (error 0) or one of these errnos; a refused request
 * changes nothing.
 *   EINVAL  an attribute is missing, malformed, out of range or unknown, or a
 *           backend repeats; the extack message names the problem and the
 *           attribute.  Also the netlink core's answer to a message too
 *           short for its genetlink header.
 *   ERANGE  the netlink core's policy check, before kpx sees the request:
 *           an attribute's length is outside what its policy allows
 *           (lib/nlattr.c); the extack points at it.  Any command.
 *   EPERM   a mutation without CAP_NET_ADMIN in the initial user namespace.
 *   ENOENT  KPX_CMD_DEL_SERVICE of a frontend that does not exist.
 *   ENOSPC  a SET that would take the namespace past KPX_SERVICES_MAX
 *           frontends or KPX_NS_BACKENDS_MAX backends.
 *   ENOMEM  allocation failed (SET_SERVICE, SET_CONFIG, GET_STATS,
 *           GET_CONFIG; for a dump, in its NLMSG_DONE).
 *   EBUSY   KPX_CMD_SET_SERVICE creating a frontend while the frontend
 *           table is resizing and cannot take it yet; try again.
 *   EMSGSIZE  a reply does not fit the reader's buffer; with a buffer of
 *           at least NLMSG_GOODSIZE every reply fits.
 *   EOPNOTSUPP  an unknown command, or a doit command sent as a dump or
 *           the reverse (the genetlink core); KPX_CMD_CT_SYNC sent to a
 *           module without it.
 * The first SET of a namespace also registers kpx's netfilter hooks there
 * and passes on an error of theirs (ENOMEM, or an errno of
 * nf_ct_netns_get(), such as ENOENT when conntrack's modules cannot be
 * loaded).  Not replies but socket errors: ENOBUFS from recvmsg() when a
 * reply could not be queued (receive buffer full, or memory short; the
 * request may or may not have been carried out: read the state back), and
 * EFAULT, ENOBUFS or EMSGSIZE from sendmsg() (the request never reached
 * kpx).
 */
#ifndef _UAPI_LINUX_KPX_H
#define _UAPI_LINUX_KPX_H

#include <linux/types.h>

#define KPX_GENL_NAME		"kpx"
#define KPX_GENL_VERSION	1

/*
 * Hard limits.  Kubernetes has none of its own for these; each is far above
 * what real clusters use (the Kubernetes scalability limits are 10,000
 * Services per cluster and 5,000 endpoints per Service), and each bounds
 * the memory one request or one namespace can hold:
 *   KPX_BACKENDS_MAX: backends of one frontend (ready endpoints of a
 *       Service port; 65535, what the Maglev table's u16 slots can name);
 *       a set of it is about 5 MiB of kernel memory
 *   KPX_BACKEND_LISTS_MAX: KPX_A_BACKENDS attributes in one SET (64 KiB
 *       each: KPX_BACKENDS_MAX IPv6 backends need about 40)
 *   KPX_WEIGHT_MAX: largest backend weight
 *   KPX_CIDRS_MAX: local prefixes (KPX_CFG_A_LOCAL_CIDRS)
 *   KPX_SOURCE_RANGES_MAX: source ranges of one frontend
 *       (loadBalancerSourceRanges); about 5 MiB at most
 *   KPX_SOURCE_RANGE_LISTS_MAX: KPX_A_SOURCE_RANGES attributes in one SET
 *   KPX_SERVICES_MAX: frontends of one network namespace (a Service has one
 *       per port and per ClusterIP, NodePort, load-balancer or external
 *       address)
 *   KPX_NS_BACKENDS_MAX: backends over all frontends of one namespace
 */
#define KPX_BACKENDS_MAX	65535
#define KPX_BACKEND_LISTS_MAX	1024
#define KPX_WEIGHT_MAX		65535
#define KPX_CIDRS_MAX		256
#define KPX_SOURCE_RANGES_MAX	65536
#define KPX_SOURCE_RANGE_LISTS_MAX	1024
#define KPX_SERVICES_MAX	1048576
#define KPX_NS_BACKENDS_MAX	16777216
/* Maglev table sizes (primes only) and the default affinity bound. */
#define KPX_MH_SIZE_MIN		251
#define KPX_MH_SIZE_MAX		1048573
#define KPX_MH_SIZE_DEFAULT	65537
#define KPX_AFFINITY_MAX_DEFAULT 65536
#define KPX_SCHED_NAME_MAX	16
/* KPX_SVC_A_NAME, with its NUL ("namespace/name:port" needs 143 at most). */
#define KPX_SVC_NAME_MAX	256

enum kpx_cmd {
	KPX_CMD_UNSPEC,
	KPX_CMD_SET_SERVICE,
	KPX_CMD_DEL_SERVICE,
	KPX_CMD_GET_SERVICE,
	KPX_CMD_GET_STATS,
	KPX_CMD_FLUSH,
	KPX_CMD_SET_CONFIG,
	KPX_CMD_GET_CONFIG,
	KPX_CMD_CT_SYNC,
	KPX_CMD_EXPLAIN,
	__KPX_CMD_MAX
};
#define KPX_CMD_MAX (__KPX_CMD_MAX - 1)

/* Top-level attributes. */
enum kpx_attr {
	KPX_A_UNSPEC,
	KPX_A_SERVICE,		/* nest, enum kpx_svc_attr */
	KPX_A_STATS,		/* nest, enum kpx_stats_attr */
	KPX_A_BACKENDS,		/* nest, enum kpx_backends_attr; repeats */
	KPX_A_CONFIG,		/* nest, enum kpx_cfg_attr */
	KPX_A_SOURCE_RANGES,	/* nest, enum kpx_cidrs_attr; repeats */
	KPX_A_EXPLAIN,		/* nest, enum kpx_explain_attr */
	__KPX_A_MAX
};
#define KPX_A_MAX (__KPX_A_MAX - 1)

/* Attributes of a frontend (a Service's VIP:port/protocol). */
enum kpx_svc_attr {
	KPX_SVC_A_UNSPEC,
	KPX_SVC_A_PAD,
	KPX_SVC_A_FAMILY,	/* u16 */
	KPX_SVC_A_PROTOCOL,	/* u8 */
	KPX_SVC_A_ADDR,		/* binary, network order */
	KPX_SVC_A_PORT,		/* be16 */
	KPX_SVC_A_FLAGS,	/* u32, KPX_SVC_F_* */
	KPX_SVC_A_BACKENDS,	/* nest, enum kpx_backends_attr */
	KPX_SVC_A_CONNS,	/* u64, read-only */
	KPX_SVC_A_REJECTS,	/* u64, read-only */
	KPX_SVC_A_SCHEDULER,	/* string */
	KPX_SVC_A_MH_SIZE,	/* u32 */
	KPX_SVC_A_AFFINITY_TIMEOUT,	/* u32, seconds */
	KPX_SVC_A_AFFINITY_MAX,	/* u32 */
	KPX_SVC_A_AFFINITY_EVICTIONS,	/* u64, read-only */
	KPX_SVC_A_SOURCE_RANGES,	/* nest, enum kpx_cidrs_attr */
	KPX_SVC_A_FILTERED,	/* u64, read-only */
	KPX_SVC_A_CLUSTER_ADDR,	/* binary, network order */
	KPX_SVC_A_CLUSTER_PORT,	/* be16 */
	KPX_SVC_A_NAME,		/* string, "namespace/name:port" */
	KPX_SVC_A_KIND,		/* u8, enum kpx_svc_kind */
	KPX_SVC_A_DROPS,	/* u64, read-only */
	__KPX_SVC_A_MAX
};
#define KPX_SVC_A_MAX (__KPX_SVC_A_MAX - 1)

/* Frontend flags. */
enum kpx_svc_flags {
	/*
	 * With no backend, drop new connections silently instead of answering
	 * port unreachable (externalTrafficPolicy: Local on a node without a
	 * local endpoint, KEP-1672 / Service.spec.externalTrafficPolicy).
	 */
	KPX_SVC_F_DROP_EMPTY = 1U << 0,
	/*
	 * Masquerade (SNAT to the outgoing interface's address) new
	 * connections whose source is not local (see KPX_CMD_SET_CONFIG): an
	 * external frontend (NodePort, LoadBalancer, externalIP) with
	 * externalTrafficPolicy: Cluster.
	 */
	KPX_SVC_F_MASQ_NONLOCAL = 1U << 1,
	/*
	 * Masquerade every new connection (--masquerade-all; NodePorts on
	 * 127.0.0.1, which need route_localnet).  Whatever the flags, a
	 * connection whose chosen backend is its own source (hairpin) is
	 * always masqueraded.
	 */
	KPX_SVC_F_MASQ = 1U << 2,
	/*
	 * The frontend's address is a ClusterIP.  A new TCP, UDP or SCTP
	 * connection to an address that at least one frontend with this flag
	 * has, on a port and protocol no frontend has, is refused at once with
	 * ICMP/ICMPv6 port unreachable instead of being left to time out
	 * (kube-proxy's nftables mode rejects traffic to an undefined port of
	 * a ClusterIP).  Counted in KPX_STATS_A_REJECTS.
	 */
	KPX_SVC_F_CLUSTER_IP = 1U << 3,
	/*
	 * An external frontend (NodePort, LoadBalancer IP, externalIP) of a
	 * Service with externalTrafficPolicy: Local; needs
	 * KPX_SVC_A_CLUSTER_ADDR and KPX_SVC_A_CLUSTER_PORT.  Only external
	 * clients are limited to this frontend's (local) backends: a new
	 * connection from a local source (see KPX_CMD_SET_CONFIG) or from the
	 * node itself (LOCAL_OUT) is scheduled as if it had been made to the
	 * Service's ClusterIP frontend, with that frontend's backends,
	 * scheduler, affinity and masquerade flags, and a connection from the
	 * node itself is always masqueraded (kube-proxy short-circuits such
	 * traffic to the Service's cluster chain).  If that frontend does not
	 * exist, this one is used as for any other client.
	 */
	KPX_SVC_F_EXT_LOCAL = 1U << 4,
	__KPX_SVC_F_ALL = KPX_SVC_F_DROP_EMPTY | KPX_SVC_F_MASQ_NONLOCAL |
			  KPX_SVC_F_MASQ | KPX_SVC_F_CLUSTER_IP |
			  KPX_SVC_F_EXT_LOCAL
};

/* KPX_SVC_A_KIND: which address of its Service a frontend is. */
enum kpx_svc_kind {
	KPX_SVC_KIND_NONE,		/* not said */
	KPX_SVC_KIND_CLUSTER_IP,	/* spec.clusterIPs */
	KPX_SVC_KIND_NODE_PORT,		/* a node address and spec.ports[].nodePort */
	KPX_SVC_KIND_LOAD_BALANCER,	/* status.loadBalancer.ingress[].ip */
	KPX_SVC_KIND_EXTERNAL_IP,	/* spec.externalIPs */
	__KPX_SVC_KIND_MAX
};
#define KPX_SVC_KIND_MAX (__KPX_SVC_KIND_MAX - 1)

/*
 * The name of each kind, indexed by enum kpx_svc_kind: what
 * /proc/net/kpx/services and kpxctl print and what kpxctl set --kind takes.
 */
#define KPX_SVC_KIND_NAMES {						\
	[KPX_SVC_KIND_NONE] = "-",					\
	[KPX_SVC_KIND_CLUSTER_IP] = "cluster-ip",			\
	[KPX_SVC_KIND_NODE_PORT] = "node-port",				\
	[KPX_SVC_KIND_LOAD_BALANCER] = "load-balancer",			\
	[KPX_SVC_KIND_EXTERNAL_IP] = "external-ip",			\
}

/* The backend list: a sequence of KPX_BACKENDS_A_BACKEND nests. */
enum kpx_backends_attr {
	KPX_BACKENDS_A_UNSPEC,
	KPX_BACKENDS_A_BACKEND,	/* nest, enum kpx_backend_attr */
	__KPX_BACKENDS_A_MAX
};
#define KPX_BACKENDS_A_MAX (__KPX_BACKENDS_A_MAX - 1)

/* Attributes of a backend (an endpoint's address and target port). */
enum kpx_backend_attr {
	KPX_BE_A_UNSPEC,
	KPX_BE_A_PAD,
	KPX_BE_A_ADDR,		/* binary, network order */
	KPX_BE_A_PORT,		/* be16 */
	KPX_BE_A_WEIGHT,	/* u32 */
	KPX_BE_A_CONNS,		/* u64, read-only */
	KPX_BE_A_ACTIVE,	/* u32, read-only */
	__KPX_BE_A_MAX
};
#define KPX_BE_A_MAX (__KPX_BE_A_MAX - 1)

/* Namespace totals (KPX_CMD_GET_STATS). */
enum kpx_stats_attr {
	KPX_STATS_A_UNSPEC,
	KPX_STATS_A_PAD,
	KPX_STATS_A_SERVICES,	/* u32 */
	KPX_STATS_A_BACKENDS,	/* u32 */
	KPX_STATS_A_CONNS,	/* u64 */
	KPX_STATS_A_REJECTS,	/* u64 */
	KPX_STATS_A_DROPS,	/* u64 */
	KPX_STATS_A_FILTERED,	/* u64, dropped by source ranges */
	KPX_STATS_A_GENERATION,	/* u32, frontend table generation, never 0 */
	KPX_STATS_A_INVALID_DROPS,	/* u64, INVALID packets of kpx flows */
	KPX_STATS_A_CT_DELETED4,	/* u64, IPv4 conntrack entries cleaned */
	KPX_STATS_A_CT_DELETED6,	/* u64, IPv6 conntrack entries cleaned */
	__KPX_STATS_A_MAX
};
#define KPX_STATS_A_MAX (__KPX_STATS_A_MAX - 1)

/* Namespace settings (KPX_CMD_SET_CONFIG, KPX_CMD_GET_CONFIG). */
enum kpx_cfg_attr {
	KPX_CFG_A_UNSPEC,
	KPX_CFG_A_LOCAL_CIDRS,	/* nest, enum kpx_cidrs_attr */
	KPX_CFG_A_LOCAL_IFNAME,	/* string */
	KPX_CFG_A_LOCAL_IFPREFIX,	/* string */
	__KPX_CFG_A_MAX
};
#define KPX_CFG_A_MAX (__KPX_CFG_A_MAX - 1)

/* A CIDR list: a sequence of KPX_CIDRS_A_CIDR nests. */
enum kpx_cidrs_attr {
	KPX_CIDRS_A_UNSPEC,
	KPX_CIDRS_A_CIDR,	/* nest, enum kpx_cidr_attr */
	__KPX_CIDRS_A_MAX
};
#define KPX_CIDRS_A_MAX (__KPX_CIDRS_A_MAX - 1)

enum kpx_cidr_attr {
	KPX_CIDR_A_UNSPEC,
	KPX_CIDR_A_FAMILY,	/* u16 */
	KPX_CIDR_A_ADDR,	/* binary, network order */
	KPX_CIDR_A_PREFIXLEN,	/* u8 */
	__KPX_CIDR_A_MAX
};
#define KPX_CIDR_A_MAX (__KPX_CIDR_A_MAX - 1)

/* KPX_CMD_EXPLAIN: the connection and the answer (see the top comment). */
enum kpx_explain_attr {
	KPX_EXP_A_UNSPEC,
	KPX_EXP_A_PAD,
	KPX_EXP_A_FAMILY,	/* u16 */
	KPX_EXP_A_PROTOCOL,	/* u8 */
	KPX_EXP_A_SRC_ADDR,	/* binary, network order */
	KPX_EXP_A_SRC_PORT,	/* be16 */
	KPX_EXP_A_DST_ADDR,	/* binary, network order */
	KPX_EXP_A_DST_PORT,	/* be16 */
	KPX_EXP_A_IIF,		/* u32, ifindex */
	KPX_EXP_A_LOCAL_OUT,	/* flag */
	KPX_EXP_A_VERDICT,	/* u8, enum kpx_explain_verdict */
	KPX_EXP_A_FRONTEND,	/* nest, enum kpx_svc_attr */
	KPX_EXP_A_SCHED_FRONTEND,	/* nest, enum kpx_svc_attr */
	KPX_EXP_A_SHORT_CIRCUIT,	/* u8 */
	KPX_EXP_A_SOURCE,	/* u8, enum kpx_explain_source */
	KPX_EXP_A_SOURCE_RANGES,	/* u8, enum kpx_explain_ranges */
	KPX_EXP_A_AFFINITY,	/* u8, enum kpx_explain_affinity */
	KPX_EXP_A_AFFINITY_AGE,	/* u64, ms */
	KPX_EXP_A_SCHEDULER,	/* string */
	KPX_EXP_A_BACKENDS,	/* u32 */
	KPX_EXP_A_PICK,		/* u8, enum kpx_explain_pick */
	KPX_EXP_A_BACKEND,	/* nest, enum kpx_backend_attr */
	KPX_EXP_A_MASQ,		/* u8, enum kpx_explain_masq */
	KPX_EXP_A_COUNTERS,	/* u32, KPX_EXP_C_* */
	__KPX_EXP_A_MAX
};
#define KPX_EXP_A_MAX (__KPX_EXP_A_MAX - 1)

/* KPX_EXP_A_VERDICT: what happens to the connection's first packet. */
enum kpx_explain_verdict {
	KPX_EXP_V_ACCEPT,	/* no frontend, not a ClusterIP: untouched */
	KPX_EXP_V_MARTIAN,	/* loopback destination from outside: drop */
	KPX_EXP_V_UNDEFINED_PORT,	/* a ClusterIP, no such port: reject */
	KPX_EXP_V_FILTERED,	/* not in the source ranges: drop */
	KPX_EXP_V_REJECT,	/* no backend: port unreachable */
	KPX_EXP_V_DROP,		/* no backend, KPX_SVC_F_DROP_EMPTY: drop */
	KPX_EXP_V_DNAT,		/* DNAT to a backend */
};

/* KPX_EXP_A_SOURCE: local or external source, and why. */
enum kpx_explain_source {
	KPX_EXP_SRC_EXTERNAL,	/* matches no local setting */
	KPX_EXP_SRC_NO_CONFIG,	/* external: no local setting at all */
	KPX_EXP_SRC_CIDR,	/* local: in KPX_CFG_A_LOCAL_CIDRS */
	KPX_EXP_SRC_IFNAME,	/* local: entered by KPX_CFG_A_LOCAL_IFNAME */
	KPX_EXP_SRC_IFPREFIX,	/* local: interface has KPX_CFG_A_LOCAL_IFPREFIX */
};

/* KPX_EXP_A_SOURCE_RANGES */
enum kpx_explain_ranges {
	KPX_EXP_RANGES_NONE,	/* the frontend has none: any source */
	KPX_EXP_RANGES_ALLOWED,	/* the source is in one */
	KPX_EXP_RANGES_DENIED,	/* in none: dropped */
};

/* KPX_EXP_A_AFFINITY */
enum kpx_explain_affinity {
	KPX_EXP_AFF_OFF,	/* no ClientIP affinity */
	KPX_EXP_AFF_MISS,	/* no live entry: the scheduler picks */
	KPX_EXP_AFF_HIT,	/* a live entry gives the backend */
	KPX_EXP_AFF_STALE,	/* its backend left the set: re-picked */
};

/* KPX_EXP_A_PICK */
enum kpx_explain_pick {
	KPX_EXP_PICK_EXACT,	/* the backend the next connection gets */
	KPX_EXP_PICK_RANDOM,	/* "random", 2 or more: any of KPX_EXP_A_BACKENDS */
	KPX_EXP_PICK_LEAST,	/* "lc": one of the least loaded */
};

/* KPX_EXP_A_MASQ: is the connection source-NATed, and why. */
enum kpx_explain_masq {
	KPX_EXP_MASQ_NO,	/* no flag asks for it */
	KPX_EXP_MASQ_NO_LOCAL,	/* KPX_SVC_F_MASQ_NONLOCAL, source local */
	KPX_EXP_MASQ_NO_SHORT,	/* a local pod short-cut keeps its source */
	KPX_EXP_MASQ_NODE,	/* from the node itself, short cut */
	KPX_EXP_MASQ_ALL,	/* KPX_SVC_F_MASQ */
	KPX_EXP_MASQ_HAIRPIN,	/* the backend is the client */
	KPX_EXP_MASQ_NONLOCAL,	/* KPX_SVC_F_MASQ_NONLOCAL, external source */
};

/*
 * KPX_EXP_A_COUNTERS: SVC_* of KPX_EXP_A_FRONTEND, but SVC_REJECTS of the
 * serving frontend (KPX_EXP_A_SCHED_FRONTEND if given); BE_CONNS of
 * KPX_EXP_A_BACKEND (with "lc", its ACTIVE too); NS_* of KPX_CMD_GET_STATS.
 */
#define KPX_EXP_C_SVC_CONNS	(1U << 0)
#define KPX_EXP_C_BE_CONNS	(1U << 1)
#define KPX_EXP_C_NS_CONNS	(1U << 2)
#define KPX_EXP_C_SVC_REJECTS	(1U << 3)
#define KPX_EXP_C_NS_REJECTS	(1U << 4)
#define KPX_EXP_C_NS_DROPS	(1U << 5)
#define KPX_EXP_C_SVC_FILTERED	(1U << 6)
#define KPX_EXP_C_NS_FILTERED	(1U << 7)

#endif /* _UAPI_LINUX_KPX_H */
