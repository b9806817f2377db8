#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_diag: the diagnosis commands against the real module and agent.
#  - kpxctl flows lists the TCP connections this test holds open through
#    the VIP, each under the backend that answered it (the pod's own
#    address, from the echo's answer) and with the client port the pod
#    saw, named with the Service (default/web:http); ages only for the
#    entries created after nf_conntrack_timestamp was set to 1, with a
#    note saying why the others have none; filtering by Service, by
#    Service port and by VIP:PORT, and an unknown Service answered with
#    exit status 1;
#  - kpxctl status (the agent's /statusz on its metrics port) reports
#    nothing missing while the agent and module agree, then the frontend
#    deleted behind the agent's back (kpxctl del) as wanted and missing,
#    with its Service, and a frontend no Service wants (kpxctl set) as
#    unexpected, exit status 3; after the agent's periodic re-check repairs
#    both, nothing again, with a later full sync.
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (VM root netns, kpx) --veth--
# pod1 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.61:80/tcp -> both.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

agent_require
mode_is kpx || skip "kpxctl flows and status read the kpx module (proxy mode $KPX_PROXY_MODE)"
TS=/proc/sys/net/netfilter/nf_conntrack_timestamp
[ -w $TS ] || skip "no $TS"
save_values $TS
setup_trap "holds_stop; agent_lib_stop; restore_saved"

node_setup && cli_setup && pods_setup 2 || skip "topology setup failed"
echo_start pod1 pod1 10.244.1.2:8080
echo_start pod2 pod2 10.244.2.2:8080

VIP=10.96.0.61 BOTH=10.244.1.2:8080,10.244.2.2:8080
web_objects $VIP "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"
# rr: the six held connections reach both pods for sure (random sent all six
# to one pod in one run of 32)
kpx_agent_start --scheduler rr --hostname-override node-a --sync-period 15s --min-sync-period 100ms \
	--metrics-bind-address 127.0.0.1:10249
t=$(wait_proc_backends tcp $VIP:80 $BOTH 60)
assert_ne "agent programs $VIP:80" timeout "$t"

# --- kpxctl flows ----------------------------------------------------------------
HOLDS=()
holds_stop() {
	local p

	for p in "${HOLDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	HOLDS=()
}
# hold N: one connection held open 60 s in the background, its answer in hold.N
hold() {
	in_ns cli "$CLIENT_BIN" --hold 60000 --every 1000 -t 3000 $VIP:80 >"$TMPD/hold.$1" 2>&1 &
	HOLDS+=($!)
}
NH=6
echo 0 >$TS
for i in 1 2 3; do hold $i; done
sleep 1
echo 1 >$TS
for i in 4 5 6; do hold $i; done
holds_connected $NH

flows=$("$KPXCTL" flows --json)
assert_eq "kpxctl flows --json: exit status" 0 $?
log "kpxctl flows --json: $flows"
"$KPXCTL" flows >"$TMPD/flows.txt" 2>&1
sed 's/^/#   /' "$TMPD/flows.txt"
assert_eq "one frontend with flows: $VIP:80 tcp, default/web:http cluster-ip" \
	"$VIP 80 tcp default/web:http cluster-ip" \
	"$(jq -r '[.frontends[] | select(.flows > 0)] | map("\(.vip) \(.port) \(.protocol) \(.service) \(.kind)") | join(";")' <<<"$flows")"
# each held connection: its backend (the echo's local address) and client port
# (the peer the echo saw) are one flow of that backend, ESTABLISHED
seen=()
for i in $(seq 1 $NH); do
	read -r _ _ ident be peer <"$TMPD/hold.$i"
	port=${peer##*:}
	got=$(jq -r --arg a "${be%:*}" --argjson p "${be##*:}" --argjson cp "$port" \
		'.frontends[] | select(.vip == "'$VIP'") | .backends[] |
		 select(.addr == $a and .port == $p) | .flows[] | select(.client_port == $cp) |
		 "\(.client) \(.state) \(.age != null)"' <<<"$flows")
	# the first three were created while nf_conntrack_timestamp was 0
	age=true
	[ "$i" -le 3 ] && age=false
	assert_eq "held connection $i ($ident, port $port): under backend $be" \
		"10.0.1.2 ESTABLISHED $age" "$got"
	seen+=("$ident")
done
assert_eq "flows listed, one per held connection" $NH \
	"$(jq '[.frontends[] | select(.vip == "'$VIP'") | .backends[].flows[]] | length' <<<"$flows")"
assert_match "the connections went to both pods" "pod1.*pod2|pod2.*pod1" "${seen[*]}"
assert_match "entries without a start time: the note says why" \
	'nf_conntrack_timestamp' "$(jq -r '.age_note' <<<"$flows")"
assert_eq "timeouts: every established entry's is over 60 s (the agent's 1-day established timeout)" 0 \
	"$(jq '[.frontends[].backends[].flows[] | select(.timeout < 60)] | length' <<<"$flows")"
assert_eq "ages of the timestamped entries: 0 to 30 s" 3 \
	"$(jq '[.frontends[].backends[].flows[] | select(.age != null and .age >= 0 and .age < 30)] | length' <<<"$flows")"
assert_match "table: a backend row with its flow count" "-> 10\.244\.[12]\.2:8080 +[1-6]" \
	"$(cat "$TMPD/flows.txt")"
assert_eq "kpxctl flows default/web: the same flows" $NH \
	"$("$KPXCTL" flows default/web --json | jq '[.frontends[].backends[].flows[]] | length')"
assert_eq "kpxctl flows default/web:http: the same flows" $NH \
	"$("$KPXCTL" flows default/web:http --json | jq '[.frontends[].backends[].flows[]] | length')"
assert_eq "kpxctl flows $VIP:80: the same flows" $NH \
	"$("$KPXCTL" flows $VIP:80 --json | jq '[.frontends[].backends[].flows[]] | length')"
assert_rc "kpxctl flows default/nosuch: no such frontend" 1 "$KPXCTL" flows default/nosuch
assert_rc "kpxctl flows web: neither a Service nor VIP:PORT" 2 "$KPXCTL" flows web
holds_stop

# --- kpxctl status ---------------------------------------------------------------
st=$("$KPXCTL" status --json)
assert_eq "kpxctl status while agent and module agree: exit status" 0 $?
log "kpxctl status --json: $st"
assert_eq "status: mode, synced, 1 desired, 1 in the module, nothing missing or unexpected" \
	"kpx true 1 true 1 0 0 0" \
	"$(jq -r '"\(.mode) \(.synced) \(.desired) \(.compared) \(.programmed) \(.missing.total) \(.unexpected.total) \(.last_sync.errors)"' <<<"$st")"
t1=$(jq '.last_sync.unix_ms' <<<"$st")

# behind_back: kpxctl del of the VIP and set of a stray frontend, then the
# status (status.txt, $st, $rc_txt, $rc_json); 1 when the agent's periodic
# re-check ran in between (its last sync is not older than the del).
behind_back() {
	local t_del

	t_del=$(($(date +%s%N) / 1000000))
	"$KPXCTL" del tcp $VIP:80 &&
		"$KPXCTL" set tcp 10.96.0.62:80 10.244.1.2:8080 || return 2
	"$KPXCTL" status >"$TMPD/status.txt" 2>&1
	rc_txt=$?
	st=$("$KPXCTL" status --json)
	rc_json=$?
	log "kpxctl del at $t_del ms, the agent's last sync started at $(jq .last_sync.unix_ms <<<"$st") ms"
	[ "$(jq .last_sync.unix_ms <<<"$st")" -lt "$t_del" ]
}
for try in 1 2; do
	behind_back && break
	log "try $try: the agent re-checked between the del and kpxctl status; again after its repair"
	wait_proc_backends tcp $VIP:80 $BOTH 40 >/dev/null
	wait_proc_backends tcp 10.96.0.62:80 absent 10 >/dev/null
done
sed 's/^/#   /' "$TMPD/status.txt"
assert_eq "kpxctl status after the del: exit status 3 (views differ), text and --json" \
	"3 3" "$rc_txt $rc_json"
assert_eq "status: the deleted frontend wanted and missing, with its Service" \
	"10.96.0.61:80/tcp default/web:http cluster-ip" \
	"$(jq -r '.missing.items | map("\(.frontend) \(.service) \(.kind)") | join(";")' <<<"$st")"
assert_eq "status: the stray frontend in the module, not wanted" "10.96.0.62:80/tcp" \
	"$(jq -r '.unexpected.items | map(.frontend) | join(";")' <<<"$st")"
assert_eq "status: 1 desired, 1 in the module" "1 1" "$(jq -r '"\(.desired) \(.programmed)"' <<<"$st")"
assert_match "text: the missing frontend's line" \
	"Wanted, missing in the module: 1 +10\.96\.0\.61:80/tcp +default/web:http" \
	"$(tr '\n' ' ' <"$TMPD/status.txt")"

t=$(wait_proc_backends tcp $VIP:80 $BOTH 40)
assert_ne "the agent's re-check restores $VIP:80" timeout "$t"
t=$(wait_proc_backends tcp 10.96.0.62:80 absent 10)
assert_ne "and deletes the stray frontend" timeout "$t"
st=$("$KPXCTL" status --json)
assert_eq "kpxctl status after the repair: exit status" 0 $?
assert_eq "status after the repair: nothing missing, differing or unexpected, a full sync" \
	"0 0 0 true 0" \
	"$(jq -r '"\(.missing.total) \(.differ.total) \(.unexpected.total) \(.last_sync.full) \(.last_sync.errors)"' <<<"$st")"
assert_gt "status: the repairing sync is later than the first" "$t1" "$(jq .last_sync.unix_ms <<<"$st")"
"$KPXCTL" status | sed 's/^/#   /'
assert_rc "kpxctl status --server of no agent: exit status 1" 1 \
	"$KPXCTL" status --server http://127.0.0.1:9
ksft_exit
