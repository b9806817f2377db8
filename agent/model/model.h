/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's cache of API objects and the desired state computed from it,
 * with kube-proxy's semantics.  Pure: no I/O, no clock, no netlink;
 * unit-tested on the host.
 *
 * Usage (main.c):
 *
 *	m = kpx_model_new();
 *	kpx_model_set_config(m, &cfg);	// before the first desired(); again
 *					// whenever the configuration changes
 *	... kpx_model_apply() for Services, EndpointSlices and the agent's own
 *	    Node (metadata.name == cfg.hostname: addresses for NodePorts, zone
 *	    label for topology, podCIDRs for --detect-local-mode=NodeCIDR) ...
 *	first sync only once the Node list is done too (else NodePort
 *	frontends left by a previous agent would be deleted and re-added)
 *	at each sync:
 *	    kpx_model_ns_config(m, &nc);	// if it differs from the last
 *		kpx_nl_set_config(nl, &nc);	// one sent (memcmp), send it
 *	    kpx_model_desired(m, &v, &n);	// frontends, via kpx_sync_run()
 *	    kpx_model_healthchecks(m, &hv, &hn);	// then kpx_hc_sync()
 *	    kpx_model_nodeport_ips(m, ips, n);	// -> kpx_hc_set_addrs()
 *	(sync.c gets the frontends and health checks of the changed Services
 *	only, through fecache.h and the per-Service kpx_model_service_*();
 *	the whole-model functions are the reference its tests compare with)
 */
#ifndef KPX_MODEL_H
#define KPX_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>
#include "config/config.h"
#include "model/api.h"
#include "base/service.h"

enum kpx_kind {
	KPX_KIND_SERVICE,		/* v1 Service */
	KPX_KIND_ENDPOINTSLICE,		/* discovery.k8s.io/v1 EndpointSlice */
	KPX_KIND_NODE,			/* v1 Node (the agent's own) */
	KPX_KIND_MAX
};

enum kpx_event {
	KPX_EV_ADDED,
	KPX_EV_MODIFIED,
	KPX_EV_DELETED,
};

struct kpx_model;

struct kpx_model *kpx_model_new(void);
void kpx_model_free(struct kpx_model *m);

/*
 * Takes the settings the desired state depends on from @c (copied; @c
 * may go away): hostname (which Node and which endpoints are this node's),
 * cluster_cidrs / detect_local / pod_bridge_interface / pod_interface_prefix,
 * masquerade_all, nodeport_cidrs / nodeport_primary.  Marks the model dirty.
 * Before the first call: no hostname (no NodePort frontend, no local
 * endpoint), nodeport-addresses "primary", no local detection.
 */
void kpx_model_set_config(struct kpx_model *m, const struct kpx_config *c);
#define KPX_HAVE_MODEL_SET_CONFIG 1	/* for main.c's transition */

/*
 * The namespace settings for kpx_nl_set_config() (KPX_CMD_SET_CONFIG), from
 * --detect-local-mode: ClusterCIDR -> --cluster-cidr prefixes; NodeCIDR ->
 * the own Node's spec.podCIDRs (empty until the Node is known); BridgeInterface
 * -> local_ifname; InterfaceNamePrefix -> local_ifprefix.  *out is zeroed
 * first, so two results compare with memcmp().
 */
void kpx_model_ns_config(const struct kpx_model *m, struct kpx_ns_config *out);

/*
 * The health-check servers wanted: one per Service of type LoadBalancer
 * with externalTrafficPolicy Local and a healthCheckNodePort, with the
 * number of distinct ready endpoint addresses on this node (kube-proxy's
 * LocalReadyEndpoints; serving-but-terminating ones do not count) and
 * healthy = true (the caller clears it when the Service is not programmed).
 * *out sorted by kpx_hc_service_cmp(), malloc'd (free()); NULL when *n is 0.
 * Returns 0 or -ENOMEM.
 */
int kpx_model_healthchecks(const struct kpx_model *m,
			   struct kpx_hc_service **out, size_t *n);

/*
 * kpx_model_healthchecks() for one Service ("namespace/name"): 1 with *out
 * filled when it wants a health-check server, 0 when not (or unknown),
 * -ENOMEM.  For incremental syncs (fecache.h).
 */
int kpx_model_service_healthcheck(const struct kpx_model *m, const char *name,
				  struct kpx_hc_service *out);

/*
 * The node's NodePort addresses (--nodeport-addresses over the own Node's
 * primary IPs or the interface addresses, see kpx_model_set_local_addrs();
 * never 127.0.0.1) as numeric text into out[0..max-1]: where kube-proxy
 * binds the health-check ports.  Returns how many; 0 until the own Node is
 * known, and 0 (bind every address of both families) when
 * --nodeport-addresses holds 0.0.0.0/0 and ::/0.
 */
size_t kpx_model_nodeport_ips(const struct kpx_model *m,
			      char (*out)[INET6_ADDRSTRLEN], size_t max);

/*
 * The node's interface addresses (@n prefixes, address in network order,
 * len its full length; copied), from rtnetlink (host/addrs.h):
 * --nodeport-addresses CIDRs select the NodePort addresses among them
 * from then on (before the first call, among the own Node's addresses).
 * Returns 1 when the NodePort address set changed (everything is marked
 * dirty: the next sync reprograms the NodePort frontends), 0 when not
 * (the model is still dirty when the addresses changed at all: the next
 * sync retries health-check listeners on an address that just appeared),
 * -ENOMEM (nothing changed).
 */
int kpx_model_set_local_addrs(struct kpx_model *m, const struct kpx_cidr *v,
			      size_t n);

/*
 * The own Node as the start-up wait (nodewait.h) needs it: returns whether
 * it is known; *naddrs is the number of its InternalIP and ExternalIP
 * addresses (kube-proxy's host IPs), *npod_cidrs of its spec.podCIDRs
 * (both 0 when it is not known).
 */
bool kpx_model_own_node(const struct kpx_model *m, size_t *naddrs,
			size_t *npod_cidrs);

/*
 * Whether --nodeport-addresses gives IPv4 localhost NodePorts (a CIDR holds
 * 127.0.0.1: kube-proxy iptables mode's localhost NodePorts).  Their
 * DNATed packets keep the source 127.0.0.1 until masqueraded at
 * POSTROUTING, so routing them needs net.ipv4.conf.all.route_localnet=1,
 * which the agent then sets (and only then, as kube-proxy: CVE-2020-8558);
 * the module
 * drops loopback destinations arriving from outside.
 */
bool kpx_model_localhost_nodeports(const struct kpx_model *m);

/*
 * An ADDED or MODIFIED object of @kind, decoded (k8s/decode.c: the watch
 * event or list item through kpx_model_apply()): the model takes @key
 * (malloc'd, "namespace/name" or "name") and @o's contents, also on error.
 * Returns 0, or -ENOMEM (logged; a previous version is kept).
 */
int kpx_model_update(struct kpx_model *m, enum kpx_kind kind, char *key,
		     union kpx_api_object *o);

/* A DELETED object of @kind; nothing when the model does not hold it. */
void kpx_model_delete(struct kpx_model *m, enum kpx_kind kind, const char *key);

/*
 * An ADDED or MODIFIED object of @kind that did not decode: the previous
 * version, if the model holds one, stays and survives the relist under
 * way.  True when there is one.
 */
bool kpx_model_keep(struct kpx_model *m, enum kpx_kind kind, const char *key);

/*
 * Relist: between begin and end, every object of @kind is re-applied as
 * KPX_EV_ADDED; end drops the objects of that kind that were not seen.
 */
void kpx_model_relist_begin(struct kpx_model *m, enum kpx_kind kind);
void kpx_model_relist_end(struct kpx_model *m, enum kpx_kind kind);

/* True when an object changed since the last kpx_model_desired(). */
bool kpx_model_dirty(const struct kpx_model *m);

/*
 * Computes the node's desired frontends.  Per Service port and per family of
 * its clusterIPs: the ClusterIP; for NodePort and LoadBalancer Services the
 * nodePort on each NodePort address of this node (--nodeport-addresses; the
 * IPv4 127.0.0.1 one when a nodeport CIDR holds it); each externalIP and
 * LoadBalancer ingress IP (not ipMode Proxy) of the family, the LB IPs with
 * the family's loadBalancerSourceRanges.  Backends are the endpoints of the
 * Service's slices of the family with a port of the same name and protocol
 * (target port per slice), chosen as kube-proxy's CategorizeEndpoints():
 * ready (nil = ready), else serving+terminating (KEP-1669); topology hints
 * (forZones with the own Node's zone label, forNodes with PreferSameNode);
 * internalTrafficPolicy Local (ClusterIP) and externalTrafficPolicy Local
 * (external frontends) use this node's endpoints only.  Flags: see
 * port_frontends() in model.c (DROP_EMPTY when a Local policy finds nothing
 * here but endpoints exist elsewhere; MASQ_NONLOCAL / MASQ).  A key used twice
 * goes to the first Service by "namespace/name" (twice in one Service: to
 * the frontend computed first).  Headless, ExternalName and
 * service-proxy-name Services are skipped.  *out is sorted by
 * kpx_service_key_cmp(); free with kpx_services_free().  Clears the dirty
 * flag (not the marks of kpx_model_take_dirty()).  Returns 0 or -ENOMEM.
 */
int kpx_model_desired(struct kpx_model *m, struct kpx_service **out, size_t *n);

/*
 * The changes since the last call, for the partial sync (sync/fecache.h).
 * A Service event marks its "namespace/name"; an EndpointSlice event the
 * Service of its kubernetes.io/service-name label (the old and the new one
 * when the label changed); the own Node, kpx_model_set_config() and a pile
 * of marks (more than half the Services, as after a relist) mark
 * everything: then *all is true and *names NULL.  Else *names is a malloc'd
 * array of *n malloc'd "namespace/name" strings (the caller frees both; a
 * Service may no longer exist).  Clears the marks and the dirty flag.
 * Everything is marked before the first call.  Returns 0 or -ENOMEM (the
 * marks are kept).
 */
int kpx_model_take_dirty(struct kpx_model *m, char ***names, size_t *n,
			 bool *all);

/*
 * Calls @fn with each Service's "namespace/name" (hash order) until it
 * returns non-zero, which is returned; 0 when all were visited.  @fn must
 * not change the model.
 */
int kpx_model_for_each_service(const struct kpx_model *m,
			       int (*fn)(void *arg, const char *name),
			       void *arg);

/*
 * The frontends of the one Service @name ("namespace/name"), as
 * kpx_model_desired() computes them, before the cross-Service tie-break:
 * sorted by kpx_service_key_cmp() and unique (of two frontends of the
 * Service with the same key, the first one computed is kept, as in
 * kpx_model_desired()).  None (*out NULL, *n 0) for an unknown or skipped
 * Service.  Free with kpx_services_free().  Leaves the dirty state alone.
 * Returns 0 or -ENOMEM.
 */
int kpx_model_service_frontends(const struct kpx_model *m, const char *name,
				struct kpx_service **out, size_t *n);

#endif
