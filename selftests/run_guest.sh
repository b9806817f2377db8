#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run_guest.sh: the kpx selftest runner, run inside the test VM (see
# qemu/run-vm.sh).  Loads kmod/kpx.ko, runs the tests of selftests/Makefile's
# TEST_PROGS in their order (then any other selftests/kpx_*.sh, with a
# warning; or only those named in KPX_TESTS, e.g. "kpx_reject kpx_genl") with
# a per-test timeout (KPX_TEST_TIMEOUT seconds, default selftests/settings'
# timeout=), unloads the module and checks the kernel log.  Output is TAP version 13; a test's own
# output is indented as "# " comments.  Exit status 0 if nothing failed.
#
# KPX_PROXY_MODE (kpx, nftables, iptables, ipvs; default kpx) is the agent's
# --proxy-mode for the agent-driven tests (selftests/mode_lib.sh).  In a mode
# other than kpx the module is not loaded (the mode must work without it),
# the tests that drive the module directly are reported "# SKIP", each
# test's leftovers are removed with kpx-agent --cleanup, and the skip list
# (whole tests and module-state assertions) is printed at the end.
#
# Test exit codes (kselftest): 0 pass, 4 skip, anything else fail.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
ko=${KPX_KO:-$repo/kmod/kpx.ko}
tmo=${KPX_TEST_TIMEOUT:-$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$here/settings")}
tmo=${tmo:-300}
agent=${KPX_AGENT:-$repo/agent/kpx-agent}
export KPX_PROXY_MODE=${KPX_PROXY_MODE:-kpx}
export KPX_SKIP_LIST=/tmp/kpx-skip-list.$$
case "$KPX_PROXY_MODE" in
kpx|nftables|iptables|ipvs) ;;
*) echo "run_guest.sh: unknown KPX_PROXY_MODE '$KPX_PROXY_MODE'" >&2; exit 2 ;;
esac

if [ ! -e /etc/kpx-guest ]; then
	echo "run_guest.sh: refusing to run outside the kpx test VM" >&2
	exit 4
fi

progs=$(make -s --no-print-directory -C "$here" print-test-progs)
unlisted=()
for t in "$here"/kpx_*.sh; do
	[[ " $progs " == *" $(basename "$t") "* ]] || unlisted+=("$(basename "$t")")
done
tests=()
for t in $progs "${unlisted[@]}"; do
	name=$(basename "$t" .sh)
	if [ -n "${KPX_TESTS:-}" ]; then
		[[ " ${KPX_TESTS//,/ } " == *" $name "* ]] || continue
	fi
	tests+=("$here/$t")
done

n=0 failed=0
skipped=()
result() { # STATUS NAME [DIRECTIVE]
	n=$((n + 1))
	case "$1" in
	0) echo "ok $n $2${3:+ # $3}" ;;
	4) echo "ok $n $2 # SKIP${3:+ $3}"; skipped+=("$2: ${3:-(no reason given)}") ;;
	*) echo "not ok $n $2${3:+ # $3}"; failed=$((failed + 1)) ;;
	esac
}

# agent_driven TEST: does the test run the agent in the mode under test
# (case_lib.sh, or it names KPX_PROXY_MODE, require_mode or mode_is)?  A
# test that execs a runner of this tree ("exec bash ...selftests-relative
# path", as kpx_cases*.sh exec cases/run.sh) is what that runner is.  The
# others drive the module, or one fixed mode, and run in the kpx suite.
agent_driven() {
	local next

	grep -qE 'case_lib\.sh|KPX_PROXY_MODE|require_mode|mode_is' "$1" &&
		return 0
	# shellcheck disable=SC2016 # the exec line's text, not an expansion
	next=$(sed -n 's|^exec bash "$(dirname "$0")/\([^"]*\)".*|\1|p' "$1" |
		head -n 1)
	[ -n "$next" ] && [ -f "$(dirname "$1")/$next" ] &&
		agent_driven "$(dirname "$1")/$next"
}

# clean_slate: after a test, remove what it left in the data plane.
clean_slate() {
	local k

	# The node sysctls a mode's agent writes and leaves set, as kube-proxy
	# does (iptables localhostNodePorts: route_localnet; ipvs strictARP:
	# arp_ignore, arp_announce), back to the kernel's defaults, so that a
	# test never sees an earlier test's agent's settings.
	for k in route_localnet arp_ignore arp_announce; do
		sysctl -qw "net.ipv4.conf.all.$k=0" "net.ipv4.conf.default.$k=0" 2>/dev/null
	done
	if [ "$KPX_PROXY_MODE" = kpx ]; then
		if ! grep -q '^kpx ' /proc/modules; then
			load_kpx >/dev/null 2>&1 || echo "# cannot reload kpx after $1"
		fi
		[ ! -x "$repo/agent/kpxctl" ] || "$repo/agent/kpxctl" flush >/dev/null 2>&1
	else
		"$agent" --cleanup >/dev/null 2>&1 || echo "# kpx-agent --cleanup failed after $1"
	fi
}

# run_test TEST SECONDS OUT: runs TEST in a session of its own with a time
# limit, its output (indented as TAP comments) shown as it comes and kept in
# OUT; returns the test's exit status (124: timed out).  The output goes to a
# file, not a pipe, and every process left in the session afterwards (a
# backgrounded server or sender the test did not reap, or all of them on a
# timeout) is killed: a leftover holding a pipe would keep the runner waiting
# until the VM's own timeout.
run_test() {
	local raw=$3.raw sidf=$3.sid pid rc

	rm -f "$sidf"
	: >"$raw"
	setsid bash -c 'echo $$ >"$1"; shift; exec timeout -k 10 "$@"' \
		run_test "$sidf" "$2" bash "$1" >"$raw" 2>&1 </dev/null &
	pid=$!
	tail -n +1 -s 0.2 -f --pid="$pid" "$raw" | sed -u 's/^#\{0,1\} \{0,1\}/# /' |
		tee "$3"
	wait "$pid"
	rc=$?
	[ ! -s "$sidf" ] || pkill -KILL -s "$(cat "$sidf")" 2>/dev/null
	rm -f "$raw" "$sidf"
	return "$rc"
}

# Loads kpx.ko with the Debian modules it depends on; 0 on success.
load_kpx() {
	local deps

	[ -r "$ko" ] || { echo "# no $ko (make -C kmod)"; return 1; }
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps || return 1
	insmod "$ko"
}

bad_kernel_log() {
	dmesg | grep -E 'WARNING:|BUG:|Oops|Kernel panic|general protection|refcount_t|list_(add|del) corruption|kpx.*leak'
}

echo "TAP version 13"
echo "1..$((${#tests[@]} + 2))"
echo "# proxy mode: $KPX_PROXY_MODE"
[ ${#unlisted[@]} = 0 ] ||
	echo "# not in selftests/Makefile TEST_PROGS (run after the others): ${unlisted[*]}"
dmesg -n 4 2>/dev/null
start=$(date +%s)
: >"$KPX_SKIP_LIST"

if [ "$KPX_PROXY_MODE" = kpx ]; then
	out=$(load_kpx 2>&1)
	rc=$?
	[ -z "$out" ] || sed 's/^/# /' <<<"$out"
	[ $rc = 0 ] && grep -q '^kpx ' /proc/modules || rc=1
	result "$rc" insmod_kpx
else
	result 4 insmod_kpx "proxy mode $KPX_PROXY_MODE runs without the module"
fi

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	if [ "$KPX_PROXY_MODE" != kpx ] && ! agent_driven "$t"; then
		result 4 "$name" "not parameterised by KPX_PROXY_MODE (kpx module or one fixed mode): runs in the kpx suite"
		continue
	fi
	echo "# === $name"
	# A test may need more than the default: "# kpx-timeout: SECONDS" in
	# its header raises (never lowers) the limit for that test.
	ttmo=$(sed -n 's/^# kpx-timeout: \([0-9][0-9]*\)$/\1/p' "$t" | head -n 1)
	[ -n "$ttmo" ] && [ "$ttmo" -gt "$tmo" ] || ttmo=$tmo
	t0=$(date +%s.%N)
	run_test "$t" "$ttmo" "/tmp/kpx-test-out.$$"
	rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	echo "# $name: exit $rc after $secs s"
	directive=
	[ "$rc" != 124 ] || directive="TIMEOUT after $ttmo s"
	[ "$rc" != 4 ] ||
		directive=$(sed -n 's/^# SKIP: //p' "/tmp/kpx-test-out.$$" | tail -n 1)
	result "$rc" "$name" "$directive"
	# Leave a clean slate: no frontends (kpx: module loaded).
	clean_slate "$name"
done
rm -f "/tmp/kpx-test-out.$$"

rc=0
if grep -q '^kpx ' /proc/modules; then
	rmmod kpx || rc=1
	! grep -q '^kpx ' /proc/modules || rc=1
	[ ! -e /proc/net/kpx ] || { echo "# /proc/net/kpx still there"; rc=1; }
fi
bad=$(bad_kernel_log)
if [ -n "$bad" ]; then
	echo "# kernel log:"
	sed 's/^/#   /' <<<"$bad"
	rc=1
fi
result "$rc" rmmod_kpx_kernel_log_clean
echo "# skip list, proxy mode $KPX_PROXY_MODE: ${#skipped[@]} tests, $(wc -l <"$KPX_SKIP_LIST") module-state assertions"
for s in "${skipped[@]}"; do
	echo "#   test $s"
done
sed 's/^/#   assertion /' "$KPX_SKIP_LIST"
rm -f "$KPX_SKIP_LIST"
echo "# $failed failed of $n, proxy mode $KPX_PROXY_MODE, $(( $(date +%s) - start )) s"
[ "$failed" = 0 ]
