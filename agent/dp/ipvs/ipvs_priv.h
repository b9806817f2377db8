/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared only by the ipvs data plane's files: the state (dp_ipvs.c's
 * struct dp_ipvs), the in-memory cache and the read-back (ipvs_state.c),
 * the draining destinations (ipvs_drain.c).
 */
#ifndef KPX_IPVS_PRIV_H
#define KPX_IPVS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netlink/netlink.h>

#include "base/service.h"
#include "dp/dataplane.h"
#include "dp/ipvs/ipvs_nl.h"
#include "dp/ipvs/ipvs_rules.h"

struct pending {
	bool del;
	struct kpx_service s;	/* deep copy (del: key only) */
};

struct dp_ipvs {
	struct kpx_dp dp;
	struct kpx_ipvs *ipvs;
	struct nl_sock *rt;
	int ifindex;		/* kpx-ipvs0, 0 = not known */
	/* what the kernel holds, sorted by kpx_service_key_cmp() */
	struct kpx_service *cur;
	size_t ncur, capcur;
	struct pending *pend;
	size_t npend, cappend;
	/* services with quiesced (draining) destinations, see ipvs_reap() */
	struct kpx_ipvs_svc *drain;
	size_t ndrain, capdrain;
	struct kpx_ns_config cfg;
	bool rules_ok;		/* sets, chains, jumps, sysctls written */
	bool liberal_read;	/* drop_invalid decided (first rules written) */
	bool drop_invalid;	/* nf_conntrack_tcp_be_liberal was 0 */
	bool ips_synced;	/* KPX-IPVS(6)-IPS known equal to kpx-ipvs0's addresses */
	bool warned_random;
	bool warned_loopback;
};

static inline struct dp_ipvs *to_ipvs(struct kpx_dp *dp)
{
	return (struct dp_ipvs *)dp;
}

/* ipvs_state.c */
long ipvs_cur_find(struct dp_ipvs *v, const struct kpx_service *key);
int ipvs_cur_put(struct dp_ipvs *v, const struct kpx_service *s);
void ipvs_cur_del(struct dp_ipvs *v, const struct kpx_service *key);
void ipvs_cur_clear(struct dp_ipvs *v);
void ipvs_pend_clear(struct dp_ipvs *v);
int ipvs_pend_push(struct dp_ipvs *v, const struct kpx_service *s, bool del);
int ipvs_read_sets(struct dp_ipvs *v, struct kpx_ipvs_entry **out, size_t *n);
bool ipvs_entry_is(const struct kpx_ipvs_entry *e, const struct kpx_ipvs_svc *s);
int ipvs_dump(struct kpx_dp *dp, struct kpx_service **out, size_t *n);

/* ipvs_kubeproxy.c: kube-proxy's IPVS services, kube-ipvs0, its ipsets */
int ipvs_kubeproxy_cleanup(struct dp_ipvs *v);

/* ipvs_drain.c */
int ipvs_drain_add(struct dp_ipvs *v, const struct kpx_ipvs_svc *is);
void ipvs_reap(struct dp_ipvs *v);

/* ipvs_node.c */
bool ipvs_module_loaded(const char *name);
const char *ipvs_iptables_cmd(int family, bool restore);
int ipvs_ipset_restore(struct dp_ipvs *v, const char *text);
int ipvs_write_rules(struct dp_ipvs *v);
/* Does any committed frontend of (family, proto) have backend @b? */
bool ipvs_backend_used(struct dp_ipvs *v, int family, uint8_t proto,
		       const struct kpx_backend *b);
int ipvs_sync_addrs(struct dp_ipvs *v);

#endif
