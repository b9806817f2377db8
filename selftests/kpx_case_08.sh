#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_08: shared case 08-no-endpoints-reject with the real agent.
# shop/payments (LoadBalancer, ClusterIP 10.96.70.50, 80/TCP -> 8080 NodePort
# 30800, 514/UDP -> 5514 NodePort 30514, externalIP 203.0.113.50, LB IP
# 198.51.100.50) has only a placeholder EndpointSlice ("endpoints": null, no
# "ports"): every frontend (ClusterIP, node-a's NodePorts, externalIP, LB
# IP; TCP and UDP) refuses at once (< 100 ms) from an external client and
# from the node; "endpoints": [] / "ports": [] parse as zero endpoints too;
# a host daemon is not reachable on the ClusterIP; once a ready endpoint
# appears, every frontend answers.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as node-a, API server;
#                               kpx-node: 10.0.0.1, 192.0.2.11)
#                               |-- veth -- pay1 10.244.1.80 :8080 tcp, :5514 udp
#                               `-- host daemon 0.0.0.0:2222 in the root netns
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

case_init 08
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"

# PROTO ADDR:PORT of every node-a frontend of the Service.
FRONTENDS=(
	"tcp 10.96.70.50:80" "udp 10.96.70.50:514"
	"tcp $NODE_A:30800" "udp $NODE_A:30514"
	"tcp 203.0.113.50:80" "udp 203.0.113.50:514"
	"tcp 198.51.100.50:80" "udp 198.51.100.50:514"
)

# --- placeholder slice: zero endpoints everywhere ----------------------------
expect_backends tcp 10.96.70.50:80 - 30
for f in "${FRONTENDS[@]}"; do
	read -r proto fe <<<"$f"
	expect_backends "$proto" "$fe" - 5
	expect_empty_action "$proto" "$fe" reject
done
for f in "${FRONTENDS[@]}"; do
	read -r proto fe <<<"$f"
	expect_refused cli "$proto" "$fe"
done
# node-local clients (LOCAL_OUT): the ClusterIP and the NodePorts
for f in "${FRONTENDS[@]:0:4}"; do
	read -r proto fe <<<"$f"
	expect_node_refused "$proto" "$fe" 1
done
assert_no_match "agent log: errors on the placeholder slice" \
	'(error|invalid|failed).*payments' "$(cat "$TMPD/agent.log")"

# --- a port / protocol the Service does not define --------------------------
# nftables mode rejects them (kubernetes#122692); the scenario asks us to.
if [ -z "${MODE_LACKS["$KPX_PROXY_MODE clusterip-reject"]:-}" ]; then
	expect_refused cli tcp 10.96.70.50:81
	expect_refused cli udp 10.96.70.50:80
else
	skip_assert "undefined ports of the ClusterIP refused" "${MODE_LACKS["$KPX_PROXY_MODE clusterip-reject"]}"
fi

# --- host daemon not reachable on the ClusterIP (kubernetes#72236) -----------
hostd=$("$ECHO_BIN" -t -d hostd 0.0.0.0:2222) && PIDS+=("$hostd")
client node -n 1 -t 1000 $NODE4:2222
assert_eq "host daemon answers on the node address" 1 "$(summary_field ok)"
if [ -z "${MODE_LACKS["$KPX_PROXY_MODE clusterip-host-ports"]:-}" ]; then
	client cli -n 1 -t 500 10.96.70.50:2222
	assert_eq "host daemon via ClusterIP 10.96.70.50:2222 from cli: answered" 0 "$(summary_field ok)"
	client_show_if_failed
	client node -n 1 -t 500 10.96.70.50:2222
	assert_eq "host daemon via ClusterIP 10.96.70.50:2222 from node: answered" 0 "$(summary_field ok)"
	client_show_if_failed
else
	skip_assert "host daemon not reachable via ClusterIP 10.96.70.50:2222" \
		"${MODE_LACKS["$KPX_PROXY_MODE clusterip-host-ports"]}"
fi

# --- "endpoints": [] and "ports": [] -----------------------------------------
jq '.items[] | select(.kind == "EndpointSlice") | .endpoints = [] | .ports = []' \
	"$OBJECTS" >"$TMPD/empty.json"
assert_rc "apply the slice with endpoints [] and ports []" 0 apictl apply "$TMPD/empty.json"
sleep 1.5
kill -0 "$AGENT_PID" 2>/dev/null
assert_eq "agent still running after the empty lists" 0 $?
expect_backends tcp 10.96.70.50:80 - 2
expect_refused cli tcp 10.96.70.50:80 1
expect_refused cli udp 10.96.70.50:514 1

# --- a ready endpoint appears: every frontend answers ------------------------
pod_add pay1 10.244.1.80 || skip "pod setup failed"
echo_start pay1 -t pay1 10.244.1.80:8080
echo_start pay1 -u pay1 10.244.1.80:5514
jq '.items[] | select(.kind == "EndpointSlice") |
    .endpoints = [{addresses: ["10.244.1.80"], nodeName: "node-a",
                   conditions: {ready: true, serving: true, terminating: false}}] |
    .ports = [{name: "http", protocol: "TCP", port: 8080},
              {name: "audit", protocol: "UDP", port: 5514}]' \
	"$OBJECTS" >"$TMPD/ready.json"
assert_rc "apply the slice with one ready endpoint" 0 apictl apply "$TMPD/ready.json"
for f in "${FRONTENDS[@]}"; do
	read -r proto fe <<<"$f"
	if [ "$proto" = tcp ]; then be=10.244.1.80:8080; else be=10.244.1.80:5514; fi
	expect_backends "$proto" "$fe" "$be" 5
	# Cluster policy, client outside the cluster CIDR: masqueraded to the
	# node's address towards the pod.
	expect_answered cli "$proto" "$fe" 1 "$be" $MASQ4
done

ksft_exit
