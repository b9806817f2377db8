#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-kunit.sh: build the KUnit test modules (Kbuild: kpx_kunit.ko, the pure
# core; kpx_kunit_full.ko, kpx's own code with the frontend-table and
# netlink suites) against the debug test kernel (cached by
# selftests/qemu/debug-kernel.sh; built once if missing) in a scratch copy
# under $KPX_VM_CACHE (never in the source tree), boot that kernel in QEMU
# and run the suites.  Prints the KTAP; exit 0 only if every suite ran and
# passed, the kernel log has no KASAN/lockdep/RCU/WARNING report and, after
# both modules are unloaded, kmemleak reports nothing.
#
# Then, on the same boot, kpx.ko itself (built against the debug tree) under
# the genetlink fuzzer (selftests/tools/kpx_fuzz): first "kpx_fuzz failnth",
# which fails fault points of every SET path in turn (fail-nth, failslab,
# fail_usercopy) and checks each answer and the dump (ENOMEM with the dump
# byte-identical, or an ACK with the whole change); by default a bounded
# subset (KPX_FAILNTH_QUICK, LIMIT:STRIDE, default 32:32: each path's
# points 1..32, then every 32nd from an offset KPX_FUZZ_SEED chooses, the
# date by default), with KPX_FUZZ_FAILNTH=1 (make fuzz-long) every point;
# KPX_FAILNTH_PATH keeps the paths whose name contains it (kpx_fuzz -p), so
# the sweep can run in parts.  Each path's line gives its time.
# Then "kpx_fuzz fuzz" for KPX_FUZZ_SECONDS (default 30) with traffic and
# namespace churn.  Each in its own netns; kpx.ko is unloaded before the
# kmemleak scan, which covers it too.
#
# In the guest (run by run-vm.sh): run-kunit.sh --guest [--kpx KPX.KO] KO...
set -uo pipefail

suites="kpx_maglev kpx_sched kpx_affinity kpx_table kpx_netlink kpx_lc kpx_ct kpx_decide kpx_invalid"

# no_alloc_fail: the kernel log without the allocation-failure reports
# (warn_alloc(): "vmalloc error:" or "page allocation failure:", a stack,
# up to its </TASK>) that injected faults make the kernel print, e.g. for
# the netlink core's vmalloc() of a large request.  They are the expected
# consequence of a fault, not a kernel problem.
no_alloc_fail() {
	awk '/(vmalloc error|page allocation failure): / { skip = 1; n++ }
	     skip { if (/<\/TASK>/) skip = 0; next }
	     { print }
	     END { if (n) printf "# %d allocation-failure report(s) of injected faults\n", n > "/dev/stderr" }'
}

# fuzz_guest KPX.KO: the fuzz (and fault-injection) runs of kpx.ko (guest).
fuzz_guest() {
	local fuzz=$here/../../selftests/tools/kpx_fuzz fs=/sys/kernel/debug/failslab
	local frc=0 ns

	insmod "$1" || { echo "not ok kpx.ko: insmod failed"; return 1; }
	# Only fail-nth faults (probability stays 0), GFP_KERNEL ones too,
	# without a stack trace per fault.
	echo N >"$fs/ignore-gfp-wait" && echo 0 >"$fs/verbose" &&
		echo 0 >/sys/kernel/debug/fail_usercopy/verbose ||
		{ echo "not ok failslab: not configurable"; frc=1; }
	for ns in fz1 fz2; do
		ip netns add $ns
		ip -n $ns link set lo up
		ip -n $ns link add d0 type dummy
		ip -n $ns link set d0 up
		ip -n $ns addr add 10.0.0.1/8 dev d0
		ip -n $ns addr add fd00::1/8 dev d0 nodad
	done
	local fn=(failnth)
	[ "${KPX_FUZZ_FAILNTH:-0}" = 1 ] ||
		fn+=(-q "${KPX_FAILNTH_QUICK:-32:32}" -S "${KPX_FUZZ_SEED:-$(date +%s)}")
	[ -z "${KPX_FAILNTH_PATH:-}" ] || fn+=(-p "$KPX_FAILNTH_PATH")
	t0=$(date +%s)
	ip netns exec fz1 "$fuzz" "${fn[@]}" | sed 's/^/# /'
	if [ "${PIPESTATUS[0]}" = 0 ]; then
		echo "ok kpx_fuzz ${fn[*]}"
	else
		echo "not ok kpx_fuzz ${fn[*]}"
		frc=1
	fi
	echo "# kpx_fuzz failnth: $(($(date +%s) - t0)) s"
	t0=$(date +%s)
	ip netns exec fz2 "$fuzz" fuzz -s "${KPX_FUZZ_SECONDS:-30}" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || frc=1
	echo "# kpx_fuzz fuzz: $(($(date +%s) - t0)) s"
	ip netns del fz1
	ip netns del fz2
	rmmod kpx || frc=1
	[ "$frc" = 0 ] && echo "ok kpx.ko fuzzing" || echo "not ok kpx.ko fuzzing"
	return "$frc"
}

if [ "${1:-}" = --guest ]; then
	[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
	shift
	kpx=
	if [ "${1:-}" = --kpx ]; then
		kpx=$2
		shift 2
	fi
	here=$(cd "$(dirname "$0")" && pwd)
	. "$here/../../selftests/qemu/kmemleak.sh"
	rc=0
	kmemleak_clear || { echo "# kmemleak not usable"; rc=1; }
	for ko in "$@"; do
		t0=$(date +%s)
		insmod "$ko" || rc=1
		echo "# insmod $(basename "$ko"): $(($(date +%s) - t0)) s"
	done
	# Kept at once: the kernel's log buffer is small and would lose them.
	klog=/tmp/kunit-dmesg.txt
	dmesg >"$klog"
	grep -E 'KTAP|# |ok [0-9]|kpx' "$klog" | sed 's/^\[[ 0-9.]*\] //'
	for ko in "$@"; do
		rmmod "$(basename "$ko" .ko)" || rc=1
	done
	bad='not ok|BUG:|KASAN|WARNING:|possible circular|suspicious RCU|Call Trace'
	if grep -E "$bad" "$klog" || dmesg | grep -E "$bad"; then
		rc=1
	fi
	for s in $suites; do
		grep -qE "# $s: pass:[1-9][0-9]* fail:0 " "$klog" ||
			{ echo "# suite $s did not pass"; rc=1; }
	done
	if [ -n "$kpx" ]; then
		fuzz_guest "$kpx" || rc=1
		if dmesg | no_alloc_fail | grep -E -B4 -A24 "$bad"; then
			rc=1
		fi
	fi
	kmemleak_check || rc=1
	exit "$rc"
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
qemu=$repo/selftests/qemu
. "$qemu/vm-env.sh"
eval "$("$qemu/debug-kernel.sh" | grep -E '^(TREE|KREL)=')" || exit 1
build=$KPX_VM_CACHE/kunit-build${KPX_CHECK_TAG:+-$KPX_CHECK_TAG}
rm -rf "$build"
mkdir -p "$build/kmod/tests" "$build/uapi"
cp "$repo"/kmod/*.c "$repo"/kmod/*.h "$repo/kmod/Kbuild" "$build/kmod/"
# kpx_kunit_full.ko links kpx's objects: their sources next to the tests.
cp "$repo"/kmod/*.c "$here"/Kbuild "$here"/*.c "$here"/*.h "$build/kmod/tests/"
cp -r "$repo/uapi/linux" "$build/uapi/"
make -s -C "$TREE" M="$build/kmod/tests" modules || exit 1
# kpx.ko itself, for the fault-injection and fuzz runs; and the fuzzer.
make -s -C "$TREE" M="$build/kmod" modules || exit 1
make -s -C "$repo/selftests" tools/kpx_fuzz || exit 1
# The debug kernel boots slowly (KASAN, lockdep self-tests) under TCG.  On
# a heavily loaded host it can miss the IO-APIC timer check's ticks and
# panic ("IO-APIC + timer doesn't work"); KPX_VM_APPEND=no_timer_check
# skips that check.
export KPX_VM_BOOT_TIMEOUT=${KPX_VM_BOOT_TIMEOUT:-900}
# the suites, then the fault-injection and fuzz runs (KASAN under TCG)
export KPX_VM_TIMEOUT=${KPX_VM_TIMEOUT:-$((1500 + ${KPX_FUZZ_SECONDS:-30}))}
KPX_KVER=$KREL "$qemu/run-vm.sh" -- "$here/run-kunit.sh" --guest \
	--kpx "$build/kmod/kpx.ko" "$build/kmod/tests/kpx_kunit.ko" "$build/kmod/tests/kpx_kunit_full.ko"
