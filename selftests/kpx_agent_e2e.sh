#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_e2e: the real agent against the test API server, serving real
# Service/EndpointSlice objects (testdata/real-objects, see its README): every
# ClusterIP:port reaches exactly the ready endpoints on the target port, or
# is refused at once when it has none; a slice whose endpoints all turn
# not-ready makes the frontend refuse; a deleted endpoint gets no new
# connection within 1 s while an established connection to it keeps
# working; restarting the agent under load loses no connection and resets
# no counter (nothing was deleted and re-added).
#
#   node (root netns): kpx.ko, kpx-agent as node-a, kpx-test-apiserver
#   (127.0.0.1), node-local clients
#     |-- veth -- cli     10.0.1.2                    (routed clients)
#     |-- veth -- dns1    10.244.0.3   :53 tcp+udp, :9153 tcp
#     |-- veth -- dns2    10.244.0.4   :53 tcp+udp, :9153 tcp
#     |-- veth -- apisrv  192.0.2.10   :6443
#     |-- veth -- web1    10.244.1.201 :80   (terminating endpoint)
#     `-- veth -- web2    10.244.1.202 :80
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

DATA=$REPO/testdata/real-objects
agent_require
setup_trap agent_lib_stop

# The ClusterIP frontends the objects define, with their expected
# backends ("-" = none): PROTO VIP PORT BACKEND,...
EXPECTED=(
	"tcp 10.96.0.1 443 192.0.2.10:6443"
	"udp 10.96.0.10 53 10.244.0.3:53,10.244.0.4:53"
	"tcp 10.96.0.10 53 10.244.0.3:53,10.244.0.4:53"
	"tcp 10.96.0.10 9153 10.244.0.3:9153,10.244.0.4:9153"
	"tcp 10.96.199.145 18000 -"
	"tcp 10.96.199.145 18001 -"
	"tcp 10.96.199.145 19001 -"
	"tcp 10.96.199.145 9443 -"
	"tcp 10.96.234.211 80 -"
	"udp 10.96.91.35 5300 -"
	"tcp 10.96.100.80 80 10.244.1.202:80"
)

node_setup && cli_setup || skip "topology setup failed"
pod_add dns1 10.244.0.3 && pod_add dns2 10.244.0.4 && pod_add apisrv 192.0.2.10 &&
	pod_add web1 10.244.1.201 && pod_add web2 10.244.1.202 || skip "pod setup failed"
echo_start dns1 dns1 10.244.0.3:53 10.244.0.3:9153
echo_start dns2 dns2 10.244.0.4:53 10.244.0.4:9153
echo_start apisrv apisrv 192.0.2.10:6443
echo_start web1 web1 10.244.1.201:80
echo_start web2 web2 10.244.1.202:80

# --- API server and agent --------------------------------------------------
kpx_api_start --objects "$DATA"/0*.json "$DATA/node-a.json"
apictl() { kpx_apictl "$@"; }
# timed_apply FILE: POST FILE to /_test/apply with curl (what apictl apply
# does); sets APPLY_T0 ($EPOCHREALTIME when the server had answered, i.e.
# the change was made: latencies are measured from there, so neither
# curl's nor apictl's start-up under TCG counts against the agent).
timed_apply() {
	local rc

	curl -sS -f -o /dev/null --cacert "$TMPD/certs/ca.crt" \
		-H "Authorization: Bearer $(<"$TMPD/certs/token")" \
		-H 'Content-Type: application/json' --data-binary @"$1" \
		"https://127.0.0.1:$(<"$TMPD/state/port")/_test/apply"
	rc=$?
	APPLY_T0=$EPOCHREALTIME
	return $rc
}
# log_apply_time: when the last timed_apply was answered (UTC, like the
# agent's log), logged after the measurement since date(1) is slow here.
log_apply_time() { log "apply answered at $(date -u -d "@$APPLY_T0" +%T.%3N) UTC"; }
# since_apply: seconds since APPLY_T0 when the wait started + the wait.
since_apply() { # WAIT_SECONDS
	[[ "$1" =~ ^[0-9.]+$ ]] || { echo "$1"; return; }
	awk -v a="$APPLY_T0" -v b="$WAIT_T0" -v w="$1" 'BEGIN { printf "%.2f\n", b - a + w }'
}

# as node-a, whose Node (testdata/real-objects/node-a.json) the agent waits for at start
start_agent() { kpx_agent_start --hostname-override node-a --v 2; }

# backends_of PROTO VIP PORT / wait_backends PROTO VIP PORT WANT [SECONDS]:
# the frontend's backends ("-" none, "absent" no frontend), from /proc.
backends_of() { proc_backends "$1" "$2:$3"; }
wait_backends() { wait_proc_backends "$1" "$2:$3" "$4" "${5:-10}"; }

# How soon after an apply the change must be in the data plane: 1 s with
# the module; the other modes end a sync with nft / iptables-restore /
# ipvsadm runs and conntrack cleanup (process start-up under TCG on a
# loaded host), so there the bound is 3 s.
SYNC_MS=1000
mode_is kpx || SYNC_MS=3000
start_agent
log "agent's first sync after $(wait_agent_synced) s"
t=$(wait_backends tcp 10.96.100.80 80 10.244.1.202:80 30)
assert_ne "agent's first sync (s)" timeout "$t"
# Everything of the first sync must be there by now.
for e in "${EXPECTED[@]}"; do
	read -r proto vip port want <<<"$e"
	wait_backends "$proto" "$vip" "$port" "$(tr ',' '\n' <<<"$want" | sort | paste -sd,)" 5 >/dev/null
done
# kpxctl reads the kpx module: in the other proxy modes (mode_lib.sh) the
# frontends were checked above from what the agent programmed.
if mode_is kpx; then
	log "kpxctl list after the first sync:"
	"$KPXCTL" list 2>&1 | sed 's/^/#   /'
	# kpxctl's JSON must hold exactly these ClusterIP frontends and
	# backends (frontends of other kinds, e.g. NodePorts, are not checked).
	want_json=$(for e in "${EXPECTED[@]}"; do
		read -r proto vip port want <<<"$e"
		echo "$proto $vip $port $(tr ',' '\n' <<<"$want" | sort | paste -sd,)"
	done | sort)
	got_json=$(kpx_json | jq -r '.services[] | select(.vip | startswith("10.96.")) |
		"\(.protocol) \(.vip) \(.port) \([.backends[] | "\(.addr):\(.port)"] | sort |
		if length == 0 then "-" else join(",") end)"' | sort)
	assert_eq "ClusterIP frontends in kpxctl list --json" "$want_json" "$got_json"
else
	skip_assert "ClusterIP frontends in kpxctl list --json" "kpxctl reads the kpx module only"
fi

# --- every ClusterIP:port ---------------------------------------------------
# check_frontend NS PROTO VIP PORT WANT: the backends programmed are WANT;
# N attempts from NS (12 for several backends: P(one unseen) = 2^-11, else
# 5) are all answered by WANT's pods on the target port, each backend at
# least once, or all refused at once if WANT is "-".
check_frontend() {
	local ns=$1 proto=$2 vip=$3 port=$4 want=$5 label uflag=() n=5

	label="$proto $vip:$port from $ns"
	[ "$proto" = udp ] && uflag=(-u)
	assert_eq "$label: backends programmed" "$want" "$(backends_of "$proto" "$vip" "$port")"
	[[ "$want" != *,* ]] || n=12
	client_all "$want" "$ns" -n $n -t 2000 "${uflag[@]}" "$vip:$port"
	if [ "$want" = - ]; then
		assert_eq "$label: refused" $n "$(error_count ECONNREFUSED)"
		assert_lt_ms "$label: slowest refusal" 500 "$(summary_field max_ms)"
		client_show_if_failed
		return
	fi
	assert_eq "$label: answered" $n "$(summary_field ok)"
	# The answer's second field is the backend address:port that took it,
	# so every backend of WANT answered and no other one did.
	assert_eq "$label: backends answering (address:target port)" "$want" "$(answer_field 2)"
	client_show_if_failed
}
for e in "${EXPECTED[@]}"; do
	read -r proto vip port want <<<"$e"
	want=$(tr ',' '\n' <<<"$want" | sort | paste -sd,)
	check_frontend cli "$proto" "$vip" "$port" "$want"
done
check_frontend node tcp 10.96.0.10 9153 "10.244.0.3:9153,10.244.0.4:9153"
check_frontend node udp 10.96.0.10 53 "10.244.0.3:53,10.244.0.4:53"

# --- all endpoints not ready ---------------------------------------------------
slice=$TMPD/kube-dns-slice.json
jq '.items[] | select(.metadata.name == "kube-dns-7q4vz") |
    . + {kind: "EndpointSlice", apiVersion: "discovery.k8s.io/v1"}' \
	"$DATA/01-endpointslicelist-kind-2020.json" >"$slice"
jq '.endpoints[].conditions = {ready: false, serving: false, terminating: false}' \
	"$slice" >"$TMPD/notready.json"
timed_apply "$TMPD/notready.json"
assert_eq "apply kube-dns slice with every endpoint not ready (curl status)" 0 $?
WAIT_T0=$EPOCHREALTIME
t=$(since_apply "$(wait_backends udp 10.96.0.10 53 - 5)")
log "not-ready endpoints removed $t s after the apply request"
log_apply_time
assert_lt_ms "not ready: udp 10.96.0.10:53 emptied within" "$SYNC_MS" "$(s_to_ms "$t")"
t=$(wait_backends tcp 10.96.0.10 9153 - 2)
check_frontend cli udp 10.96.0.10 53 -
check_frontend cli tcp 10.96.0.10 53 -
check_frontend cli tcp 10.96.0.10 9153 -

assert_rc "apply the original kube-dns slice again" 0 apictl apply "$slice"
t=$(wait_backends tcp 10.96.0.10 9153 "10.244.0.3:9153,10.244.0.4:9153" 5)
assert_ne "ready again" timeout "$t"

# --- endpoint deleted while a connection through the VIP is open ------------------
in_ns cli "$CLIENT_BIN" --hold 5000 --every 100 -t 1000 10.96.0.10:9153 >"$TMPD/hold.out" 2>&1 &
hold=$!
for _ in $(seq 1 60); do
	grep -q '^hold connected' "$TMPD/hold.out" && break
	sleep 0.05
done
victim=$(awk '$1 == "hold" && $2 == "connected" { print $4 }' "$TMPD/hold.out")
victim_ip=${victim%:*}
assert_match "held connection's backend" '^10\.244\.0\.[34]:9153$' "$victim"
jq --arg ip "$victim_ip" 'del(.endpoints[] | select(.addresses[0] == $ip))' \
	"$slice" >"$TMPD/deleted.json"
survivor=$(jq -r '.endpoints[0].addresses[0]' "$TMPD/deleted.json")
timed_apply "$TMPD/deleted.json"
assert_eq "apply kube-dns slice without $victim_ip (curl status)" 0 $?
WAIT_T0=$EPOCHREALTIME
t=$(since_apply "$(wait_backends tcp 10.96.0.10 9153 "$survivor:9153" 5)")
log "endpoint $victim_ip removed from the module $t s after the apply request"
log_apply_time
assert_lt_ms "deleted endpoint removed within" "$SYNC_MS" "$(s_to_ms "$t")"
client cli -n 20 10.96.0.10:9153
assert_eq "after the deletion: new connections answered" 20 "$(summary_field ok)"
assert_eq "after the deletion: answered by" "$survivor:9153" "$(answer_field 2)"
wait $hold
sed 's/^/#   /' "$TMPD/hold.out"
assert_eq "held connection: failed exchanges" 0 \
	"$(sed -n 's/^hold summary .*failed=\([0-9]*\).*/\1/p' "$TMPD/hold.out")"
assert_gt "held connection: exchanges over 5 s" 20 \
	"$(sed -n 's/^hold summary .*exchanges=\([0-9]*\).*/\1/p' "$TMPD/hold.out")"
assert_eq "held connection stayed on" "$victim" \
	"$(awk '$1 == "hold" && $2 == "connected" { print $4 }' "$TMPD/hold.out")"
assert_rc "apply the original kube-dns slice again" 0 apictl apply "$slice"
t=$(wait_backends tcp 10.96.0.10 53 "10.244.0.3:53,10.244.0.4:53" 5)
assert_ne "both dns endpoints back" timeout "$t"

# --- agent restart under load --------------------------------------------------
# What is programmed must stay as it is across the restart: the module's
# frontends (kpxctl) in kpx mode, the mode's own state otherwise (rules
# stay in place when the agent exits, like kube-proxy; handles and
# counters are left out of the comparison).
frontends() {
	case "$KPX_PROXY_MODE" in
	kpx) kpx_json | jq -c '[.services[] | {protocol, vip, port, flags, backends: [.backends[] | {addr, port, weight}]}] | sort_by(.protocol, .vip, .port)' ;;
	nftables) { nft list table ip kpx; nft list table ip6 kpx; } 2>&1 | sed -E 's/counter packets [0-9]+ bytes [0-9]+//; s/ expires [0-9a-z]+//' | grep -v '^\s*$' | sort ;;
	iptables) iptables-save 2>&1 | grep -E '^-A KPX-|^:KPX-' | sed -E 's/\[[0-9]+:[0-9]+\]//' | sort ;;
	ipvs) ipvsadm -Sn 2>&1 | sort ;;
	esac
}
before=$(frontends)
assert_ne "programmed state before the restart (proxy mode $KPX_PROXY_MODE)" "" "$before"
kpx_snapshot
c0=$(svc_counter tcp 10.96.0.10 53 conns)
in_ns cli "$CLIENT_BIN" -d 6000 -i 20 -t 1000 10.96.0.10:53 >"$TMPD/loop.out" 2>&1 &
loop=$!
sleep 1
kpx_agent_stop
assert_eq "agent exit status on SIGTERM" 0 "$AGENT_STATUS"
assert_eq "frontends right after the agent exited" "$before" "$(frontends)"
sleep 0.5
syncs=$(kpx_agent_syncs)
start_agent
# The restarted agent's first sync, however long it takes under load.
for _ in $(seq 1 300); do
	[ "$(kpx_agent_syncs)" -gt "$syncs" ] && break
	sleep 0.1
done
assert_gt "restarted agent synced" "$syncs" "$(kpx_agent_syncs)"
assert_eq "frontends after the agent restarted" "$before" "$(frontends)"
wait $loop
sed -n '/^summary/,$p' "$TMPD/loop.out" | sed 's/^/#   /'
ok=$(summary_field ok "$TMPD/loop.out")
assert_eq "restart: failed connections" 0 "$(summary_field failed "$TMPD/loop.out")"
assert_gt "restart: connections made" 20 "$ok"
if mode_is kpx; then
	kpx_snapshot
	c1=$(svc_counter tcp 10.96.0.10 53 conns)
	delta=none
	[[ "$c0$c1" =~ ^[0-9]+$ ]] && delta=$((c1 - c0))
	assert_eq "restart: frontend conns counter grew by the loop's connections (not reset)" \
		"$ok" "$delta"
else
	skip_assert "restart: frontend conns counter not reset" "per-frontend counters are kpx module state"
fi

if [ "$FAILS" -gt 0 ]; then
	log "agent log:"
	sed 's/^/#   /' "$TMPD/agent.log"
else
	log "agent log (tail):"
	tail -n 8 "$TMPD/agent.log" | sed 's/^/#   /'
fi
ksft_exit
