#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/percpu.sh: new-connection rate with 1, 2 and all vCPUs sending
# (bench/vm/percpu.sh in the VM, KPX_VM_SMP vCPUs, default 2); the
# "KPX-PERCPU" lines go to bench/results/percpu.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
: "${KPX_BENCH_WORK:=/var/tmp/kpx-bench}"
make -C "$here/tools" >/dev/null || exit 1
log=$KPX_BENCH_WORK/percpu-vm.log
mkdir -p "$KPX_BENCH_WORK" "$here/results"
cd "$repo" || exit 1
KPX_VM_LOG=$log KPX_VM_TIMEOUT=${KPX_VM_TIMEOUT:-900} \
	"$repo/selftests/qemu/run-vm.sh" -- /bin/bash "$here/vm/percpu.sh"
rc=$?
{
	echo "# $(date -u '+%F %R UTC'), source $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)," \
		"${KPX_VM_SMP:-2} vCPUs (TCG), host load average $(cut -d' ' -f1-3 /proc/loadavg)"
	grep -a '^KPX-PERCPU' "$log" | tr -d '\r'
} >"$here/results/percpu.txt"
cat "$here/results/percpu.txt"
echo "percpu: VM exit $rc; $here/results/percpu.txt" >&2
exit $rc
