#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_clusterip: a ClusterIP frontend with three backends, programmed with
# kpxctl, load-balances TCP and UDP over IPv4 and IPv6, for clients routed
# through the node (PRE_ROUTING) and for clients on the node (LOCAL_OUT);
# backends see the client's real address (no SNAT); the module's counters
# (kpxctl list --json and /proc/net/kpx/services) match the connections.
#
#   cli 10.0.1.2 --veth--> node (kpx.ko) --veth--> pod1 10.244.1.2 :8080 tcp/udp
#   fd00:10:1::2           10.0.0.1       --veth--> pod2 10.244.2.2
#                          fd00:10::1     --veth--> pod3 10.244.3.2
#                                         (+ fd00:10:244:N::2)
#   VIPs: tcp 10.96.0.10:80, udp 10.96.0.10:53, tcp [fd00:10:96::10]:80,
#         udp [fd00:10:96::10]:53 -> podN:8080
. "$(dirname "$0")/lib.sh"

require_guest
require_module
require_file "$KPXCTL" "$ECHO_BIN" "$CLIENT_BIN"
setup_trap

web_pods 3 dual || skip "topology setup failed"

V4=10.96.0.10 V6=fd00:10:96::10
be4=(10.244.1.2:8080 10.244.2.2:8080 10.244.3.2:8080)
be6=("[fd00:10:244:1::2]:8080" "[fd00:10:244:2::2]:8080" "[fd00:10:244:3::2]:8080")
stats_mark
assert_rc "kpxctl set tcp $V4:80" 0 "$KPXCTL" set tcp $V4:80 "${be4[@]}"
assert_rc "kpxctl set udp $V4:53" 0 "$KPXCTL" set udp $V4:53 "${be4[@]}"
assert_rc "kpxctl set tcp [$V6]:80" 0 "$KPXCTL" set tcp "[$V6]:80" "${be6[@]}"
assert_rc "kpxctl set udp [$V6]:53" 0 "$KPXCTL" set udp "[$V6]:53" "${be6[@]}"

# run_case LABEL NS PEER N [-u] VIP:PORT: N attempts from NS must all be
# answered, by all three pods, each on its own address (DNAT done), each
# seeing PEER as the source (no SNAT).  Adds the per-pod counts to SEEN_*.
declare -A SEEN
run_case() {
	local label=$1 ns=$2 peer=$3 n=$4 i got sum=0 bad line

	shift 4
	client "$ns" -n "$n" -t 2000 "$@"
	assert_eq "$label: attempts ok" "$n" "$(summary_field ok)"
	assert_eq "$label: answering backends" "pod1 pod2 pod3" "$(ident_names)"
	for i in 1 2 3; do
		got=$(ident_count "pod$i")
		assert_gt "$label: answers from pod$i" 0 "$got"
		sum=$((sum + got))
		SEEN[$label:pod$i]=$got
	done
	assert_eq "$label: sum of answers" "$n" "$sum"
	# Every answer: "podN <podN's address>:8080 peer=<client>:<port>".
	bad=
	for line in "${CL_ANS[@]}"; do
		[[ "$line" =~ ^pod([1-3])\ (10\.244\.([1-3])\.2|\[fd00:10:244:([1-3])::2\]):8080\ peer=$peer:[0-9]+$ ]] &&
			[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[3]}${BASH_REMATCH[4]}" ] ||
			bad+="[$line] "
	done
	assert_eq "$label: answers with backend address and real client address" "" "$bad"
	client_show_if_failed
}

run_case "tcp4 cli" cli "$CLI4" 60 "$V4:80"
run_case "tcp4 node" node "$NODE4" 60 "$V4:80"
run_case "udp4 cli" cli "$CLI4" 30 -u "$V4:53"
run_case "udp4 node" node "$NODE4" 30 -u "$V4:53"
run_case "tcp6 cli" cli "\\[$CLI6\\]" 30 "[$V6]:80"
run_case "tcp6 node" node "\\[$NODE6\\]" 30 "[$V6]:80"
run_case "udp6 cli" cli "\\[$CLI6\\]" 30 -u "[$V6]:53"
run_case "udp6 node" node "\\[$NODE6\\]" 30 -u "[$V6]:53"

# Counters: one per new connection (kpx_client gives each UDP attempt a
# source port of its own, so a new conntrack entry), and each backend's equals
# the answers it gave.
kpx_snapshot
log "kpxctl list --json: $KS_JSON"
log "/proc/net/kpx/services:"
sed 's/^/#   /' /proc/net/kpx/services
check_counters() { # PROTO FAMILY VIP PORT TOTAL LABEL_CLI LABEL_NODE BACKENDS...
	local proto=$1 vip=$2 port=$3 total=$4 lc=$5 ln=$6 i=0 b addr bport key

	shift 6
	key=$vip:$port
	[[ "$vip" == *:* ]] && key="[$vip]:$port"
	assert_eq "$proto $key: json conns" "$total" "$(svc_counter "$proto" "$vip" "$port" conns)"
	assert_eq "$proto $key: json rejects" 0 "$(svc_counter "$proto" "$vip" "$port" rejects)"
	assert_eq "$proto $key: proc conns" "$total" "$(proc_svc "$proto" "$key" conns)"
	assert_eq "$proto $key: proc rejects" 0 "$(proc_svc "$proto" "$key" rejects)"
	for b; do
		i=$((i + 1))
		addr=${b%:*} bport=${b##*:}
		addr=${addr#[} addr=${addr%]}
		want=$((SEEN[$lc:pod$i] + SEEN[$ln:pod$i]))
		assert_eq "$proto $key backend $b: json conns" "$want" \
			"$(be_counter "$proto" "$vip" "$port" "$addr" "$bport")"
		assert_eq "$proto $key backend $b: proc conns" "$want" \
			"$(proc_be "$proto" "$key" "$b")"
	done
}
check_counters tcp $V4 80 120 "tcp4 cli" "tcp4 node" "${be4[@]}"
check_counters udp $V4 53 60 "udp4 cli" "udp4 node" "${be4[@]}"
check_counters tcp $V6 80 60 "tcp6 cli" "tcp6 node" "${be6[@]}"
check_counters udp $V6 53 60 "udp6 cli" "udp6 node" "${be6[@]}"

stats_read
log "kpxctl stats: ${ST[*]@K}"
assert_eq "stats services" 4 "${ST[services]}"
assert_eq "stats backends" 12 "${ST[backends]}"
# Namespace totals count since module load: compare the changes.
assert_eq "stats conns, change" 300 "$(stats_delta conns)"
assert_eq "stats rejects, change" 0 "$(stats_delta rejects)"
assert_eq "stats drops, change" 0 "$(stats_delta drops)"

# Backends see the client address, so the pods' conntrack has no SNAT.
assert_eq "node conntrack module has no SNAT of pod traffic" "" \
	"$(grep -l 'nf_nat_masquerade' /proc/modules 2>/dev/null)"

ksft_exit
