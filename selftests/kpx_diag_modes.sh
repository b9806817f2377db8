#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_diag_modes: kpxctl list and kpxctl flows read the kernel state of the
# proxy mode in use (KPX_PROXY_MODE: the module, the nftables tables, the
# iptables chains, IPVS with the mode's ipsets) and print one table and
# one JSON shape in every mode, so that a runbook does not depend on it.
#  - the real objects (testdata/real-objects) and Service default/web:
#    kpxctl list, the mode chosen by itself (--json "mode") and given with
#    --mode, names every frontend of the objects with its
#    namespace/name:port and kind, with the backends the agent programmed
#    (its log, mode_lib.sh's agent_frontend), no frontend unnamed; the
#    table's row carries the Service;
#  - kpxctl flows lists the TCP connections the test holds open through
#    default/web's VIP, each under the backend that answered it (the pod's
#    own address, from the echo's answer) with the client port the pod
#    saw, ESTABLISHED; by Service and by VIP:PORT the same.
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (VM root netns) --veth--
# pod1 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.61:80/tcp -> both.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

DATA=$REPO/testdata/real-objects
agent_require
setup_trap "holds_stop; agent_lib_stop"

# PROTO VIP:PORT SERVICE KIND: the real objects' frontends in every mode
# (testdata/real-objects/frontends.txt) and the test's own default/web
mapfile -t EXPECTED < <(grep -v '^#' "$DATA/frontends.txt")
EXPECTED+=("tcp 10.96.0.61:80 default/web:http cluster-ip")

node_setup && cli_setup && pods_setup 2 || skip "topology setup failed"
echo_start pod1 pod1 10.244.1.2:8080
echo_start pod2 pod2 10.244.2.2:8080

VIP=10.96.0.61 BOTH=10.244.1.2:8080,10.244.2.2:8080
# default/web without the Node (real-objects has node-a)
web_objects $VIP "$TMPD/web.json"
jq '.items |= map(select(.kind != "Node"))' "$TMPD/web.json" >"$TMPD/web-only.json"
kpx_api_start --objects "$DATA"/0*.json "$DATA/node-a.json" "$TMPD/web-only.json"
kpx_agent_start --hostname-override node-a --sync-period 30s --min-sync-period 100ms
log "agent's first sync after $(wait_agent_synced) s"
t=$(wait_proc_backends tcp $VIP:80 $BOTH 60)
assert_ne "agent programs $VIP:80 ($KPX_PROXY_MODE)" timeout "$t"

# --- kpxctl list ----------------------------------------------------------------
list=$("$KPXCTL" list --json)
assert_eq "kpxctl list --json: exit status" 0 $?
log "kpxctl list --json: $list"
"$KPXCTL" list >"$TMPD/list.txt" 2>&1
sed 's/^/#   /' "$TMPD/list.txt"
assert_eq "kpxctl list reads proxy mode $KPX_PROXY_MODE by itself" "$KPX_PROXY_MODE" \
	"$(jq -r .mode <<<"$list")"
assert_eq "kpxctl list --mode $KPX_PROXY_MODE: the same" "$list" \
	"$("$KPXCTL" list --mode "$KPX_PROXY_MODE" --json)"
for e in "${EXPECTED[@]}"; do
	read -r proto key name kind <<<"$e"
	vip=${key%:*} port=${key##*:}
	got=$(jq -r --arg p "$proto" --arg v "$vip" --argjson n "$port" \
		'[.services[] | select(.protocol == $p and .vip == $v and .port == $n)] |
		 if length == 0 then "absent" else .[0] |
		 "\(.service) \(.kind) \([.backends[] | "\(.addr):\(.port)"] | sort | join(",") |
		   if . == "" then "-" else . end)" end' <<<"$list")
	read -r _ want_be < <(agent_frontend "$proto" "$key")
	want_be=$(tr ',' '\n' <<<"$want_be" | sort | paste -sd, -)
	assert_eq "$proto $key: Service, kind and the backends the agent programmed" \
		"$name $kind $want_be" "$got"
done
assert_eq "default/web's backends are the two pods" "$BOTH" \
	"$(jq -r '.services[] | select(.vip == "'$VIP'") | [.backends[] | "\(.addr):\(.port)"] | sort | join(",")' <<<"$list")"
assert_eq "every frontend is named" 0 \
	"$(jq '[.services[] | select(.service == null or .kind == null)] | length' <<<"$list")"
assert_match "table: default/web's row with its Service" \
	"^TCP  10\.96\.0\.61:80 .* default/web:http cluster-ip$" "$(grep '^TCP  10\.96\.0\.61:80 ' "$TMPD/list.txt")"
assert_match "table: a backend row" "  -> 10\.244\.1\.2:8080 +1 " "$(cat "$TMPD/list.txt")"
assert_rc "kpxctl list --mode bogus: usage error" 2 "$KPXCTL" list --mode bogus

# --- kpxctl flows ---------------------------------------------------------------
HOLDS=()
holds_stop() {
	local p

	for p in "${HOLDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	HOLDS=()
}
NH=4
# the connections made above (the list checks' probes, TIME_WAIT now) go, so
# that the flows listed are exactly the held ones
conntrack -D --orig-dst $VIP >/dev/null 2>&1
assert_eq "no conntrack entry towards $VIP before the holds" 0 \
	"$(conntrack -L --orig-dst $VIP 2>/dev/null | grep -c .)"
for i in $(seq 1 $NH); do
	in_ns cli "$CLIENT_BIN" --hold 60000 --every 1000 -t 3000 $VIP:80 >"$TMPD/hold.$i" 2>&1 &
	HOLDS+=($!)
done
holds_connected $NH
flows=$("$KPXCTL" flows --json)
assert_eq "kpxctl flows --json: exit status" 0 $?
log "kpxctl flows --json: $flows"
"$KPXCTL" flows >"$TMPD/flows.txt" 2>&1
sed 's/^/#   /' "$TMPD/flows.txt"
assert_eq "kpxctl flows reads proxy mode $KPX_PROXY_MODE" "$KPX_PROXY_MODE" "$(jq -r .mode <<<"$flows")"
assert_eq "the frontend with flows: $VIP:80 tcp, default/web:http cluster-ip" \
	"$VIP 80 tcp default/web:http cluster-ip" \
	"$(jq -r '[.frontends[] | select(.flows > 0)] | map("\(.vip) \(.port) \(.protocol) \(.service) \(.kind)") | join(";")' <<<"$flows")"
for i in $(seq 1 $NH); do
	read -r _ _ ident be peer <"$TMPD/hold.$i"
	cport=${peer##*:}
	got=$(jq -r --arg a "${be%:*}" --argjson p "${be##*:}" --argjson cp "$cport" \
		'.frontends[] | select(.vip == "'$VIP'") | .backends[] |
		 select(.addr == $a and .port == $p) | .flows[] | select(.client_port == $cp) |
		 "\(.client) \(.state)"' <<<"$flows")
	assert_eq "held connection $i ($ident, client port $cport): under backend $be" \
		"10.0.1.2 ESTABLISHED" "$got"
done
assert_eq "flows listed: one per held connection" $NH \
	"$(jq '[.frontends[] | select(.vip == "'$VIP'") | .backends[].flows[]] | length' <<<"$flows")"
assert_match "table: a backend row with its flow count" "-> 10\.244\.[12]\.2:8080 +[1-4]" \
	"$(cat "$TMPD/flows.txt")"
assert_eq "kpxctl flows default/web: the same flows" $NH \
	"$("$KPXCTL" flows default/web --json | jq '[.frontends[].backends[].flows[]] | length')"
assert_eq "kpxctl flows $VIP:80 --mode $KPX_PROXY_MODE: the same flows" $NH \
	"$("$KPXCTL" flows $VIP:80 --mode "$KPX_PROXY_MODE" --json | jq '[.frontends[].backends[].flows[]] | length')"
assert_rc "kpxctl flows default/nosuch: no such frontend" 1 "$KPXCTL" flows default/nosuch
holds_stop
ksft_exit
