#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_05: shared case 05-terminating-endpoints-fallback with the real
# agent.  shop/checkout (LoadBalancer 198.51.100.41, ClusterIP 10.96.40.20,
# 80 -> 8080, NodePort 30280, externalTrafficPolicy Local,
# healthCheckNodePort 32200).  Before step 1 a client pod holds a TCP
# connection through the ClusterIP to 10.244.1.51 (then ready); it must
# survive step 1, where .51 stops serving (the proxy resets nothing).
# Step 1: ClusterIP -> only the ready 10.244.2.50; external traffic at
# node-a -> only the serving-terminating 10.244.1.50 (client IP kept), at
# node-b -> 10.244.2.50; health check node-a 503, node-b 200 (1 local).
# Step 2 (only .50 serving-terminating left): ClusterIP -> 10.244.1.50
# (cluster-wide fallback) on both nodes; external at node-a -> .50; at
# node-b dropped (timeout, drop counter); health check 503 on both.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as node-a / node-b, API
#                               server; kpx-node 192.0.2.11, 192.0.2.12)
#                           |-- veth -- c50  10.244.1.50 :8080 (node-a)
#                           |-- veth -- c51  10.244.1.51 :8080 (node-a)
#                           |-- veth -- c250 10.244.2.50 :8080 (node-b)
#                           `-- veth -- cpod 10.244.9.7  (client pod)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

NODE_B=192.0.2.12
LB=198.51.100.41
CIP=10.96.40.20
P50=10.244.1.50:8080 P51=10.244.1.51:8080 P250=10.244.2.50:8080
case_init 05
require_file /usr/bin/curl
ip addr add $NODE_B/32 dev kpx-node
pod_add c50 10.244.1.50 && pod_add c51 10.244.1.51 && pod_add c250 10.244.2.50 &&
	pod_add cpod 10.244.9.7 || skip "pod setup failed"
echo_start c50 -t c50 $P50
echo_start c51 -t c51 $P51
echo_start c250 -t c250 $P250
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"

# health NODE_IP WANT_STATUS [WANT_COUNT]: GET http://NODE_IP:32200/ (polled
# up to 5 s for the status); kube-proxy's JSON body names the Service.
health() {
	local code body i

	for ((i = 0; i < 25; i++)); do
		code=$(curl -s -m 2 -o "$TMPD/hc.body" -w '%{http_code}' "http://$1:32200/")
		[ "$code" = "$2" ] && break
		sleep 0.2
	done
	body=$(cat "$TMPD/hc.body" 2>/dev/null)
	assert_eq "health check $1:32200 status" "$2" "$code"
	assert_eq "health check $1:32200 body service" "shop/checkout" \
		"$(jq -r '"\(.service.namespace)/\(.service.name)"' <<<"$body" 2>/dev/null)"
	[ -z "${3:-}" ] || assert_eq "health check $1:32200 body localEndpoints" "$3" \
		"$(jq -r '.localEndpoints' <<<"$body" 2>/dev/null)"
}

# run_as NODE: restart the agent as NODE.
run_as() {
	local n

	agent_stop
	n=$(agent_syncs)
	AGENT_NODE=$1
	agent_start
	# Until its first sync the node keeps the previous agent's state.
	log "agent as $1: first sync after $(wait_agent_synced $((n + 1))) s"
}

# --- before step 1: a long connection to .51 while it is ready ---------------------
jq '.items[] | select(.kind == "EndpointSlice" and
                      .metadata.annotations["cases.kpr.test/step"] == "1") |
    .endpoints = [.endpoints[1] | .conditions = {ready: true, serving: true, terminating: false}]' \
	"$OBJECTS" >"$TMPD/pre.json"
assert_rc "apply the slice with .51 ready" 0 apictl apply "$TMPD/pre.json"
expect_backends tcp $CIP:80 $P51 30
in_ns cpod "$CLIENT_BIN" --hold 12000 --every 200 -t 1000 $CIP:80 >"$TMPD/hold.out" 2>&1 &
HOLD=$!
PIDS+=("$HOLD")
for _ in $(seq 1 50); do
	grep -q '^hold connected' "$TMPD/hold.out" && break
	sleep 0.1
done
assert_match "held connection to .51" '^hold connected c51 ' "$(grep '^hold connected' "$TMPD/hold.out")"

# --- step 1 as node-a -----------------------------------------------------------------
step 1
expect_backends tcp $CIP:80 $P250 10
expect_backends tcp $LB:80 $P50 5
expect_backends tcp $NODE_A:30280 $P50 5
expect_answered cpod tcp $CIP:80 6 $P250 10.244.9.7
expect_answered cli tcp $LB:80 6 $P50 $CLI4
expect_answered cli tcp $NODE_A:30280 6 $P50 $CLI4
health $NODE_A 503
wait $HOLD
assert_match "held connection to .51 after step 1 (no reset by the proxy)" \
	'^hold summary ident=c51 exchanges=[1-9][0-9]* failed=0$' "$(grep '^hold summary' "$TMPD/hold.out")"

# --- step 1 as node-b -----------------------------------------------------------------
run_as node-b
expect_backends tcp $NODE_B:30280 $P250 15
expect_backends tcp $LB:80 $P250 5
expect_answered cli tcp $LB:80 6 $P250 $CLI4
expect_answered cli tcp $NODE_B:30280 6 $P250 $CLI4
expect_answered cpod tcp $CIP:80 6 $P250 10.244.9.7
health $NODE_B 200 1

# --- step 2 as node-b: only .50 (serving, terminating) is left ------------------------
step 2
expect_backends tcp $CIP:80 $P50 10
expect_backends tcp $LB:80 - 5
expect_empty_action tcp $LB:80 drop
expect_answered cpod tcp $CIP:80 6 $P50 10.244.9.7
stats_mark
expect_timeout cli tcp $LB:80 1 1000
expect_timeout cli tcp $NODE_B:30280 1 1000
assert_ge "step 2 node-b: module drop counter grew" 2 "$(stats_delta drops)"
health $NODE_B 503 0

# --- step 2 as node-a ------------------------------------------------------------------
run_as node-a
expect_backends tcp $NODE_A:30280 $P50 15
expect_backends tcp $LB:80 $P50 5
expect_answered cli tcp $LB:80 6 $P50 $CLI4
expect_answered cli tcp $NODE_A:30280 6 $P50 $CLI4
expect_answered cpod tcp $CIP:80 6 $P50 10.244.9.7
health $NODE_A 503

ksft_exit
