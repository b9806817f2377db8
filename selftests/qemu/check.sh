#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check.sh: the whole VM test flow, for "make check".  Builds the selftest
# tools, the module (make -C kmod) and kpxctl/kpx-agent (make -C agent),
# fetches the kernel, builds the stub initramfs, boots the VM and runs
# selftests/run_guest.sh in it.  Exit status = the suite's (0 = all passed).
# The TAP output is also written to $KPX_VM_CACHE/last-tap[-TAG].txt.
#
# Environment: KPX_TESTS (subset of tests, e.g. "kpx_reject kpx_genl"),
# KPX_TEST_TIMEOUT (per test, s, default 300), KPX_VM_TIMEOUT (whole VM, s,
# default here 3600), KPX_CHECK_NO_BUILD=1 (do not build kmod/ and agent/;
# with KPX_KO, KPXCTL, KPX_AGENT pointing at other builds if wanted), and
# KPX_CHECK_TAG (suffix of the log and TAP file names, so that parallel runs
# do not share them), KPX_PROXY_MODE (kpx, nftables, iptables or ipvs: the
# agent's mode in the suite, see run_guest.sh; default kpx) and those of
# run-vm.sh (KPX_KVER, KPX_VM_CACHE, ...).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/vm-env.sh"

step() { echo "check: $*" >&2; }

step "building the selftest tools"
make -C "$repo/selftests" all || exit 1
if [ -n "${KPX_CHECK_NO_BUILD:-}" ]; then
	step "KPX_CHECK_NO_BUILD set: using the kmod/agent binaries as they are"
elif [ -e "$repo/kmod/Makefile" ]; then
	step "building kmod/kpx.ko for $KPX_KVER"
	make -C "$repo/kmod" KVER="$KPX_KVER" KERNELDIR="/lib/modules/$KPX_KVER/build" || exit 1
else
	step "no kmod/Makefile: tests needing the module will fail"
fi
if [ -z "${KPX_CHECK_NO_BUILD:-}" ] && [ -e "$repo/agent/Makefile" ]; then
	step "building agent/kpxctl and agent/kpx-agent"
	make -C "$repo/agent" kpxctl kpx-agent || exit 1
fi
"$here/get-kernel.sh" >/dev/null || exit 1
"$here/mkinitramfs.sh" >/dev/null || exit 1

: "${KPX_VM_TIMEOUT:=3600}"
: "${KPX_PROXY_MODE:=kpx}"
export KPX_VM_TIMEOUT KPX_PROXY_MODE
tag=${KPX_CHECK_TAG:+-$KPX_CHECK_TAG}
log=$KPX_VM_CACHE/last-check$tag.log
step "booting the VM, proxy mode $KPX_PROXY_MODE (log $log)"
cd "$repo" || exit 1
rm -f "$log.first" "$log.first.lockup"
KPX_VM_LOG=$log "$here/run-vm.sh" -- "$repo/selftests/run_guest.sh"
rc=$?
# A guest kernel lockup (run-vm.sh exit 123) with kpx.ko code on no CPU's
# stack is not taken as kpx's: twice so far (a CI run and a kpx_agent_faults
# run, under TCG on a loaded 2-core host) the whole guest stalled with a
# test API server thread (python3) on the CPUs; their backtraces were lost
# (loglevel 4), so the cause is not known.  The suite then boots once more
# from the start, and its result is that second run's; the first run's
# console and lockup report are kept.  A lockup with a kpx frame ("[kpx]")
# in any backtrace of the log (the panic replays them all) is a kpx bug and
# fails at once.
if [ "$rc" = 123 ]; then
	if grep -a -q -E '\+0x[0-9a-f]+/0x[0-9a-f]+ \[kpx\]' "$log"; then
		step "the guest locked up with kpx.ko code on a CPU's stack ($log.lockup): not retried"
	else
		cp "$log" "$log.first"
		cp "$log.lockup" "$log.first.lockup"
		step "the guest kernel locked up outside kpx.ko (where: $log.first.lockup;" \
			"console: $log.first); booting the whole suite once more"
		KPX_VM_LOG=$log "$here/run-vm.sh" -- "$repo/selftests/run_guest.sh"
		rc=$?
	fi
fi
sed -n '/^TAP version 13$/,/^KPX-VM-EXIT:/p' "$log" |
	grep -v -E '^KPX-VM-EXIT:|^\[ *[0-9.]+\] ' >"$KPX_VM_CACHE/last-tap$tag.txt"
summary=$(grep -E '^(not )?ok ' "$KPX_VM_CACHE/last-tap$tag.txt" | grep -c '^not ok')
step "exit $rc ($summary TAP failures); TAP in $KPX_VM_CACHE/last-tap$tag.txt"
exit "$rc"
