#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_01: shared case 01-udp-empty-to-nonempty-blackhole with the real
# agent.  shop/resolver (ClusterIP 10.96.0.53, 53/UDP and 53/TCP -> 53).  A
# client pod keeps ONE connected UDP socket (one source port) and sends a
# query every 200 ms.  Step 1 (slice with no endpoint): every datagram is
# refused (ICMP port unreachable) and no conntrack entry of the flow
# survives; TCP 53 is refused too.  Step 2 (10.244.1.5 ready): the same
# socket gets its first answer within 1 s of the backend being programmed
# (the datagrams lost in between are counted and logged); TCP 53 answers.
# Then the agent is restarted while the flow runs and nothing changes: no
# datagram lost, no new connection (backend conns counter unchanged), the
# flow stays on 10.244.1.5.
#
#   node (kpx.ko, kpx-agent as node-a, API server)
#     |-- veth -- res  10.244.1.5 :53 udp + tcp   (the resolver pod)
#     `-- veth -- cpod 10.244.2.7                 (client pod, one UDP socket)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

VIP=10.96.0.53
case_init 01
pod_add res 10.244.1.5 && pod_add cpod 10.244.2.7 || skip "pod setup failed"
echo_start res -t res 10.244.1.5:53
echo_start res -u res 10.244.1.5:53
api_start
agent_start
step 1
# The agent's first sync, however long it takes under load, then step 1.
log "agent's first sync after $(wait_agent_synced) s"
expect_backends udp $VIP:53 - 30
expect_backends tcp $VIP:53 - 5
expect_empty_action udp $VIP:53 reject

# --- step 1: no endpoint: every datagram refused -------------------------------
stats_mark
udp_flow_start cpod f 150 200 $VIP:53
# python starts slowly under TCG: wait for 5 datagrams (at most 30 s)
for ((i = 0; i < 60; i++)); do
	[ "$(flow_count f "")" -ge 5 ] && break
	sleep 0.5
done
t1=$(now_ms)
n=$(flow_count f "" 0 "$t1")
assert_ge "step 1: datagrams sent" 5 "$n"
# an ICMP error later than the 200 ms interval (a loaded TCG host) counts
# as a timeout: no answer, and at most one in five late
assert_eq "step 1: datagrams answered" 0 "$(($n - $(flow_count f refused 0 "$t1") - $(flow_count f timeout 0 "$t1")))"
assert_ge "step 1: datagrams refused (of $n)" "$((n * 4 / 5))" "$(flow_count f refused 0 "$t1")"
assert_ge "step 1: module reject counter" "$n" "$(stats_delta rejects)"
assert_eq "step 1: conntrack entries of the refused flow" 0 \
	"$(ct_count "udp .*src=10\.244\.2\.7 dst=$VIP sport=[0-9]+ dport=53 ")"
expect_refused cpod tcp $VIP:53 1

# --- step 2: the first endpoint appears -----------------------------------------
t2=$(now_ms)
step 2
wt=$(wait_proc_backends udp $VIP:53 10.244.1.5:53 10)
tp=$(now_ms)
assert_eq "step 2: backend programmed (waited ${wt} s)" 10.244.1.5:53 "$(proc_backends udp $VIP:53)"
sleep 2
first=$(flow_first f res "$t2")
assert_ne "step 2: the same socket got an answer" none "$first"
[ "$first" = none ] && first=$((tp + 99999))
log "slice applied at +0 ms, programmed at +$((tp - t2)) ms, first answer sent at +$((first - t2)) ms; lost in between: $(flow_count f refused "$t2" "$first") refused, $(flow_count f timeout "$t2" "$first") timed out"
d=$((first - tp))
((d >= 0)) || d=0
assert_lt_ms "step 2: first answer after the backend was programmed" 1000 "$d"
t3=$(now_ms)
assert_match "step 2: results after the first answer" '^res(,timeout)?$' "$(flow_results f "$first" "$t3")"
assert_eq "step 2: refused after the first answer" 0 "$(flow_count f refused "$first" "$t3")"
log "step 2: $(flow_count f timeout "$first" "$t3") of $(flow_count f "" "$first" "$t3") timed out after the first answer"
expect_answered cpod tcp $VIP:53 2 10.244.1.5:53 10.244.2.7

# --- agent restart while the flow runs on a ready backend ----------------------
kpx_snapshot
c0=$(be_counter udp $VIP 53 10.244.1.5 53)
r0=$(now_ms)
agent_stop
agent_start
sleep 5
kill -0 "$AGENT_PID" 2>/dev/null
assert_eq "agent running after the restart" 0 $?
r1=$(now_ms)
kpx_snapshot
assert_eq "restart: backend conns counter unchanged (no new UDP flow)" "$c0" \
	"$(be_counter udp $VIP 53 10.244.1.5 53)"
# a late answer on a loaded TCG host shows as a timeout; a refusal or
# another backend would be a real break
assert_match "restart: the flow's results during the restart" '^res(,timeout)?$' "$(flow_results f "$r0" "$r1")"
assert_eq "restart: refused during the restart" 0 "$(flow_count f refused "$r0" "$r1")"
log "restart: $(flow_count f timeout "$r0" "$r1") of $(flow_count f "" "$r0" "$r1") datagrams timed out (200 ms)"
assert_ge "restart: datagrams sent during the restart" 10 "$(flow_count f res "$r0" "$r1")"
assert_eq "restart: conntrack entry of the flow still DNATed to 10.244.1.5" 1 \
	"$(ct_count "udp .*src=10\.244\.2\.7 dst=$VIP sport=[0-9]+ dport=53 .*src=10\.244\.1\.5 dst=10\.244\.2\.7 ")"
udp_flow_stop f

ksft_exit
