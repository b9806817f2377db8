#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/agent/kpx_vm.sh [N...]: the first full sync into the kpx
# module at N Services x KPX_BENCH_EPS endpoints (default 100) for each N
# (default "1000 5000 10000"), through bench_kpx (bench_kpx.c), inside the
# test VM.  From the host:
#   make -C bench/agent bench_kpx
#   KPX_KO=/path/kpx.ko selftests/qemu/run-vm.sh -- bench/agent/kpx_vm.sh
# KPX_BENCH_PERF=1 also records "perf record -e cpu-clock -g" over bench_kpx
# at the largest N and prints the top of its report (TCG has no PMU; the
# model build is included).
. "$(dirname "$0")/../../selftests/lib.sh"
require_guest

BIN=${KPX_BENCH_KPX:-$REPO/bench/agent/bench_kpx}
EPS=${KPX_BENCH_EPS:-100}
[ $# -gt 0 ] || set -- 1000 5000 10000
ko=${KPX_KO:-$REPO/kmod/kpx.ko}
if ! grep -q '^kpx ' /proc/modules; then
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps || exit 1
	insmod "$ko" || exit 1
fi
last=${!#}
rc=0
for n in "$@"; do
	if [ "${KPX_BENCH_PERF:-}" = 1 ] && [ "$n" = "$last" ]; then
		# the model build (json-c, malloc) is in the profile too
		perf record -q -F 200 -e cpu-clock -g -o "$TMPD/perf.data" \
			-- "$BIN" "$n" "$EPS" || rc=1
		perf report -i "$TMPD/perf.data" --stdio --no-children \
			--percent-limit 0.7 -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 50
		perf report -i "$TMPD/perf.data" --stdio --children \
			--percent-limit 2 -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 70
	else
		"$BIN" "$n" "$EPS" || rc=1
	fi
done
exit $rc
