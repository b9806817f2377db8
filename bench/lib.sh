# SPDX-License-Identifier: GPL-2.0-only
#
# bench/lib.sh: the host side of the one-VM kernel benchmarks (bench/mh,
# bench/ct), sourced by their run.sh:
#
#   bench_build NAME TOOL REV...   Debian's 6.1 kernel (or KPX_KVER) and the
#                                  initramfs fetched, bench/tools/TOOL built,
#                                  kpx.ko built from each git revision REV
#                                  ("WORKTREE": the working tree; default)
#                                  under $KPX_VM_CACHE/NAME-bench-TAG/REV;
#                                  sets KOS (their paths) and KVER
#   bench_vm NAME RESULT [VAR=VALUE...]
#                                  one VM boot running the caller's guest.sh
#                                  with KOS, the VARs in its environment
#                                  (KPX_VM_TIMEOUT default 3600, soft
#                                  lockups reported, not panicking); prints
#                                  the JSON lines and "# " notes of its log
#                                  (also into file RESULT when not empty);
#                                  returns run-vm.sh's status
BENCH_HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
BENCH_REPO=$(cd "$BENCH_HERE/../.." && pwd)
. "$BENCH_REPO/selftests/qemu/vm-env.sh"

bench_build() {
	local name=$1 tool=$2 rev dir

	shift 2
	[ $# -gt 0 ] || set -- WORKTREE
	KVER=${KPX_KVER:-$(ls -d /lib/modules/6.1.*/build | sed 's|/lib/modules/||;s|/build||' |
		sort -V | tail -n 1)}
	make -s -C "$BENCH_REPO/bench/tools" "$tool" || return 1
	export KPX_KVER=$KVER
	"$BENCH_REPO/selftests/qemu/get-kernel.sh" >/dev/null || return 1
	"$BENCH_REPO/selftests/qemu/mkinitramfs.sh" >/dev/null || return 1
	KOS=()
	for rev; do
		dir=$KPX_VM_CACHE/$name-bench-${KPX_CHECK_TAG:-$USER}/$rev
		rm -rf "$dir"
		mkdir -p "$dir/kmod" "$dir/uapi/linux"
		if [ "$rev" = WORKTREE ]; then
			cp "$BENCH_REPO"/kmod/*.[ch] "$BENCH_REPO/kmod/Kbuild" \
				"$BENCH_REPO/kmod/Makefile" "$dir/kmod/"
			cp "$BENCH_REPO/uapi/linux/kpx.h" "$dir/uapi/linux/"
		else
			git -C "$BENCH_REPO" archive "$rev" kmod uapi | tar -x -C "$dir" || return 1
		fi
		make -s -C "$dir/kmod" KVER="$KVER" KERNELDIR="/lib/modules/$KVER/build" \
			>/dev/null || return 1
		KOS+=("$dir/kmod/kpx.ko")
	done
}

bench_vm() {
	local name=$1 result=$2 log rc

	shift 2
	log=$KPX_VM_CACHE/last-$name-bench-${KPX_CHECK_TAG:-$USER}.log
	env KPX_VM_TIMEOUT="${KPX_VM_TIMEOUT:-3600}" KPX_VM_LOCKUP_PANIC=0 KPX_KVER="$KVER" \
		KPX_VM_LOG="$log" "$@" \
		"$BENCH_REPO/selftests/qemu/run-vm.sh" -- /bin/bash "$BENCH_HERE/guest.sh" "${KOS[@]}"
	rc=$?
	tr -d '\r' <"$log" | grep -E '^\{"ko"|^# ' | tee ${result:+"$result"}
	return $rc
}
