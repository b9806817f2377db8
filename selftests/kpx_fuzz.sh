#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_fuzz: the structured genetlink fuzzer (tools/kpx_fuzz.c) for
# KPX_FUZZ_SECONDS (default 60) with KPX_FUZZ_THREADS writers (default 4),
# while one thread dumps, one sends UDP/TCP/SCTP traffic to the fuzzed
# frontends and one keeps creating and leaving namespaces that program the
# module; every reply must be an ACK or an errno the command documents, and
# the kernel log must stay clean.  Then "kpx_fuzz failnth": where the
# kernel has fail-nth (the debug kernel: FAULT_INJECTION, FAILSLAB) every
# SET path with each of its allocations failed in turn must answer an errno
# and leave the dump byte-identical; elsewhere only the paths' fault-free
# runs.  Both run in their own netns.
#
#   netns fuzz1: d0 10.0.0.1/8 fd00::1/8 (dummy: a route to the VIPs)
. "$(dirname "$0")/lib.sh"

require_guest
require_module
FUZZ_BIN=$SELFTESTS/tools/kpx_fuzz
require_file "$FUZZ_BIN"
setup_trap

secs=${KPX_FUZZ_SECONDS:-60}
threads=${KPX_FUZZ_THREADS:-4}
seed=${KPX_FUZZ_SEED:-$(date +%s)}

fuzz_ns() { # NAME: a netns with a route to the fuzzer's VIPs
	ip netns add "$1" && NETNS+=("$1")
	ip -n "$1" link set lo up
	ip -n "$1" link add d0 type dummy
	ip -n "$1" link set d0 up
	ip -n "$1" addr add 10.0.0.1/8 dev d0
	ip -n "$1" addr add fd00::1/8 dev d0 nodad
}

modprobe sctp 2>/dev/null
dmesg_mark
fuzz_ns fuzz1
log "seed $seed (KPX_FUZZ_SEED to repeat)"
ip netns exec fuzz1 "$FUZZ_BIN" fuzz -t "$threads" -s "$secs" -S "$seed" >"$TMPD/fuzz.out" 2>&1
rc=$?
sed 's/^/# /' "$TMPD/fuzz.out"
assert_eq "fuzz run: exit status" 0 $rc
assert_match "fuzz run: ok line" '^ok kpx_fuzz fuzz' "$(tail -n 1 "$TMPD/fuzz.out")"
assert_eq "fuzz1 is empty after the run" 0 \
	"$(ip netns exec fuzz1 "$KPXCTL" stats --json | jq -r .services)"
assert_dmesg_clean "fuzz run"

fs=/sys/kernel/debug/failslab
if [ -e /proc/self/fail-nth ] && [ -d "$fs" ]; then
	# Only fail-nth faults (probability stays 0), GFP_KERNEL ones too,
	# without a stack trace per fault.
	echo N >"$fs/ignore-gfp-wait"
	echo 0 >"$fs/verbose"
	[ -d /sys/kernel/debug/fail_usercopy ] &&
		echo 0 >/sys/kernel/debug/fail_usercopy/verbose
	want=0
else
	# Without fail-nth (Debian's kernel) only the fault-free runs of every
	# path: their starting states and results; kpx_fuzz exits 4 (skip).
	log "no fail-nth/failslab on $(uname -r): faults are injected on the debug kernel (make kunit)"
	want=4
fi
fuzz_ns fuzz2
ip netns exec fuzz2 "$FUZZ_BIN" failnth >"$TMPD/failnth.out" 2>&1
rc=$?
sed 's/^/# /' "$TMPD/failnth.out"
assert_eq "fail-nth run: exit status" $want $rc
assert_dmesg_clean "fail-nth run"
ksft_exit
