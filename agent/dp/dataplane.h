/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The data plane the agent programs: one interface, four implementations
 * (kube-proxy --proxy-mode):
 *
 *   kpx       the kpx module over generic netlink (dp_kpx.c)
 *   nftables  a table of our own through libnftables (dp_nft.c), KEP-3866
 *   iptables  iptables-restore --noflush chains as kube-proxy (dp_ipt.c)
 *   ipvs      IPVS over its generic-netlink family, a dummy interface for
 *             the VIPs, ipsets and a small iptables ruleset (dp_ipvs.c)
 *
 * What goes where is computed once, above this interface (model/frontends.c,
 * model.c): a sorted array of struct kpx_service (frontend, backends, flags
 * KPX_SVC_F_*, source ranges, scheduler, affinity timeout) and one struct
 * kpx_ns_config (what "local" means for KPX_SVC_F_MASQ_NONLOCAL).  A mode
 * turns these into kernel state with the module's semantics (see the top
 * comment of uapi/linux/kpx.h): a frontend with no backend rejects (ICMP
 * port unreachable / TCP RST), or drops with KPX_SVC_F_DROP_EMPTY;
 * KPX_SVC_F_MASQ source-NATs every new connection, KPX_SVC_F_MASQ_NONLOCAL
 * those from non-local sources; a connection from a backend to itself
 * (hairpin) is always source-NATed; source ranges drop other sources.
 *
 * The syncer (sync.c) calls, per sync:
 *
 *	[dump()]			full syncs only
 *	set_config()			when the namespace settings changed
 *	set_service()/del_service()	one per changed frontend
 *	commit()			always, last
 *
 * A mode that batches (nftables, iptables-restore) may queue in
 * set_service()/del_service() and apply in commit(); when commit() fails
 * every change since the previous commit() counts as failed and the next
 * sync is full.  All functions return 0 or a negative errno; a human
 * reason for the last error is in dp->errmsg ("" if none).
 */
#ifndef KPX_DATAPLANE_H
#define KPX_DATAPLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/service.h"

struct kpx_dp;

/* Capabilities, for the syncer and for tests that skip what a mode lacks. */
enum {
	/*
	 * The mode deletes stale UDP/SCTP conntrack entries itself (the kpx
	 * module does, in the kernel); otherwise the syncer does it from
	 * userspace through ctnetlink after each commit().
	 */
	KPX_DP_CAP_CT_CLEANUP = 1U << 0,
	/* dump() reads the kernel's state back (else: what was last committed). */
	KPX_DP_CAP_DUMP = 1U << 1,
};

/* Flags of open(). */
enum {
	/*
	 * Opened only for cleanup(): load no kernel module and create
	 * nothing; fail (-ENOENT) when the mode has nothing on this node.
	 */
	KPX_DP_OPEN_CLEANUP = 1U << 0,
};

struct kpx_dp_ops {
	const char *name;	/* --proxy-mode value */
	unsigned int caps;	/* KPX_DP_CAP_* */
	/*
	 * Checks that the mode can work on this node (module or kernel
	 * feature present, tools installed) and opens it.  -ENOENT /
	 * -EOPNOTSUPP when it cannot, with the reason in @err.  Changes no
	 * kernel state (tables and chains are created by the first commit()).
	 */
	int (*open)(struct kpx_dp **out, unsigned int flags, char *err, size_t errlen);
	void (*close)(struct kpx_dp *dp);
	/*
	 * The frontends this mode holds, each normalized, in any order (the
	 * kpx module's is insertion order; sync.c sorts the dump once for
	 * every mode, test_sync_unsorted); *out malloc'd, freed with
	 * kpx_services_free().
	 * Without KPX_DP_CAP_DUMP: the state last committed (empty after
	 * open(), so that the first sync rewrites everything, as kube-proxy's
	 * first sync does).  The syncer calls it on its full syncs (each
	 * --sync-period), so such a mode checks there that its kernel objects
	 * are still in place and rewrites them where not: nftables, its two
	 * tables; iptables, KPX-SERVICES (and every chain hourly).
	 */
	int (*dump)(struct kpx_dp *dp, struct kpx_service **out, size_t *n);
	int (*set_config)(struct kpx_dp *dp, const struct kpx_ns_config *c);
	int (*set_service)(struct kpx_dp *dp, const struct kpx_service *s);
	/*
	 * Optional (NULL: none): whether the mode can take @s at all, by its
	 * documented limits (kpx: KPX_BACKENDS_MAX backends and the source
	 * range limit of uapi/linux/kpx.h), checked before set_service().
	 * 0, or the errno set_service() would answer (-E2BIG) with the
	 * reason in dp->errmsg.  Changes nothing.
	 */
	int (*check_service)(struct kpx_dp *dp, const struct kpx_service *s);
	/* Only the key of @key (family, protocol, addr, port) is used. */
	int (*del_service)(struct kpx_dp *dp, const struct kpx_service *key);
	int (*commit)(struct kpx_dp *dp);
	/*
	 * Optional (NULL or -EOPNOTSUPP: not supported): the data plane's
	 * change generation into *gen, never 0 (kpx: KPX_STATS_A_GENERATION).
	 * It grows by exactly one with every applied set_service() and every
	 * del_service() of a frontend that existed, whoever made it, so that
	 * the syncer can tell that nobody else changed the data plane since
	 * its last sync without a dump() (sync.h).
	 */
	int (*generation)(struct kpx_dp *dp, uint32_t *gen);
	/*
	 * Optional (NULL or -1: none): a descriptor that becomes readable
	 * when the data plane may have lost its state behind the agent's
	 * back (kpx: the module was unloaded or loaded again; only a load
	 * answers 1: until then there is nothing to program).  The event
	 * loop polls it and then calls events(), which reads what is
	 * pending and answers 1 when the data plane must be programmed again
	 * from scratch at once (kpx_sync_dp_replaced()), else 0.
	 */
	int (*event_fd)(struct kpx_dp *dp);
	int (*events)(struct kpx_dp *dp);
	/*
	 * kpx-agent --cleanup: removes every trace of this mode from the
	 * node (module frontends; the nft table; the chains and jumps; IPVS
	 * services, ipsets, the dummy interface), and kube-proxy's state of
	 * the same kind as kube-proxy --cleanup removes it (iptables: its
	 * KUBE-* chains, dp/ipt/ipt_kubeproxy.h; nftables: its tables;
	 * ipvs: its virtual servers, kube-ipvs0, its ipsets,
	 * dp/ipvs/ipvs_kubeproxy.h), and nothing else.  Works without open()
	 * state; 0 when there was nothing to remove.
	 */
	int (*cleanup)(struct kpx_dp *dp);
	/*
	 * Optional (NULL: kube-proxy has no state of this kind, kpx): only
	 * kube-proxy's state of this mode's kind, as cleanup() removes it,
	 * and nothing of this mode's own.  The agent's start-up removal of
	 * leftovers (kpx_dp_cleanup_leftovers()) runs it for the mode in use
	 * and cleanup() for every other, as kube-proxy removes at start the
	 * state of the modes it does not run.
	 */
	int (*cleanup_kubeproxy)(struct kpx_dp *dp);
};

/* Every mode embeds this first. */
struct kpx_dp {
	const struct kpx_dp_ops *ops;
	char errmsg[512];
};

/*
 * kube-proxy's settings of the fallback modes, given before kpx_dp_open()
 * (main.c; the defaults until then) and read by the modes they apply to.
 */
struct kpx_dp_params {
	/* 1 << the mode's masqueradeBit (iptables.masqueradeBit in the
	 * iptables and ipvs modes, nftables.masqueradeBit in nftables);
	 * default 0x4000 (bit 14) */
	uint32_t masq_mark;
	/* ipvs: ipvs.strictARP, net.ipv4.conf.all.arp_ignore = 1 and
	 * arp_announce = 2 (no ARP replies for the VIPs on the dummy device) */
	bool strict_arp;
	/* ipvs: ipvs.tcpTimeout, tcpFinTimeout, udpTimeout in seconds, set by
	 * IPVS_CMD_SET_CONFIG; 0 leaves the kernel's value */
	uint32_t ipvs_tcp_s, ipvs_tcpfin_s, ipvs_udp_s;
	/* ipvs: ipvs.excludeCIDRs, IPVS services on addresses in them are
	 * never adopted as the mode's own, so never deleted as stale (the
	 * configuration's array: it outlives the data plane) */
	const struct kpx_cidr *ipvs_exclude;
	size_t n_ipvs_exclude;
};

#define KPX_DP_MASQ_MARK_DEFAULT 0x4000

void kpx_dp_set_params(const struct kpx_dp_params *p);
/* The parameters given, or the defaults. */
const struct kpx_dp_params *kpx_dp_params(void);

/* The mode of that name ("kpx", "nftables", "iptables", "ipvs"), or NULL. */
const struct kpx_dp_ops *kpx_dp_find(const char *name);
/* NULL-terminated list, in the order of the automatic choice. */
extern const struct kpx_dp_ops *const kpx_dp_modes[];

/*
 * Opens the mode @name, or with @name "" chooses as kube-proxy documents for
 * kpx: "kpx" when the module is loaded or loadable (modprobe kpx), else
 * "nftables" when the kernel and libnftables support it, else "iptables".
 * An explicitly named mode that cannot work is an error (-ENOENT,
 * -EOPNOTSUPP; reason in @err), not a silent fallback.
 */
int kpx_dp_open(const char *name, struct kpx_dp **out, char *err, size_t errlen);

/*
 * At start, as kube-proxy's platformCleanup(): removes the leftovers of
 * the modes not in use, in the order of @modes (NULL-terminated;
 * kpx_dp_modes: iptables before ipvs, whose ipsets kube-proxy's iptables
 * rules reference).  For @in_use, kube-proxy's state of its kind only
 * (cleanup_kubeproxy(): kpx's own is adopted, not removed); for every
 * other mode, cleanup(): kpx's own state of that mode (the module's
 * frontends when not in kpx mode: they would translate before the mode in
 * use) and kube-proxy's.  Each mode is opened with KPX_DP_OPEN_CLEANUP:
 * nothing loaded, a mode with nothing on the node skipped.  Best effort,
 * as kube-proxy: a failure is logged and the rest goes on.  The number of
 * modes whose removal failed.
 */
int kpx_dp_cleanup_leftovers(const struct kpx_dp_ops *const *modes, const char *in_use);

/*
 * Whether @err (negative), answered by check_service() or set_service(),
 * means that the data plane refuses that one frontend's content (too many
 * backends or source ranges, a value out of range, an unsupported
 * scheduler: -EINVAL, -E2BIG, -ENOSPC, -EMSGSIZE, -ERANGE, -EOVERFLOW,
 * -EOPNOTSUPP, -EAFNOSUPPORT, -EPROTONOSUPPORT), so that the syncer sets
 * it aside and programs the rest (sync.h); any other errno (-ENOMEM,
 * -ENOBUFS, -EIO, a netlink socket or module failure) is a failure of the
 * data plane as a whole.
 */
bool kpx_dp_err_refused(int err);

static inline const char *kpx_dp_errmsg(const struct kpx_dp *dp)
{
	return dp->errmsg;
}

/* Sets dp->errmsg (printf format); returns @err for "return kpx_dp_fail(...)". */
int kpx_dp_fail(struct kpx_dp *dp, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
