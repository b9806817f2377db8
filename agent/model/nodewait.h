/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The start-up wait for the agent's own Node, as kube-proxy's NodeManager
 * does it (kubernetes pkg/proxy/nodemanager, nodemanager.New(), checked
 * once after the Node list, then once a second):
 *
 *  1. up to 30 s for the Node to exist with a host IP (an InternalIP or
 *     ExternalIP address that parses: utilnode.GetNodeHostIPs());
 *     without one after that, logged as an error and the agent goes on;
 *  2. then, with --detect-local-mode=NodeCIDR only and spec.podCIDRs still
 *     empty, up to 5 min more for them; without them the agent exits 1
 *     ("timeout waiting for node ... to exist" or "... for PodCIDR
 *     allocation on node ...").
 *
 * Nothing is programmed before the wait ends (main.c runs the first sync
 * after it) and, as kube-proxy's health and metrics servers start only
 * after it, /healthz, /livez and /metrics are not served meanwhile.
 * Pure: the caller passes the clock and the Node's state.
 */
#ifndef KPX_NODEWAIT_H
#define KPX_NODEWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KPX_NODEWAIT_IPS_MS 30000    /* kube-proxy's nodeIPsTimeout */
#define KPX_NODEWAIT_CIDRS_MS 300000 /* kube-proxy's podCIDRsTimeout */

enum kpx_nodewait_result {
	KPX_NODEWAIT_WAITING, /* not yet: call again (at most 1 s later) */
	KPX_NODEWAIT_DONE,    /* go on to the first sync (Node found or not) */
	KPX_NODEWAIT_FAILED,  /* NodeCIDR mode without podCIDRs: exit 1 */
};

struct kpx_nodewait {
	const char *node;	  /* the Node's name (--hostname-override) */
	bool want_pod_cidrs;	  /* --detect-local-mode=NodeCIDR */
	int64_t ips_ms, cidrs_ms; /* the two timeouts, milliseconds */
	int phase;	  /* 0 before the first step, 1, 2, 3 done, 4 failed */
	int64_t deadline; /* of the current phase, caller's ms clock */
};

/*
 * Sets up @w for Node @node (kept, must outlive @w); @ips_ms / @cidrs_ms
 * are the two timeouts in milliseconds (KPX_NODEWAIT_*_MS outside tests).
 */
void kpx_nodewait_init(struct kpx_nodewait *w, const char *node,
		       bool want_pod_cidrs, int64_t ips_ms, int64_t cidrs_ms);

/*
 * One check at @now_ms (monotonic milliseconds), once the Node list is
 * done: @exists with @naddrs host IPs and @npod_cidrs spec.podCIDRs is the
 * Node as the model holds it.  Logs what it waits for when a phase starts,
 * and the outcome.  DONE and FAILED are final (further calls return them).
 */
enum kpx_nodewait_result kpx_nodewait_step(struct kpx_nodewait *w, bool exists,
					   size_t naddrs, size_t npod_cidrs,
					   int64_t now_ms);

/*
 * The timeouts from the environment variable KPX_TEST_NODE_WAIT_MS
 * ("IPS_MS,CIDRS_MS"), which only the agent's tests set so that a Node that
 * never comes costs seconds, not minutes; unset: kube-proxy's 30 s and
 * 5 min.  Returns 0, or -EINVAL (and leaves the defaults) when it does not
 * parse.
 */
int kpx_nodewait_timeouts(const char *env, int64_t *ips_ms, int64_t *cidrs_ms);

#endif
