#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_restart: the agent is restarted 10 times (SIGTERM, start again)
# while a client in "cli" opens TCP connections to a ClusterIP in a loop and
# another keeps one connection open exchanging lines.  Expected:
#  - zero failed connections, the held connection never breaks;
#  - every restart adopts the module's state: its first sync sends nothing
#    ("sets=0 dels=0"), and the frontends never change;
#  - the module's per-backend counters never reset (each is >= its value
#    before the restart), and the frontend's counter grows by exactly the
#    connections the loop made.
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (VM root netns, kpx) --veth--
# pod1 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.50:80/tcp -> both.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

RESTARTS=${KPX_RESTARTS:-10}
agent_require
setup_trap agent_lib_stop

web_pods 2 || skip "topology setup failed"

web_objects 10.96.0.50 "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"

start_agent() {
	kpx_agent_start --hostname-override node-a \
		--healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249
}
frontends() { kpx_json | jq -c '[.services[] | {protocol, vip, port, flags, backends: [.backends[] | {addr, port, weight}]}]'; }

start_agent
t=$(wait_proc_backends tcp 10.96.0.50:80 10.244.1.2:8080,10.244.2.2:8080 60)
assert_ne "first sync programs 10.96.0.50:80" timeout "$t"
before=$(frontends)
kpx_snapshot
c0=$(svc_counter tcp 10.96.0.50 80 conns)

# Each restart runs inside a window of WINDOW ms during which one client
# opens a connection every 20 ms and another holds one connection,
# exchanging a line every 100 ms.
WINDOW=${KPX_RESTART_WINDOW_MS:-5000}
total_ok=0 total_failed=0 total_hold_failed=0 holds=0
for i in $(seq 1 "$RESTARTS"); do
	in_ns cli "$CLIENT_BIN" -d "$WINDOW" -i 20 -t 1000 -q 10.96.0.50:80 >"$TMPD/loop.$i" 2>&1 &
	loop=$!
	in_ns cli "$CLIENT_BIN" --hold "$WINDOW" --every 100 -t 1000 10.96.0.50:80 >"$TMPD/hold.$i" 2>&1 &
	hold=$!
	sleep 1
	kpx_snapshot
	b1=$(be_counter tcp 10.96.0.50 80 10.244.1.2 8080)
	b2=$(be_counter tcp 10.96.0.50 80 10.244.2.2 8080)
	n0=$(kpx_agent_syncs)
	kpx_agent_stop
	assert_eq "restart $i: agent exit status" 0 "$AGENT_STATUS"
	start_agent
	for _ in $(seq 1 300); do
		[ "$(kpx_agent_syncs)" -gt "$n0" ] && break
		sleep 0.1
	done
	first=$(grep '] "sync done"' "$TMPD/agent.log" | sed -n "$((n0 + 1))p")
	assert_match "restart $i: first sync adopts the module's state" \
		'full=true frontends=1 sets=0 dels=0 errors=0' "$first"
	assert_eq "restart $i: frontends unchanged" "$before" "$(frontends)"
	kpx_snapshot
	assert_ge "restart $i: backend 10.244.1.2 counter not reset" "$b1" \
		"$(be_counter tcp 10.96.0.50 80 10.244.1.2 8080)"
	assert_ge "restart $i: backend 10.244.2.2 counter not reset" "$b2" \
		"$(be_counter tcp 10.96.0.50 80 10.244.2.2 8080)"
	wait $loop
	wait $hold
	ok=$(summary_field ok "$TMPD/loop.$i")
	failed=$(summary_field failed "$TMPD/loop.$i")
	hf=$(sed -n 's/^hold summary .*failed=\([0-9]*\).*/\1/p' "$TMPD/hold.$i")
	he=$(sed -n 's/^hold summary .*exchanges=\([0-9]*\).*/\1/p' "$TMPD/hold.$i")
	log "restart $i: loop ok=$ok failed=$failed, held connection exchanges=$he failed=$hf"
	assert_eq "restart $i: failed connections" 0 "$failed"
	assert_eq "restart $i: held connection failed exchanges" 0 "$hf"
	assert_gt "restart $i: held connection exchanges" 10 "$he"
	[[ "$ok$failed$hf" =~ ^[0-9]+$ ]] || continue
	total_ok=$((total_ok + ok))
	holds=$((holds + 1))
done
log "$RESTARTS restarts: $total_ok connections, $holds held connections"
assert_gt "connections made during the restarts" $((RESTARTS * 20)) "$total_ok"

# The agent still answers as kube-proxy does after the restarts.
body=$(curl -sS http://127.0.0.1:10256/healthz)
assert_match "/healthz after the restarts" '^\{"lastUpdated":"[^"]+","currentTime":"[^"]+","nodeEligible":true,"healthy":true,"status":' "$body"

kpx_snapshot
c1=$(svc_counter tcp 10.96.0.50 80 conns)
delta=none
[[ "$c0$c1" =~ ^[0-9]+$ ]] && delta=$((c1 - c0))
# The held connection was made after the c0 snapshot too.
assert_eq "frontend counter grew by exactly the clients' connections (never reset)" \
	"$((total_ok + holds))" "$delta"

if [ "$FAILS" -gt 0 ]; then
	log "agent log (tail):"
	tail -n 40 "$TMPD/agent.log" | sed 's/^/#   /'
fi
ksft_exit
