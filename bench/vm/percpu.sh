#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/vm/percpu.sh: new-connection rate with 1 sender and with one
# sender per vCPU (each pinned with taskset), in the VM (run by
# bench/percpu.sh; refuses elsewhere).  The benchmark topology (topo.sh),
# kpx.ko with a "random" frontend (10.96.0.1:80) and an "lc" frontend with
# ClientIP affinity (10.96.0.2:80), both to A_0 and B_0; "kpx_load conn"
# from the cli netns.  One line per run:
#   KPX-PERCPU frontend=NAME senders=K cps=TOTAL per_sender=CPS...
# Under TCG the vCPUs are threads of one emulator on a shared host, so the
# rates show whether a second sender adds throughput (no shared cache line
# or lock on the path) more than absolute numbers.
#
# Environment: KPX_BENCH_SECS (seconds per run, default 10),
# KPX_BENCH_LOAD, KPX_KO, KPXCTL (as guest.sh).

. "$(dirname "$0")/../../selftests/lib.sh"
. "$(dirname "$0")/topo.sh"
require_guest

LOAD=${KPX_BENCH_LOAD:-$REPO/bench/tools/kpx_load}
SECS=${KPX_BENCH_SECS:-10}

setup_trap
bench_topology || { log "topology failed"; exit 1; }
deps=$(modinfo -F depends "$KPX_KO" | tr ',' ' ')
[ -z "$deps" ] || modprobe -a $deps
grep -q '^kpx ' /proc/modules || insmod "$KPX_KO" || exit 1
"$KPXCTL" set tcp 10.96.0.1:80 10.200.0.1:8080 10.201.0.1:8080 || exit 1
"$KPXCTL" set tcp 10.96.0.2:80 10.200.0.1:8080 10.201.0.1:8080 \
	--scheduler lc --affinity 10800 || exit 1
ncpu=$(nproc)

# run NAME VIP K: K senders on CPUs 0..K-1 for SECS seconds.
run() {
	local name=$1 vip=$2 k=$3 c total=0 per=""

	conntrack -F >/dev/null 2>&1
	for ((c = 0; c < k; c++)); do
		ip netns exec cli taskset -c "$c" "$LOAD" conn -d "$SECS" "$vip" \
			>"$TMPD/$name-$k-$c.json" 2>"$TMPD/$name-$k-$c.err" &
	done
	wait
	for ((c = 0; c < k; c++)); do
		cps=$(sed -n 's/.*"cps":\([0-9.]*\).*/\1/p' "$TMPD/$name-$k-$c.json")
		total=$(awk -v a="$total" -v b="${cps:-0}" 'BEGIN { print a + b }')
		per="$per ${cps:-0}"
	done
	echo "KPX-PERCPU frontend=$name senders=$k cps=$total per_sender=${per# }"
}

for vip in random:10.96.0.1:80 lc-affinity:10.96.0.2:80; do
	run "${vip%%:*}" "${vip#*:}" 1
	[ "$ncpu" -ge 2 ] && run "${vip%%:*}" "${vip#*:}" 2
	[ "$ncpu" -gt 2 ] && run "${vip%%:*}" "${vip#*:}" "$ncpu"
done
"$KPXCTL" stats
"$KPXCTL" flush
exit 0
