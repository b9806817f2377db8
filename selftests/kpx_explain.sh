#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-timeout: 600
# kpx_explain: "kpxctl explain" against the packet path.  Each row of the
# table asks the module what it would do with a new connection (verdict,
# backend, masquerade), then makes that connection for real and asserts
# that it got the same: the backend that answered, the source the backend
# saw (masqueraded or not), refused or dropped.  Each row also states the
# verdict its shared case demands, so an explain that agrees with a wrong
# packet path fails too.  The frontends are those of the shared cases (the
# case number leads each row's name), programmed with kpxctl:
#   08 no endpoints (TCP, UDP), undefined ClusterIP port; 15 source ranges
#   denied and allowed; 04 eTP Local from outside, from a pod, from the
#   node, with no local endpoint; 06 hairpin; 03 affinity miss then hits;
#   42 masquerade of external vs local sources; every scheduler (rr, wrr,
#   sh, mh, lc, random).
#
#   cli 10.0.1.2 --v-cli--> node 10.0.0.1 (kpx.ko) --v-podN--> podN 10.244.N.2:8080
#   local CIDR (kpxctl config): 10.244.0.0/16
. "$(dirname "$0")/lib.sh"

require_guest
require_module
require_file "$KPXCTL" "$ECHO_BIN" "$CLIENT_BIN"
command -v jq >/dev/null || skip "jq missing"
setup_trap
dmesg_mark

node_setup && cli_setup && pods_setup 4 || skip "topology setup failed"
for i in 1 2 3 4; do
	echo_start "pod$i" "pod$i" "10.244.$i.2:8080"
done
P=(- 10.244.1.2:8080 10.244.2.2:8080 10.244.3.2:8080 10.244.4.2:8080)
ROWS=0

assert_rc "config local CIDR" 0 "$KPXCTL" config --local-cidr 10.244.0.0/16

# explain PROTO SRC DST [OPTS...]: kpxctl explain --json into EX and
# EV (verdict) EB (backend or -) EM (masquerade reason or -) EP (pick or -)
# EA (affinity or -) ES (short cut: true, false or -).
explain() {
	local p=$1 s=$2 d=$3

	shift 3
	EX=$("$KPXCTL" explain "$p" "$s:40000" "$d" "$@" --json) || {
		_fail "kpxctl explain $p $s $d $* failed"
		EX='{}'
	}
	IFS=$'\t' read -r EV EB EM EP EA ES < <(jq -r '[.verdict // "-",
		(.backend.backend // "-"), (.masquerade_reason // "-"),
		(.pick // "-"), (.affinity // "-"),
		(if has("short_circuit") then .short_circuit | tostring else "-" end)]
		| @tsv' <<<"$EX")
}

# row NAME WANT_VERDICT WANT_MASQ NS SRC PROTO DST [EXPLAIN_OPTS...]:
# explain the connection from SRC (NS's address; "node" for the node
# itself), check its verdict (and masquerade reason unless WANT_MASQ is
# "-") against the case's, then connect once from NS and check the real
# outcome against explain's answer.
row() {
	local name=$1 wv=$2 wm=$3 ns=$4 src=$5 proto=$6 dst=$7 peer
	local -a copt=()

	shift 7
	ROWS=$((ROWS + 1))
	[ "$proto" = udp ] && copt=(-u)
	explain "$proto" "$src" "$dst" "$@"
	assert_eq "$name: explain verdict" "$wv" "$EV"
	[ "$wm" = - ] || assert_eq "$name: explain masquerade" "$wm" "$EM"
	client "$ns" "${copt[@]}" -n 1 -t 1500 "$dst"
	case "$EV" in
	dnat)
		assert_eq "$name: answered" 1 "$(summary_field ok)"
		if [ "$EP" = exact ]; then
			assert_eq "$name: backend = explain's" "$EB" "$(answer_field 2)"
		else
			assert_match "$name: backend is one of the set" \
				"^10\.244\.[1-4]\.2:8080$" "$(answer_field 2)"
		fi
		peer=$(answer_field 3)
		peer=${peer#peer=}
		peer=${peer%:*}
		case "$EM" in
		node | masq | hairpin | masq-nonlocal)
			assert_ne "$name: source masqueraded as explained" "$src" "$peer" ;;
		*)
			assert_eq "$name: source kept as explained" "$src" "$peer" ;;
		esac ;;
	reject-*)
		assert_eq "$name: refused as explained" 1 "$(error_count ECONNREFUSED)" ;;
	*)
		assert_eq "$name: not answered as explained" 0 "$(summary_field ok)"
		assert_eq "$name: not refused as explained" 0 "$(error_count ECONNREFUSED)" ;;
	esac
}

# --- 08: no endpoints, undefined ClusterIP port ------------------------
"$KPXCTL" set tcp 10.96.0.80:80 --kind cluster-ip
"$KPXCTL" set udp 10.96.0.80:53 --kind cluster-ip
row "08 tcp ClusterIP without endpoints" reject-no-backend - cli $CLI4 tcp 10.96.0.80:80 --iif v-cli
row "08 udp ClusterIP without endpoints" reject-no-backend - cli $CLI4 udp 10.96.0.80:53 --iif v-cli
"$KPXCTL" set tcp 10.96.0.81:80 "${P[1]}" --kind cluster-ip --cluster-ip
row "08 undefined port of a ClusterIP" reject-undefined-port - cli $CLI4 tcp 10.96.0.81:81 --iif v-cli
row "08 not a Service address" accept - cli $CLI4 tcp 10.96.0.99:80 --iif v-cli
"$KPXCTL" set tcp 203.0.113.80:80 --kind load-balancer --drop-empty
row "08 LB IP without endpoints, drop-empty" drop-no-backend - cli $CLI4 tcp 203.0.113.80:80 --iif v-cli

# --- 15: loadBalancerSourceRanges -------------------------------------
"$KPXCTL" set tcp 203.0.113.15:80 "${P[1]}" --kind load-balancer \
	--masq-nonlocal --source-range 198.51.100.0/24
row "15 source range denied" drop-source-range - cli $CLI4 tcp 203.0.113.15:80 --iif v-cli
"$KPXCTL" set tcp 203.0.113.16:80 "${P[1]}" --kind load-balancer \
	--masq-nonlocal --source-range 198.51.100.0/24 --source-range 10.0.1.0/24
row "15 source range allowed" dnat masq-nonlocal cli $CLI4 tcp 203.0.113.16:80 --iif v-cli
assert_eq "15 allowed: explain's range verdict" allowed "$(jq -r .source_ranges <<<"$EX")"

# --- 04: externalTrafficPolicy Local ----------------------------------
"$KPXCTL" set tcp 10.96.0.40:80 "${P[1]}" "${P[2]}" --scheduler rr --kind cluster-ip
"$KPXCTL" set tcp $NODE4:30080 "${P[1]}" --kind node-port --ext-local 10.96.0.40:80
row "04 eTP Local from outside: local endpoint, client IP kept" dnat no cli $CLI4 tcp $NODE4:30080 --iif v-cli
assert_eq "04 from outside: no short cut" false "$ES"
assert_eq "04 from outside: the local endpoint" "${P[1]}" "$EB"
row "04 eTP Local from a pod: short cut, source kept" dnat no-short-circuit pod3 10.244.3.2 tcp $NODE4:30080 --iif v-pod3
assert_eq "04 from a pod: short cut" true "$ES"
row "04 eTP Local from a pod again: rr's next" dnat no-short-circuit pod3 10.244.3.2 tcp $NODE4:30080 --iif v-pod3
row "04 eTP Local from the node: short cut, masqueraded" dnat node node $NODE4 tcp $NODE4:30080 --from-node
"$KPXCTL" set tcp 10.96.0.41:80 "${P[2]}" --kind cluster-ip
"$KPXCTL" set tcp $NODE4:30081 --kind node-port --drop-empty --ext-local 10.96.0.41:80
row "04 eTP Local, no local endpoint, from outside" drop-no-backend - cli $CLI4 tcp $NODE4:30081 --iif v-cli
row "04 eTP Local, no local endpoint, from a pod" dnat no-short-circuit pod3 10.244.3.2 tcp $NODE4:30081 --iif v-pod3
assert_eq "04 no local endpoint, from a pod: the cluster endpoint" "${P[2]}" "$EB"

# --- 06: hairpin ------------------------------------------------------
"$KPXCTL" set tcp 10.96.0.60:80 "${P[1]}" --kind cluster-ip
row "06 hairpin through the own ClusterIP" dnat hairpin pod1 10.244.1.2 tcp 10.96.0.60:80 --iif v-pod1
row "06 another pod, same ClusterIP" dnat no pod2 10.244.2.2 tcp 10.96.0.60:80 --iif v-pod2

# --- 03: ClientIP affinity --------------------------------------------
"$KPXCTL" set tcp 10.96.0.30:80 "${P[1]}" "${P[2]}" "${P[3]}" --scheduler rr \
	--affinity 60 --kind cluster-ip
row "03 affinity: first connection, miss" dnat no cli $CLI4 tcp 10.96.0.30:80 --iif v-cli
assert_eq "03 first: affinity miss" miss "$EA"
first=$EB
for k in 2 3; do
	row "03 affinity: connection $k, hit" dnat no cli $CLI4 tcp 10.96.0.30:80 --iif v-cli
	assert_eq "03 connection $k: affinity hit" hit "$EA"
	assert_eq "03 connection $k: the first backend" "$first" "$EB"
done
assert_match "03 hit: the entry's age" '^[0-9]+$' "$(jq -r .affinity_age_ms <<<"$EX")"
row "03 affinity: another client, miss" dnat no pod4 10.244.4.2 tcp 10.96.0.30:80 --iif v-pod4
assert_eq "03 another client: affinity miss" miss "$EA"

# --- 42: masquerade by source locality ---------------------------------
"$KPXCTL" set tcp $NODE4:30090 "${P[2]}" --kind node-port --masq-nonlocal
row "42 NodePort, eTP Cluster, external source: masqueraded" dnat masq-nonlocal cli $CLI4 tcp $NODE4:30090 --iif v-cli
assert_eq "42 external: source external" external "$(jq -r .source <<<"$EX")"
row "42 NodePort, eTP Cluster, pod source: kept" dnat no-local-source pod3 10.244.3.2 tcp $NODE4:30090 --iif v-pod3
assert_eq "42 pod: source local by CIDR" local-cidr "$(jq -r .source <<<"$EX")"
"$KPXCTL" set tcp 10.96.0.42:80 "${P[2]}" --kind cluster-ip --masq
row "42 masquerade-all ClusterIP" dnat masq pod3 10.244.3.2 tcp 10.96.0.42:80 --iif v-pod3

# --- schedulers --------------------------------------------------------
"$KPXCTL" set tcp 10.96.0.50:80 "${P[@]:1}" --scheduler rr --kind cluster-ip
for k in 1 2 3 4 5; do
	row "sched rr, connection $k" dnat no cli $CLI4 tcp 10.96.0.50:80 --iif v-cli
	assert_eq "rr $k: exact" exact "$EP"
done
"$KPXCTL" set tcp 10.96.0.51:80 "${P[1]}@3" "${P[2]}" --scheduler wrr --kind cluster-ip
for k in 1 2 3 4; do
	row "sched wrr, connection $k" dnat no cli $CLI4 tcp 10.96.0.51:80 --iif v-cli
done
"$KPXCTL" set tcp 10.96.0.52:80 "${P[@]:1}" --scheduler sh --kind cluster-ip
row "sched sh from cli" dnat no cli $CLI4 tcp 10.96.0.52:80 --iif v-cli
row "sched sh from pod2" dnat - pod2 10.244.2.2 tcp 10.96.0.52:80 --iif v-pod2
"$KPXCTL" set tcp 10.96.0.53:80 "${P[@]:1}" --scheduler mh --kind cluster-ip
row "sched mh from cli" dnat no cli $CLI4 tcp 10.96.0.53:80 --iif v-cli
row "sched mh from pod4" dnat - pod4 10.244.4.2 tcp 10.96.0.53:80 --iif v-pod4
"$KPXCTL" set tcp 10.96.0.54:80 "${P[@]:1}" --kind cluster-ip
row "sched random" dnat no cli $CLI4 tcp 10.96.0.54:80 --iif v-cli
assert_eq "random: explain says random" random "$EP"
assert_eq "random: over 4 backends" 4 "$(jq -r .backends <<<"$EX")"

# lc: one connection held open on one of two backends; explain names the
# other, exactly, and the next connection goes there.
"$KPXCTL" set tcp 10.96.0.55:80 "${P[1]}" "${P[2]}" --scheduler lc --kind cluster-ip
explain tcp $CLI4 10.96.0.55:80 --iif v-cli
assert_eq "lc idle: a tie between the two" least-loaded "$EP"
/usr/sbin/ip netns exec cli "$CLIENT_BIN" --hold 60000 -t 3000 10.96.0.55:80 \
	>"$TMPD/lc_hold.out" 2>&1 &
PIDS+=($!)
for k in $(seq 1 50); do
	grep -q '^hold connected' "$TMPD/lc_hold.out" && break
	sleep 0.2
done
held=$(awk '/^hold connected/ { print $4; exit }' "$TMPD/lc_hold.out")
assert_match "lc: the held connection's backend" '^10\.244\.[12]\.2:8080$' "$held"
row "sched lc with one backend busy" dnat no cli $CLI4 tcp 10.96.0.55:80 --iif v-cli
assert_eq "lc busy: exact" exact "$EP"
assert_ne "lc busy: not the held connection's backend" "$held" "$EB"

# --- explain changed nothing --------------------------------------------
stats_json=$("$KPXCTL" stats --json)
explain tcp $CLI4 10.96.0.50:80 --iif v-cli
rr_next=$EB
for k in 1 2 3; do
	explain tcp $CLI4 10.96.0.80:80 --iif v-cli
	explain tcp $CLI4 203.0.113.15:80 --iif v-cli
	explain tcp $CLI4 10.96.0.50:80 --iif v-cli
	assert_eq "explain $k: rr cursor not advanced" "$rr_next" "$EB"
done
assert_eq "ten explains: namespace counters unchanged" "$stats_json" "$("$KPXCTL" stats --json)"

# --- errors --------------------------------------------------------------
assert_rc "explain: unknown interface is a usage error" 2 "$KPXCTL" explain tcp $CLI4:1 10.96.0.50:80 --iif nosuch0
assert_rc "explain: mixed families" 2 "$KPXCTL" explain tcp $CLI4:1 "[fd00::1]:80"
command -v setpriv >/dev/null &&
	assert_rc "explain: unprivileged works" 0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$KPXCTL" explain tcp $CLI4:1 10.96.0.50:80
log "rows: $ROWS"
assert_ge "at least 20 rows" 20 "$ROWS"
assert_dmesg_clean kpx_explain
ksft_exit
