#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-debug.sh [--module | TEST...]: the selftest suite (every
# selftests/kpx_*.sh but the fallback modes' kpx_mode_*, the tests named, or with --module only the
# module-level tests: those that do not run kpx-agent) on the kpx debug
# kernel (debug-kernel.sh: KASAN, lockdep, PROVE_RCU, kmemleak,
# panic_on_warn), then a kmemleak scan.  Builds kpx.ko against the debug
# tree in a scratch copy ($KPX_VM_CACHE/kmod-TAG; the in-tree kmod/kpx.ko
# stays built for Debian's kernel).
#
# Fails (non-zero) on a failed test, a KASAN/lockdep/RCU report or any other
# WARNING/BUG in the kernel log (run_guest.sh and run-vm.sh check it; with
# panic_on_warn a WARN or KASAN report also panics), and on any kmemleak
# report: kmemleak's boot-time suspects are cleared before the suite, and
# the scan after it (kpx.ko unloaded, RCU callbacks done) must find nothing.
#
# Environment: KPX_TEST_TIMEOUT (per test, default here 900 s: KASAN under
# TCG is about 3 times slower), KPX_VM_TIMEOUT (default here 5400 s),
# KPX_VM_BOOT_TIMEOUT (default here 900 s),
# KPX_CHECK_TAG (default "debug": log .cache/last-check-debug.log, TAP
# .cache/last-tap-debug.txt), KPX_CHECK_NO_BUILD=1 (do not build agent/),
# KPX_AGENT, KPXCTL (other builds), and those of run-vm.sh.
#
# In the guest (run by run-vm.sh): check-debug.sh --guest
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ "${1:-}" = --guest ]; then
	[ -e /etc/kpx-guest ] || {
		echo "check-debug: refusing to run outside the kpx test VM" >&2
		exit 4
	}
	. "$here/kmemleak.sh"
	# Forget what the boot leaked (or seemed to): only the suite counts.
	kmemleak_clear || { echo "# check-debug: kmemleak not usable"; exit 1; }
	"$repo/selftests/run_guest.sh"
	rc=$?
	kmemleak_check || rc=1
	exit "$rc"
fi

. "$here/vm-env.sh"
step() { echo "check-debug: $*" >&2; }

eval "$("$here/debug-kernel.sh" | grep -E '^(TREE|KREL)=')" || exit 1
[ -n "${TREE:-}" ] && [ -n "${KREL:-}" ] || exit 1

step "building the selftest tools"
make -C "$repo/selftests" all || exit 1
if [ -z "${KPX_CHECK_NO_BUILD:-}" ] && [ -e "$repo/agent/Makefile" ]; then
	step "building agent/kpxctl and agent/kpx-agent"
	make -C "$repo/agent" kpxctl kpx-agent || exit 1
fi
tag=${KPX_CHECK_TAG:-debug}
build=$KPX_VM_CACHE/kmod-$tag
rm -rf "$build"
mkdir -p "$build/kmod"
cp "$repo"/kmod/*.c "$repo"/kmod/*.h "$repo"/kmod/Kbuild "$build/kmod/"
cp -r "$repo/uapi" "$build/"
step "building kpx.ko for $KREL"
make -s -C "$TREE" M="$build/kmod" modules || exit 1
modinfo -F vermagic "$build/kmod/kpx.ko" | grep -q "^$KREL " ||
	{ step "kpx.ko is not built for $KREL"; exit 1; }

KPX_KVER=$KREL "$here/mkinitramfs.sh" >/dev/null || exit 1
log=$KPX_VM_CACHE/last-check-$tag.log
tap=$KPX_VM_CACHE/last-tap-$tag.txt
# Module-level tests: not agent-driven (no case_lib.sh, agent_lib.sh,
# kpx-agent or proxy modes).  The debug kernel's detectors look at kernel
# code; these drive kpx.ko's every entry point (genl, NAT hooks, conntrack,
# schedulers, unload) without the agent's userspace cost.
module_tests() {
	local t
	for t in "$repo"/selftests/kpx_*.sh; do
		grep -qE 'case_lib\.sh|agent_lib\.sh|KPX_AGENT|kpx-agent|KPX_PROXY_MODE|require_mode|--proxy-mode' "$t" ||
			basename "$t" .sh
	done
}
# The fallback proxy modes' own tests (kpx_modes, kpx_mode_*: stock nftables,
# iptables and IPVS, not kpx.ko) need netfilter extensions (xt_recent,
# ip_vs, ...) that the debug kernel does not build: left out of the full
# run, and named.
fallback_mode_tests() {
	local t

	for t in "$repo"/selftests/kpx_modes.sh "$repo"/selftests/kpx_mode_*.sh; do
		[ -e "$t" ] || continue
		basename "$t" .sh
	done
}
if [ "${1:-}" = --module ]; then
	KPX_TESTS=$(module_tests | tr '\n' ' ')
	export KPX_TESTS
	step "module-level tests: $KPX_TESTS"
elif [ $# != 0 ]; then
	export KPX_TESTS="$*"
else
	skip=$(fallback_mode_tests | tr '\n' ' ')
	KPX_TESTS=$(for t in "$repo"/selftests/kpx_*.sh; do basename "$t" .sh; done |
		grep -vxF -f <(fallback_mode_tests) | tr '\n' ' ')
	export KPX_TESTS
	step "left out (stock nftables/iptables/IPVS, not built in the debug kernel): $skip"
fi
export KPX_KO=$build/kmod/kpx.ko
export KPX_TEST_TIMEOUT=${KPX_TEST_TIMEOUT:-900}
export KPX_VM_TIMEOUT=${KPX_VM_TIMEOUT:-5400}
# The debug kernel boots slowly (KASAN, lockdep self-tests) under TCG.  On
# a heavily loaded host it can miss the IO-APIC timer check's ticks and
# panic ("IO-APIC + timer doesn't work"); KPX_VM_APPEND=no_timer_check
# skips that check.
export KPX_VM_BOOT_TIMEOUT=${KPX_VM_BOOT_TIMEOUT:-900}
step "booting $KREL (log $log)"
cd "$repo" || exit 1
t0=$(date +%s)
KPX_KVER=$KREL KPX_VM_LOG=$log "$here/run-vm.sh" -- "$here/check-debug.sh" --guest
rc=$?
sed -n '/^TAP version 13$/,/^KPX-VM-EXIT:/p' "$log" |
	grep -v -E '^KPX-VM-EXIT:|^\[ *[0-9.]+\] ' >"$tap"
nfail=$(grep -c '^not ok' "$tap")
step "exit $rc ($nfail TAP failures, $(grep '^# kmemleak:' "$tap" || echo 'no kmemleak line')) after $(($(date +%s) - t0)) s; TAP in $tap"
exit "$rc"
