#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/profile.sh: perf profile of kpx's packet path per new connection
# in the VM (bench/vm/profile.sh); the raw reports go to
# bench/results/profile-raw.txt (bench/results/profile.md is the reading).
# Uses the binaries bench/run.sh copied to $KPX_BENCH_WORK/bin if there,
# else the tree's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${KPX_BENCH_WORK:=/var/tmp/kpx-bench}"
make -C "$here/tools" >/dev/null || exit 1
bin=$KPX_BENCH_WORK/bin
if [ -x "$bin/kpx-agent" ]; then
	export KPX_KO=$bin/kpx.ko KPXCTL=$bin/kpxctl KPX_BENCH_LOAD=$bin/kpx_load
fi
log=$KPX_BENCH_WORK/profile-vm.log
mkdir -p "$KPX_BENCH_WORK" "$here/results"
cd "$repo" || exit 1
KPX_VM_LOG=$log KPX_VM_TIMEOUT=${KPX_VM_TIMEOUT:-900} \
	"$repo/selftests/qemu/run-vm.sh" -- /bin/bash "$here/vm/profile.sh"
rc=$?
sed -n '/^KPX-PROFILE-BEGIN/,/^KPX-PROFILE-END/p' "$log" | grep -av '^\[ *[0-9.]*\] ' \
	>"$here/results/profile-raw.txt"
echo "profile: VM exit $rc; $here/results/profile-raw.txt" >&2
exit $rc
