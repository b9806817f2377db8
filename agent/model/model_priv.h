/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internals of the model shared by model.c (the object cache) and the
 * desired state computed from it: frontends.c, node.c, health.c.  Nothing
 * else includes it.
 */
#ifndef KPX_MODEL_PRIV_H
#define KPX_MODEL_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "config/config.h"
#include "model/api.h"
#include "model/model.h"

/* ---- A chained hash table keyed by C string --------------------------- */

struct hnode {
	struct hnode *next;
	uint32_t hash;
	unsigned int seen;	/* relist generation of the last apply */
	char *key;		/* owned */
};

struct htab {
	struct hnode **b;
	size_t nb, n;		/* nb: 0 or a power of two */
};

static inline uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static inline struct hnode *ht_find(const struct htab *t, const char *key)
{
	struct hnode *n;
	uint32_t h;

	if (!t->nb)
		return NULL;
	h = hash_str(key);
	for (n = t->b[h & (t->nb - 1)]; n; n = n->next)
		if (n->hash == h && !strcmp(n->key, key))
			return n;
	return NULL;
}

#define ht_for_each_safe(t, i, n, tmp)					\
	for ((i) = 0; (i) < (t)->nb; (i)++)				\
		for ((n) = (t)->b[i]; (n) && ((tmp) = (n)->next, 1);	\
		     (n) = (tmp))

/* ---- Cached objects: decoded structs with their hash node ------------ */

struct m_service {
	struct hnode node;	/* "ns/name" */
	struct kpx_api_service o;
};

struct m_slice;

/* The slices of one Service: "ns/service-name" -> list. */
struct slice_group {
	struct hnode node;
	struct m_slice *head;
};

struct m_slice {
	struct hnode node;	/* "ns/name" */
	struct slice_group *group;
	struct m_slice *gnext, *gprev;
	struct kpx_api_slice o;
};

struct m_node {
	struct hnode node;	/* "name" */
	struct kpx_api_node o;
};

/* What the model uses of struct kpx_config (kpx_model_set_config()). */
struct settings {
	char hostname[KPX_NODE_NAME_MAX + 1];	/* "" until configured */
	struct kpx_cidr cluster_cidrs[KPX_CONFIG_CIDRS_MAX];
	int n_cluster_cidrs;
	enum kpx_detect_local detect_local;
	char bridge[IF_NAMESIZE], ifprefix[IF_NAMESIZE];
	bool masquerade_all;
	struct kpx_cidr nodeport_cidrs[KPX_CONFIG_CIDRS_MAX];
	int n_nodeport_cidrs;
	bool nodeport_primary;
	bool no_localhost_nodeports;	/* iptables.localhostNodePorts false */
	char scheduler[16];	/* --scheduler, "" = "random" */
};

struct kpx_model {
	struct htab objs[KPX_KIND_MAX];
	struct htab groups;		/* struct slice_group */
	unsigned int gen[KPX_KIND_MAX];
	bool relisting[KPX_KIND_MAX];
	bool dirty;
	/* What changed since kpx_model_take_dirty(): the Services
	 * ("ns/name", struct hnode) or, with dirty_all, everything. */
	struct htab dirty_svcs;
	bool dirty_all;
	struct settings cfg;
	/*
	 * The own Node as last seen, after its deletion (a re-registration):
	 * addresses and pod CIDRs stay in use until it comes back, as
	 * kube-proxy keeps them.  NULL while the Node exists.
	 */
	struct hnode *last_node;
	/* The node's interface addresses (kpx_model_set_local_addrs());
	 * local_known false until the first call. */
	struct kpx_cidr *local;
	size_t nlocal;
	bool local_known;
};

/* ---- Between frontends.c, node.c and health.c --------------------- */

/* A NodePort address of this node; @localhost: 127.0.0.1 (needs MASQ). */
struct np_addr {
	struct kpx_api_ip ip;
	bool localhost;
};

#define NP_ADDRS_MAX 64

/* frontends.c */
uint16_t model_slice_port(const struct kpx_api_slice *sl, const char *name,
			  uint8_t proto);

/* model.c: everything changed (the own Node, the NodePort addresses) */
void model_dirty_everything(struct kpx_model *m);

/* node.c */
const struct kpx_api_node *model_own_node(const struct kpx_model *m);
void model_ns_config(const struct settings *s, const struct kpx_api_node *nd,
		     struct kpx_ns_config *out);
bool model_detect_local(const struct kpx_ns_config *nc, int family);
const struct kpx_api_ip *model_primary_ip(const struct kpx_api_node *nd,
					 int family);
size_t model_nodeport_addrs(const struct kpx_model *m,
			    const struct kpx_api_node *nd, struct np_addr *v);

#endif
