#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_10: shared case 10-named-targetport-mixed-ports with the real
# agent.  shop/search (ClusterIP 10.96.90.70) port web 80 -> targetPort
# "http", which is 8080 on the v1 pods and 8081 on the v2 canary (two
# slices with per-slice ports), and metrics 9100 -> 9100: web reaches the
# three pods each on its own slice's port, metrics all three on 9100;
# pod-to-Service traffic keeps the client pod's address; deleting the
# canary's slice removes it from both ports; a slice listing only the
# metrics port adds its endpoint to metrics and not to web.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as node-a, API server)
#                          |-- veth -- s1   10.244.1.100 :8080 :9100 (v1)
#                          |-- veth -- s2   10.244.2.100 :8080 :9100 (v1)
#                          |-- veth -- s3   10.244.2.101 :8081 :9100 (v2),
#                          |             decoy "wrong" on :8080
#                          `-- veth -- cpod 10.244.1.7 (client pod)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

case_init 10
pod_add s1 10.244.1.100 && pod_add s2 10.244.2.100 && pod_add s3 10.244.2.101 &&
	pod_add cpod 10.244.1.7 || skip "pod setup failed"
echo_start s1 -t s1 10.244.1.100:8080 10.244.1.100:9100
echo_start s2 -t s2 10.244.2.100:8080 10.244.2.100:9100
echo_start s3 -t s3 10.244.2.101:8081 10.244.2.101:9100
echo_start s3 -t wrong 10.244.2.101:8080
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"

WEB3=10.244.1.100:8080,10.244.2.100:8080,10.244.2.101:8081
MET3=10.244.1.100:9100,10.244.2.100:9100,10.244.2.101:9100
expect_backends tcp 10.96.90.70:80 $WEB3 30
expect_backends tcp 10.96.90.70:9100 $MET3 5
# 18 attempts over 3 backends: P(one never chosen) < 0.2 %
expect_answered cli tcp 10.96.90.70:80 18 $WEB3 $MASQ4
assert_eq "web: the canary answered on 8081, never the decoy on 8080" 0 "$(ident_count wrong)"
expect_answered cpod tcp 10.96.90.70:9100 18 $MET3 10.244.1.7
client cpod -n 6 -t 2000 10.96.90.70:80
assert_eq "pod -> web: answered" 6 "$(summary_field ok)"
assert_eq "pod -> web: source address kept" 10.244.1.7 "$(peer_addrs)"
kpx_snapshot
assert_eq "web frontend: backend count in kpxctl list" 3 "$(svc_counter tcp 10.96.90.70 80 nbackends)"
assert_ge "web: conns of the canary backend 10.244.2.101:8081" 1 \
	"$(be_counter tcp 10.96.90.70 80 10.244.2.101 8081)"

# --- the canary's slice deleted ----------------------------------------------
assert_rc "delete slice search-n3o4p" 0 apictl delete EndpointSlice shop search-n3o4p
expect_backends tcp 10.96.90.70:80 10.244.1.100:8080,10.244.2.100:8080 5
expect_backends tcp 10.96.90.70:9100 10.244.1.100:9100,10.244.2.100:9100 5
expect_answered cli tcp 10.96.90.70:80 8 10.244.1.100:8080,10.244.2.100:8080

# --- a slice with only the metrics port --------------------------------------
jq '.items[] | select(.metadata.name == "search-n3o4p") |
    .metadata.name = "search-q5r6s" | del(.metadata.uid, .metadata.resourceVersion) |
    .ports = [.ports[] | select(.name == "metrics")]' "$OBJECTS" >"$TMPD/metrics-only.json"
assert_rc "apply slice search-q5r6s (metrics port only)" 0 apictl apply "$TMPD/metrics-only.json"
expect_backends tcp 10.96.90.70:9100 $MET3 5
expect_backends tcp 10.96.90.70:80 10.244.1.100:8080,10.244.2.100:8080 2
expect_answered cli tcp 10.96.90.70:9100 18 $MET3

ksft_exit
