#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-kunit.sh: build kpx_kunit.ko against the debug test kernel (cached by
# selftests/qemu/debug-kernel.sh; built once if missing) in a scratch copy
# under $KPX_VM_CACHE (never in the source tree), boot that kernel in QEMU
# and run the KUnit suites.  Prints the KTAP; exit 0 only if every suite
# passed and the kernel log has no KASAN/lockdep/WARNING report.
#
# In the guest (run by run-vm.sh): run-kunit.sh --guest KO
set -uo pipefail

if [ "${1:-}" = --guest ]; then
	[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
	insmod "$2" || exit 1
	dmesg | grep -E 'KTAP|# Subtest|ok [0-9]|# kpx_|# Totals|kpx_kunit' |
		sed 's/^\[[ 0-9.]*\] //'
	if dmesg | grep -qE 'not ok|BUG:|KASAN|WARNING:|possible circular|suspicious RCU'; then
		exit 1
	fi
	grep -q 'kpx_affinity: pass:' <(dmesg) || exit 1
	exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
qemu=$repo/selftests/qemu
. "$qemu/vm-env.sh"
eval "$("$qemu/debug-kernel.sh" | grep -E '^(TREE|KREL)=')" || exit 1
build=$KPX_VM_CACHE/kunit-build
rm -rf "$build"
mkdir -p "$build/kmod/tests" "$build/uapi"
cp "$repo"/kmod/*.c "$repo"/kmod/*.h "$build/kmod/"
cp "$here/Kbuild" "$here/kpx_kunit.c" "$build/kmod/tests/"
cp -r "$repo/uapi/linux" "$build/uapi/"
make -s -C "$TREE" M="$build/kmod/tests" modules || exit 1
KPX_KVER=$KREL "$qemu/run-vm.sh" -- "$here/run-kunit.sh" --guest \
	"$build/kmod/tests/kpx_kunit.ko"
