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

say "cat /proc/net/kpx/services"
cat /proc/net/kpx/services
say "kpxctl stats"
"$KPXCTL" stats

# --- Diagnosing demo/web, step by step (README: "Diagnosing a Service") ---
diag_ok=1
api_get() {
	curl -sS --cacert "$TMPD/certs/ca.crt" -H "Authorization: Bearer $(cat "$TMPD/certs/token")" \
		"https://127.0.0.1:$(cat "$TMPD/api/port")$1"
}
say "1. the Service (kubectl get service -n demo web -o json, summarised)"
api_get /api/v1/namespaces/demo/services/web |
	jq -M -c '{clusterIPs: .spec.clusterIPs, ports: .spec.ports, sessionAffinity: .spec.sessionAffinity}'
say "2. its EndpointSlices (kubectl get endpointslices -n demo -l kubernetes.io/service-name=web)"
api_get "/apis/discovery.k8s.io/v1/namespaces/demo/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb" |
	jq -M -r '.items[] | .metadata.name as $n | .endpoints[] |
		"\($n) \(.addresses[0]) ready=\(.conditions.ready) node=\(.nodeName)"'
say "3. the kernel state, each frontend with its Service (kpxctl list)"
"$KPXCTL" list
say "4. what a new connection from the client would get now (kpxctl explain)"
"$KPXCTL" explain tcp 10.0.1.2:40000 10.96.0.80:80 --iif v-cli | tee "$TMPD/explain"
grep -q 'demo/web' "$TMPD/explain" || { echo "demo: explain did not name demo/web"; diag_ok=0; }
say "5. the connections the module translated (kpxctl flows demo/web)"
"$KPXCTL" flows demo/web | tee "$TMPD/flows"
nflows=$(grep -cE '^ +10\.0\.1\.2:[0-9]+ ' "$TMPD/flows")
[ "$nflows" -ge 12 ] || { echo "demo: flows lists $nflows of the 12 connections"; diag_ok=0; }
say "6. the agent's view against the module's (kpxctl status)"
"$KPXCTL" status || { echo "demo: kpxctl status exit $?"; diag_ok=0; }
if command -v tcpdump >/dev/null; then
	say "7. a capture on the node's side of web-1's link while the client connects"
	timeout 8 tcpdump -l -n -c 4 -i v-web-1 'tcp port 8080 and tcp[tcpflags] & tcp-syn != 0' 2>/dev/null &
	cap=$!
	sleep 2
	for _ in 1 2 3 4 5 6; do ip netns exec cli curl -s -o /dev/null --max-time 2 http://10.96.0.80/; done
	wait "$cap"
else
	say "7. capture: tcpdump is not installed (packaging/install-deps.sh installs it)"
fi

n=$(sort -u "$TMPD/answers" | grep -c 'hello from pod')
if [ "$n" -eq 3 ] && [ "$diag_ok" = 1 ]; then
	say "demo: OK: the ClusterIP spread over all 3 pods; the diagnosis steps answered"
	exit 0
fi
say "demo: FAILED: $n distinct pods answered, diagnosis ok=$diag_ok"
exit 1
