#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run_guest.sh: the kpx selftest runner, run inside the test VM (see
# qemu/run-vm.sh).  Loads kmod/kpx.ko, runs every selftests/kpx_*.sh in name
# order (or only those named in KPX_TESTS, e.g. "kpx_reject kpx_genl") with a
# per-test timeout (KPX_TEST_TIMEOUT seconds, default 300), unloads the
# module and checks the kernel log.  Output is TAP version 13; a test's own
# output is indented as "# " comments.  Exit status 0 if nothing failed.
#
# Test exit codes (kselftest): 0 pass, 4 skip, anything else fail.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
ko=${KPX_KO:-$repo/kmod/kpx.ko}
tmo=${KPX_TEST_TIMEOUT:-300}

if [ ! -e /etc/kpx-guest ]; then
	echo "run_guest.sh: refusing to run outside the kpx test VM" >&2
	exit 4
fi

tests=()
for t in "$here"/kpx_*.sh; do
	name=$(basename "$t" .sh)
	if [ -n "${KPX_TESTS:-}" ]; then
		[[ " ${KPX_TESTS//,/ } " == *" $name "* ]] || continue
	fi
	tests+=("$t")
done

n=0 failed=0
result() { # STATUS NAME [DIRECTIVE]
	n=$((n + 1))
	case "$1" in
	0) echo "ok $n $2${3:+ # $3}" ;;
	4) echo "ok $n $2 # SKIP${3:+ $3}" ;;
	*) echo "not ok $n $2${3:+ # $3}"; failed=$((failed + 1)) ;;
	esac
}

# Loads kpx.ko with the Debian modules it depends on; 0 on success.
load_kpx() {
	local deps

	[ -r "$ko" ] || { echo "# no $ko (make -C kmod)"; return 1; }
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps || return 1
	insmod "$ko"
}

bad_kernel_log() {
	dmesg | grep -E 'WARNING:|BUG:|Oops|Kernel panic|general protection|refcount_t|list_(add|del) corruption|kpx.*leak'
}

echo "TAP version 13"
echo "1..$((${#tests[@]} + 2))"
dmesg -n 4 2>/dev/null
start=$(date +%s)

out=$(load_kpx 2>&1)
rc=$?
[ -z "$out" ] || sed 's/^/# /' <<<"$out"
[ $rc = 0 ] && grep -q '^kpx ' /proc/modules || rc=1
result "$rc" insmod_kpx

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	echo "# === $name"
	t0=$(date +%s.%N)
	timeout -k 10 "$tmo" bash "$t" 2>&1 | sed -u 's/^#\{0,1\} \{0,1\}/# /'
	rc=${PIPESTATUS[0]}
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	echo "# $name: exit $rc after $secs s"
	directive=
	[ "$rc" != 124 ] || directive="TIMEOUT after $tmo s"
	result "$rc" "$name" "$directive"
	# Leave a clean slate: module loaded, no frontends.
	if ! grep -q '^kpx ' /proc/modules; then
		load_kpx >/dev/null 2>&1 || echo "# cannot reload kpx after $name"
	fi
	[ ! -x "$repo/agent/kpxctl" ] || "$repo/agent/kpxctl" flush >/dev/null 2>&1
done

rc=0
if grep -q '^kpx ' /proc/modules; then
	rmmod kpx || rc=1
	! grep -q '^kpx ' /proc/modules || rc=1
	[ ! -e /proc/net/kpx ] || { echo "# /proc/net/kpx still there"; rc=1; }
fi
bad=$(bad_kernel_log)
if [ -n "$bad" ]; then
	echo "# kernel log:"
	sed 's/^/#   /' <<<"$bad"
	rc=1
fi
result "$rc" rmmod_kpx_kernel_log_clean
echo "# $failed failed of $n, $(( $(date +%s) - start )) s"
[ "$failed" = 0 ]
