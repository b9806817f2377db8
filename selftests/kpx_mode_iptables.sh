#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_mode_iptables: kpx-agent --proxy-mode iptables (agent/dp_ipt.c) with
# the test API server: the kpx module holds no frontend, iptables-restore
# chains (KPX-*) do the work.  Checks: a dual-stack ClusterIP reaches both
# pods from the cli netns (masqueraded: the client is outside the cluster
# CIDR) and from the node; a pod reaching its own Service is masqueraded
# only on hairpin; the NodePort on node-a's address; a Service without
# endpoints is refused at once (TCP and UDP); ClientIP affinity keeps one
# pod; an LB IP with loadBalancerSourceRanges serves the allowed client and
# drops the node; a removed endpoint's chain is deleted by a partial
# restore; a restart rewrites nothing twice; kpx-agent --cleanup leaves no
# KPX- chain or jump in iptables-save / ip6tables-save.
#
#   cli 10.0.1.2, fd00:10:1::2 --veth-- node (kpx-agent --proxy-mode
#     iptables as node-a 192.0.2.11; API server on 127.0.0.1)
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
agent_require /usr/sbin/iptables-save /usr/sbin/ip6tables-save
T0=${EPOCHREALTIME/./}
# tick WHAT: a timing note (ms since the start; no fork).
tick() { log "t=$(((${EPOCHREALTIME/./} - T0) / 1000)) ms: $*"; }
setup_trap 'tick exit trap; agent_lib_stop; sysctl -q -w net.ipv4.conf.all.route_localnet=0; tick agent and API server stopped'
fallback_topology || skip "topology setup failed"
log "iptables: $(iptables -V) (backend in parentheses)"

OBJ=$TMPD/objects.json
fallback_objects "$OBJ" || skip "objects.json is not valid JSON"

# nat_seps: number of KPX-SEP- chains in the IPv4 nat table.
nat_seps() { iptables-save -t nat | grep -c '^:KPX-SEP-'; }
# wait_seps N [SECONDS]: poll until there are N endpoint chains.
wait_seps() {
	local i

	for ((i = 0; i < ${2:-30} * 2; i++)); do
		[ "$(nat_seps)" = "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

tick "topology ready"
kpx_api_start --objects "$OBJ"
kpx_agent_start --proxy-mode iptables --hostname-override node-a \
	--cluster-cidr 10.244.0.0/16,fd00:10:244::/56 --sync-period 5s --v 2
# web v4 ClusterIP + NodePort (2+2), sticky (2), lb ClusterIP, LB IP and NodePort (2+2+2)
wait_seps 12 60
assert_eq "IPv4 endpoint chains after the first sync" 12 "$(nat_seps)"
assert_eq "IPv6 endpoint chains (web)" 2 "$(ip6tables-save -t nat | grep -c '^:KPX-SEP-')"
grep -q 'proxy mode\|iptables mode' "$TMPD/agent.log" &&
	log "agent: $(grep -m1 'iptables mode' "$TMPD/agent.log" | sed 's/.*msg=//')"
assert_eq "the kpx module holds no frontend" 0 "$("$KPXCTL" stats --json | jq -r .services)"

tick "first sync checked"
# --- ClusterIP, both families, from the cli netns and from the node --------------
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
client cli -n 8 -t 2000 10.96.0.81:80
assert_eq "ClientIP affinity: answered" 8 "$(summary_field ok)"
assert_match "ClientIP affinity: one pod answered all" '^10\.244\.[12]\.2:8080$' "$(answer_field 2)"
expect_answers cli tcp $LB:80 8 $BOTH4
client node -n 2 -t 700 $LB:80
assert_eq "LB IP from the node (10.0.0.1, outside the source ranges): answered" 0 "$(summary_field ok)"
assert_eq "LB IP from the node: dropped, not refused" 0 "$(error_count ECONNREFUSED)"
client_show_if_failed

tick "NodePort, reject, affinity, source ranges done"
# --- partial restore: pod2 leaves web's IPv4 slice -----------------------------------
slice web-v4 web IPv4 10.244.1.2 >"$TMPD/web-v4.json"
before=$(iptables-save -t nat | grep -c '^:KPX-SVC-')
assert_rc "apply web-v4 with pod1 only" 0 kpx_apictl apply "$TMPD/web-v4.json"
wait_seps 10 20
assert_eq "two endpoint chains (ClusterIP, NodePort) deleted" 10 "$(nat_seps)"
assert_eq "service chains unchanged" "$before" "$(iptables-save -t nat | grep -c '^:KPX-SVC-')"
expect_answers cli tcp 10.96.0.80:80 6 10.244.1.2:8080
assert_match "a partial sync was logged" 'full=false.*sets=[1-9]' "$(grep 'sync done' "$TMPD/agent.log" | grep 'full=false' | tail -n 1)"

tick "partial restore done"
# --- a firewall reload flushes nat and filter: the periodic re-check (every
# --sync-period, 5 s here) misses KPX-SERVICES and rewrites every chain -----
# One iptables-restore flushes both tables at once, so no re-check can run
# between them; the agent's log then proves the chain was found missing.
missing0=$(grep -c 'rewriting every chain' "$TMPD/agent.log")
assert_rc "nat and filter flushed, their chains deleted" 0 sh -c \
	'printf "*nat\nCOMMIT\n*filter\nCOMMIT\n" | iptables-restore'
wait_seps 10 30
assert_eq "after the re-check: endpoint chains rewritten" 10 "$(nat_seps)"
assert_gt "the re-check logged the missing chain" "$missing0" \
	"$(grep -c 'rewriting every chain' "$TMPD/agent.log")"
assert_match "the re-check named KPX-SERVICES" 'KPX-SERVICES: exit status .*rewriting every chain' \
	"$(grep 'rewriting every chain' "$TMPD/agent.log" | tail -n 1)"
expect_answers cli tcp 10.96.0.80:80 4 10.244.1.2:8080
expect_refused cli tcp 10.96.0.90:80
tick "firewall reload repaired"
# --- restart: the first commit rewrites, duplicates nothing; now also the
# 127.0.0.1 NodePorts of kube-proxy's iptables mode (route_localnet) ---------
kpx_agent_stop
sysctl -q -w net.ipv4.conf.all.route_localnet=0
kpx_agent_start --proxy-mode iptables --hostname-override node-a \
	--cluster-cidr 10.244.0.0/16,fd00:10:244::/56 \
	--nodeport-addresses $NODE_A/32,127.0.0.0/8 --v 2
# + 127.0.0.1:30080 (pod1) and 127.0.0.1:30082 (two pods)
wait_seps 13 60
save=$(iptables-save -t nat)
filter=$(iptables-save -t filter)
assert_eq "after a restart: endpoint chains (with the 127.0.0.1 NodePorts)" 13 "$(grep -c '^:KPX-SEP-' <<<"$save")"
assert_eq "after a restart: nat jumps to KPX-SERVICES (PREROUTING, OUTPUT)" 2 "$(grep -c '^-A \(PREROUTING\|OUTPUT\) .*-j KPX-SERVICES$' <<<"$save")"
assert_eq "after a restart: filter jumps to KPX-SERVICES (INPUT, FORWARD, OUTPUT)" 3 "$(grep -c '^-A \(INPUT\|FORWARD\|OUTPUT\) .*-j KPX-SERVICES$' <<<"$filter")"
assert_eq "after a restart: POSTROUTING jumps to KPX-POSTROUTING" 1 "$(grep -c '^-A POSTROUTING .*-j KPX-POSTROUTING$' <<<"$save")"
assert_eq "route_localnet set for the 127.0.0.1 NodePorts" 1 "$(sysctl -n net.ipv4.conf.all.route_localnet)"
assert_match "localnet guard rule (CVE-2020-8558)" 'block incoming localnet connections' "$filter"
expect_answers cli tcp 10.96.0.80:80 4 10.244.1.2:8080
expect_answers node tcp 127.0.0.1:30080 4 10.244.1.2:8080 "$MASQ4"
expect_answers node tcp 127.0.0.1:30082 12 $BOTH4 "$MASQ4"
tick "restart done"
# --- cleanup ---------------------------------------------------------------------------
kpx_agent_stop
assert_rc "kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup
left=$( (iptables-save; ip6tables-save) | grep -c 'KPX-')
assert_eq "KPX- chains and jumps left after --cleanup" 0 "$left"
[ "$left" = 0 ] || (iptables-save; ip6tables-save) | grep 'KPX-' | head -n 10 | sed 's/^/#   /'
client cli -n 1 -t 500 10.96.0.80:80
assert_eq "ClusterIP no longer served after --cleanup" 0 "$(summary_field ok)"

log "agent syncs:"
grep 'sync done' "$TMPD/agent.log" | head -n 3 | sed 's/^/#   /'
if [ "$FAILS" -gt 0 ]; then
	log "iptables-save -t nat (head):"
	iptables-save -t nat 2>&1 | head -n 60 | sed 's/^/#   /'
	log "agent log (tail):"
	tail -n 30 "$TMPD/agent.log" | sed 's/^/#   /'
fi
tick "checks done"
ksft_exit
