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
# In the guest (run by run-vm.sh): run-kunit.sh --guest KO...
set -uo pipefail

suites="kpx_maglev kpx_sched kpx_affinity kpx_table kpx_netlink"

if [ "${1:-}" = --guest ]; then
	[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
	shift
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
# The debug kernel boots slowly (KASAN, lockdep self-tests) under TCG.  On
# a heavily loaded host it can miss the IO-APIC timer check's ticks and
# panic ("IO-APIC + timer doesn't work"); KPX_VM_APPEND=no_timer_check
# skips that check.
export KPX_VM_BOOT_TIMEOUT=${KPX_VM_BOOT_TIMEOUT:-900}
KPX_KVER=$KREL "$qemu/run-vm.sh" -- "$here/run-kunit.sh" --guest \
	"$build/kmod/tests/kpx_kunit.ko" "$build/kmod/tests/kpx_kunit_full.ko"
