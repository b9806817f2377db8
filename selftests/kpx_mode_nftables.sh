#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_mode_nftables: kpx-agent --proxy-mode nftables (agent/dp_nft.c,
# agent/nft_rules.c) with the test API server: the kpx module holds no
# frontend, tables "ip kpx" / "ip6 kpx" (KEP-3866 layout) do the work.
# Checks: the service-ips verdict map holds the frontends; a dual-stack
# ClusterIP reaches both pods from the cli netns (masqueraded: the client
# is outside the cluster CIDR) and from the node; hairpin is masqueraded,
# pod -> other pod is not; the NodePort on node-a's address; a Service
# without endpoints, and an undefined port of a ClusterIP, are refused at
# once (TCP and UDP); ClientIP affinity
# keeps one pod and fills the endpoint's affinity set; an LB IP with
# loadBalancerSourceRanges serves the allowed client and drops the node; a
# removed endpoint's chain is deleted by a partial transaction that leaves
# the other Services' state (affinity entries) alone; a restart recreates
# the tables without duplicates; kpx-agent --cleanup leaves no kpx table.
#
#   cli 10.0.1.2, fd00:10:1::2 --veth-- node (kpx-agent --proxy-mode
#     nftables as node-a 192.0.2.11; API server on 127.0.0.1)
#       |-- veth -- pod1 10.244.1.2 fd00:10:244:1::2 :8080
#       `-- veth -- pod2 10.244.2.2 fd00:10:244:2::2 :8080
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"
. "$SELFTESTS/fallback_fixture.sh"

NODE_A=192.0.2.11
LB=198.51.100.40
MASQ4=169.254.1.1
# The mode's own test (it picks its --proxy-mode itself): runs once, in
# the kpx-mode suite, not once per KPX_PROXY_MODE.
require_mode kpx
agent_require /usr/sbin/nft
setup_trap 'agent_lib_stop'
fallback_topology || skip "topology setup failed"
log "$(nft -v)"

OBJ=$TMPD/objects.json
fallback_objects "$OBJ" || skip "objects.json is not valid JSON"

# eps [FAMILY]: number of ep- chains in our table of FAMILY (ip).
eps() { nft list table "${1:-ip}" kpx 2>/dev/null | grep -c '^	chain ep-'; }
# wait_eps N [SECONDS]: poll until there are N endpoint chains (IPv4).
wait_eps() {
	local i

	for ((i = 0; i < ${2:-30} * 2; i++)); do
		[ "$(eps)" = "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

kpx_api_start --objects "$OBJ"
AGENT_FLAGS=(--proxy-mode nftables --hostname-override node-a
	--cluster-cidr 10.244.0.0/16,fd00:10:244::/56 --v 2)
kpx_agent_start "${AGENT_FLAGS[@]}"
# web v4 ClusterIP + NodePort (2+2), sticky (2), lb ClusterIP, LB IP and NodePort (2+2+2)
wait_eps 12 60
assert_eq "IPv4 endpoint chains after the first sync" 12 "$(eps)"
assert_eq "IPv6 endpoint chains (web ClusterIP)" 2 "$(eps ip6)"
log "$(now) first sync: $(grep -m1 'msg="sync done"' "$TMPD/agent.log" | sed 's/.*msg=//')"
if grep -q '^kpx ' /proc/modules; then
	assert_eq "the kpx module holds no frontend" 0 "$("$KPXCTL" stats --json | jq -r .services)"
fi
map=$(nft list map ip kpx service-ips)
assert_match "service-ips: ClusterIP element" '10\.96\.0\.80 \. tcp \. 80 : goto svc-tcp-10\.96\.0\.80-80' "$map"
assert_match "service-ips: NodePort element" "${NODE_A//./\\.} \\. tcp \\. 30080 : goto svc-tcp-" "$map"
assert_match "no-endpoint-services: the empty Service rejects" \
	'10\.96\.0\.90 \. udp \. 53 : goto reject-chain' "$(nft list map ip kpx no-endpoint-services)"
assert_match "one vmap lookup in the services chain" \
	'ip daddr \. meta l4proto \. th dport vmap @service-ips' "$(nft list chain ip kpx services)"
assert_match "per-service numgen dispatch" 'numgen random mod 2 vmap' \
	"$(nft list chain ip kpx svc-tcp-10.96.0.80-80)"

# --- ClusterIP, both families, from the cli netns and from the node --------------
log "$(now)"
BOTH4=10.244.1.2:8080,10.244.2.2:8080
expect_answers() { # NS PROTO DST N WANT [PEERS]
	local uflag=()

	[ "$2" = udp ] && uflag=(-u)
	client_all "$5" "$1" -n "$4" -t 2000 "${uflag[@]}" "$3"
	assert_eq "$2 $3 from $1: answered" "$4" "$(summary_field ok)"
	assert_eq "$2 $3 from $1: backends" "$5" "$(answer_field 2)"
	[ -z "${6:-}" ] || assert_eq "$2 $3 from $1: source seen by the pods" "$6" "$(answer_field 3 | tr , '\n' | sed 's/^peer=//; s/:[0-9]*$//' | sort -u | paste -sd,)"
	client_show_if_failed
}
expect_answers cli tcp 10.96.0.80:80 12 $BOTH4 "$MASQ4"
expect_answers node tcp 10.96.0.80:80 12 $BOTH4
expect_answers cli tcp "[fd00:10:96::80]:80" 12 "[fd00:10:244:1::2]:8080,[fd00:10:244:2::2]:8080"

# --- hairpin: pod1 through its own Service ---------------------------------------
log "$(now)"
client pod1 -n 16 -t 2000 10.96.0.80:80
assert_eq "pod1 -> ClusterIP: answered" 16 "$(summary_field ok)"
hair=$(answers | awk '$2 == "10.244.1.2:8080" { sub("peer=", "", $3); sub(":[0-9]+$", "", $3); print $3 }' | sort -u)
other=$(answers | awk '$2 == "10.244.2.2:8080" { sub("peer=", "", $3); sub(":[0-9]+$", "", $3); print $3 }' | sort -u)
assert_eq "hairpin (pod1 served by itself) is masqueraded" "$MASQ4" "$hair"
assert_eq "pod1 served by pod2 keeps its address (local source)" 10.244.1.2 "$other"

# --- NodePort, no endpoints, affinity, source ranges --------------------------------
log "$(now)"
expect_answers cli tcp $NODE_A:30080 12 $BOTH4 "$MASQ4"
expect_refused() { # NS PROTO DST
	local uflag=()

	[ "$2" = udp ] && uflag=(-u)
	client "$1" -n 2 -t 2000 "${uflag[@]}" "$3"
	assert_eq "$2 $3 from $1: refused" 2 "$(error_count ECONNREFUSED)"
	assert_lt_ms "$2 $3 from $1: slowest refusal" 200 "$(summary_field max_ms)"
	client_show_if_failed
}
expect_refused cli tcp 10.96.0.90:80
expect_refused node tcp 10.96.0.90:80
expect_refused cli udp 10.96.0.90:53
# a port no Service has on a live ClusterIP (kube-proxy nftables, #122692)
expect_refused cli tcp 10.96.0.80:81
expect_refused node tcp 10.96.0.80:81
expect_refused cli udp 10.96.0.80:53
client cli -n 8 -t 2000 10.96.0.81:80
assert_eq "ClientIP affinity: answered" 8 "$(summary_field ok)"
sticky=$(answer_field 2)
assert_match "ClientIP affinity: one pod answered all" '^10\.244\.[12]\.2:8080$' "$sticky"
aff=aff-tcp-10.96.0.81-80__${sticky%:*}-8080
assert_match "affinity set $aff holds the client with a timeout" '10\.0\.1\.2 (timeout 1m )?expires' \
	"$(nft list set ip kpx "$aff" 2>&1)"
expect_answers cli tcp $LB:80 8 $BOTH4
client node -n 2 -t 700 $LB:80
assert_eq "LB IP from the node (10.0.0.1, outside the source ranges): answered" 0 "$(summary_field ok)"
assert_eq "LB IP from the node: dropped, not refused" 0 "$(error_count ECONNREFUSED)"
client_show_if_failed

# --- partial transaction: pod2 leaves web's IPv4 slice -----------------------------
log "$(now)"
slice web-v4 web IPv4 10.244.1.2 >"$TMPD/web-v4.json"
assert_rc "apply web-v4 with pod1 only" 0 kpx_apictl apply "$TMPD/web-v4.json"
wait_eps 10 20
assert_eq "two endpoint chains (ClusterIP, NodePort) deleted" 10 "$(eps)"
assert_match "web's dispatch now has one endpoint" 'numgen random mod 1 vmap' \
	"$(nft list chain ip kpx svc-tcp-10.96.0.80-80)"
assert_match "sticky's affinity entry survived the partial update" '10\.0\.1\.2 ' \
	"$(nft list set ip kpx "$aff" 2>&1)"
expect_answers cli tcp 10.96.0.80:80 6 10.244.1.2:8080
assert_match "a partial sync was logged" 'full=false.*sets=[1-9]' "$(grep 'sync done' "$TMPD/agent.log" | grep 'full=false' | tail -n 1)"

# --- restart: the first commit recreates the tables --------------------------------
log "$(now)"
kpx_agent_stop
kpx_agent_start "${AGENT_FLAGS[@]}"
for _ in $(seq 1 60); do
	[ "$(grep -c 'sync done' "$TMPD/agent.log")" -ge 2 ] && break
	sleep 0.5
done
sleep 1
assert_eq "after a restart: endpoint chains" 10 "$(eps)"
assert_eq "after a restart: one table per family" 2 "$(nft list tables | grep -c ' kpx$')"
assert_eq "after a restart: base chains (ip)" 8 \
	"$(nft list table ip kpx | grep -c 'type \(filter\|nat\) hook')"
expect_answers cli tcp 10.96.0.80:80 4 10.244.1.2:8080

log "nf_tables modules loaded: $(awk '/^nf|^nft/ { print $1 }' /proc/modules | sort | paste -sd' ')"

# --- cleanup ---------------------------------------------------------------------------
log "$(now)"
kpx_agent_stop
assert_rc "kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup
assert_eq "kpx tables left after --cleanup" 0 "$(nft list tables | grep -c ' kpx$')"
client cli -n 1 -t 500 10.96.0.80:80
assert_eq "ClusterIP no longer served after --cleanup" 0 "$(summary_field ok)"

if [ "$FAILS" -gt 0 ]; then
	log "nft list ruleset (head):"
	nft list ruleset 2>&1 | head -n 80 | sed 's/^/#   /'
	log "agent log (tail):"
	tail -n 30 "$TMPD/agent.log" | sed 's/^/#   /'
fi
ksft_exit
