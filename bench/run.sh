#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/run.sh [--quick]: the side-by-side VM benchmark (issue 7).
#
# Builds the module, agent, kpxctl and bench/tools/kpx_load, writes the
# Services of every N (bench/vm/gen.py) under $KPX_BENCH_WORK (default
# /var/tmp/kpx-bench, visible read-only in the guest), boots the VM
# (selftests/qemu/run-vm.sh) with bench/vm/guest.sh, keeps its
# "KPX-BENCH" lines as bench/results/raw.jsonl and makes bench.json,
# bench.md and newconn.png in bench/results/ (bench/report.py).
#
# Modes: KPX_BENCH_MODES (default kpx nftables iptables ipvs, each run as
# "kpx-agent --proxy-mode MODE"; one whose agent exits at once is recorded
# as unavailable with its last log line).  The binaries are copied to
# $KPX_BENCH_WORK/bin first, so that rebuilds in the tree during the run do
# not change what is measured.  Also KPX_BENCH_NS, KPX_BENCH_SECS,
# KPX_BENCH_BULK_SECS, KPX_BENCH_CONC, KPX_BENCH_ROUNDS, KPX_BENCH_CHANGES,
# KPX_BENCH_CAP (see guest.sh).
#
# Full run: N in 1 1000 10000 50000, 10 s of connections per point (3
# interleaved rounds), 100 changes, cap 600 s per step.  --quick: N in 1
# 1000, 3 s, 20 changes, cap 120 s; about 1 minute per (mode, N) point
# on an idle 2-core TCG host (boot 30 s), so under 10 minutes for the four
# modes; on a host shared with other VMs it takes several times that.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
quick=
[ "${1:-}" = --quick ] && quick=1

if [ -n "$quick" ]; then
	: "${KPX_BENCH_NS:=1 1000}" "${KPX_BENCH_SECS:=3}" "${KPX_BENCH_CHANGES:=20}"
	: "${KPX_BENCH_CAP:=120}" "${KPX_BENCH_BULK_SECS:=2}"
else
	: "${KPX_BENCH_NS:=1 1000 10000 50000}" "${KPX_BENCH_SECS:=10}" "${KPX_BENCH_CHANGES:=100}"
	: "${KPX_BENCH_CAP:=600}" "${KPX_BENCH_BULK_SECS:=5}"
fi
: "${KPX_BENCH_MODES:=kpx nftables iptables ipvs}"
: "${KPX_BENCH_WORK:=/var/tmp/kpx-bench}"
export KPX_BENCH_NS KPX_BENCH_SECS KPX_BENCH_ROUNDS=${KPX_BENCH_ROUNDS:-3} KPX_BENCH_CHANGES KPX_BENCH_CAP KPX_BENCH_BULK_SECS KPX_BENCH_MODES
export KPX_BENCH_DATA=$KPX_BENCH_WORK/data

step() { echo "bench: $*" >&2; }
t0=$(date +%s)

step "building"
make -C "$repo/kmod" >/dev/null || exit 1
make -C "$repo/agent" kpx-agent kpxctl >/dev/null || exit 1
make -C "$repo/selftests" all >/dev/null || exit 1
make -C "$here/tools" >/dev/null || exit 1

bin=$KPX_BENCH_WORK/bin
mkdir -p "$bin"
cp "$repo/kmod/kpx.ko" "$repo/agent/kpx-agent" "$repo/agent/kpxctl" "$here/tools/kpx_load" "$bin/" || exit 1
export KPX_KO=$bin/kpx.ko KPX_AGENT=$bin/kpx-agent KPXCTL=$bin/kpxctl KPX_BENCH_LOAD=$bin/kpx_load
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null)
[ -z "$(git -C "$repo" status --porcelain agent kmod 2>/dev/null)" ] || commit="$commit+dirty(agent,kmod)"

for n in $KPX_BENCH_NS; do
	[ -s "$KPX_BENCH_DATA/slices2-$n.json" ] && continue
	step "generating $n Services"
	python3 "$here/vm/gen.py" "$n" "$KPX_BENCH_DATA" || exit 1
done

results=${KPX_BENCH_RESULTS:-$here/results}
mkdir -p "$results" "$KPX_BENCH_WORK"
log=$KPX_BENCH_WORK/vm.log
: "${KPX_VM_TIMEOUT:=$([ -n "$quick" ] && echo 2400 || echo 14400)}"
: "${KPX_VM_MEM:=2048}"
export KPX_VM_TIMEOUT KPX_VM_MEM
step "booting the VM (modes: $KPX_BENCH_MODES; N: $KPX_BENCH_NS; log $log)"
cd "$repo" || exit 1
KPX_VM_LOG=$log "$repo/selftests/qemu/run-vm.sh" -- /bin/bash "$here/vm/guest.sh"
rc=$?
grep -a '^KPX-BENCH ' "$log" | sed 's/^KPX-BENCH //' >"$results/raw.jsonl"
step "VM exit $rc; $(wc -l <"$results/raw.jsonl") results"
python3 "$here/report.py" "$results/raw.jsonl" "$results" \
	--wall "$(($(date +%s) - t0))" --commit "$commit" ${quick:+--quick} || exit 1
exit $rc
