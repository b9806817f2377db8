#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_02: shared case 02-udp-scale-to-zero-stale-flow with the real
# agent.  shop/metrics-sink (ClusterIP 10.96.12.25, 8125/UDP).  Two sender
# pods keep one UDP socket each and send every 200 ms.  Step 1 (sink
# 10.244.1.20): every datagram answered by the sink.  Step 2 (scaled to
# zero, empty slice): one agent sync plus 1 s later every datagram is
# refused (ICMP port unreachable), the sink receives nothing (its
# interface's rx counter) and no conntrack entry points at 10.244.1.20.
# Variant 2 -> 1: two sinks, four flows; the sink of flow f1 is removed; one
# sync plus 1 s later every flow is answered by the survivor only.
#
#   node (kpx.ko, kpx-agent as node-a, API server)
#     |-- veth -- sink0 10.244.1.20 :8125 udp
#     |-- veth -- sink1 10.244.1.21 :8125 udp   (variant 2 -> 1)
#     |-- veth -- snd1  10.244.2.21             (sender pods, "node-b")
#     `-- veth -- snd2  10.244.2.22
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

VIP=10.96.12.25
case_init 02
pod_add sink0 10.244.1.20 && pod_add sink1 10.244.1.21 &&
	pod_add snd1 10.244.2.21 && pod_add snd2 10.244.2.22 || skip "pod setup failed"
echo_start sink0 -u sink0 10.244.1.20:8125
echo_start sink1 -u sink1 10.244.1.21:8125
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"
step 1
expect_backends udp $VIP:8125 10.244.1.20:8125 30

# answers NAME FROM_MS TO_MS: flow_results without "timeout" (TCG can be
# slower than the send interval now and then; lost answers are logged).
answers_of() {
	log "flow $1: $(flow_count "$1" timeout "$2" "$3") timeouts in the window" >&2
	flow_results "$1" "$2" "$3" | tr , '\n' | grep -vx timeout | paste -sd,
}

# wait_answers SECONDS NAME...: until each flow has 5 datagrams answered by
# a sink (python starts slowly under TCG, more so on a loaded host).
wait_answers() {
	local i f ok secs=$1

	shift
	for ((i = 0; i < secs * 2; i++)); do
		ok=1
		for f; do
			[ "$(($(flow_count $f sink0) + $(flow_count $f sink1)))" -ge 5 ] || ok=0
		done
		[ $ok = 1 ] && return 0
		sleep 0.5
	done
	return 1
}

# rx_packets NS: packets received on the pod's eth0.
rx_packets() { ip -n "$1" -s -j link show eth0 | jq '.[0].stats64.rx.packets'; }

# --- step 1: one sink ------------------------------------------------------------
udp_flow_start snd1 a 90 200 $VIP:8125
udp_flow_start snd2 b 90 200 $VIP:8125
wait_answers 30 a b
t2=$(now_ms)
for f in a b; do
	assert_eq "step 1: flow $f answered by" sink0 "$(answers_of $f 0 "$t2")"
done

# --- step 2: scaled to zero --------------------------------------------------------
step 2
wt=$(wait_proc_backends udp $VIP:8125 - 10)
tp=$(now_ms)
assert_eq "step 2: no backend programmed (waited $wt s)" - "$(proc_backends udp $VIP:8125)"
expect_empty_action udp $VIP:8125 reject
sleep 1
rx0=$(rx_packets sink0)
ta=$(now_ms)
assert_eq "step 2: conntrack entries to the removed sink" 0 \
	"$(ct_count "udp .*dst=$VIP .*src=10\.244\.1\.20 ")"
sleep 3
tb=$(now_ms)
rx1=$(rx_packets sink0)
for f in a b; do
	# a late answer to a datagram sent before the change can still be read
	# once from the socket; the sink's rx counter below is the hard check
	assert_match "step 2 (sync + 1 s): flow $f results" '^(refused|refused,sink0)$' \
		"$(answers_of $f "$ta" "$tb")"
	assert_lt_ms "step 2 (sync + 1 s): flow $f answers by sink0" 2 "$(flow_count $f sink0 "$ta" "$tb")"
	assert_ge "step 2: flow $f refused datagrams in the window" 8 "$(flow_count $f refused "$ta" "$tb")"
	log "flow $f: answered by sink0 after the slice update: $(flow_count $f sink0 "$t2" "$tb") (last at $(awk '$3 == "sink0"' "$TMPD/flow-$f.out" | tail -n 1 | cut -d' ' -f1), programmed at $tp)"
done
assert_lt_ms "step 2: packets the removed sink received in 3 s" 3 "$((rx1 - rx0))"
udp_flow_stop a
udp_flow_stop b

# --- variant 2 -> 1 ------------------------------------------------------------------
jq '.items[] | select(.kind == "EndpointSlice" and
                      .metadata.annotations["cases.kpr.test/step"] == "1") |
    .endpoints += [.endpoints[0] | .addresses = ["10.244.1.21"]]' \
	"$OBJECTS" >"$TMPD/two.json"
assert_rc "apply the slice with two sinks" 0 apictl apply "$TMPD/two.json"
expect_backends udp $VIP:8125 10.244.1.20:8125,10.244.1.21:8125 10
udp_flow_start snd1 f1 90 200 $VIP:8125
udp_flow_start snd1 f2 90 200 $VIP:8125
udp_flow_start snd2 f3 90 200 $VIP:8125
udp_flow_start snd2 f4 90 200 $VIP:8125
wait_answers 30 f1 f2 f3 f4
tc=$(now_ms)
gone=$(answers_of f1 0 "$tc")
keep='' keepip=''
case "$gone" in
sink0) keep=sink1 keepip=10.244.1.21 ;;
sink1) keep=sink0 keepip=10.244.1.20 ;;
esac
assert_ne "variant: flow f1 on one sink before the change ($gone)" "" "$keep"
[ -n "$keep" ] || ksft_exit
for f in f2 f3 f4; do
	log "variant: flow $f on $(flow_results $f 0 "$tc") before the change"
done
jq --arg ip "$keepip" '.endpoints = [.endpoints[] | select(.addresses[0] == $ip)]' \
	"$TMPD/two.json" >"$TMPD/one.json"
assert_rc "apply the slice without $gone" 0 apictl apply "$TMPD/one.json"
wt=$(wait_proc_backends udp $VIP:8125 $keepip:8125 10)
assert_eq "variant: survivor programmed (waited $wt s)" $keepip:8125 "$(proc_backends udp $VIP:8125)"
sleep 1
td=$(now_ms)
assert_eq "variant: conntrack entries to the removed sink" 0 \
	"$(ct_count "udp .*dst=$VIP .*src=$( [ "$keep" = sink0 ] && echo 10.244.1.21 || echo 10.244.1.20) ")"
sleep 3
te=$(now_ms)
for f in f1 f2 f3 f4; do
	assert_match "variant (sync + 1 s): flow $f results" "^($keep|$keep,$gone|$gone,$keep)\$" \
		"$(answers_of $f "$td" "$te")"
	assert_lt_ms "variant (sync + 1 s): flow $f answers by $gone" 2 "$(flow_count $f "$gone" "$td" "$te")"
	assert_ge "variant (sync + 1 s): flow $f answers by $keep" 8 "$(flow_count $f "$keep" "$td" "$te")"
done

ksft_exit
