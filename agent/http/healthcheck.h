/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-Service health-check HTTP servers (Service.spec.healthCheckNodePort,
 * externalTrafficPolicy Local on LoadBalancer Services), answering as
 * kube-proxy's service health server does: any method and path get
 *   200 when the Service has local endpoints and the proxy is healthy,
 *   503 otherwise,
 * with headers "Content-Type: application/json",
 * "X-Content-Type-Options: nosniff" and "X-Load-Balancing-Endpoint-Weight: N"
 * (N the local endpoint count, as kube-proxy sends it for load balancers
 * that weigh nodes by it) and the body
 *   {"service":{"namespace":NS,"name":NAME},"localEndpoints":N,
 *    "serviceProxyHealthy":BOOL}
 * (pretty-printed with tabs as kube-proxy's).  Load balancers probe it to
 * send traffic only to nodes with a local endpoint.
 *
 * Servers run in libmicrohttpd's own thread (one per listening socket); the
 * counts they answer with are swapped under a lock by kpx_hc_sync().
 *
 * Usage (main.c), after each sync:
 *
 *	hc = kpx_hc_new(NULL, 0);	// once
 *	n = kpx_model_nodeport_ips(model, ips, max);	// nodePortAddresses
 *	kpx_hc_set_addrs(hc, ips, n);	// (n = 0: all addresses)
 *	kpx_model_healthchecks(model, &v, &n);
 *	(clear v[i].healthy for Services whose frontends failed to program,
 *	 or all of them while the last sync is stale)
 *	kpx_hc_sync(hc, v, n);		// opens, closes, updates
 *	free(v);
 *	...
 *	kpx_hc_free(hc);		// at exit
 */
#ifndef KPX_HEALTHCHECK_H
#define KPX_HEALTHCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/service.h"	/* struct kpx_hc_service */

struct kpx_hc;

/*
 * A health-check server set that binds each Service's port on every address
 * in @addrs (numeric IPv4 or IPv6 text, copied), or when @naddrs is 0 on all
 * addresses (dual-stack [::], else 0.0.0.0).  NULL on allocation failure or
 * a bad address (errno EINVAL).
 */
struct kpx_hc *kpx_hc_new(const char *const *addrs, size_t naddrs);

/* Stops every server (waits for their threads) and frees @hc; NULL is ok. */
void kpx_hc_free(struct kpx_hc *hc);

/*
 * Makes @v (n entries, any order, one per Service) the served set: servers
 * of Services no longer listed, or whose port changed, are closed; new ones
 * opened; the answers of all updated at once.  A port that cannot be bound
 * (in use: EADDRINUSE and the like) on an address is logged once and
 * retried at the next call, as kube-proxy does; a Service served on some
 * of its addresses stays served there.  Returns the number of Services
 * not served on every address (0 = all served), or -ENOMEM.
 */
int kpx_hc_sync(struct kpx_hc *hc, const struct kpx_hc_service *v, size_t n);

/*
 * Changes the bind addresses (as kpx_hc_new()).  Each server keeps its
 * listeners on the addresses that stay (never closed in between: a node
 * address added or moved away changes only its own listener), closes
 * those on the addresses gone and opens new ones at once; one that cannot
 * be opened is logged once and retried by kpx_hc_sync().  Returns 1 when
 * changed, 0 when the same, -EINVAL for a bad address (nothing changed).
 */
int kpx_hc_set_addrs(struct kpx_hc *hc, const char *const *addrs, size_t naddrs);

/* Number of Services currently served. */
size_t kpx_hc_count(const struct kpx_hc *hc);

/*
 * The port the Service's server is bound to (host order), which is the
 * asked one unless that was 0; 0 when the Service is not served.
 */
uint16_t kpx_hc_bound_port(const struct kpx_hc *hc, const char *ns,
			   const char *name);

#endif
