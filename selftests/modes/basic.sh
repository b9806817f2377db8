#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# modes/basic.sh MODE: the behaviour every fallback proxy mode must have,
# with kpx-agent --proxy-mode MODE (nftables, iptables or ipvs) against the
# test API server; what only MODE has, and how its rules are read, is in
# modes/MODE.sh (hooks mode_*; mode_topology, mode_objects, which adds
# object files to MODE_OBJECTS, and mode_before_cleanup are optional).  The kpx module holds no frontend.  Checks:
# the endpoint rules of the first sync; a dual-stack ClusterIP reaches both
# pods from the cli netns (masqueraded: the client is outside the cluster
# CIDR) and from the node; hairpin is masqueraded, pod -> other pod is not;
# the NodePort on node-a's address; a Service without endpoints is refused
# at once (TCP and UDP); ClientIP affinity keeps one pod; an LB IP with
# loadBalancerSourceRanges serves the allowed client and drops the node; a
# removed endpoint's rules are deleted by a partial update; the mode's own
# repair and restart checks; kpx-agent --cleanup leaves none of its rules.
# Run by kpx_modes.sh once per mode.
#
#   cli 10.0.1.2, fd00:10:1::2 --veth-- node (kpx-agent --proxy-mode MODE
#     as node-a 192.0.2.11; API server on 127.0.0.1)
#       |-- veth -- pod1 10.244.1.2 fd00:10:244:1::2 :8080
#       `-- veth -- pod2 10.244.2.2 fd00:10:244:2::2 :8080
. "$(dirname "$0")/../lib.sh"
. "$SELFTESTS/agent_lib.sh"
. "$SELFTESTS/fallback_fixture.sh"

MODE=${1:?usage: modes/basic.sh nftables|iptables|ipvs}
TEST_NAME=kpx_modes-$MODE
NODE_A=192.0.2.11
LB=198.51.100.40
MASQ4=169.254.1.1
BOTH4=10.244.1.2:8080,10.244.2.2:8080
AGENT_FLAGS=(--proxy-mode "$MODE" --hostname-override node-a
	--cluster-cidr 10.244.0.0/16,fd00:10:244::/56 --v 2)
T0=${EPOCHREALTIME/./}
# tick WHAT: a timing note (ms since the start; no fork).
tick() { log "t=$(((${EPOCHREALTIME/./} - T0) / 1000)) ms: $*"; }
MODE_OBJECTS=()
. "$SELFTESTS/modes/$MODE.sh" || skip "no modes/$MODE.sh"
# hook NAME: call mode_NAME if the mode has it.
hook() { ! declare -F "mode_$1" >/dev/null || "mode_$1"; }

# wait_eps N [SECONDS]: poll until there are N IPv4 endpoint rules.
wait_eps() {
	local i

	for ((i = 0; i < ${2:-30} * 2; i++)); do
		[ "$(mode_eps)" = "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

# expect_answers NS PROTO DST N WANT [PEERS]: N attempts answered, by
# exactly WANT, the pods seeing the source addresses PEERS.
expect_answers() {
	local uflag=()

	[ "$2" = udp ] && uflag=(-u)
	client_all "$5" "$1" -n "$4" -t 2000 "${uflag[@]}" "$3"
	assert_eq "$2 $3 from $1: answered" "$4" "$(summary_field ok)"
	assert_eq "$2 $3 from $1: backends" "$5" "$(answer_field 2)"
	[ -z "${6:-}" ] || assert_eq "$2 $3 from $1: source seen by the pods" "$6" "$(answer_field 3 | tr , '\n' | sed 's/^peer=//; s/:[0-9]*$//' | sort -u | paste -sd,)"
	client_show_if_failed
}

# expect_refused NS PROTO DST: 2 attempts refused, the slowest in 200 ms.
expect_refused() {
	local uflag=()

	[ "$2" = udp ] && uflag=(-u)
	client "$1" -n 2 -t 2000 "${uflag[@]}" "$3"
	assert_eq "$2 $3 from $1: refused" 2 "$(error_count ECONNREFUSED)"
	assert_lt_ms "$2 $3 from $1: slowest refusal" 200 "$(summary_field max_ms)"
	client_show_if_failed
}

# The mode's own test (it picks its --proxy-mode itself): runs in the
# kpx-mode suite, not once per KPX_PROXY_MODE.
require_mode kpx
mode_require
setup_trap 'tick exit trap; agent_lib_stop; mode_exit; tick agent and API server stopped'
fallback_topology && hook topology || skip "topology setup failed"
mode_banner

OBJ=$TMPD/objects.json
fallback_objects "$OBJ" || skip "objects.json is not valid JSON"
hook objects

tick "topology ready"
kpx_api_start --objects "$OBJ" "${MODE_OBJECTS[@]}"
kpx_agent_start "${AGENT_FLAGS[@]}" "${MODE_FLAGS[@]}"
# web v4 ClusterIP + NodePort (2+2), sticky (2), lb ClusterIP, LB IP and NodePort (2+2+2)
wait_eps 12 60
assert_eq "IPv4 endpoint chains after the first sync" 12 "$(mode_eps)"
assert_eq "IPv6 endpoint chains (web ClusterIP)" 2 "$(mode_eps ip6)"
if grep -q '^kpx ' /proc/modules; then
	assert_eq "the kpx module holds no frontend" 0 "$("$KPXCTL" stats --json | jq -r .services)"
fi
mode_first_sync
tick "first sync checked"

# --- ClusterIP, both families, from the cli netns and from the node --------------
expect_answers cli tcp 10.96.0.80:80 12 $BOTH4 "$MASQ4"
expect_answers node tcp 10.96.0.80:80 12 $BOTH4
expect_answers cli tcp "[fd00:10:96::80]:80" 12 "[fd00:10:244:1::2]:8080,[fd00:10:244:2::2]:8080"
tick "ClusterIP checks done"

# --- hairpin: pod1 through its own Service ---------------------------------------
client pod1 -n 16 -t 2000 10.96.0.80:80
assert_eq "pod1 -> ClusterIP: answered" 16 "$(summary_field ok)"
hair=$(answers | awk '$2 == "10.244.1.2:8080" { sub("peer=", "", $3); sub(":[0-9]+$", "", $3); print $3 }' | sort -u)
other=$(answers | awk '$2 == "10.244.2.2:8080" { sub("peer=", "", $3); sub(":[0-9]+$", "", $3); print $3 }' | sort -u)
assert_eq "hairpin (pod1 served by itself) is masqueraded" "$MASQ4" "$hair"
assert_eq "pod1 served by pod2 keeps its address (local source)" 10.244.1.2 "$other"
tick "hairpin done"

# --- NodePort, no endpoints, affinity, source ranges --------------------------------
expect_answers cli tcp $NODE_A:30080 12 $BOTH4 "$MASQ4"
expect_refused cli tcp 10.96.0.90:80
expect_refused node tcp 10.96.0.90:80
expect_refused cli udp 10.96.0.90:53
mode_refused
client cli -n 8 -t 2000 10.96.0.81:80
assert_eq "ClientIP affinity: answered" 8 "$(summary_field ok)"
STICKY=$(answer_field 2)
assert_match "ClientIP affinity: one pod answered all" '^10\.244\.[12]\.2:8080$' "$STICKY"
mode_affinity
expect_answers cli tcp $LB:80 8 $BOTH4
client node -n 2 -t 700 $LB:80
assert_eq "LB IP from the node (10.0.0.1, outside the source ranges): answered" 0 "$(summary_field ok)"
assert_eq "LB IP from the node: dropped, not refused" 0 "$(error_count ECONNREFUSED)"
client_show_if_failed
tick "NodePort, reject, affinity, source ranges done"

# --- partial update: pod2 leaves web's IPv4 slice ------------------------------------
slice web-v4 web IPv4 10.244.1.2 >"$TMPD/web-v4.json"
mode_partial_before
assert_rc "apply web-v4 with pod1 only" 0 kpx_apictl apply "$TMPD/web-v4.json"
wait_eps 10 20
assert_eq "two endpoint chains (ClusterIP, NodePort) deleted" 10 "$(mode_eps)"
mode_partial_after
expect_answers cli tcp 10.96.0.80:80 6 10.244.1.2:8080
assert_match "a partial sync was logged" 'full=false.*sets=[1-9]' "$(grep 'sync done' "$TMPD/agent.log" | grep 'full=false' | tail -n 1)"
tick "partial update done"

# --- the mode's repair and restart checks --------------------------------------------
mode_restart
tick "restart done"

# --- cleanup ---------------------------------------------------------------------------
kpx_agent_stop
hook before_cleanup
assert_rc "kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup
mode_cleanup
client cli -n 1 -t 500 10.96.0.80:80
assert_eq "ClusterIP no longer served after --cleanup" 0 "$(summary_field ok)"

log "agent syncs:"
grep 'sync done' "$TMPD/agent.log" | head -n 3 | sed 's/^/#   /'
if [ "$FAILS" -gt 0 ]; then
	mode_dump
	log "agent log (tail):"
	tail -n 30 "$TMPD/agent.log" | sed 's/^/#   /'
fi
tick "checks done"
ksft_exit
