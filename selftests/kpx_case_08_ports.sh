#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_08_ports: undefined ports of a live ClusterIP are refused at once,
# as kube-proxy's nftables mode does (kubernetes#122692; case 08's "a port /
# protocol the Service does not define").  shop/payments of case 08 with one
# ready endpoint (ClusterIP 10.96.70.50: 80/TCP -> 8080, 514/UDP -> 5514;
# NodePorts 30800/30514 on 192.0.2.11, externalIP 203.0.113.50, LB IP
# 198.51.100.50).  The defined ports answer; TCP 81 and UDP 80 of the
# ClusterIP are refused in under 100 ms from an external client, a pod and
# the node (the module's reject total grows, the frontends' own counters do
# not); a host daemon on the node address stays reachable and is not
# refused; undefined ports of the LB IP are not refused (only ClusterIPs;
# in ipvs mode they are, as kube-proxy's: the LB IP is on kpx-ipvs0);
# once the Service is deleted, its ClusterIP is no longer refused.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as node-a, API server;
#                               kpx-node 10.0.0.1, 192.0.2.11; host daemon
#                               0.0.0.0:2222)
#                           |-- veth -- pay1 10.244.1.80 :8080 tcp, :5514 udp
#                           `-- veth -- cpod 10.244.2.7  (client pod)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

CIP=10.96.70.50
case_init 08
pod_add pay1 10.244.1.80 && pod_add cpod 10.244.2.7 || skip "pod setup failed"
echo_start pay1 -t pay1 10.244.1.80:8080
echo_start pay1 -u pay1 10.244.1.80:5514
hostd=$("$ECHO_BIN" -t -d hostd 0.0.0.0:2222) && PIDS+=("$hostd")
jq '.items |= map(if .kind == "EndpointSlice" then
      .endpoints = [{addresses: ["10.244.1.80"], nodeName: "node-a",
                     conditions: {ready: true, serving: true, terminating: false}}] |
      .ports = [{name: "http", protocol: "TCP", port: 8080},
                {name: "audit", protocol: "UDP", port: 5514}]
    else . end)' "$OBJECTS" >"$TMPD/ready.json"
api_start "$TMPD/ready.json"
agent_start
log "agent's first sync after $(wait_agent_synced) s"
expect_backends tcp $CIP:80 10.244.1.80:8080 30
expect_backends udp $CIP:514 10.244.1.80:5514 5
assert_eq "ClusterIP frontend flagged KPX_SVC_F_CLUSTER_IP" 8 "$(($(proc_svc tcp $CIP:80 flags) & 8))"
assert_eq "LB IP frontend not flagged" 0 "$(($(proc_svc tcp 198.51.100.50:80 flags) & 8))"

# --- defined ports answer ---------------------------------------------------------
expect_answered cpod tcp $CIP:80 2 10.244.1.80:8080 10.244.2.7
expect_answered cpod udp $CIP:514 2 10.244.1.80:5514 10.244.2.7

# --- undefined ports and protocols refused ----------------------------------------
require_feature clusterip-reject
kpx_snapshot
c80=$(svc_counter tcp $CIP 80 rejects) c514=$(svc_counter udp $CIP 514 rejects)
stats_mark
expect_refused cli tcp $CIP:81 2
expect_refused cli udp $CIP:80 2
expect_refused cpod tcp $CIP:443 2
expect_refused cpod udp $CIP:53 1
expect_node_refused tcp $CIP:81 1
expect_node_refused udp $CIP:81 1
assert_eq "module reject total grew by the refusals" 9 "$(stats_delta rejects)"
kpx_snapshot
assert_eq "tcp $CIP:80's own reject counter unchanged" "$c80" "$(svc_counter tcp $CIP 80 rejects)"
assert_eq "udp $CIP:514's own reject counter unchanged" "$c514" "$(svc_counter udp $CIP 514 rejects)"

# --- other addresses are not ClusterIPs ---------------------------------------------
client cli -n 1 -t 1000 $NODE_A:2222
assert_eq "host daemon on the node address from cli: answered" 1 "$(summary_field ok)"
client_show_if_failed
client cli -n 1 -t 500 198.51.100.50:81
if mode_is ipvs; then
	# kpx-ipvs0 holds the LB IP too: every address on it refuses undefined
	# ports (kube-proxy's KUBE-IPVS-FILTER rejects on all of KUBE-IPVS-IPS)
	assert_eq "LB IP undefined port: refused (ipvs: the LB IP is on kpx-ipvs0)" 1 \
		"$(error_count ECONNREFUSED)"
else
	assert_eq "LB IP undefined port: not refused by kpx" 0 "$(error_count ECONNREFUSED)"
fi
client_show_if_failed
client cli -n 1 -t 500 $CIP:2222
assert_eq "host daemon via the ClusterIP: answered" 0 "$(summary_field ok)"
assert_eq "host daemon via the ClusterIP: refused" 1 "$(error_count ECONNREFUSED)"
client_show_if_failed

# --- the Service deleted: its address is no longer a ClusterIP -------------------------
assert_rc "delete the Service" 0 apictl delete Service shop payments
wt=$(wait_proc_backends tcp $CIP:80 absent 10)
assert_eq "frontend removed (after $wt s)" absent "$(proc_backends tcp $CIP:80)"
expect_timeout cli tcp $CIP:81 1 500
expect_timeout cli tcp $CIP:80 1 500

ksft_exit
