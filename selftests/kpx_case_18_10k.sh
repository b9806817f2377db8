#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_18_10k: shared case 18's scale variant, 10,000 ready endpoints in
# 100 slices of 100 (as the case's gen_objects.py --endpoints 10000 makes
# them; here built with jq from the case's objects.json), with the
# real agent as node-a.  All 10,000 are programmed, and 60,000 new
# connections to the ClusterIP are spread evenly over them: every SYN is
# scheduled exactly once (the module's frontend and per-backend counters
# sum to 60,000) and a chi-square statistic over the 10,000 backends'
# counts is below 10442, the 0.999 quantile for 9,999 degrees of freedom
# (p > 0.001; iptables' -m statistic probabilities printed with 5 decimals
# skew the spread past 319 endpoints).  The SYNs are never answered: the
# endpoint addresses are routed to a netns that does not own them, so no
# 10,000 listening servers are needed; a decision is made per new flow.
# Only kpx mode: the per-backend counters are the module's.
#
#   node (kpx.ko, kpx-agent as node-a, API server)
#     |-- veth -- farm  10.244.250.1; 10.244.0.0/16 routed via it, dropped there
#     `-- veth -- cpod  10.244.200.5-.8 (client pod, four source addresses)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

# kpx-timeout: 900
VIP=10.96.120.130:80
NEP=10000
N=60000
require_mode kpx
case_init 18
pod_add farm 10.244.250.1 && pod_add cpod 10.244.200.5 10.244.200.6 10.244.200.7 10.244.200.8 ||
	skip "pod setup failed"
# farm drops them (a pod netns forwards: without the blackhole each SYN
# would loop back to the node, a second conntrack entry per flow)
ip route add 10.244.0.0/16 via 10.244.250.1 dev v-farm &&
	ip -n farm route add blackhole 10.244.0.0/16 || skip "farm routes failed"
# The case's objects with its slices replaced by 100 of 100 endpoints each,
# addresses 10.244.B.H as gen_objects.py numbers them (250 per /24 from .2).
jq --argjson n $NEP '
	[.items[] | select(.kind == "EndpointSlice")][0] as $sl |
	$sl.endpoints[0] as $ep |
	.items = [.items[] | select(.kind != "EndpointSlice")] + [range(0; $n / 100) as $s |
		$sl | .metadata.name = "catalog-10k-\($s)" | .metadata.uid = "catalog-10k-\($s)" |
		.endpoints = [range(0; 100) as $e | ($s * 100 + $e) as $i |
			$ep | del(.targetRef) | .nodeName = "node-a" |
			.addresses = ["10.244.\(($i / 250 | floor) + 1).\($i % 250 + 2)"]]]' \
	"$OBJECTS" >"$TMPD/big.json" || skip "cannot build the objects"
assert_eq "distinct endpoint addresses generated" $NEP \
	"$(jq '[.items[] | select(.kind == "EndpointSlice") | .endpoints[].addresses[0]] | unique | length' \
	"$TMPD/big.json")"
assert_eq "EndpointSlices generated" 100 \
	"$(jq '[.items[] | select(.kind == "EndpointSlice")] | length' "$TMPD/big.json")"
api_start "$TMPD/big.json" "$REPO/testdata/real-objects/node-a.json"	# the case has no Node
agent_start
log "agent's first sync after $(wait_agent_synced) s"

# nbackends: the frontend's backend count from the module.
nbackends() {
	"$KPXCTL" list --json | jq --arg vip "${VIP%:*}" \
		'[.services[] | select(.vip == $vip and .port == 80) | .backends | length] | add // 0'
}
for ((i = 0; i < 600; i++)); do
	[ "$(nbackends)" = $NEP ] && break
	sleep 0.5
done
assert_eq "all endpoints programmed" $NEP "$(nbackends)"
want=$(jq -r '.items[] | select(.kind == "EndpointSlice") | .endpoints[].addresses[0] + ":8080"' \
	"$TMPD/big.json" | sort | paste -sd,)
got=$(kpx_json | jq -r --arg vip "${VIP%:*}" '.services[] | select(.vip == $vip and .port == 80) |
	.backends[] | "\(.addr):\(.port)"' | sort | paste -sd,)
assert_eq "programmed set == the slices' endpoints (md5 of the sorted list)" \
	"$(md5sum <<<"$want")" "$(md5sum <<<"$got")"

# softnet_drops: packets dropped on a full per-CPU backlog (all CPUs).
softnet_drops() {
	local a b n=0

	while read -r a b _; do
		n=$((n + 16#$b))
	done </proc/net/softnet_stat
	echo $n
}
drops0=$(softnet_drops)
t0=$(now_ms)
out=$(in_ns cpod python3 "$SELFTESTS/tools/tcpsyn.py" $N $VIP \
	10.244.200.5 10.244.200.6 10.244.200.7 10.244.200.8 2>&1)
log "$out in $(($(now_ms) - t0)) ms"
assert_eq "SYNs sent" "sent $N" "$out"
sleep 1
log "conntrack entries $(cat /proc/sys/net/netfilter/nf_conntrack_count)"
assert_eq "packets dropped on a full receive backlog" 0 "$(($(softnet_drops) - drops0))"
KS_JSON=$(kpx_json)
read -r total sum used chi min max < <(jq -r --argjson n $N --arg vip "${VIP%:*}" '
	.services[] | select(.vip == $vip and .port == 80) |
	.conns as $t | .backends | ($n / length) as $e |
	"\($t) \(map(.conns) | add) \(length) \(map((.conns - $e) * (.conns - $e) / $e) | add) \(map(.conns) | min) \(map(.conns) | max)"' \
	<<<"$KS_JSON")
log "per-backend connections min $min max $max (expected $((N / NEP))), chi-square $chi"
assert_eq "frontend's new connections (one decision per SYN)" $N "$total"
assert_eq "backend counters sum to the connections" $N "$sum"
assert_eq "backends listed" $NEP "$used"
assert_lt_ms "chi-square over $NEP backends (p > 0.001)" 10442 "$(printf '%.0f' "$chi")"

ksft_exit
