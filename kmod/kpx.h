/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx internal types: frontend key, backend objects, backend sets and the
 * per-network-namespace state.
 */
#ifndef _KPX_H
#define _KPX_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable-types.h>
#include <linux/mutex.h>
#include <linux/list.h>
#include <linux/workqueue.h>
#include <linux/string.h>
#include <linux/socket.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/netfilter/nf_conntrack_tuple.h>

struct kpx_cidrs;
struct kpx_nscfg;
struct kpx_stats_pcpu;
struct kpx_be_pcpu;
struct kpx_mh_cache;
struct kpx_ct;

/*
 * An IPv4 or IPv6 address in network byte order; IPv4 uses the first four
 * bytes, the rest is zero.  Same layout as union nf_inet_addr.
 */
union kpx_addr {
	__be32 ip;
	__be32 all[4];
	u8 bytes[16];
};

/*
 * Frontend key, hashed and compared as raw bytes: no padding, and every
 * unused byte zero (build it with kpx_key_init() or kpx_key_from_tuple()).
 */
struct kpx_key {
	u8 family;		/* AF_INET or AF_INET6 */
	u8 protocol;		/* IPPROTO_TCP, IPPROTO_UDP or IPPROTO_SCTP */
	__be16 port;		/* frontend port, network order */
	union kpx_addr addr;	/* VIP */
};

/*
 * A backend: refcounted, shared by every set that names it, so its counter
 * survives a SET that keeps it.  Only reachable through a struct kpx_bset;
 * freed when the last set holding it goes (after that set's grace period).
 * Its weight belongs to the set (kpx_bset_weight()), so a SET that changes
 * it never writes into an object readers of the old set still see.
 */
struct kpx_backend {
	refcount_t ref;
	union kpx_addr addr;	/* network order */
	__be16 port;		/* network order */
	/* new connections sent here, per CPU (stats.h) */
	struct kpx_be_pcpu __percpu *conns;
	/*
	 * "lc" only (lb.c): open connections as lc sees them; those sent
	 * here since the current recount pass began; the pass's own count
	 * and number (written by the recount work only).
	 */
	atomic_t active;
	atomic_t recent;
	u32 scan;
	u32 scan_pass;
};

/*
 * An immutable backend set, replaced as a whole with rcu_assign_pointer().
 * be[] is sorted by (addr, port) with no duplicates, so a SET can find the
 * backends to reuse with a merge walk; weight[i] is be[i]'s weight in this
 * set (1..KPX_WEIGHT_MAX), in the same allocation.  Freed from a work item
 * after a grace period (its size is up to KPX_BACKENDS_MAX backends, too
 * much work for an RCU callback).
 */
struct kpx_bset {
	struct rcu_work rwork;		/* its deferred free (svc.c) */
	struct kpx_sched_data *sd;	/* scheduler tables, lb.c */
	u32 *weight;			/* count entries, after be[] */
	u32 count;
	struct kpx_backend *be[] __counted_by(count);
};

/**
 * kpx_key_init - build a frontend key
 * @key: the key to fill; every unused byte is zeroed
 * @family: AF_INET or AF_INET6
 * @protocol: IPPROTO_*
 * @addr: 4 (AF_INET) or 16 (AF_INET6) bytes, network order
 * @port: network order
 */
static inline void kpx_key_init(struct kpx_key *key, u8 family, u8 protocol,
				const void *addr, __be16 port)
{
	memset(key, 0, sizeof(*key));
	key->family = family;
	key->protocol = protocol;
	key->port = port;
	memcpy(key->addr.bytes, addr, family == AF_INET ? 4 : 16);
}

/**
 * kpx_addr_from_nf - an address of a conntrack tuple as a union kpx_addr
 * @addr: filled with @family's bytes of @u3, the rest zero
 * @family: AF_INET or AF_INET6 (the tuple's src.l3num)
 * @u3: the tuple's address, network order
 */
static inline void kpx_addr_from_nf(union kpx_addr *addr, u8 family,
				    const union nf_inet_addr *u3)
{
	memset(addr, 0, sizeof(*addr));
	memcpy(addr->bytes, u3, family == AF_INET ? 4 : 16);
}

/**
 * kpx_key_from_tuple - the frontend key a connection is addressed to
 * @key: the key to fill, as kpx_key_init() does
 * @t: the connection's original-direction tuple (IPv4 or IPv6): its
 *	family, protocol, destination address and port
 */
static inline void kpx_key_from_tuple(struct kpx_key *key,
				      const struct nf_conntrack_tuple *t)
{
	kpx_key_init(key, t->src.l3num, t->dst.protonum, &t->dst.u3,
		     t->dst.u.all);
}

/* The weight of backend @i of @set. */
static inline u32 kpx_bset_weight(const struct kpx_bset *set, u32 i)
{
	return set->weight[i];
}

/*
 * The ClusterIP frontend key of a KPX_SVC_F_EXT_LOCAL frontend, replaced
 * as a whole with rcu_replace_pointer() and freed after a grace period.
 */
struct kpx_ckey {
	struct rcu_head rcu;
	struct kpx_key key;
};

/* Scheduler and affinity settings of a frontend (lb.c). */
struct kpx_sched_cfg {
	u8 id;			/* enum kpx_sched_id (sched.h) */
	u32 mh_size;		/* Maglev table size, a prime */
	u32 aff_timeout;	/* seconds; 0: no ClientIP affinity */
	u32 aff_max;		/* most affinity entries */
};

/* A frontend (Service VIP:port/protocol), an entry of kpx_net.svcs. */
struct kpx_svc {
	struct rhash_head node;
	struct list_head list;		/* kpx_net.svc_list, RCU */
	struct kpx_key key;
	u32 flags;			/* KPX_SVC_F_*; WRITE_ONCE/READ_ONCE */
	struct kpx_bset __rcu *bset;	/* NULL: no backend */
	/* CONNS, REJECTS, FILTERED, per CPU (stats.h) */
	struct kpx_stats_pcpu __percpu *stats;
	struct rcu_work rwork;		/* freed from a work item after RCU */
	/* KPX_SVC_A_SOURCE_RANGES (NULL: any source) */
	struct kpx_cidrs __rcu *ranges;
	/* scheduler settings (under kn->lock), rr/wrr counter */
	struct kpx_sched_cfg scfg;
	atomic_t sched_ctr;
	struct kpx_affk __rcu *aff;	/* ClientIP affinity, lb.c */
	/* KPX_SVC_A_CLUSTER_*, NULL without KPX_SVC_F_EXT_LOCAL */
	struct kpx_ckey __rcu *cluster;
	/* KPX_SVC_A_NAME and KPX_SVC_A_KIND (name.h), NULL: neither */
	struct kpx_name __rcu *name;
	u64 seq;			/* unique in its namespace, never reused */
};

/* Per-network-namespace state (kpx_net()). */
struct kpx_net {
	struct mutex lock;		/* serializes every writer */
	struct rhashtable svcs;		/* struct kpx_svc by struct kpx_key */
	struct list_head svc_list;	/* the same, for dumps and /proc */
	u32 gen;			/* bumped on every change; never 0 */
	u64 svc_seq;			/* the last kpx_svc.seq given out */
	u32 n_svcs;			/* under lock; READ_ONCE elsewhere */
	u32 n_backends;
	/* CONNS, REJECTS, DROPS, FILTERED, per CPU (stats.h) */
	struct kpx_stats_pcpu __percpu *stats;
	struct proc_dir_entry *proc_dir;
	struct net *net;
	bool hooks_on;			/* under lock */
	/* KPX_CMD_SET_CONFIG settings (NULL: none) */
	struct kpx_nscfg __rcu *cfg;
	/*
	 * The lc recount (lb.c): lc_node (on its list), lc_on (READ_ONCE by
	 * its conntrack walk) and lc_kicked (an lc SET since its last look
	 * at this namespace) under its spinlock; lc_cursor (the next
	 * frontend of its walk, between two slices) under lock.
	 */
	struct list_head lc_node;
	bool lc_on;
	bool lc_kicked;
	struct kpx_svc *lc_cursor;
	struct kpx_mh_cache *mhc;	/* shared Maglev tables (lb.c), lock */
	/* addresses of KPX_SVC_F_CLUSTER_IP frontends (vip.c) */
	struct rhashtable vips;
	struct kpx_ct *ct;		/* conntrack cleanup queue (ct.c) */
	/* conntrack entries the cleanup deleted: [0] IPv4, [1] IPv6 */
	atomic64_t ct_deleted[2];
};

extern unsigned int kpx_net_id;	/* pernet.c */

/* The kpx state of namespace @net; exists from its init to its exit. */
static inline struct kpx_net *kpx_net(const struct net *net)
{
	return net_generic(net, kpx_net_id);
}

/*
 * The KPX_SVC_F_* flags this module implements; a request with any other
 * bit (including ones the uapi header reserves for later) gets EINVAL.
 */
#define KPX_SVC_F_SUPPORTED	(KPX_SVC_F_DROP_EMPTY | KPX_SVC_F_MASQ_NONLOCAL | \
				 KPX_SVC_F_MASQ | KPX_SVC_F_CLUSTER_IP | \
				 KPX_SVC_F_EXT_LOCAL)

/* A backend as parsed from a request, before the set is built. */
struct kpx_be_cfg {
	union kpx_addr addr;
	__be16 port;
	u32 weight;
	u32 pos;	/* index in the request, to name it in errors */
};

#endif /* _KPX_H */
