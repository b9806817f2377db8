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
 * Byte order: addresses and ports are in network byte order (as on the wire);
 * every other integer is in host byte order.
 *
 * Commands
 * --------
 *
 * KPX_CMD_SET_SERVICE (doit; needs CAP_NET_ADMIN in the namespace's user ns)
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
 *                           KPX_BACKENDS_MAX entries
 *         KPX_BACKENDS_A_BACKEND: NLA_NESTED, one per backend, no duplicates
 *           KPX_BE_A_ADDR: binary, same length as the frontend's family
 *           KPX_BE_A_PORT: be16, target port, not 0
 *           KPX_BE_A_WEIGHT: u32, optional, 1..KPX_WEIGHT_MAX, default 1
 *     KPX_A_BACKENDS: NLA_NESTED, optional, may repeat; same layout as
 *                     KPX_SVC_A_BACKENDS, whose entries it extends.  One
 *                     attribute holds at most 64 KiB (about 2000 IPv6
 *                     backends), so a larger set is sent as KPX_SVC_A_BACKENDS
 *                     plus as many top-level KPX_A_BACKENDS as needed; the
 *                     KPX_BACKENDS_MAX limit and the duplicate check apply to
 *                     the union.
 *
 * KPX_CMD_DEL_SERVICE (doit; CAP_NET_ADMIN)
 *   Deletes the frontend named by the four key attributes of KPX_A_SERVICE.
 *   Connections already established keep their NAT binding (conntrack).
 *
 * KPX_CMD_GET_SERVICE (dumpit; no privilege needed)
 *   Dumps every frontend of the namespace, one message each, carrying
 *   KPX_A_SERVICE with all the SET attributes plus the read-only counters:
 *       KPX_SVC_A_CONNS: u64, new connections scheduled to a backend
 *       KPX_SVC_A_REJECTS: u64, new connections refused for want of a backend
 *       KPX_BE_A_CONNS (in each backend): u64, new connections sent to it
 *   A frontend whose backends do not fit one message is dumped as several
 *   consecutive messages with the same key, each with a part of the backend
 *   list (the frontend counters repeat); userspace joins them.
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
 *
 * KPX_CMD_FLUSH (doit; CAP_NET_ADMIN)
 *   Deletes every frontend of the namespace.
 *
 * Errors
 * ------
 *   EINVAL  an attribute is missing, malformed, out of range or unknown, or a
 *           backend repeats; the extack message names the problem and the
 *           attribute.  Nothing is changed.
 *   EPERM   a mutation without CAP_NET_ADMIN in the namespace's user ns.
 *   ENOENT  KPX_CMD_DEL_SERVICE of a frontend that does not exist.
 *   ENOMEM  allocation failed; nothing is changed.
 */
#ifndef _UAPI_LINUX_KPX_H
#define _UAPI_LINUX_KPX_H

#include <linux/types.h>

#define KPX_GENL_NAME		"kpx"
#define KPX_GENL_VERSION	1

/* Largest backend set of one frontend, and largest backend weight. */
#define KPX_BACKENDS_MAX	16384
#define KPX_WEIGHT_MAX		65535

enum kpx_cmd {
	KPX_CMD_UNSPEC,
	KPX_CMD_SET_SERVICE,
	KPX_CMD_DEL_SERVICE,
	KPX_CMD_GET_SERVICE,
	KPX_CMD_GET_STATS,
	KPX_CMD_FLUSH,
	__KPX_CMD_MAX
};
#define KPX_CMD_MAX (__KPX_CMD_MAX - 1)

/* Top-level attributes. */
enum kpx_attr {
	KPX_A_UNSPEC,
	KPX_A_SERVICE,		/* nest, enum kpx_svc_attr */
	KPX_A_STATS,		/* nest, enum kpx_stats_attr */
	KPX_A_BACKENDS,		/* nest, enum kpx_backends_attr; repeats */
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
	__KPX_SVC_F_ALL = KPX_SVC_F_DROP_EMPTY
};

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
	__KPX_STATS_A_MAX
};
#define KPX_STATS_A_MAX (__KPX_STATS_A_MAX - 1)

#endif /* _UAPI_LINUX_KPX_H */
