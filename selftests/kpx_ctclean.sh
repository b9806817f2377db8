#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_ctclean: the agent's userspace conntrack cleanup (agent/sync/ctclean.c) in
# the proxy modes that do not clean conntrack themselves (nftables,
# iptables, ipvs), and the module's in kpx mode (see also kpx_ct.sh); in
# each, kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family="IPv4"}
# on /metrics counts the deletion (kpx mode: the module's count,
# KPX_STATS_A_CT_DELETED4, the same as kpxctl stats' ct_deleted_ipv4).
# Service dns (ClusterIP 10.96.0.53, 53/UDP -> 5353) on two pods; a client
# pod keeps one connected UDP socket sending every 200 ms, so its conntrack
# entry (and its DNAT to one pod) would live for ever:
#   - the pod it sticks to is removed from the slice (the pod keeps
#     running): one sync plus 1 s later the flow is answered by the other
#     pod only, no entry is left to the removed one, and the agent logged
#     the deletion (kube-proxy's rule: reply source = the removed endpoint;
#     in ipvs mode IPVS may have dropped it first: expire_nodest_conn);
#   - the Service is deleted: no entry to the VIP stays translated to a pod.
# Without the cleanup the flow would stay on the removed pod.
#
#   node (kpx-agent --proxy-mode $KPX_PROXY_MODE, API server)
#     |-- veth -- pod1 10.244.1.2 :5353 udp
#     |-- veth -- pod2 10.244.2.2 :5353 udp
#     `-- veth -- cpod 10.244.3.7          (the client)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

VIP=10.96.0.53
require_guest
require_file "$KPX_AGENT" "$ECHO_BIN" "$APIDIR/kpx-test-apiserver.py" \
	"$APIDIR/gen-certs.sh" "$APIDIR/kpx-test-apictl"
setup_trap case_stop
node_setup && cli_setup && pods_setup 2 && pod_add cpod 10.244.3.7 ||
	skip "topology setup failed"
echo_start pod1 -u pod1 10.244.1.2:5353
echo_start pod2 -u pod2 10.244.2.2:5353

# objects FILE ADDR...: Node node-a, Service dns, its slice with ADDRs.
objects() {
	local f=$1 eps="" a

	shift
	for a; do
		eps+="${eps:+,}{\"addresses\": [\"$a\"], \"conditions\": {\"ready\": true}}"
	done
	cat >"$f" <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
  "status": {"addresses": [{"type": "InternalIP", "address": "$NODE_A"}]}},
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dns", "namespace": "default"},
  "spec": {"clusterIP": "$VIP", "clusterIPs": ["$VIP"], "ipFamilies": ["IPv4"],
           "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "dns-1", "namespace": "default", "labels": {"kubernetes.io/service-name": "dns"}},
  "addressType": "IPv4", "ports": [{"name": "dns", "port": 5353, "protocol": "UDP"}],
  "endpoints": [$eps]}]}
EOF
}

# deleted: kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family="IPv4"} now.
deleted() {
	curl -s -m 5 http://127.0.0.1:10249/metrics |
		awk '$1 == "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"}" { print $2 }'
}

# answered NAME FROM TO: the distinct answering pods in the window.
answered() { flow_results "$1" "$2" "$3" | tr , '\n' | grep -vx timeout | paste -sd,; }

objects "$TMPD/objects.json" 10.244.1.2 10.244.2.2
api_start "$TMPD/objects.json"
agent_start
expect_backends udp $VIP:53 10.244.1.2:5353,10.244.2.2:5353 60

# --- a removed backend's entries ----------------------------------------------
for _ in $(seq 1 50); do
	[ -n "$(deleted)" ] && break
	sleep 0.2
done
d0=$(deleted)
assert_ne "/metrics: deleted_entries_total{ip_family=\"IPv4\"} exported" "" "$d0"
udp_flow_start cpod f 40 200 $VIP:53
for ((i = 0; i < 100; i++)); do
	[ "$(flow_count f pod1)" -ge 5 ] || [ "$(flow_count f pod2)" -ge 5 ] && break
	sleep 0.3
done
t1=$(now_ms)
gone=$(answered f 0 "$t1")
case "$gone" in
pod1) keep=pod2 goneip=10.244.1.2 keepip=10.244.2.2 ;;
pod2) keep=pod1 goneip=10.244.2.2 keepip=10.244.1.2 ;;
*) keep= ;;
esac
assert_ne "the flow sticks to one pod before the change ($gone)" "" "$keep"
[ -n "$keep" ] || ksft_exit
c=$(ct_count "udp .*src=10\.244\.3\.7 dst=$VIP .*src=${goneip//./\\.} ")
assert_eq "its conntrack entry is translated to $gone" 1 "$c"
[ "$c" = 1 ] || { log "udp conntrack entries now:"; conntrack -L -p udp 2>/dev/null | sed 's/^/#   /'; }
objects "$TMPD/one.json" $keepip
assert_rc "apply the slice without $gone" 0 apictl apply "$TMPD/one.json"
expect_backends udp $VIP:53 $keepip:5353 30
sleep 1
ta=$(now_ms)
assert_eq "conntrack entries to the removed $gone" 0 "$(ct_count "udp .*dst=$VIP .*src=${goneip//./\\.} ")"
sleep 3
tb=$(now_ms)
assert_eq "after the change (sync + 1 s): the flow is answered by" "$keep" "$(answered f "$ta" "$tb")"
assert_ge "after the change: datagrams answered by $keep" 5 "$(flow_count f "$keep" "$ta" "$tb")"
# (ipvs: with expire_nodest_conn IPVS may drop the entry itself first.)
d1=$(deleted)
if mode_is ipvs; then
	log "ipvs: agent's cleanup lines: $(grep -c 'conntrack cleanup' "$TMPD/agent.log"), deleted_entries_total $d0 -> $d1"
elif mode_is kpx; then
	assert_eq "kpx: the module deleted the entry: deleted_entries_total{IPv4} one more ($d0 -> $d1)" \
		"$((d0 + 1))" "$d1"
	assert_eq "kpx: the metric is the module's count (kpxctl stats ct_deleted_ipv4)" "$d1" \
		"$("$KPXCTL" stats --json | jq -r .ct_deleted_ipv4)"
else
	assert_ge "deleted_entries_total{IPv4} counts the agent's deletion ($d0 -> $d1)" "$((d0 + 1))" "$d1"
	assert_match "the agent logged the deletion" 'conntrack cleanup: [1-9][0-9]* stale entries deleted' \
		"$(grep 'conntrack cleanup' "$TMPD/agent.log")"
fi

# --- a deleted frontend's entries ---------------------------------------------
assert_rc "delete Service dns" 0 apictl delete Service default dns
expect_backends udp $VIP:53 absent 30
sleep 1
assert_eq "deleted Service: entries to the VIP still translated to a pod" 0 \
	"$(ct_count "udp .*dst=$VIP .*src=10\.244\.")"
udp_flow_wait f

ksft_exit
