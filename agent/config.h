/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kpx-agent's configuration: kube-proxy's flags and KubeProxyConfiguration
 * (kubeproxy.config.k8s.io/v1alpha1) fields that apply to kpx, under their
 * kube-proxy names.  Flags override the --config file.  Plain data.
 */
#ifndef KPX_CONFIG_H
#define KPX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>

/* A prefix: addr in network byte order, bits past len zero. */
struct kpx_cidr {
	int family;			/* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint8_t len;
};

#define KPX_CONFIG_CIDRS_MAX 64

enum kpx_detect_local {
	KPX_DETECT_LOCAL_NONE,		/* nothing is local: masquerade off-node */
	KPX_DETECT_LOCAL_CLUSTER_CIDR,	/* --cluster-cidr */
	KPX_DETECT_LOCAL_NODE_CIDR,	/* the Node's spec.podCIDRs */
	KPX_DETECT_LOCAL_BRIDGE,	/* --pod-bridge-interface */
	KPX_DETECT_LOCAL_IFPREFIX,	/* --pod-interface-name-prefix */
};

struct kpx_config {
	/* API access */
	char *kubeconfig;		/* --kubeconfig / clientConnection.kubeconfig */
	char *master;			/* --master */
	char hostname[HOST_NAME_MAX + 1];	/* --hostname-override */
	double kube_api_qps;		/* --kube-api-qps, default 5 */
	int kube_api_burst;		/* --kube-api-burst, default 10 */

	/* sync */
	int64_t min_sync_ms;		/* --min-sync-period, default 1000 */
	int64_t sync_ms;		/* --sync-period, default 30000 */

	/* what is local, masquerade (issue 3; anchors.md §1) */
	struct kpx_cidr cluster_cidrs[KPX_CONFIG_CIDRS_MAX];	/* --cluster-cidr, comma separated */
	int n_cluster_cidrs;
	enum kpx_detect_local detect_local;	/* --detect-local-mode */
	char pod_bridge_interface[IF_NAMESIZE];	/* --pod-bridge-interface */
	char pod_interface_prefix[IF_NAMESIZE];	/* --pod-interface-name-prefix */
	bool masquerade_all;		/* --masquerade-all */

	/*
	 * --nodeport-addresses: CIDRs, or "primary" (the default, as
	 * kube-proxy's nftables mode: the node's primary IPs from its Node
	 * object); nodeport_primary is true when "primary" is given or nothing.
	 */
	struct kpx_cidr nodeport_cidrs[KPX_CONFIG_CIDRS_MAX];
	int n_nodeport_cidrs;
	bool nodeport_primary;

	/* scheduler (issue 4): --scheduler, default "random" */
	char scheduler[16];

	/* endpoints */
	char healthz_bind[64];		/* --healthz-bind-address, default 0.0.0.0:10256 */
	char metrics_bind[64];		/* --metrics-bind-address, default 127.0.0.1:10249 */
	char proxy_mode[16];		/* --proxy-mode, "" = kpx */

	int verbosity;			/* --v */
	bool once, dry_run, cleanup;	/* --once, --dry-run, --cleanup */
};

/* Fills @c with kube-proxy's defaults. */
void kpx_config_defaults(struct kpx_config *c);

#endif
