#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_19: shared case 19-topology-hints-zone with the real agent, run
# as node-a (zone-1), node-b (zone-2) and node-c (zone-3) in turn.
# shop/pricing (ClusterIP 10.96.180.150:80 -> 8080, topology-mode Auto)
# step 1: node-a uses only its zone-1 hinted pods .1.160/.1.161; node-b the
# two hinted for zone-2 (.2.160 and .3.160 of zone-3); node-c all four (no
# endpoint hinted for zone-3).  Step 2 (an endpoint without hints): every
# endpoint on every node (objects.json's step 2 slice holds four: .3.161
# unhinted replaces .3.160, although scenario.md speaks of five).  shop/pricing-local (internalTrafficPolicy Local)
# ignores hints: each node its own pods.  Unknown fields in hints
# (forNodes, a made-up one) parse (and forNodes is then honoured: the
# scenario's slice is restored after); node-a without its zone label uses all
# endpoints.  Each set is checked in /proc, four of them also by the pods
# answering.
#
#   node (kpx.ko, kpx-agent as node-a / node-b / node-c, API server)
#     |-- veth -- p1a 10.244.1.160 :8080    |-- veth -- p3a 10.244.3.160 :8080
#     |-- veth -- p1b 10.244.1.161 :8080    |-- veth -- p3b 10.244.3.161 :8080
#     |-- veth -- p2a 10.244.2.160 :8080    `-- veth -- cpod 10.244.9.9 (client)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

VIP=10.96.180.150:80
LOC=10.96.180.151:80
A1=10.244.1.160:8080 A2=10.244.1.161:8080 B1=10.244.2.160:8080
C1=10.244.3.160:8080 C2=10.244.3.161:8080
case_init 19
pod_add p1a 10.244.1.160 && pod_add p1b 10.244.1.161 && pod_add p2a 10.244.2.160 &&
	pod_add p3a 10.244.3.160 && pod_add p3b 10.244.3.161 && pod_add cpod 10.244.9.9 ||
	skip "pod setup failed"
for p in p1a:10.244.1.160 p1b:10.244.1.161 p2a:10.244.2.160 p3a:10.244.3.160 p3b:10.244.3.161; do
	echo_start "${p%%:*}" -t "${p%%:*}" "${p#*:}:8080"
done
api_start

# run_as NODE: restart the agent as NODE.
run_as() {
	nsync=$(agent_syncs)
	agent_stop
	AGENT_NODE=$1
	agent_start
	# until its first sync the node keeps the previous agent's state
	log "restarted agent's first sync after $(wait_agent_synced $((nsync + 1))) s"
}

# check NAME FRONTEND WANT [traffic]: the /proc set; with "traffic" also
# connections from cpod answered by exactly that set (enough of them that
# a missing backend is a failure with probability below 1e-4: 16 for 2
# backends, 10 per backend beyond).
check() {
	local k n

	log "$1"
	expect_backends tcp "$2" "$3" 15
	[ "${4:-}" = traffic ] || return 0
	k=$(($(tr -cd , <<<"$3" | wc -c) + 1))
	case $k in
	1) n=4 ;;
	2) n=16 ;;
	*) n=$((k * 10)) ;;
	esac
	expect_answered cpod tcp "$2" "$n" "$3"
}

step 1
run_as node-a
check "node-a step 1" $VIP $A1,$A2 traffic
check "node-a local" $LOC $A1,$A2

# unknown hint fields (forNodes, anything else) are accepted
jq '.items[] | select(.kind == "EndpointSlice" and
                      .metadata.annotations["cases.kpr.test/step"] == "1") |
    .endpoints |= map(.hints.forNodes = [{name: .nodeName}] |
                      .hints.futureField = {x: 1})' "$OBJECTS" >"$TMPD/fornodes.json"
assert_rc "apply the slice with hints.forNodes and an unknown field" 0 apictl apply "$TMPD/fornodes.json"
sleep 2
kill -0 "$AGENT_PID" 2>/dev/null
assert_eq "agent running after the unknown hint fields" 0 $?
check "node-a forNodes" $VIP $A1,$A2
assert_no_match "agent log: errors on the hints" '(error|invalid).*pricing' "$(cat "$TMPD/agent.log")"
# back to the scenario's slice (forNodes is PreferSameNode's hint)
jq '.items[] | select(.kind == "EndpointSlice" and
                      .metadata.annotations["cases.kpr.test/step"] == "1")' "$OBJECTS" >"$TMPD/step1.json"
assert_rc "apply the step 1 slice again" 0 apictl apply "$TMPD/step1.json"

# node-a loses its zone label: hints ignored on node-a
jq '.items[] | select(.kind == "Node" and .metadata.name == "node-a") |
    del(.metadata.labels["topology.kubernetes.io/zone"])' "$OBJECTS" >"$TMPD/nozone.json"
assert_rc "apply node-a without its zone label" 0 apictl apply "$TMPD/nozone.json"
check "node-a without zone" $VIP $A1,$A2,$B1,$C1
jq '.items[] | select(.kind == "Node" and .metadata.name == "node-a")' "$OBJECTS" >"$TMPD/zone.json"
assert_rc "apply node-a with its zone label again" 0 apictl apply "$TMPD/zone.json"
check "node-a zone back" $VIP $A1,$A2

run_as node-b
check "node-b step 1" $VIP $B1,$C1 traffic
check "node-b local" $LOC $B1
run_as node-c
check "node-c step 1" $VIP $A1,$A2,$B1,$C1
check "node-c local" $LOC $C1 traffic

step 2
check "node-c step 2" $VIP $A1,$A2,$B1,$C2
run_as node-a
check "node-a step 2" $VIP $A1,$A2,$B1,$C2 traffic
check "node-a local step 2" $LOC $A1,$A2

ksft_exit
