#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_04: shared case 04-etp-local-healthcheck-nodeport with the real
# agent.  shop/storefront (LoadBalancer 198.51.100.40, ClusterIP
# 10.96.30.10, 80 -> 8080 NodePort 30180, 443 -> 8443 NodePort 30543,
# externalTrafficPolicy Local, healthCheckNodePort 32100), two pods on
# node-a.  As node-a: GET :32100 answers 200 with localEndpoints 2 and
# kube-proxy's JSON; an external client reaches the local pods through the
# LB IP and the NodePort with its own address kept (no SNAT).  The agent is
# restarted as node-b (no local pod): 503 with localEndpoints 0, external
# traffic to the LB IP and node-b's NodePort is dropped (times out, drop
# counter).  Item 4, still on node-b: a pod (cpod, a local source) and the
# node itself reach the LB IP and node-b's NodePort and are served by both
# endpoints through the ClusterIP frontend (kube-proxy's short-circuit of
# in-cluster traffic, KPX_SVC_F_EXT_LOCAL): the pod's address is kept as
# for the ClusterIP, the node's connections are masqueraded; the ClusterIP
# backends' counters take them; external clients are still dropped.  Pods
# rescheduled (one on node-b, none on node-a): node-b 200 with 1 and serves;
# as node-a again: 503 and drop.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as node-a / node-b, API
#                               server; kpx-node 192.0.2.11 and 192.0.2.12)
#                           |-- veth -- sf0  10.244.1.40 :8080 :8443
#                           |-- veth -- sf1  10.244.1.41 :8080 :8443
#                           `-- veth -- cpod 10.244.2.7  (a pod on node-b)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

NODE_B=192.0.2.12
LB=198.51.100.40
case_init 04
require_file /usr/bin/curl
ip addr add $NODE_B/32 dev kpx-node
pod_add sf0 10.244.1.40 && pod_add sf1 10.244.1.41 && pod_add cpod 10.244.2.7 ||
	skip "pod setup failed"
echo_start sf0 -t sf0 10.244.1.40:8080 10.244.1.40:8443
echo_start sf1 -t sf1 10.244.1.41:8080 10.244.1.41:8443
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"

# health NODE_IP WANT_STATUS WANT_COUNT: GET http://NODE_IP:32100/ (polled
# up to 5 s for the status) and check kube-proxy's JSON body.
health() {
	local code body i

	for ((i = 0; i < 25; i++)); do
		code=$(curl -s -m 2 -o "$TMPD/hc.body" -w '%{http_code}' "http://$1:32100/")
		[ "$code" = "$2" ] && break
		sleep 0.2
	done
	body=$(cat "$TMPD/hc.body" 2>/dev/null)
	assert_eq "health check $1:32100 status" "$2" "$code"
	assert_eq "health check $1:32100 body service" "shop/storefront" \
		"$(jq -r '"\(.service.namespace)/\(.service.name)"' <<<"$body" 2>/dev/null)"
	assert_eq "health check $1:32100 body localEndpoints" "$3" \
		"$(jq -r '.localEndpoints' <<<"$body" 2>/dev/null)"
}

BOTH=10.244.1.40:8080,10.244.1.41:8080
# --- node-a: two local pods ---------------------------------------------------
expect_backends tcp $LB:80 $BOTH 30
expect_backends tcp $NODE_A:30180 $BOTH 5
expect_backends tcp $LB:443 10.244.1.40:8443,10.244.1.41:8443 5
health $NODE_A 200 2
expect_answered cli tcp $LB:80 12 $BOTH $CLI4
expect_answered cli tcp $NODE_A:30180 12 $BOTH $CLI4
expect_answered cli tcp $LB:443 12 10.244.1.40:8443,10.244.1.41:8443 $CLI4

# --- node-b: no local pod -----------------------------------------------------
nsync=$(agent_syncs)
agent_stop
AGENT_NODE=node-b
agent_start
# until its first sync the node keeps the previous agent's state
log "restarted agent's first sync after $(wait_agent_synced $((nsync + 1))) s"
expect_backends tcp $LB:80 - 15
expect_backends tcp $NODE_B:30180 - 5
expect_empty_action tcp $LB:80 drop
expect_empty_action tcp $NODE_B:30180 drop
health $NODE_B 503 0
stats_mark
expect_timeout cli tcp $LB:80 1 1000
expect_timeout cli tcp $NODE_B:30180 1 1000
assert_ge "node-b: module drop counter grew" 2 "$(stats_delta drops)"
expect_answered cli tcp 10.96.30.10:80 8 $BOTH

# --- item 4 (node-b): in-cluster clients of the external addresses ------------
# cluster_conns: new connections the ClusterIP :80 backends took, as of
# the last kpx_snapshot.
cluster_conns() {
	echo $(($(be_counter tcp 10.96.30.10 80 10.244.1.40 8080) +
		$(be_counter tcp 10.96.30.10 80 10.244.1.41 8080)))
}
if ! lacks_feature etp-local-shortcut; then
	kpx_snapshot
	assert_eq "node-b: LB IP :80 flags" '["drop-empty","ext-local"]' \
		"$(svc_counter tcp $LB 80 flags)"
	assert_eq "node-b: LB IP :80 names its ClusterIP frontend" "10.96.30.10:80" \
		"$(jq -r --arg v $LB '.services[] | select(.vip == $v and .port == 80) | .cluster' <<<"$KS_JSON")"
	assert_eq "node-b: NodePort 30543 names its ClusterIP frontend" "10.96.30.10:443" \
		"$(jq -r --arg v $NODE_B '.services[] | select(.vip == $v and .port == 30543) | .cluster' <<<"$KS_JSON")"
	assert_eq "node-b: the ClusterIP frontend has no cluster key" "null" \
		"$(jq -r '.services[] | select(.vip == "10.96.30.10" and .port == 80) | .cluster' <<<"$KS_JSON")"
	c0=$(cluster_conns)
	lb0=$(svc_counter tcp $LB 80 conns)
	stats_mark
	expect_answered cpod tcp $LB:80 12 $BOTH 10.244.2.7
	expect_answered cpod tcp $NODE_B:30180 12 $BOTH 10.244.2.7
	expect_answered cpod tcp $LB:443 6 10.244.1.40:8443,10.244.1.41:8443 10.244.2.7
	expect_answered node tcp $LB:80 12 $BOTH $MASQ4
	expect_answered node tcp $NODE_B:30180 12 $BOTH $MASQ4
	kpx_snapshot
	assert_eq "item 4: the ClusterIP :80 backends took the 48 connections" 48 \
		$(($(cluster_conns) - c0))
	assert_eq "item 4: LB IP :80 counts its 24 connections" 24 \
		$(($(svc_counter tcp $LB 80 conns) - lb0))
	assert_eq "item 4: nothing dropped" 0 "$(stats_delta drops)"
	# external clients are still limited to (absent) local endpoints
	stats_mark
	expect_timeout cli tcp $LB:80 1 1000
	expect_timeout cli tcp $NODE_B:30180 1 1000
	assert_ge "item 4: external clients still dropped (drop counter)" 2 "$(stats_delta drops)"
fi

# --- pods rescheduled: one on node-b, none on node-a ---------------------------
jq '.items[] | select(.kind == "EndpointSlice") |
    .endpoints = [.endpoints[0] | .nodeName = "node-b" | .zone = "zone-2"]' \
	"$OBJECTS" >"$TMPD/moved.json"
assert_rc "apply the slice with 10.244.1.40 on node-b" 0 apictl apply "$TMPD/moved.json"
expect_backends tcp $LB:80 10.244.1.40:8080 5
health $NODE_B 200 1
expect_answered cli tcp $LB:80 4 10.244.1.40:8080 $CLI4
nsync=$(agent_syncs)
agent_stop
AGENT_NODE=node-a
agent_start
# until its first sync the node keeps the previous agent's state
log "restarted agent's first sync after $(wait_agent_synced $((nsync + 1))) s"
wait_empty_action tcp $NODE_A:30180 drop 15
expect_backends tcp $LB:80 - 5
health $NODE_A 503 0
expect_timeout cli tcp $LB:80 1 1000

ksft_exit
