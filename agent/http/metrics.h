/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's proxy health and metrics state, shared by the event loop
 * (k8s.c, sync.c record into it) and the HTTP threads of healthz.c and
 * metrics serving (read under its mutex), with kube-proxy's semantics:
 *
 * - a Service or EndpointSlice event that leaves the model dirty is a
 *   "queued update": it sets the oldest-pending time if unset and
 *   kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds;
 * - a sync without errors is an "update": it clears the pending time, sets
 *   the last-updated time and kubeproxy_sync_proxy_rules_last_timestamp_seconds,
 *   and observes kubeproxy_network_programming_duration_seconds for every
 *   endpoints.kubernetes.io/last-change-trigger-time queued since the last
 *   update (wall clock now - trigger time);
 * - /healthz is unhealthy when an update has been pending longer than the
 *   health timeout (2 x sync-period, as kube-proxy) or the Node is being
 *   deleted or tainted ToBeDeletedByClusterAutoscaler; /livez ignores the
 *   Node.  Before the first update the proxy is healthy (starting up).
 *
 * Metric names, types and buckets are kube-proxy's (pkg/proxy/metrics);
 * kpx's own are under kpx_.  All functions are thread-safe.
 */
#ifndef KPX_METRICS_H
#define KPX_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "model/model.h"
#include "dp/kpx/nl.h"
#include "base/service.h"

struct kpx_metrics;

/* Records the start time (trigger times older than it are not observed). */
struct kpx_metrics *kpx_metrics_new(void);
void kpx_metrics_free(struct kpx_metrics *m);

/*
 * One Service/EndpointSlice/Node event of @kind applied to the model.
 * @queued: it left the model with changes to sync.  @trigger: the slice's
 * last-change-trigger-time (wall clock, seconds since the epoch), or 0.
 */
void kpx_metrics_change(struct kpx_metrics *m, enum kpx_kind kind, bool queued,
			double trigger);

/* A watch of @kind ended and will be restarted; a relist of @kind started. */
void kpx_metrics_watch_restart(struct kpx_metrics *m, enum kpx_kind kind);
void kpx_metrics_relist(struct kpx_metrics *m, enum kpx_kind kind);

/*
 * The own Node is eligible (known, not deleted, not tainted for deletion).
 * Until the first call the Node is unknown, which is not eligible (as
 * kube-proxy's NodeEligible() without a Node).
 */
void kpx_metrics_node_eligible(struct kpx_metrics *m, bool eligible);

/*
 * An EndpointSlice event (@deleted or added/modified) of slice @key
 * ("namespace/name") of @family (AF_INET or AF_INET6, from addressType;
 * 0 unknown) with last-change-trigger-time @trigger (0: none).  The
 * trigger time is queued for kubeproxy_network_programming_duration_seconds
 * only when it differs from the one this slice last carried (the slice
 * changed, as kube-proxy's endpoints change tracker records it only for a
 * changed slice): a relist or a resent unchanged slice adds no sample.
 * Also counts the change as kpx_metrics_change() does.
 */
void kpx_metrics_change_slice(struct kpx_metrics *m, const char *key,
			      bool deleted, int family, bool queued,
			      double trigger);

/*
 * The IP families the proxy serves (bit 0 IPv4, bit 1 IPv6): one
 * ip_family series of each per-family metric and one /healthz status
 * each.  The default is IPv4, and IPv6 when the kernel has it.
 */
#define KPX_METRICS_IPV4	(1U << 0)
#define KPX_METRICS_IPV6	(1U << 1)
void kpx_metrics_set_families(struct kpx_metrics *m, unsigned int families);

/*
 * The proxy mode ("kpx", "iptables", "ipvs", "nftables"): selects the
 * mode's own kube-proxy metrics (the restore or sync failure counters)
 * as kube-proxy registers them per mode.  Default "kpx".
 */
void kpx_metrics_set_mode(struct kpx_metrics *m, const char *mode);

/*
 * A batch commit of a fallback mode failed: counted once per served
 * family in kubeproxy_sync_proxy_rules_iptables_restore_failures_total
 * (iptables, ipvs) or kubeproxy_sync_proxy_rules_nftables_sync_failures_total
 * (nftables), as kube-proxy counts a failed iptables-restore or nft
 * transaction of each family's proxier.
 */
void kpx_metrics_dp_failure(struct kpx_metrics *m);

/*
 * One conntrack reconcile of @family (AF_INET, AF_INET6) by the agent
 * (fallback modes; the module cleans up in kpx mode): @seconds long,
 * @deleted entries removed.  kubeproxy_conntrack_reconciler_*.
 */
void kpx_metrics_conntrack(struct kpx_metrics *m, int family, double seconds,
			   unsigned long deleted);

/*
 * One request to the API server finished, for client-go's
 * rest_client_requests_total{code,method,host}: @code the HTTP status (0:
 * no response, "<error>"), @method ("GET"), @host the server's
 * host:port; @seconds >= 0 is also observed in
 * rest_client_request_duration_seconds{verb,host} (a list; client-go
 * observes no latency for a watch: pass -1).
 */
void kpx_metrics_rest_request(struct kpx_metrics *m, long code,
			      const char *method, const char *host,
			      double seconds);

/*
 * The client-side rate limiter held a request @seconds (0 when it did not
 * wait), rest_client_rate_limiter_duration_seconds{verb,host}.
 */
void kpx_metrics_rest_ratelimit(struct kpx_metrics *m, const char *method,
				const char *host, double seconds);

/*
 * One sync done: @seconds of wall time, @full or partial, @nfrontends
 * desired, @errors netlink changes that failed (0: success, an "update").
 */
void kpx_metrics_sync(struct kpx_metrics *m, double seconds, bool full,
		      size_t nfrontends, unsigned int errors);

/*
 * After each sync: @refusals SETs the data plane refused in it (or that
 * were over its documented limits), added to
 * kpx_sync_proxy_rules_frontend_refused_total, and @current frontends
 * refused and not programmed now, kpx_sync_proxy_rules_frontends_refused
 * (sync.h).  A refusal is not a sync error: it does not hold back the
 * update time /healthz reads.
 */
void kpx_metrics_refused(struct kpx_metrics *m, unsigned int refusals,
			 size_t current);

/*
 * kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy}: the
 * Service ports with internalTrafficPolicy (@internal) or
 * externalTrafficPolicy (@external) Local that have endpoints but none on
 * this node, as of the last sync (kpx_model_no_local_endpoints()).
 */
void kpx_metrics_no_local_endpoints(struct kpx_metrics *m,
				    unsigned int internal, unsigned int external,
				    unsigned int internal6, unsigned int external6);

/*
 * In dry-run mode there is no module to dump: sync.c publishes the
 * frontends it would have programmed (copied) for /metrics.
 */
void kpx_metrics_set_frontends(struct kpx_metrics *m,
			       const struct kpx_service *v, size_t n);

/*
 * Health now, as /healthz (@with_node) or /livez (!@with_node): returns
 * true when healthy; *last_updated (CLOCK_REALTIME) is the last update,
 * or zero before the first; *eligible is the Node's eligibility;
 * *proxier_healthy the proxy's health without the Node; *families the
 * served families (KPX_METRICS_IPV4/6).  Also counts the answer in
 * kubeproxy_proxy_{healthz,livez}_total{code}.
 */
bool kpx_metrics_health(struct kpx_metrics *m, bool with_node,
			int64_t timeout_ms, struct timespec *last_updated,
			bool *eligible, bool *proxier_healthy,
			unsigned int *families);

/* Health as /livez without counting it: for serviceProxyHealthy. */
bool kpx_metrics_healthy(struct kpx_metrics *m, int64_t timeout_ms);

/*
 * Flag of kpx_metrics_render(): kpx_backend_connections_total, one series
 * per backend (--metrics-per-backend); without it per-frontend series only.
 * A macro, so that bench/agent/bench_scrape.c can tell builds with the
 * flag argument from older ones.
 */
#define KPX_METRICS_PER_BACKEND	(1U << 0)

/*
 * The Prometheus text exposition (format 0.0.4) into a malloc'd string of
 * *len bytes: kube-proxy's metrics, then kpx_frontend_* (one series per
 * frontend: a Service port on one of its addresses) and, with
 * KPX_METRICS_PER_BACKEND in @flags, kpx_backend_* for @v (the module's
 * dump, counters read back; NULL: the dry-run frontends), kpx_module_*
 * from @st (NULL: omitted).  Holds @m's lock only to copy its state (O(1)
 * in the Services and backends): the rendering never blocks /healthz, the
 * event loop or a sync.  Returns NULL on ENOMEM.
 */
char *kpx_metrics_render(struct kpx_metrics *m, const struct kpx_service *v,
			 size_t n, const struct kpx_nl_stats *st,
			 unsigned int flags, size_t *len);

/*
 * Go's time.Time String() form, as kube-proxy's /healthz prints it:
 * "2026-11-30 06:30:12.123456789 +0000 UTC m=+12.345678901" (fraction
 * without trailing zeros; m= is the monotonic time since @m was created).
 * Zero @ts prints Go's zero time "0001-01-01 00:00:00 +0000 UTC".
 */
void kpx_metrics_gotime(const struct kpx_metrics *m, const struct timespec *ts,
			char *buf, size_t len);

/*
 * Go's time.Time MarshalJSON form (RFC 3339 with nanoseconds, trailing
 * zeros dropped, UTC "Z"), as kube-proxy's /healthz JSON carries it:
 * "2026-11-30T06:30:12.123456789Z"; zero @ts is "0001-01-01T00:00:00Z".
 */
void kpx_metrics_rfc3339(const struct timespec *ts, char *buf, size_t len);

#endif
