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

# require_module: the kpx module must be loaded (run_guest.sh loads it).
require_module() {
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
	if [ "$2" = "$3" ]; then
		_pass "$1 == $2"
	else
		_fail "$1: expected '$2', got '$3'"
	fi
}

# assert_ne DESC UNEXPECTED GOT
assert_ne() {
	if [ "$2" != "$3" ]; then
		_pass "$1 != $2 (got '$3')"
	else
		_fail "$1: expected anything but '$2'"
	fi
}

# assert_gt DESC LIMIT GOT (integers)
assert_gt() {
	if [[ "$3" =~ ^-?[0-9]+$ ]] && [ "$3" -gt "$2" ]; then
		_pass "$1: $3 > $2"
	else
		_fail "$1: expected > $2, got '$3'"
	fi
}

# assert_ge DESC LIMIT GOT (integers)
assert_ge() {
	if [[ "$3" =~ ^-?[0-9]+$ ]] && [ "$3" -ge "$2" ]; then
		_pass "$1: $3 >= $2"
	else
		_fail "$1: expected >= $2, got '$3'"
	fi
}

# assert_lt_ms DESC LIMIT GOT (decimal milliseconds)
assert_lt_ms() {
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
	if [[ "$3" =~ $2 ]]; then
		_pass "$1 =~ /$2/"
	else
		_fail "$1: expected a match of /$2/, got '$3'"
	fi
}

# assert_no_match DESC REGEX TEXT
assert_no_match() {
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

# client NS ARGS...: run kpx_client in NS; output also saved in $TMPD/client.out
client() {
	local ns=$1

	shift
	CLIENT_FAILS0=$FAILS
	in_ns "$ns" "$CLIENT_BIN" "$@" >"$TMPD/client.out" 2>&1
}

# client_show_if_failed: print the last client's output if an assertion
# failed since it ran.
client_show_if_failed() {
	[ "$FAILS" = "${CLIENT_FAILS0:-$FAILS}" ] && return 0
	log "kpx_client output:"
	sed 's/^/#   /' "$TMPD/client.out"
}

# summary_field FIELD [FILE]: a field of kpx_client's summary line.
summary_field() {
	sed -n "s/^summary .*\b$1=\([^ ]*\).*/\1/p" "${2:-$TMPD/client.out}"
}

# ident_count ID [FILE]: attempts kpx_client saw answered by ID (0 if none).
ident_count() {
	local n

	n=$(awk -v id="$1" '$1 == "ident" && $2 == id { print $3 }' \
		"${2:-$TMPD/client.out}")
	echo "${n:-0}"
}

# error_count ERRNO [FILE]: attempts that failed with ERRNO (0 if none).
error_count() {
	local n

	n=$(awk -v e="$1" '$1 == "error" && $2 == e { print $3 }' \
		"${2:-$TMPD/client.out}")
	echo "${n:-0}"
}

# ident_names [FILE]: the distinct answering IDs, sorted, space separated.
ident_names() {
	awk '$1 == "ident" { print $2 }' "${1:-$TMPD/client.out}" | sort | xargs
}

# answers [FILE]: the answer lines of successful attempts.
answers() {
	awk '$2 == "ok" { $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' \
		"${1:-$TMPD/client.out}"
}

# kpx_json: "kpxctl list --json" of the root netns (or of netns $1).
kpx_json() {
	in_ns "${1:-}" "$KPXCTL" list --json
}

# svc_counter JSON PROTO VIP PORT FIELD: a service's counter from list JSON.
svc_counter() {
	jq -r --arg p "$2" --arg v "$3" --argjson port "$4" --arg f "$5" \
		'[.services[] | select(.protocol == $p and .vip == $v and
		  .port == $port)][0][$f] // "none"' <<<"$1"
}

# be_counter JSON PROTO VIP PORT BACKEND_ADDR BACKEND_PORT
be_counter() {
	jq -r --arg p "$2" --arg v "$3" --argjson port "$4" --arg a "$5" \
		--argjson bp "$6" \
		'[.services[] | select(.protocol == $p and .vip == $v and
		  .port == $port) | .backends[] | select(.addr == $a and
		  .port == $bp)][0].conns // "none"' <<<"$1"
}

# stats_mark [NS]: remember "kpxctl stats" totals; stats_delta FIELD [NS]
# prints a total's change since (the totals count since module load).
stats_mark() { STATS0=$(in_ns "${1:-}" "$KPXCTL" stats --json); }
stats_delta() {
	echo $(( $(in_ns "${2:-}" "$KPXCTL" stats --json | jq -r ".$1") -
		 $(jq -r ".$1" <<<"$STATS0") ))
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

# proc_svc PROTO VIP:PORT FIELD [NS]: a frontend's flags, conns or rejects
# from /proc/net/kpx/services ("none" if the frontend is not listed).
proc_svc() {
	in_ns "${4:-}" cat /proc/net/kpx/services 2>/dev/null |
		awk -v p="${1^^}" -v k="$2" -v f="$3" '
			$1 == p && $2 == k {
				v = (f == "flags") ? $3 : (f == "conns") ? $4 : $5
			}
			END { print (v == "" ? "none" : v) }'
}

# proc_backends PROTO VIP:PORT: a root-netns frontend's backends from
# /proc/net/kpx/services, comma separated in the file's order (address,
# then port), "-" if none, "absent" if no such frontend.  Pure bash (no
# fork), so that it can be polled quickly.
proc_backends() {
	local p=${1^^} key=$2 a b rest found=0 list=

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

# proc_be PROTO VIP:PORT BACKEND:PORT [NS]: a backend's conns counter.
proc_be() {
	in_ns "${4:-}" cat /proc/net/kpx/services 2>/dev/null |
		awk -v p="${1^^}" -v k="$2" -v b="$3" '
			$1 != "->" { cur = ($1 == p && $2 == k) }
			cur && $1 == "->" && $2 == b { v = $6 }
			END { print (v == "" ? "none" : v) }'
}
