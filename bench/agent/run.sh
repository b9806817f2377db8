#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/agent/run.sh [SERVICES [ENDPOINTS_PER_SERVICE [CHANGES]]]
#
# kpx-agent's cost on the host, --dry-run against the test API server
# (loopback only; defaults 10000 Services x 10 endpoints = 100,000
# endpoints, 1000 changes):
#  1. initial sync: "kpx-agent --dry-run --once" (list in pages of 500,
#     model, one sync): user+system CPU seconds and peak RSS (getrusage of
#     the child, measure.py);
#  2. 1000 endpoint changes: a running agent (first sync done) gets CHANGES
#     EndpointSlice updates in one API request; CPU it spent until all were
#     synced (/proc/PID/stat) and its peak RSS (VmHWM).
# Targets: peak RSS < 64 MiB, initial sync < 1 s of agent CPU.
# Prints one "bench ..." line per measurement; exit 1 if a target is missed.
# The dry run logs every change (one line each), which is included.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
agent=${KPX_AGENT:-$top/agent/kpx-agent}
api=$top/selftests/apiserver
nsvc=${1:-10000} eps=${2:-10} nchg=${3:-1000}
tmp=$(mktemp -d /tmp/kpx-bench-agent.XXXXXX)
srv= ag= rc=0
cleanup() {
	[ -n "$ag" ] && kill "$ag" 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$top/agent/tests/lib/apiserver.sh"
API_CERTS=$tmp/certs

python3 "$here/gen.py" "$nsvc" "$eps" "$tmp/objects.json" "$nchg" "$tmp/changes.json"
api_certs "$API_CERTS" || { echo "gen-certs.sh failed" >&2; exit 2; }
api_start "$tmp/state" "$tmp/server.log" --objects "$tmp/objects.json" || { echo "no API server" >&2; exit 2; }
srv=$API_PID
kc=$tmp/state/kubeconfig

# 1. initial sync
python3 "$here/measure.py" "$tmp/once.log" "$agent" --kubeconfig "$kc" \
	--hostname-override node-a --dry-run --once --kube-api-qps 0 >"$tmp/once.res"
read -r st cpu rss wall <"$tmp/once.res"
fronts=$(sed -n 's/.*] "sync done" .*frontends=\([0-9]*\).*/\1/p' "$tmp/once.log")
echo "bench initial_sync services=$nsvc endpoints=$((nsvc * eps)) frontends=$fronts exit=$st cpu_s=$cpu peak_rss_mib=$rss wall_s=$wall"
if [ "$st" != 0 ] || [ "$fronts" != "$nsvc" ]; then
	echo "bench: initial sync failed" >&2
	tail -n 5 "$tmp/once.log" >&2
	rc=1
fi
awk -v c="$cpu" -v r="$rss" 'BEGIN { exit !(c < 1.0 && r < 64) }' ||
	{ echo "bench: initial sync misses a target (< 1 s CPU, < 64 MiB)"; rc=1; }

# 2. changes on a running agent
"$agent" --kubeconfig "$kc" --hostname-override node-a --dry-run --kube-api-qps 0 \
	--min-sync-period 100ms --healthz-bind-address 127.0.0.1:0 \
	--metrics-bind-address 127.0.0.1:0 2>"$tmp/agent.log" &
ag=$!
for _ in $(seq 600); do grep -q 'sync done' "$tmp/agent.log" && break; sleep 0.1; done
ticks() { awk '{ print $14 + $15 }' "/proc/$ag/stat"; }
hz=$(getconf CLK_TCK)
sets0=$(grep -c 'dry run: set' "$tmp/agent.log")
c0=$(ticks)
curl -sS -f -o /dev/null --cacert "$tmp/certs/ca.crt" \
	-H "Authorization: Bearer $(cat "$tmp/certs/token")" \
	-H 'Content-Type: application/json' --data-binary @"$tmp/changes.json" \
	"https://127.0.0.1:$(cat "$tmp/state/port")/_test/apply"
t0=$(date +%s.%N)
got=0
for _ in $(seq 1200); do
	got=$(($(grep -c 'dry run: set' "$tmp/agent.log") - sets0))
	[ "$got" -ge "$nchg" ] && break
	sleep 0.05
done
t1=$(date +%s.%N)
c1=$(ticks)
hwm=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$ag/status")
cpu=$(awk -v a="$c0" -v b="$c1" -v h="$hz" 'BEGIN { printf "%.3f", (b - a) / h }')
echo "bench changes=$nchg synced=$got cpu_s=$cpu peak_rss_mib=$hwm wall_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
[ "$got" = "$nchg" ] || { echo "bench: $got of $nchg changes synced" >&2; rc=1; }
awk -v r="$hwm" 'BEGIN { exit !(r < 64) }' || { echo "bench: peak RSS over 64 MiB"; rc=1; }
exit $rc
