#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_mode_switch: switching the proxy mode of a live node, with a client connecting through the Service all along.
# Modes in turn (KPX_SWITCH_MODES, default nftables kpx iptables ipvs kpx):
# start kpx-agent --proxy-mode MODE, wait until a fresh client reaches both
# pods through the ClusterIP and the background client is served again,
# then assert that exactly that mode's state is on the node:
#
#   kpx       frontends in the module (kpxctl stats --json / list --json)
#   nftables  table ip/ip6/inet "kpx" (nft list tables)
#   iptables  KPX-* chains other than KPX-IPVS* (iptables-save, ip6tables-save)
#   ipvs      IPVS virtual servers (ipvsadm -Ln), the kpx-ipvs0 dummy
#             (ip link), KPX ipsets (ipset list -n), KPX-IPVS* chains
#
# then stop the agent (SIGTERM leaves its state, as kube-proxy) and run
# kpx-agent --cleanup, after which nothing of any mode may be left.
# Runs in the kpx-mode suite only (it needs the module for its kpx steps).
# kpx-timeout: 900
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent in turn in each mode, API
#                               server)
#                           |-- veth -- pod1 10.244.1.2 :8080 tcp+udp
#                           `-- veth -- pod2 10.244.2.2 :8080 tcp+udp
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

VIP=10.96.0.80
BOTH=10.244.1.2:8080,10.244.2.2:8080
read -r -a MODES <<<"${KPX_SWITCH_MODES:-nftables kpx iptables ipvs kpx}"
require_mode kpx
agent_require /usr/sbin/nft /usr/sbin/iptables-save /usr/sbin/ip6tables-save \
	/usr/sbin/ipvsadm /usr/sbin/ipset /usr/bin/curl
setup_trap 'agent_lib_stop; "$KPX_AGENT" --cleanup >/dev/null 2>&1'
web_pods 2 || skip "topology setup failed"
echo_start pod1 -u pod1u 10.244.1.2:8080
echo_start pod2 -u pod2u 10.244.2.2:8080

# Service web: TCP 80 and UDP 53 -> 8080 on both pods.
web_objects $VIP "$TMPD/objects.json"
jq '(.items[] | select(.kind == "Service") | .spec.ports) +=
	[{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 8080}] |
    (.items[] | select(.kind == "EndpointSlice") | .ports) +=
	[{"name": "dns", "port": 8080, "protocol": "UDP"}]' \
	"$TMPD/objects.json" >"$TMPD/objects2.json" || skip "jq failed"
kpx_api_start --objects "$TMPD/objects2.json"

# --- what is on the node -------------------------------------------------------

# n_kpx: frontends in the module.
n_kpx() { "$KPXCTL" stats --json 2>/dev/null | jq -r '.services // 0'; }
# n_nft: our nft tables (any family).
n_nft() { nft list tables 2>/dev/null | grep -cE '^table (ip|ip6|inet) kpx$'; }
# n_ipt: iptables-mode chains (KPX-*, not KPX-IPVS*), both families.
n_ipt() { { iptables-save; ip6tables-save; } 2>/dev/null | grep -E '^:KPX-' | grep -cv '^:KPX-IPVS'; }
# ipvs_detail: IPVS virtual servers, the dummy, KPX ipsets, KPX-IPVS* chains.
ipvs_detail() {
	local vs link sets chains

	vs=$(ipvsadm -Ln 2>/dev/null | grep -cE '^(TCP|UDP|SCTP) ')
	link=$(ip link show kpx-ipvs0 2>/dev/null | grep -c kpx-ipvs0)
	sets=$(ipset list -n 2>/dev/null | grep -c '^KPX')
	chains=$({ iptables-save; ip6tables-save; } 2>/dev/null | grep -c '^:KPX-IPVS')
	echo "virtual servers $vs, kpx-ipvs0 $link, ipsets $sets, KPX-IPVS chains $chains"
}
# n_ipvs: the sum of those.
n_ipvs() { ipvs_detail | tr -cs '0-9' '\n' | awk '{ n += $1 } END { print n + 0 }'; }
# modes_present: the modes with state on the node, space separated.
modes_present() {
	local out=()

	[ "$(n_kpx)" -gt 0 ] && out+=(kpx)
	[ "$(n_nft)" -gt 0 ] && out+=(nftables)
	[ "$(n_ipt)" -gt 0 ] && out+=(iptables)
	[ "$(n_ipvs)" -gt 0 ] && out+=(ipvs)
	echo "${out[*]:-none}"
}
# show_state: the node's state, for the log.
show_state() {
	log "  kpx frontends $(n_kpx), nft kpx tables $(n_nft), iptables-mode chains $(n_ipt), ipvs: $(ipvs_detail)"
}

# kpx_frontends: "PROTO VIP PORT BACKEND,...;..." of $VIP in kpxctl list --json.
kpx_frontends() {
	kpx_json | jq -r --arg vip "$VIP" '[.services[] | select(.vip == $vip) |
		"\(.protocol) \(.vip) \(.port) \([.backends[] | "\(.addr):\(.port)"] | sort | join(","))"] |
		sort | join(";")'
}

# ok_lines: answered attempts of the background client so far.
ok_lines() { grep -c '^[0-9]* ok ' "$TMPD/loop.out"; }

assert_eq "before: no proxy state on the node" none "$(modes_present)"
# the traffic that runs through every switch: a new connection every 100 ms
in_ns cli "$CLIENT_BIN" -d 900000 -i 100 -t 500 $VIP:80 >"$TMPD/loop.out" 2>&1 &
LOOP=$!
PIDS+=("$LOOP")

for m in "${MODES[@]}"; do
	log "=== proxy mode $m"
	: >"$TMPD/agent.log"
	kpx_agent_start --proxy-mode "$m" --hostname-override node-a \
		--cluster-cidr 10.244.0.0/16 --v 2
	t0=$SECONDS
	wait_served 60 $VIP:80 "$BOTH"
	assert_eq "$m: TCP $VIP:80 from cli, backends (after $((SECONDS - t0)) s)" "$BOTH" "$(answer_field 2)"
	client_show_if_failed
	client_all "$BOTH" cli -n 8 -t 1000 -u $VIP:53
	assert_eq "$m: UDP $VIP:53 from cli, answered" 8 "$(summary_field ok)"
	assert_eq "$m: UDP $VIP:53 from cli, backends" "$BOTH" "$(answer_field 2)"
	client_show_if_failed
	n0=$(ok_lines)
	sleep 2
	assert_gt "$m: the background client is served" "$n0" "$(ok_lines)"
	assert_eq "$m: exactly one mode's state on the node" "$m" "$(modes_present)"
	assert_eq "$m: /metrics kpx_proxy_mode" "kpx_proxy_mode{mode=\"$m\"} 1" \
		"$(curl -s -m 5 http://127.0.0.1:10249/metrics | grep '^kpx_proxy_mode')"
	assert_eq "$m: /proxyMode" "$m" "$(curl -s -m 5 http://127.0.0.1:10249/proxyMode)"
	show_state
	[ "$m" != ipvs ] || assert_match "ipvs: virtual servers and the dummy interface" \
		'virtual servers [1-9][0-9]*, kpx-ipvs0 1' "$(ipvs_detail)"
	[ "$m" != kpx ] || assert_eq "kpx: the module's frontends (kpxctl list --json)" \
		"tcp $VIP 80 $BOTH;udp $VIP 53 $BOTH" "$(kpx_frontends)"
	kpx_agent_stop
	assert_eq "$m: agent exit status on SIGTERM" 0 "$AGENT_STATUS"
	assert_eq "$m: state kept after SIGTERM (as kube-proxy)" "$m" "$(modes_present)"
	assert_rc "$m: kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup
	assert_eq "$m: nothing left after --cleanup" none "$(modes_present)"
	[ "$(modes_present)" = none ] || show_state
done

kill "$LOOP" 2>/dev/null
wait "$LOOP" 2>/dev/null
log "background client: $(ok_lines) answered, $(grep -cE '^[0-9]+ E' "$TMPD/loop.out") failed (between a --cleanup and the next mode's first sync)"
assert_eq "background client: answered by both pods" "pod1,pod2" \
	"$(awk '$2 == "ok" { print $4 }' "$TMPD/loop.out" | sort -u | paste -sd,)"
assert_rc "a second --cleanup finds nothing and succeeds" 0 "$KPX_AGENT" --cleanup
assert_eq "end: no proxy state on the node" none "$(modes_present)"
assert_eq "end: no kpx chain in iptables-save" 0 \
	"$({ iptables-save; ip6tables-save; } 2>/dev/null | grep -c 'KPX')"
assert_eq "end: no kpx table in nft list ruleset" 0 \
	"$(nft list ruleset 2>/dev/null | grep -cE '^table .* kpx')"

ksft_exit
