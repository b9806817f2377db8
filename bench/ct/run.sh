#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/ct/run.sh [REV...]: the conntrack-cleanup benchmark, a sync of
# 1,000 UDP frontends against a 500,000-entry conntrack table (guest.sh),
# for kpx.ko built from each git revision given (default: the working tree
# only; e.g. "run.sh HEAD~3 WORKTREE" compares), all in one VM boot on
# Debian's kernel.  Prints the JSON lines; with KPX_CT_RESULT=FILE also
# writes them there.  Environment: KPX_CT_ENTRIES, KPX_CT_MATCH (guest.sh),
# KPX_VM_CACHE and those of run-vm.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/selftests/qemu/vm-env.sh"
kver=${KPX_KVER:-$(ls -d /lib/modules/6.1.*/build | sed 's|/lib/modules/||;s|/build||' | sort -V | tail -n 1)}
[ $# -gt 0 ] || set -- WORKTREE
make -s -C "$here/../tools" ctbench || exit 1
export KPX_KVER=$kver
"$repo/selftests/qemu/get-kernel.sh" >/dev/null || exit 1
"$repo/selftests/qemu/mkinitramfs.sh" >/dev/null || exit 1
kos=()
for rev in "$@"; do
	dir=$KPX_VM_CACHE/ct-bench-${KPX_CHECK_TAG:-$USER}/$rev
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
log=$KPX_VM_CACHE/last-ct-bench-${KPX_CHECK_TAG:-$USER}.log
KPX_VM_TIMEOUT=${KPX_VM_TIMEOUT:-3600} KPX_VM_LOCKUP_PANIC=0 KPX_KVER=$kver KPX_VM_LOG=$log \
	"$repo/selftests/qemu/run-vm.sh" -- /bin/bash "$here/guest.sh" "${kos[@]}"
rc=$?
tr -d '\r' <"$log" | grep -E '^\{"ko"|^# ' | tee ${KPX_CT_RESULT:+"$KPX_CT_RESULT"}
exit $rc
