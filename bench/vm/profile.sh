#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/vm/profile.sh: where a new connection's time goes, in the VM (run
# by bench/profile.sh; refuses elsewhere).  The benchmark topology
# (topo.sh), kpx.ko with one Service (10.96.0.1:80 -> A_0, B_0), then
# system-wide "perf record -e cpu-clock -g" (TCG has no PMU) during
# kpx_load conn, once through the VIP and once straight to the pods (the
# same node path without the DNAT); each report is printed between
# "KPX-PROFILE-BEGIN NAME" and "KPX-PROFILE-END" lines: the top symbols
# (self time), then kpx's own functions, then call chains into kpx.
#
# Environment: KPX_BENCH_SECS (seconds per run, default 20),
# KPX_BENCH_LOAD, KPX_KO, KPXCTL (as guest.sh).

. "$(dirname "$0")/../../selftests/lib.sh"
. "$(dirname "$0")/topo.sh"
require_guest

LOAD=${KPX_BENCH_LOAD:-$REPO/bench/tools/kpx_load}
SECS=${KPX_BENCH_SECS:-20}
PERF=$(ls /usr/bin/perf_6.1 2>/dev/null || command -v perf)

setup_trap
[ -n "$PERF" ] || skip "no perf"
bench_topology || { log "topology failed"; exit 1; }
deps=$(modinfo -F depends "$KPX_KO" | tr ',' ' ')
[ -z "$deps" ] || modprobe -a $deps
grep -q '^kpx ' /proc/modules || insmod "$KPX_KO" || exit 1
"$KPXCTL" set tcp 10.96.0.1:80 10.200.0.1:8080 10.201.0.1:8080 || exit 1
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid

# prof NAME TARGET...: perf during kpx_load conn to TARGETs.
prof() {
	local name=$1 data=$TMPD/$1.data

	shift
	conntrack -F >/dev/null 2>&1
	"$PERF" record -q -e cpu-clock -F 2000 -a -g -o "$data" -- \
		ip netns exec cli "$LOAD" conn -d "$SECS" "$@" >"$TMPD/$name.json" 2>"$TMPD/$name.err"
	echo "KPX-PROFILE-BEGIN $name"
	echo "load: $(cat "$TMPD/$name.json")"
	echo "--- top symbols, self time (all CPUs, whole system)"
	"$PERF" report -i "$data" --stdio --no-children --sort sym -g none \
		--percent-limit 0.7 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 45
	echo "--- kpx module symbols, self time"
	"$PERF" report -i "$data" --stdio --no-children --sort sym -g none \
		--dsos '[kpx]' 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 20
	echo "--- kpx with children (inclusive), top"
	"$PERF" report -i "$data" --stdio --children --sort sym -g none 2>/dev/null |
		grep -E 'kpx|nf_nat|nf_conntrack_in|nf_hook_slow|ip_rcv|__netif_receive|tcp_v4_connect|ip_forward' |
		head -n 25
	echo "KPX-PROFILE-END"
}

prof vip 10.96.0.1:80
prof pod 10.200.0.1:8080+1 10.201.0.1:8080+1
"$KPXCTL" flush
exit 0
