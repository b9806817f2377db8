#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# lib.sh: shared helpers of the kpx VM selftests (sourced by kpx_*.sh).
#
# Topology (routed, no bridge: every reply crosses the node's conntrack):
#
#            cli netns                    node = VM root netns            pod netns podN
#   +---------------------+        +------------------------------+     +------------------+
#   | eth0 10.0.1.2/24    |--veth--| v-cli 10.0.1.1/24            |     |                  |
#   |      fd00:10:1::2/64|        |       fd00:10:1::1/64        |     | eth0 10.244.N.2  |
#   | default via node    |        | v-podN 169.254.1.1, fe80::1  |-----|   fd00:10:244:N::2|
#   +---------------------+        |  + host route to each pod IP |veth | default via      |
#                                  | kpx-node (dummy) 10.0.0.1,   |     |   169.254.1.1 /  |
#                                  |   fd00:10::1; VIP ranges     |     |   fe80::1        |
#                                  |   10.96.0.0/12, fd00:10:96::/108 +------------------+
#                                  |   routed to it (LOCAL_OUT    |
#                                  |   clients need a route)      |
#                                  +------------------------------+
#
# Pods get host routes (/32, /128) instead of a /24 per pod so that any
# endpoint IP (e.g. from real EndpointSlices) can be a pod; the node side of
# every pod veth is the same link-local gateway.  Clients in "cli" take the
# PRE_ROUTING path; clients in the root netns take the LOCAL_OUT path.

set -u

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SELFTESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SELFTESTS/.." && pwd)
KPXCTL=${KPXCTL:-$REPO/agent/kpxctl}
KPX_AGENT=${KPX_AGENT:-$REPO/agent/kpx-agent}
KPX_KO=${KPX_KO:-$REPO/kmod/kpx.ko}
ECHO_BIN=$SELFTESTS/tools/kpx_echo
CLIENT_BIN=$SELFTESTS/tools/kpx_client
NODE4=10.0.0.1
NODE6=fd00:10::1
CLI4=10.0.1.2
CLI6=fd00:10:1::2

TEST_NAME=$(basename "$0" .sh)
TMPD=$(mktemp -d "/tmp/$TEST_NAME.XXXXXX")
FAILS=0
CHECKS=0
PIDS=()
NETNS=()
. "$SELFTESTS/mode_lib.sh"

ip() { /usr/sbin/ip "$@"; }

# log MSG...: a diagnostic line (TAP comment).
log() { echo "# $*"; }

# now: wall clock with milliseconds, for timing notes.
now() { date -u +%T.%3N; }

# skip REASON: end the test as skipped.
skip() {
	log "SKIP: $*"
	exit $KSFT_SKIP
}

# require_guest: skip unless inside the test VM.
require_guest() {
	[ -e /etc/kpx-guest ] || skip "not in the kpx test VM (/etc/kpx-guest)"
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# require_file PATH...: skip if a needed file is missing.
require_file() {
	local f

	for f; do
		[ -e "$f" ] || skip "missing $f"
	done
}

# require_module: the kpx module must be loaded (run_guest.sh loads it);
# in another proxy mode (mode_lib.sh) the agent works without it.
require_module() {
	mode_is kpx || return 0
	grep -q '^kpx ' /proc/modules || skip "kpx module not loaded"
}

# --- assertions: each prints what was expected and what was got ----------

_pass() { CHECKS=$((CHECKS + 1)); log "ok: $*"; }
_fail() {
	CHECKS=$((CHECKS + 1))
	FAILS=$((FAILS + 1))
	log "FAIL: $*"
}

# assert_eq DESC EXPECTED GOT
assert_eq() {
	_mode_na "$1" "$3" && return 0
	if [ "$2" = "$3" ]; then
		_pass "$1 == $2"
	else
		_fail "$1: expected '$2', got '$3'"
	fi
}

# assert_ne DESC UNEXPECTED GOT
assert_ne() {
	_mode_na "$1" "$3" && return 0
	if [ "$2" != "$3" ]; then
		_pass "$1 != $2 (got '$3')"
	else
		_fail "$1: expected anything but '$2'"
	fi
}

# assert_gt DESC LIMIT GOT (integers)
assert_gt() {
	_mode_na "$1" "$3" && return 0
	if [[ "$3" =~ ^-?[0-9]+$ ]] && [ "$3" -gt "$2" ]; then
		_pass "$1: $3 > $2"
	else
		_fail "$1: expected > $2, got '$3'"
	fi
}

# assert_ge DESC LIMIT GOT (integers)
assert_ge() {
	_mode_na "$1" "$3" && return 0
	if [[ "$3" =~ ^-?[0-9]+$ ]] && [ "$3" -ge "$2" ]; then
		_pass "$1: $3 >= $2"
	else
		_fail "$1: expected >= $2, got '$3'"
	fi
}

# assert_lt_ms DESC LIMIT GOT (decimal milliseconds)
assert_lt_ms() {
	_mode_na "$1" "$3" && return 0
	if [[ "$3" =~ ^[0-9]+(\.[0-9]+)?$ ]] &&
	   awk -v g="$3" -v l="$2" 'BEGIN { exit !(g + 0 < l + 0) }'; then
		_pass "$1: $3 ms < $2 ms"
	else
		_fail "$1: expected < $2 ms, got '$3' ms"
	fi
}

# s_to_ms SECONDS: decimal seconds to milliseconds (anything else unchanged)
s_to_ms() {
	if [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		awk -v t="$1" 'BEGIN { printf "%.0f\n", t * 1000 }'
	else
		echo "$1"
	fi
}

# assert_match DESC REGEX TEXT (extended regex)
assert_match() {
	_mode_na "$1" "$3" && return 0
	if [[ "$3" =~ $2 ]]; then
		_pass "$1 =~ /$2/"
	else
		_fail "$1: expected a match of /$2/, got '$3'"
	fi
}

# assert_no_match DESC REGEX TEXT
assert_no_match() {
	_mode_na "$1" "$3" && return 0
	if [[ "$3" =~ $2 ]]; then
		_fail "$1: expected no match of /$2/, got '$3'"
	else
		_pass "$1 !~ /$2/"
	fi
}

# assert_rc DESC EXPECTED_STATUS CMD...: run CMD, compare its exit status.
assert_rc() {
	local desc=$1 want=$2 rc

	shift 2
	"$@" >"$TMPD/rc.out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		_pass "$desc: exit status $rc"
	else
		_fail "$desc: expected exit status $want, got $rc; output: $(head -c 400 "$TMPD/rc.out")"
	fi
}

# ksft_exit: end the test with pass or fail from the assertions made.
ksft_exit() {
	if [ "$FAILS" -gt 0 ]; then
		log "$TEST_NAME: $FAILS of $CHECKS checks failed"
		exit $KSFT_FAIL
	fi
	[ "$CHECKS" -gt 0 ] || skip "no check was made"
	log "$TEST_NAME: all $CHECKS checks passed"
	exit $KSFT_PASS
}

# --- topology ------------------------------------------------------------

# ns_sysctls NS: test-friendly settings in a netns ("" = root netns).
ns_sysctls() {
	local x=()

	[ -z "$1" ] || x=(ip netns exec "$1")
	"${x[@]}" sysctl -q -w net.ipv4.icmp_ratelimit=0 \
		net.ipv6.icmp.ratelimit=0 net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1 net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 >/dev/null
}

# node_setup: the node's own address (dummy kpx-node) and VIP routes.
node_setup() {
	ns_sysctls ""
	modprobe dummy 2>/dev/null
	ip link add kpx-node type dummy || return 1
	ip link set kpx-node up
	ip addr add $NODE4/32 dev kpx-node
	ip addr add $NODE6/128 dev kpx-node nodad
	ip route add 10.96.0.0/12 dev kpx-node src $NODE4
	ip -6 route add fd00:10:96::/108 dev kpx-node src $NODE6
}

# cli_setup: the client netns "cli" routed through the node.
cli_setup() {
	ip netns add cli || return 1
	NETNS+=(cli)
	ns_sysctls cli
	ip link add v-cli type veth peer name eth0 netns cli
	ip addr add 10.0.1.1/24 dev v-cli
	ip addr add fd00:10:1::1/64 dev v-cli nodad
	ip link set v-cli up
	ip -n cli link set lo up
	ip -n cli link set eth0 up
	ip -n cli addr add $CLI4/24 dev eth0
	ip -n cli addr add $CLI6/64 dev eth0 nodad
	ip -n cli route add default via 10.0.1.1
	ip -n cli -6 route add default via fd00:10:1::1
}

# pod_add NAME [ADDR...]: a pod netns NAME with the IPv4/IPv6 addresses
# given, all reachable from the node through veth v-NAME (max 13 chars).
pod_add() {
	local name=$1 a

	shift
	ip netns add "$name" || return 1
	NETNS+=("$name")
	ns_sysctls "$name"
	ip link add "v-$name" type veth peer name eth0 netns "$name" || return 1
	ip addr add 169.254.1.1/32 dev "v-$name"
	ip addr add fe80::1/64 dev "v-$name" nodad
	ip link set "v-$name" up
	ip -n "$name" link set lo up
	ip -n "$name" link set eth0 up
	ip -n "$name" route add 169.254.1.1 dev eth0 scope link
	ip -n "$name" route add default via 169.254.1.1 dev eth0
	ip -n "$name" -6 route add default via fe80::1 dev eth0
	for a; do
		if [[ "$a" == *:* ]]; then
			ip -n "$name" addr add "$a/128" dev eth0 nodad
			ip -6 route add "$a/128" dev "v-$name" src $NODE6
		else
			ip -n "$name" addr add "$a/32" dev eth0
			ip route add "$a/32" dev "v-$name" src $NODE4
		fi
	done
}

# pods_setup N: pods pod1..podN, pod i = 10.244.i.2 + fd00:10:244:i::2.
pods_setup() {
	local i

	for i in $(seq 1 "$1"); do
		pod_add "pod$i" "10.244.$i.2" "fd00:10:244:$i::2" || return 1
	done
}

# echo_start NS ID ADDR:PORT...: start kpx_echo in NS (-t/-u may precede ID).
echo_start() {
	local ns=$1 pid

	shift
	pid=$(ip netns exec "$ns" "$ECHO_BIN" -d "$@") || {
		_fail "kpx_echo $* in $ns did not start"
		return 1
	}
	PIDS+=("$pid")
}

# web_pods N [dual]: the node, cli and pods pod1..podN (node_setup,
# cli_setup, pods_setup), each pod serving kpx_echo with ID podI on
# 10.244.I.2:8080 (dual: and [fd00:10:244:I::2]:8080).  1 if the topology
# could not be built; an echo server that does not start is a failure of
# the test (echo_start).
web_pods() {
	local i

	node_setup && cli_setup && pods_setup "$1" || return 1
	for i in $(seq 1 "$1"); do
		if [ "${2:-}" = dual ]; then
			echo_start "pod$i" "pod$i" "10.244.$i.2:8080" "[fd00:10:244:$i::2]:8080"
		else
			echo_start "pod$i" "pod$i" "10.244.$i.2:8080"
		fi
	done
	return 0
}

# in_ns NS CMD...: run CMD in netns NS ("" or "node" = the root netns).
in_ns() {
	local ns=$1

	shift
	if [ -z "$ns" ] || [ "$ns" = node ]; then
		"$@"
	else
		ip netns exec "$ns" "$@"
	fi
}

# Exec of a dynamically linked program costs 0.1-1 s under TCG, so the
# helpers below parse in bash where they can.

# client NS ARGS...: run kpx_client in NS; its output is kept in
# $TMPD/client.out and parsed for the accessors below.  With CLIENT_JSON
# set (the table-driven runner) it runs with --json, its objects are read
# with jq (parse_client_json) and its stderr is kept in $TMPD/client.err.
client() {
	local ns=$1 rc

	shift
	CLIENT_FAILS0=$FAILS
	if [ -n "${CLIENT_JSON:-}" ]; then
		in_ns "$ns" "$CLIENT_BIN" --json "$@" >"$TMPD/client.out" 2>"$TMPD/client.err"
		rc=$?
		parse_client_json "$TMPD/client.out"
		return $rc
	fi
	in_ns "$ns" "$CLIENT_BIN" "$@" >"$TMPD/client.out" 2>&1
	rc=$?
	parse_client "$TMPD/client.out"
	return $rc
}

# client_all WANT NS ARGS...: client NS ARGS..., run again (4 runs at most)
# while every attempt was answered, only by backends in WANT, but not yet by
# all of them.  A random choice leaves one of 2 backends out of 8 attempts
# 0.8 % of the time and one of 3 out of 18 attempts 0.2 %; the suite makes
# dozens of such checks, so one run each would fail a CI in a few percent.
# WANT is "addr:port,..." (as answer_field 2 prints it) or "ID ID ..." (as
# ident_names prints it).  Afterwards CL_ANS and CL_IDENT hold the answers
# of every run, CL_SUM the last run's summary: an "ok" equal to the
# attempts of one run still means every attempt of every run was answered.
client_all() {
	local want=$1 ns=$2 run rc got k
	local -a ans=()
	local -A ids=()

	shift 2
	for ((run = 1; run <= 4; run++)); do
		client "$ns" "$@"
		rc=$?
		ans+=("${CL_ANS[@]}")
		for k in "${!CL_IDENT[@]}"; do
			ids[$k]=$((${ids[$k]:-0} + CL_IDENT[$k]))
		done
		CL_ANS=("${ans[@]}")
		CL_IDENT=()
		for k in "${!ids[@]}"; do
			CL_IDENT[$k]=${ids[$k]}
		done
		[ "${CL_SUM[failed]:-1}" = 0 ] || break
		if [[ "$want" == *:* ]]; then
			got=$(answer_field 2)
		else
			got=$(sorted_words "${!CL_IDENT[@]}")
		fi
		if [ "$got" = "$want" ] || ! words_within "${got//,/ }" "${want//,/ }"; then
			break
		fi
		log "client_all: answered by $got of $want after run $run, once more"
	done
	return $rc
}

# words_within "A..." "B...": every word of the first list is in the second.
words_within() {
	local w

	for w in $1; do
		[[ " $2 " == *" $w "* ]] || return 1
	done
}

# client_show_if_failed: print the last client's output if an assertion
# failed since it ran.
client_show_if_failed() {
	[ "$FAILS" = "${CLIENT_FAILS0:-$FAILS}" ] && return 0
	log "kpx_client output:"
	sed 's/^/#   /' "$TMPD/client.out"
	[ -z "${CLIENT_JSON:-}" ] || sed 's/^/#   /' "$TMPD/client.err"
}

# parse_client FILE: load a kpx_client output into CL_SUM (summary fields),
# CL_IDENT (answers per ID), CL_ERR (failures per errno) and CL_ANS (the
# answer lines).
declare -A CL_SUM CL_IDENT CL_ERR
CL_ANS=()
CL_FILE=
parse_client() {
	local a b c rest kv

	CL_SUM=() CL_IDENT=() CL_ERR=() CL_ANS=()
	CL_FILE=$1
	while read -r a b c rest; do
		case "$a" in
		summary)
			for kv in $b $c $rest; do
				CL_SUM[${kv%%=*}]=${kv#*=}
			done ;;
		ident) CL_IDENT[$b]=$c ;;
		error) CL_ERR[$b]=$c ;;
		*) [ "$b" = ok ] && CL_ANS+=("$rest") ;;
		esac
	done <"$1"
}

# parse_client_json FILE: load a kpx_client --json output (one object per
# attempt, then {"summary": ...}; tools/kpx_client.c) into the same arrays
# as parse_client, with one jq run: CL_ANS holds "ID BACKEND peer=SOURCE"
# per answered attempt, as the text output's answers.
parse_client_json() {
	local k a b c

	CL_SUM=() CL_IDENT=() CL_ERR=() CL_ANS=()
	CL_FILE=$1
	while IFS=$'\t' read -r k a b c; do
		case "$k" in
		S) CL_SUM[$a]=$b ;;
		I) CL_IDENT[$a]=$b ;;
		E) CL_ERR[$a]=$b ;;
		A) CL_ANS+=("$a $b peer=$c") ;;
		esac
	done < <(jq -r 'if .summary then
			(.summary | to_entries[] | select(.value | type != "object") |
				["S", .key, (.value | tostring)]),
			(.summary.idents | to_entries[] | ["I", .key, (.value | tostring)]),
			(.summary.errors | to_entries[] | ["E", .key, (.value | tostring)])
		elif .verdict == "answered" then ["A", .ident, .backend, .source]
		else empty end | @tsv' "$1" 2>/dev/null)
}

# _client_file [FILE]: re-parse if another file than the last is asked for.
_client_file() {
	{ [ -z "${1:-}" ] || [ "$1" = "$CL_FILE" ]; } && return 0
	if [ -n "${CLIENT_JSON:-}" ]; then
		parse_client_json "$1"
	else
		parse_client "$1"
	fi
}

# summary_field FIELD [FILE]: a field of kpx_client's summary line.
summary_field() {
	_client_file "${2:-}"
	echo "${CL_SUM[$1]:-}"
}

# ident_count ID [FILE]: attempts kpx_client saw answered by ID (0 if none).
ident_count() {
	_client_file "${2:-}"
	echo "${CL_IDENT[$1]:-0}"
}

# error_count ERRNO [FILE]: attempts that failed with ERRNO (0 if none).
error_count() {
	_client_file "${2:-}"
	echo "${CL_ERR[$1]:-0}"
}

# ident_names [FILE]: the distinct answering IDs, sorted, space separated.
ident_names() {
	_client_file "${1:-}"
	sorted_words "${!CL_IDENT[@]}"
}

# answers [FILE]: the answer lines of successful attempts.
answers() {
	_client_file "${1:-}"
	[ ${#CL_ANS[@]} = 0 ] || printf '%s\n' "${CL_ANS[@]}"
}

# answer_field N [FILE]: the distinct Nth words of the answers (1 = ID,
# 2 = backend address:port, 3 = peer=...), sorted, comma separated.
answer_field() {
	local -A seen=()
	local line w

	_client_file "${2:-}"
	for line in "${CL_ANS[@]}"; do
		read -r -a w <<<"$line"
		seen[${w[$(($1 - 1))]:-}]=1
	done
	local out
	out=$(sorted_words "${!seen[@]}")
	echo "${out// /,}"
}

# sorted_words WORD...: the words sorted (byte order), space separated.
sorted_words() {
	local -a v=("$@")
	local i j t n=$#

	for ((i = 1; i < n; i++)); do
		t=${v[i]}
		for ((j = i - 1; j >= 0; j--)); do
			[[ "${v[j]}" > "$t" ]] || break
			v[j + 1]=${v[j]}
		done
		v[j + 1]=$t
	done
	echo "${v[*]}"
}

# kpx_json [NS]: "kpxctl list --json" of the root netns (or of netns NS).
kpx_json() {
	in_ns "${1:-}" "$KPXCTL" list --json
}

# kpx_snapshot [NS]: load "kpxctl list --json" (one kpxctl, one jq) into
# KS, read by svc_counter and be_counter; also kept raw in KS_JSON.
declare -A KS
KS_JSON=
kpx_snapshot() {
	local kind p v port f1 f2 f3 f4

	KS=()
	KS_JSON=$MODE_NA
	mode_is kpx || return 0
	KS_JSON=$(kpx_json "${1:-}")
	while read -r kind p v port f1 f2 f3 f4; do
		case "$kind" in
		svc)
			KS["$p $v $port conns"]=$f1
			KS["$p $v $port rejects"]=$f2
			KS["$p $v $port flags"]=$f3
			KS["$p $v $port nbackends"]=$f4 ;;
		be)
			KS["$p $v $port $f1 $f2 conns"]=$f3
			KS["$p $v $port $f1 $f2 weight"]=$f4 ;;
		esac
	done < <(jq -r '.services[] | . as $s |
		"svc \(.protocol) \(.vip) \(.port) \(.conns) \(.rejects) \(.flags | tojson) \(.backends | length)",
		(.backends[] | "be \($s.protocol) \($s.vip) \($s.port) \(.addr) \(.port) \(.conns) \(.weight)")' <<<"$KS_JSON")
}

# svc_counter PROTO VIP PORT FIELD: conns, rejects, flags (JSON) or
# nbackends of a frontend in the last kpx_snapshot ("none" if absent).
# (In another proxy mode: nbackends from the agent, the rest $MODE_NA.)
svc_counter() {
	local f b

	if ! mode_is kpx; then
		read -r f b < <(agent_frontend "$1" "$2:$3")
		if [ "$4" != nbackends ]; then echo "$MODE_NA"
		elif [ "$f" = absent ]; then echo none
		elif [ "$b" = - ]; then echo 0
		else tr ',' '\n' <<<"$b" | wc -l
		fi
		return
	fi
	echo "${KS["$1 $2 $3 $4"]:-none}"
}

# be_counter PROTO VIP PORT BACKEND_ADDR BACKEND_PORT: a backend's conns.
be_counter() { mode_is kpx || { echo "$MODE_NA"; return; }; echo "${KS["$1 $2 $3 $4 $5 conns"]:-none}"; }

# stats_read [NS]: "kpxctl stats --json" into ST (services backends conns
# rejects drops filtered invalid_drops); stats_mark [NS] keeps a copy in ST0; stats_delta FIELD
# [NS] reads again and prints a total's change (totals count since load).
declare -A ST ST0
stats_read() {
	local n

	ST=()
	if ! mode_is kpx; then
		for n in services backends conns rejects drops filtered invalid_drops; do
			ST[$n]=$MODE_NA
		done
		return
	fi
	read -r ST[services] ST[backends] ST[conns] ST[rejects] ST[drops] ST[filtered] ST[invalid_drops] < <(
		in_ns "${1:-}" "$KPXCTL" stats --json |
		jq -r '"\(.services) \(.backends) \(.conns) \(.rejects) \(.drops) \(.filtered) \(.invalid_drops)"')
	for n in services backends conns rejects drops filtered invalid_drops; do
		[[ "${ST[$n]:-}" =~ ^[0-9]+$ ]] || ST[$n]=none
	done
}
stats_mark() {
	local k

	stats_read "${1:-}"
	ST0=()
	for k in "${!ST[@]}"; do
		ST0[$k]=${ST[$k]}
	done
}
stats_delta() {
	mode_is kpx || { echo "$MODE_NA"; return; }
	stats_read "${2:-}"
	if [ "${ST[$1]}" = none ] || [ "${ST0[$1]:-none}" = none ]; then
		echo none
	else
		echo $((ST[$1] - ST0[$1]))
	fi
}

# dmesg_mark: remember the kernel log position; dmesg_since prints the rest.
dmesg_mark() { DMESG_LINES=$(dmesg | wc -l); }
dmesg_since() { dmesg | tail -n +"$((${DMESG_LINES:-0} + 1))"; }

# assert_dmesg_clean DESC: no warning/oops/BUG since dmesg_mark.
assert_dmesg_clean() {
	local bad

	bad=$(dmesg_since | grep -E 'WARNING:|BUG:|Oops|Kernel panic|kpx.*(leak|error)' | head -n 5)
	assert_eq "$1: kernel log warnings" "" "$bad"
}

# --- cleanup -------------------------------------------------------------

# cleanup: kill what was started, delete the netns and the node's links.
cleanup() {
	local p n

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	for n in "${NETNS[@]}"; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	ip link del kpx-node 2>/dev/null
	if [ -x "$KPXCTL" ] && grep -q '^kpx ' /proc/modules; then
		"$KPXCTL" flush >/dev/null 2>&1
	fi
	rm -rf "$TMPD"
}

# setup_trap: run cleanup (and any extra command given) on exit.
setup_trap() {
	trap "${1:+$1; }cleanup" EXIT
	trap 'exit $KSFT_FAIL' INT TERM
}

# --- /proc/net/kpx/services ------------------------------------------------

# proc_svc PROTO VIP:PORT FIELD: a root-netns frontend's flags, conns or
# rejects from /proc/net/kpx/services ("none" if it is not listed).
proc_svc() {
	local p=${1^^} a b flags conns rejects

	if ! mode_is kpx; then
		read -r flags b < <(agent_frontend "$1" "$2")
		[ "$3" != flags ] && echo "$MODE_NA" || echo "${flags/absent/none}"
		return
	fi

	while read -r a b flags conns rejects _; do
		if [ "$a" = "$p" ] && [ "$b" = "$2" ]; then
			case "$3" in
			flags) echo "$flags" ;;
			conns) echo "$conns" ;;
			*) echo "$rejects" ;;
			esac
			return
		fi
	done </proc/net/kpx/services
	echo none
}

# proc_be PROTO VIP:PORT BACKEND:PORT: a backend's conns from /proc.
proc_be() {
	local p=${1^^} a b rest cur=0

	mode_is kpx || { echo "$MODE_NA"; return; }

	while read -r a b rest; do
		if [ "$a" != "->" ]; then
			cur=0
			[ "$a" = "$p" ] && [ "$b" = "$2" ] && cur=1
		elif [ $cur = 1 ] && [ "$b" = "$3" ]; then
			set -- $rest
			echo "$4"
			return
		fi
	done </proc/net/kpx/services
	echo none
}

# proc_backends PROTO VIP:PORT: a root-netns frontend's backends from
# /proc/net/kpx/services, comma separated in the file's order (address,
# then port), "-" if none, "absent" if no such frontend.  Pure bash (no
# fork), so that it can be polled quickly.
proc_backends() {
	local p=${1^^} key=$2 a b rest found=0 list=

	mode_is kpx || { _agent_backends "$1" "$2"; return; }

	while read -r a b rest; do
		if [ "$a" = "->" ]; then
			[ $found = 1 ] && list+=${list:+,}$b
		else
			[ $found = 1 ] && break
			[ "$a" = "$p" ] && [ "$b" = "$key" ] && found=1
		fi
	done </proc/net/kpx/services
	if [ $found = 0 ]; then
		echo absent
	else
		echo "${list:--}"
	fi
}

# wait_proc_backends PROTO VIP:PORT WANT [SECONDS]: poll proc_backends every
# 20 ms until it prints WANT; prints the seconds waited, or "timeout".
wait_proc_backends() {
	local t0=${EPOCHREALTIME/./} limit=${4:-10} now

	while :; do
		now=${EPOCHREALTIME/./}
		if [ "$(proc_backends "$1" "$2")" = "$3" ]; then
			printf '%d.%02d\n' $(((now - t0) / 1000000)) \
				$((((now - t0) % 1000000) / 10000))
			return 0
		fi
		if ((now - t0 > limit * 1000000)); then
			echo timeout
			return 1
		fi
		sleep 0.02
	done
}
