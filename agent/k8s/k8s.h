/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kubernetes list + watch of the objects the proxy needs, on one libcurl
 * multi handle driven by the caller's event loop (no threads):
 *
 *   Services        /api/v1/services
 *   EndpointSlices  /apis/discovery.k8s.io/v1/endpointslices
 *   the own Node    /api/v1/nodes?fieldSelector=metadata.name=NODE
 *
 * Services and slices are selected as kube-proxy selects them:
 * !service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name.
 *
 * Each resource is listed between kpx_model_relist_begin() and _end(),
 * then watched from the list's resourceVersion with bookmarks and a
 * jittered 300-600 s server timeout.  Lists follow client-go's reflector:
 * the first at resourceVersion=0 with limit=500 (the watch cache answers
 * it whole; a server without one pages it, and the limit is then kept),
 * later ones at the last resourceVersion seen, without a limit (served by
 * the watch cache once it has that revision), continue pages without a
 * resourceVersion; a list answered 410 or ResourceVersionTooLarge is sent
 * again at once without a resourceVersion (the latest, a quorum read).
 * A 200 list page without items or metadata.resourceVersion (an auth
 * proxy's "{}", an error object) is a failed list: nothing is deleted.  A
 * list that fails partway, or whose continue token expires (410), is
 * listed again from the first page as a new relist generation, so objects
 * only its failed attempt saw do not survive.
 * Watch events go to kpx_model_apply(); a 410 Gone (expired
 * resourceVersion) or a "too large resource version" Status (504, cause
 * ResourceVersionTooLarge) leads to a relist, which the model diffs (never
 * a flush).  An event that does not parse or decode ends the watch, which
 * is resumed from the last applied resourceVersion (as client-go's
 * reflector does), so that change is received again, not skipped.
 * Any other failure is logged and retried, re-watching from the last
 * resourceVersion, with jittered exponential backoff from 0.5 s to 30 s.
 * A watch that receives no byte (not even a bookmark) for the stall
 * timeout is ended and re-watched; a list page must complete within the
 * request timeout.  Every request (list page or watch) first takes a token
 * from the --kube-api-qps/--kube-api-burst bucket.  The bearer token file,
 * if any, is re-read for every request (rotation).
 */
#ifndef KPX_K8S_H
#define KPX_K8S_H

#include <stdbool.h>
#include "config/kubeconfig.h"
#include "http/metrics.h"
#include "model/model.h"

struct kpx_k8s;

/*
 * Creates the client.  @kc and @model must outlive it; @node is copied.
 * Nothing is sent before kpx_k8s_poll().  Returns NULL with errno set.
 */
struct kpx_k8s *kpx_k8s_new(const struct kpx_kubeconfig *kc, const char *node,
			    struct kpx_model *model);
void kpx_k8s_free(struct kpx_k8s *k);

/*
 * Limits, before the first kpx_k8s_poll(): @qps requests per second with
 * @burst (qps <= 0: none); @request_timeout_s for a list page (default
 * 60); @stall_timeout_s without a byte on a watch (default 150: real API
 * servers send a bookmark about every minute).  0 keeps a default.
 */
void kpx_k8s_set_limits(struct kpx_k8s *k, double qps, int burst,
			int request_timeout_s, int stall_timeout_s);

/*
 * Records events into @m: changes (with the EndpointSlice's
 * endpoints.kubernetes.io/last-change-trigger-time), watch restarts,
 * relists, and the own Node's eligibility (deletionTimestamp, taint
 * ToBeDeletedByClusterAutoscaler).
 */
void kpx_k8s_set_metrics(struct kpx_k8s *k, struct kpx_metrics *m);

/*
 * Parses an RFC 3339 time ("2026-11-30T06:30:12Z", fraction and numeric
 * offset allowed) into seconds since the epoch.  Returns 0 or -EINVAL.
 */
int kpx_k8s_parse_time(const char *s, double *out);

/*
 * Runs the client for at most @timeout_ms milliseconds: starts due
 * requests, waits for network activity (or for @fd, if >= 0, to become
 * readable), moves the transfers on and feeds what arrived to the model.
 * Returns 1 when @fd became readable, 0 otherwise, or -ENOMEM/-EIO on an
 * internal libcurl failure.
 */
int kpx_k8s_poll(struct kpx_k8s *k, int fd, int timeout_ms);

/*
 * Posts an events.k8s.io/v1 Event regarding the own Node, as kube-proxy's
 * recorder (k8s_record.c: the object, reportingController "kube-proxy"):
 * @type "Normal" or "Warning", @reason ("Starting",
 * "FailedToStartProxierHealthcheck", ...), @action ("StartKubeProxy"),
 * @note (NULL or "" for none).  Best-effort and rate-limited: it is sent
 * by kpx_k8s_poll() and never waited for.  Returns 0 (queued), -EBUSY
 * (dropped: rate limit or too many in flight) or -ENOMEM.
 */
int kpx_k8s_event(struct kpx_k8s *k, const char *type, const char *reason,
		  const char *action, const char *note);

/* True once the initial list of @kind has completed (it stays true). */
bool kpx_k8s_synced(const struct kpx_k8s *k, enum kpx_kind kind);

#endif
