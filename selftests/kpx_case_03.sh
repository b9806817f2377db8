#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_03: shared case 03-clientip-affinity-timeout with the real agent
# as node-a.  shop/cart (ClusterIP 10.96.20.30:80 -> 8080, ClientIP
# affinity, timeoutSeconds 10), three pods (.1.30, .1.31 on node-a, .2.30 on
# node-b); shop/cart-public (NodePort 30080, externalTrafficPolicy Local,
# timeoutSeconds 10800).
#   1. a client pod: 12 connections 1 s apart (longer than the timeout:
#      each one refreshes the entry) all land on one backend; so do the
#      node's own connections;
#   3. eight client IPs are pinned each, independently (not all to one);
#   4. the backend the client is pinned to is deleted: its next connection
#      goes at once to a live backend, and it is pinned there;
#   5. an external client on the NodePort always lands on one node-a pod
#      (never .2.30) with its own address kept, and stays there across a
#      15 s pause (10800 s timeout);
#   2. after 15 s of silence, 8 connections 11 s apart (each beyond the
#      10 s timeout) are fresh decisions: at least two backends appear.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as node-a, API server;
#                               kpx-node 192.0.2.11)
#                           |-- veth -- k30  10.244.1.30 :8080
#                           |-- veth -- k31  10.244.1.31 :8080
#                           |-- veth -- k230 10.244.2.30 :8080
#                           `-- veth -- cp0..cp7 10.244.2.9, 10.244.2.10..16
#                                       (client pods)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

VIP=10.96.20.30
NP=$NODE_A:30080
ALL=10.244.1.30:8080,10.244.1.31:8080,10.244.2.30:8080
case_init 03
pod_add k30 10.244.1.30 && pod_add k31 10.244.1.31 && pod_add k230 10.244.2.30 &&
	pod_add cp0 10.244.2.9 || skip "pod setup failed"
for i in 1 2 3 4 5 6 7; do
	pod_add cp$i 10.244.2.$((9 + i)) || skip "pod setup failed"
done
echo_start k30 -t k30 10.244.1.30:8080
echo_start k31 -t k31 10.244.1.31:8080
echo_start k230 -t k230 10.244.2.30:8080
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"
step 1
expect_backends tcp $VIP:80 $ALL 30
expect_backends tcp $NP 10.244.1.30:8080,10.244.1.31:8080 5

# one_backend DESC: assert that the last client run was answered by
# exactly one backend; sets ONE to it.
one_backend() {
	ONE=$(answer_field 2)
	assert_match "$1: one backend" '^10\.244\.[0-9]+\.[0-9]+:8080$' "$ONE"
	client_show_if_failed
}

# --- 1: sticky within the timeout, refreshed by each connection -----------------------
client cp0 -n 12 -i 1000 -t 2000 $VIP:80
assert_eq "1: cp0 12 connections 1 s apart answered" 12 "$(summary_field ok)"
one_backend "1: cp0 over 12 s (timeout 10 s)"
B0=$ONE
client node -n 8 -t 2000 $VIP:80
assert_eq "1: node 8 connections answered" 8 "$(summary_field ok)"
one_backend "1: node's own connections"

# --- 3: other client IPs scheduled independently ----------------------------------------
declare -A seen=()
for i in 1 2 3 4 5 6 7; do
	client cp$i -n 4 -t 2000 $VIP:80
	one_backend "3: cp$i"
	b=$ONE
	seen[$b]=1
done
seen[$B0]=1
assert_ge "3: distinct backends of 8 client IPs" 2 "${#seen[@]}"

# --- 4: the pinned backend is deleted ------------------------------------------------------
slice1=$(jq -c '.items[] | select(.kind == "EndpointSlice" and .metadata.name == "cart-h4j9d" and
                .metadata.annotations["cases.kpr.test/step"] == "1")' "$OBJECTS")
if [ "$B0" = 10.244.1.30:8080 ]; then
	step 2
	log "cp0 was pinned to 10.244.1.30: step 2 deletes it"
else
	jq --arg ip "${B0%:*}" '.endpoints |= map(select(.addresses[0] != $ip))' \
		<<<"$slice1" >"$TMPD/del.json"
	assert_rc "apply the slice without cp0's backend $B0" 0 apictl apply "$TMPD/del.json"
fi
wt=$(wait_proc_backends tcp $VIP:80 "$(tr , '\n' <<<"$ALL" | grep -vx "$B0" | paste -sd,)" 10)
log "backend $B0 removed from the module after $wt s"
client cp0 -n 8 -t 2000 $VIP:80
assert_eq "4: cp0 answered after its backend was deleted" 8 "$(summary_field ok)"
one_backend "4: cp0 re-pinned"
B1=$ONE
assert_ne "4: cp0's new backend" "$B0" "$B1"
echo "$slice1" >"$TMPD/all.json"
assert_rc "apply the three-pod slice again" 0 apictl apply "$TMPD/all.json"
expect_backends tcp $VIP:80 $ALL 10

# --- 5: eTP Local NodePort with affinity ---------------------------------------------------
client cli -n 12 -t 2000 $NP
assert_eq "5: external client answered" 12 "$(summary_field ok)"
one_backend "5: external client on the NodePort"
E0=$ONE
assert_match "5: a node-a pod" '^10\.244\.1\.3[01]:8080$' "$E0"
assert_eq "5: source address seen" $CLI4 "$(peer_addrs)"

# --- 2: idle expiry after 15 s of silence -------------------------------------------------
sleep 15
client cli -n 4 -t 2000 $NP
assert_eq "5: after 15 s the external client (10800 s) stays on" "$E0" "$(answer_field 2)"
client cp0 -n 8 -i 11000 -t 2000 $VIP:80
assert_eq "2: 8 connections 11 s apart answered" 8 "$(summary_field ok)"
n=$(tr , '\n' <<<"$(answer_field 2)" | grep -c .)
lacks_feature affinity-idle-expiry ||
	assert_ge "2: distinct backends over 8 connections 11 s apart" 2 "$n"
log "2: backends $(answer_field 2)"

ksft_exit
