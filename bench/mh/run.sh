#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/mh/run.sh [REV...]: the Maglev memory benchmark: kernel memory
# (Slab + VmallocUsed from /proc/meminfo) and SET time of many mh frontends
# (guest.sh), for kpx.ko built from each git revision given (default: the
# working tree only; e.g. "run.sh 048c08a^ WORKTREE" compares with the
# u32 tables of 65,537 slots), all in one VM boot on Debian's kernel.
# Prints the JSON lines; with KPX_MH_RESULT=FILE also writes them there.
# Environment: KPX_MH_CASES (guest.sh), KPX_VM_MEM (MiB, default here
# 3072), KPX_VM_CACHE and those of run-vm.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/selftests/qemu/vm-env.sh"
kver=${KPX_KVER:-$(ls -d /lib/modules/6.1.*/build | sed 's|/lib/modules/||;s|/build||' | sort -V | tail -n 1)}
[ $# -gt 0 ] || set -- WORKTREE
make -s -C "$here/../tools" mhbench || exit 1
export KPX_KVER=$kver
"$repo/selftests/qemu/get-kernel.sh" >/dev/null || exit 1
"$repo/selftests/qemu/mkinitramfs.sh" >/dev/null || exit 1
kos=()
for rev in "$@"; do
	dir=$KPX_VM_CACHE/mh-bench-${KPX_CHECK_TAG:-$USER}/$rev
	rm -rf "$dir"
	mkdir -p "$dir/kmod" "$dir/uapi/linux"
	if [ "$rev" = WORKTREE ]; then
		cp "$repo"/kmod/*.[ch] "$repo/kmod/Kbuild" "$repo/kmod/Makefile" "$dir/kmod/"
		cp "$repo/uapi/linux/kpx.h" "$dir/uapi/linux/"
	else
		git -C "$repo" archive "$rev" kmod uapi | tar -x -C "$dir" || exit 1
	fi
	make -s -C "$dir/kmod" KVER="$kver" KERNELDIR="/lib/modules/$kver/build" >/dev/null || exit 1
	kos+=("$dir/kmod/kpx.ko")
done
log=$KPX_VM_CACHE/last-mh-bench-${KPX_CHECK_TAG:-$USER}.log
KPX_VM_MEM=${KPX_VM_MEM:-3072} KPX_VM_TIMEOUT=${KPX_VM_TIMEOUT:-3600} KPX_VM_LOCKUP_PANIC=0 \
	KPX_KVER=$kver KPX_VM_LOG=$log KPX_MH_CASES=${KPX_MH_CASES:-} \
	"$repo/selftests/qemu/run-vm.sh" -- /bin/bash "$here/guest.sh" "${kos[@]}"
rc=$?
tr -d '\r' <"$log" | grep -E '^\{"ko"|^# ' | tee ${KPX_MH_RESULT:+"$KPX_MH_RESULT"}
exit $rc
