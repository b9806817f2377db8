#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo, inside the test VM: the walking skeleton end to end.
# The test API server serves cluster.json (Service demo/web, ClusterIP
# 10.96.0.80:80 -> named targetPort "http" = 8080 on pods web-1..3, and a
# headless Service that kpx must skip); kpx-agent lists and watches it and
# programs kpx.ko; curl from a client namespace spreads over the pods.
#
#   cli 10.0.1.2 --curl 10.96.0.80:80--> node (kpx.ko DNAT) --> web-1 10.244.1.2:8080
#                                                           --> web-2 10.244.2.2:8080
#                                                           --> web-3 10.244.3.2:8080
. "$(dirname "$0")/../lib.sh"
require_guest
DEMO=$SELFTESTS/demo
API=$SELFTESTS/apiserver

say() { printf '\n==> %s\n' "$*"; }

grep -q '^kpx ' /proc/modules || insmod "$KPX_KO" || exit 1
setup_trap
node_setup && cli_setup || exit 1
for i in 1 2 3; do
	pod_add "web-$i" "10.244.$i.2" || exit 1
	mkdir -p "$TMPD/www$i"
	echo "hello from pod web-$i (10.244.$i.2:8080)" >"$TMPD/www$i/index.html"
	ip netns exec "web-$i" busybox httpd -f -p "10.244.$i.2:8080" -h "$TMPD/www$i" &
	PIDS+=($!)
done

say "test Kubernetes API server (HTTPS, bearer token) with $(basename "$DEMO")/cluster.json"
mkdir -p "$TMPD/api"
"$API/gen-certs.sh" "$TMPD/certs" >/dev/null
python3 "$API/kpx-test-apiserver.py" --dir "$TMPD/api" --port 0 \
	--certs "$TMPD/certs" --objects "$DEMO/cluster.json" 2>"$TMPD/api.log" &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$TMPD/api/port" ] && break; sleep 0.1; done
echo "listening on https://127.0.0.1:$(cat "$TMPD/api/port")"

say "kpx-agent --kubeconfig (log below)"
"$KPX_AGENT" --kubeconfig "$TMPD/api/kubeconfig" --hostname-override node-a --v 2 >"$TMPD/agent.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
	"$KPXCTL" list | grep -q '10.244.3.2:8080' && break
	sleep 0.1
done
sed 's/^/    /' "$TMPD/agent.log"

say "12 x curl http://10.96.0.80/ from the client namespace"
for i in $(seq 12); do
	ip netns exec cli curl -s --max-time 2 http://10.96.0.80/ || echo "curl failed"
done | tee "$TMPD/answers"
echo
sort "$TMPD/answers" | uniq -c | sed 's/^/    /'

say "kpxctl list"
"$KPXCTL" list
say "cat /proc/net/kpx/services"
cat /proc/net/kpx/services
say "kpxctl stats"
"$KPXCTL" stats

n=$(sort -u "$TMPD/answers" | grep -c 'hello from pod')
[ "$n" -eq 3 ] && say "demo: OK: the ClusterIP spread over all 3 pods" && exit 0
say "demo: FAILED: $n distinct pods answered"
exit 1
