// SPDX-License-Identifier: GPL-2.0-only
/*
 * The start-up wait for the own Node (see nodewait.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "base/log.h"
#include "model/nodewait.h"

void kpx_nodewait_init(struct kpx_nodewait *w, const char *node,
		       bool want_pod_cidrs, int64_t ips_ms, int64_t cidrs_ms)
{
	*w = (struct kpx_nodewait){ .node = node,
				    .want_pod_cidrs = want_pod_cidrs,
				    .ips_ms = ips_ms,
				    .cidrs_ms = cidrs_ms };
}

static double secs(int64_t ms)
{
	return (double)ms / 1000.0;
}

/* Phase 2 (NodeCIDR mode), entered with the Node's state after phase 1. */
static enum kpx_nodewait_result cidrs_phase(struct kpx_nodewait *w, bool exists,
					    size_t npod_cidrs, int64_t now)
{
	if (!w->want_pod_cidrs || npod_cidrs) {
		w->phase = 3;
		return KPX_NODEWAIT_DONE;
	}
	if (w->phase != 2) {
		w->phase = 2;
		w->deadline = now + w->cidrs_ms;
		kpx_info(
			"node",
			"--detect-local-mode NodeCIDR: waiting up to %gs for Node %s%s to be "
			"allocated spec.podCIDRs, as kube-proxy (nothing is programmed, /healthz is "
			"not served until then; the agent exits 1 at the timeout)",
			secs(w->cidrs_ms), w->node,
			exists ? "" : " to exist and");
		return KPX_NODEWAIT_WAITING;
	}
	if (now < w->deadline)
		return KPX_NODEWAIT_WAITING;
	w->phase = 4;
	if (!exists)
		kpx_err("node",
			"timeout waiting for node \"%s\" to exist (--detect-local-mode NodeCIDR "
			"needs its spec.podCIDRs): exiting",
			w->node);
	else
		kpx_err("node",
			"timeout waiting for PodCIDR allocation on node \"%s\" "
			"(--detect-local-mode NodeCIDR): exiting",
			w->node);
	return KPX_NODEWAIT_FAILED;
}

enum kpx_nodewait_result kpx_nodewait_step(struct kpx_nodewait *w, bool exists,
					   size_t naddrs, size_t npod_cidrs,
					   int64_t now)
{
	if (!exists)
		naddrs = npod_cidrs = 0;
	switch (w->phase) {
	case 3:
		return KPX_NODEWAIT_DONE;
	case 4:
		return KPX_NODEWAIT_FAILED;
	case 2:
		if (npod_cidrs) {
			kpx_info("node",
				 "Node %s: spec.podCIDRs allocated: first sync",
				 w->node);
			w->phase = 3;
			return KPX_NODEWAIT_DONE;
		}
		return cidrs_phase(w, exists, npod_cidrs, now);
	case 0:
		if (naddrs)
			return cidrs_phase(w, exists, npod_cidrs, now);
		w->phase = 1;
		w->deadline = now + w->ips_ms;
		kpx_info(
			"node",
			"waiting up to %gs for Node %s %s, as kube-proxy (nothing is programmed, "
			"/healthz, /livez and /metrics are not served until then)",
			secs(w->ips_ms), w->node,
			exists ?
				"to be assigned an InternalIP or ExternalIP address" :
				"to exist with an InternalIP or ExternalIP address");
		return KPX_NODEWAIT_WAITING;
	default:
		break;
	}
	if (naddrs) {
		kpx_info("node", "Node %s found with its addresses", w->node);
		return cidrs_phase(w, exists, npod_cidrs, now);
	}
	if (now < w->deadline)
		return KPX_NODEWAIT_WAITING;
	/* as kube-proxy, for backward compatibility: go on without it */
	if (!exists)
		kpx_err("node",
			"timed out waiting for Node %s to exist: going on without it (no "
			"NodePort frontends, no node eligibility until it is registered)",
			w->node);
	else
		kpx_err("node",
			"timed out waiting for Node %s to be assigned IPs: going on without "
			"them (no NodePort frontends until it has one)",
			w->node);
	return cidrs_phase(w, exists, npod_cidrs, now);
}

int kpx_nodewait_timeouts(const char *env, int64_t *ips_ms, int64_t *cidrs_ms)
{
	char *end;
	long long a, b;

	*ips_ms = KPX_NODEWAIT_IPS_MS;
	*cidrs_ms = KPX_NODEWAIT_CIDRS_MS;
	if (!env || !*env)
		return 0;
	errno = 0;
	a = strtoll(env, &end, 10);
	if (errno || end == env || *end != ',' || a < 0)
		return -EINVAL;
	env = end + 1;
	b = strtoll(env, &end, 10);
	if (errno || end == env || *end || b < 0)
		return -EINVAL;
	*ips_ms = a;
	*cidrs_ms = b;
	return 0;
}
