#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_15: shared case 15-lb-source-ranges with the real agent.
# shop/partner-api (LoadBalancer 198.51.100.60, ClusterIP 10.96.140.120,
# 443 -> 8443, NodePort 30443, loadBalancerSourceRanges 203.0.113.0/24),
# two pods.  The scenario's matrix: 203.0.113.7 -> LB served; 198.51.100.99
# -> LB dropped silently (times out, filtered counter); the node -> LB
# dropped; pod 10.244.2.9 -> LB dropped; 198.51.100.99 -> NodePort served;
# pod -> ClusterIP served with its own address.  Row 2 stays closed while
# the endpoints are scaled between 1 and 2 three times (15 s loop).  Adding
# 198.51.100.0/24 to the ranges opens row 2 within a sync; removing it
# closes it again.
#
#   node (kpx.ko, kpx-agent as node-a, API server; kpx-node 10.0.0.1,
#         192.0.2.11; LB range routed to kpx-node)
#     |-- veth -- pa1  10.244.1.130 :8443
#     |-- veth -- pa2  10.244.2.130 :8443
#     |-- veth -- cpod 10.244.2.9       (client pod)
#     |-- veth -- okc  203.0.113.7      (external client, allowed range)
#     `-- veth -- bad  198.51.100.99    (external client, not allowed)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

LB=198.51.100.60
CIP=10.96.140.120
BOTH=10.244.1.130:8443,10.244.2.130:8443
case_init 15
pod_add pa1 10.244.1.130 && pod_add pa2 10.244.2.130 && pod_add cpod 10.244.2.9 &&
	pod_add okc 203.0.113.7 && pod_add bad 198.51.100.99 || skip "pod setup failed"
echo_start pa1 -t pa1 10.244.1.130:8443
echo_start pa2 -t pa2 10.244.2.130:8443
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"
expect_backends tcp $LB:443 $BOTH 30
expect_backends tcp $NODE_A:30443 $BOTH 5
expect_backends tcp $CIP:443 $BOTH 5

# filtered_total: the module's "filtered" total (kpxctl stats --json);
# $MODE_NA in the other proxy modes (module state, mode_lib.sh).
filtered_total() {
	mode_is kpx || { echo "$MODE_NA"; return; }
	"$KPXCTL" stats --json | jq -r '.filtered'
}
# filtered_delta F0: the growth of filtered_total since F0 (or $MODE_NA).
filtered_delta() {
	local f

	f=$(filtered_total)
	[ "$f" = "$MODE_NA" ] && echo "$MODE_NA" || echo $((f - $1))
}

# --- the matrix ---------------------------------------------------------------------
f0=$(filtered_total)
# row 1: eTP Cluster, client outside the cluster CIDR: masqueraded
expect_answered okc tcp $LB:443 12 $BOTH $MASQ4
# rows 2-4
expect_timeout bad tcp $LB:443 2 500
expect_timeout node tcp $LB:443 1 500
expect_timeout cpod tcp $LB:443 1 500
assert_eq "rows 2-4: module filtered counter grew by the attempts" 4 "$(filtered_delta "$f0")"
# row 5: the ranges do not cover the NodePort
expect_answered bad tcp $NODE_A:30443 12 $BOTH $MASQ4
# row 6: nor the ClusterIP; pod traffic keeps the pod's address
expect_answered cpod tcp $CIP:443 12 $BOTH 10.244.2.9

# --- row 2 during endpoint churn (1 <-> 2 endpoints, 3 times, 2 s apart) -----------
slice=$(jq -c '.items[] | select(.kind == "EndpointSlice")' "$OBJECTS")
jq '.endpoints = [.endpoints[0]]' <<<"$slice" >"$TMPD/one.json"
echo "$slice" >"$TMPD/two.json"
(
	for _ in 1 2 3; do
		python3 "$APIDIR/kpx-test-apictl" --kubeconfig "$KUBECONFIG_F" apply "$TMPD/one.json" >/dev/null
		sleep 2
		python3 "$APIDIR/kpx-test-apictl" --kubeconfig "$KUBECONFIG_F" apply "$TMPD/two.json" >/dev/null
		sleep 2
	done
) &
churn=$!
client bad -d 15000 -t 200 $LB:443
wait $churn
assert_eq "row 2 under churn: answered" 0 "$(summary_field ok)"
assert_ge "row 2 under churn: attempts" 20 "$(summary_field attempts)"
assert_eq "row 2 under churn: refused" 0 "$(error_count ECONNREFUSED)"
expect_backends tcp $LB:443 $BOTH 5

# --- ranges widened, then narrowed again ---------------------------------------------
jq '.items[] | select(.kind == "Service") |
    .spec.loadBalancerSourceRanges += ["198.51.100.0/24"]' "$OBJECTS" >"$TMPD/wide.json"
assert_rc "apply the Service with 198.51.100.0/24 added" 0 apictl apply "$TMPD/wide.json"
for _ in $(seq 1 50); do
	client bad -n 1 -t 200 $LB:443
	[ "$(summary_field ok)" = 1 ] && break
	sleep 0.1
done
expect_answered bad tcp $LB:443 12 $BOTH $MASQ4
jq '.items[] | select(.kind == "Service")' "$OBJECTS" >"$TMPD/narrow.json"
assert_rc "apply the Service with the original ranges" 0 apictl apply "$TMPD/narrow.json"
for _ in $(seq 1 50); do
	client bad -n 1 -t 200 $LB:443
	[ "$(summary_field ok)" = 0 ] && break
	sleep 0.1
done
expect_timeout bad tcp $LB:443 2 500
client okc -n 4 -t 2000 $LB:443
assert_eq "row 1 after the ranges changed back: answered" 4 "$(summary_field ok)"

ksft_exit
