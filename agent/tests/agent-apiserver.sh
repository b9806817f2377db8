#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-agent against the test API server (selftests/apiserver), on the host,
# loopback only, without the module (--dry-run):
#  1. --dry-run --once with the real-objects documents and a Node node-a
#     (testdata/real-objects/node-a.json): lists everything and logs exactly the
#     expected SETs (ClusterIPs, NodePorts, MetalLB ingress IPs), exits 0;
#  2. a running agent sees a Service + EndpointSlice added through the
#     server's control API (one SET with the backends), then deleted (DEL);
#  3. without --dry-run it exits 1 with the "module not loaded" message
#     (the host cannot load kpx.ko);
#  4. SIGTERM ends it cleanly (exit 0).
#  6. a Node name of 253 characters works end to end; a
#     --hostname-override without a Node is warned about and, as
#     kube-proxy, waited for: nothing programmed and /healthz not served
#     until it is created, then the state equals the API; a Node that never
#     comes: after the wait for its IPs the agent goes on without it, with
#     --detect-local-mode NodeCIDR it exits 1 after the wait for podCIDRs
#     (KPX_TEST_NODE_WAIT_MS shortens the 30 s and 5 min; test_nodewait
#     checks the real ones);
#  7. server: without a scheme is https (the token never goes in clear),
#     an explicit http:// sends it with a warning, ftp:// is refused;
#  8. the logs of these runs parse with a parser written from klog's
#     grammar (tests/lib/klogparse.py), and a --logging-format=json run
#     as component-base's JSON lines, with the same changes.
# Usage: tests/agent-apiserver.sh [path/to/kpx-agent]   TAP on stdout.
ITEST_NAME=api
. "$(dirname "$0")/lib/itest.sh"
srv= ag=

echo "TAP version 13"
itest_server "$tmp/server.log" --bookmark-interval 1000 \
	--objects "$objects"/0[123]-*.json "$objects/node-a.json"

# 1. One dry-run sync of the real objects.
timeout 30 "$agent" --v 2 --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a \
	--dry-run --once 2>"$tmp/once.log"
ok $? "--dry-run --once exits 0"
grep -Eo '] "dry run: (set|del) [^"]*"' "$tmp/once.log" | sort >"$tmp/got"
sort >"$tmp/want" <<'WANT'
] "dry run: set 10.96.0.1:443/tcp flags=0x8 backends=[192.0.2.10:6443@1]"
] "dry run: set 10.96.0.10:53/tcp flags=0x8 backends=[10.244.0.3:53@1 10.244.0.4:53@1]"
] "dry run: set 10.96.0.10:53/udp flags=0x8 backends=[10.244.0.3:53@1 10.244.0.4:53@1]"
] "dry run: set 10.96.0.10:9153/tcp flags=0x8 backends=[10.244.0.3:9153@1 10.244.0.4:9153@1]"
] "dry run: set 10.96.199.145:18000/tcp flags=0x8 backends=[]"
] "dry run: set 10.96.199.145:18001/tcp flags=0x8 backends=[]"
] "dry run: set 10.96.199.145:19001/tcp flags=0x8 backends=[]"
] "dry run: set 10.96.199.145:9443/tcp flags=0x8 backends=[]"
] "dry run: set 10.96.234.211:80/tcp flags=0x8 backends=[]"
] "dry run: set 10.96.91.35:5300/udp flags=0x8 backends=[]"
] "dry run: set 192.0.2.11:30391/tcp flags=0x10 backends=[]"
] "dry run: set 192.0.2.11:30519/udp flags=0x10 backends=[]"
] "dry run: set 198.51.100.205:80/tcp flags=0x10 backends=[]"
] "dry run: set 198.51.100.208:5300/udp flags=0x10 backends=[]"
WANT
diff -u "$tmp/want" "$tmp/got" >&2
ok $? "the 14 expected SETs (10 ClusterIPs, 2 NodePorts on node-a's InternalIP, 2 LoadBalancer IPs), nothing else"
grep -q '] "services: listed 5 at' "$tmp/once.log" &&
	grep -q '] "endpointslices: listed 3 at' "$tmp/once.log"
ok $? "listed 5 Services and 3 EndpointSlices"
grep -q '] "sync done" .*frontends=14 sets=14 dels=0 errors=0' "$tmp/once.log"
ok $? "one sync: frontends=14 sets=14 dels=0 errors=0"

# 2. Watch: add, then delete, a Service with its slice.
"$agent" --v 2 --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a \
	--dry-run --min-sync-period 200ms 2>"$tmp/watch.log" &
ag=$!
wait_log "$tmp/watch.log" 'sync done.*sets=14'
ok $? "running agent: initial sync"
cat >"$tmp/add.json" <<'ADD'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Service",
  "metadata": {"name": "web", "namespace": "shop"},
  "spec": {"type": "ClusterIP", "clusterIP": "10.96.50.50", "clusterIPs": ["10.96.50.50"],
           "ipFamilies": ["IPv4"],
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "web-abc", "namespace": "shop",
               "labels": {"kubernetes.io/service-name": "web"}},
  "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
  "endpoints": [{"addresses": ["10.244.1.5"], "conditions": {"ready": true}},
                {"addresses": ["10.244.2.6"], "conditions": {"ready": true}}]}]}
ADD
apictl apply "$tmp/add.json"
ok $? "control API: add Service shop/web and its slice"
wait_log "$tmp/watch.log" 'dry run: set 10.96.50.50:80/tcp flags=0x8 backends=\[10.244.1.5:8080@1 10.244.2.6:8080@1\]'
ok $? "watch: SET 10.96.50.50:80/tcp with both backends"
apictl delete Service shop web && apictl delete EndpointSlice shop web-abc
ok $? "control API: delete them"
wait_log "$tmp/watch.log" 'dry run: del 10.96.50.50:80/tcp'
ok $? "watch: DEL 10.96.50.50:80/tcp"
sets=$(grep -c 'dry run: set' "$tmp/watch.log")
ok $((sets > 14 && sets <= 16 ? 0 : 1)) "only changes sent after the first sync ($sets SETs in all)"

# 3. A Service excluded by kube-proxy's label selector is never seen; with
#    history compacted past the agent's resourceVersion the re-watch gets
#    410 Gone and the agent relists, which changes nothing.
cat >"$tmp/hidden.json" <<'HIDDEN'
{"apiVersion": "v1", "kind": "Service",
 "metadata": {"name": "other", "namespace": "shop",
              "labels": {"service.kubernetes.io/service-proxy-name": "someone-else"}},
 "spec": {"type": "ClusterIP", "clusterIP": "10.96.60.60", "clusterIPs": ["10.96.60.60"],
          "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}}
HIDDEN
before=$(grep -c 'dry run:' "$tmp/watch.log")
apictl apply "$tmp/hidden.json" && apictl compact && apictl drop-watches
ok $? "control API: add a Service for another proxy, compact, drop watches"
wait_log "$tmp/watch.log" 'services: resourceVersion [0-9]+ expired, relisting'
ok $? "re-watch: 410 Gone seen"
wait_log "$tmp/watch.log" 'services: listed 5 at resourceVersion [0-9]+ \(relist\)'
ok $? "relisted 5 Services (the other proxy's one filtered out)"
sleep 0.5
after=$(grep -c 'dry run:' "$tmp/watch.log")
ok $((after == before ? 0 : 1)) "relist sent no change ($before -> $after ops)"

# 4. SIGTERM.
kill -TERM "$ag"
wait "$ag"
ok $? "SIGTERM: exit 0"
ag=
grep -q 'Terminated: exiting, module state left in place' "$tmp/watch.log"
ok $? "SIGTERM logged"

# 5. Without --dry-run on the host: the module is not there.
if [ -e /etc/kpx-guest ]; then
	tap_skip "inside the VM the module may be loaded"
else
	out=$("$agent" --kubeconfig "$tmp/state/kubeconfig" --proxy-mode kpx --once 2>&1)
	rc=$?
	[ $rc = 1 ] && [ "$out" = 'kpx-agent: proxy mode kpx cannot work here: kpx module not loaded (generic netlink family "kpx" not found) and modprobe kpx failed' ]
	ok $? "no module: exit 1 and the message ($rc: $out)"
fi

# 6. A Node name of 253 characters (DNS-1123 subdomain, 4 labels), end to
#    end: selected by the fieldSelector, its InternalIP gets the NodePort
#    (not that of a Node whose name differs in the last character).
long=$(printf '%063d.%063d.%063d.%061d' 0 0 0 0 | tr 0 a)
other=${long%a}b
cat >"$tmp/long.json" <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$long"},
  "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.77"}]}},
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$other"},
  "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.78"}]}},
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np", "namespace": "t"},
  "spec": {"type": "NodePort", "clusterIP": "10.96.7.1", "clusterIPs": ["10.96.7.1"],
           "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30080}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "np-1", "namespace": "t", "labels": {"kubernetes.io/service-name": "np"}},
  "addressType": "IPv4", "ports": [{"port": 8080, "protocol": "TCP"}],
  "endpoints": [{"addresses": ["10.244.7.1"], "conditions": {"ready": true}, "nodeName": "$long"}]}]}
EOF
api_start "$tmp/long" "$tmp/long-server.log" --objects "$tmp/long.json"
srv2=$API_PID
timeout 30 "$agent" --kubeconfig "$tmp/long/kubeconfig" --hostname-override "$long" \
	--dry-run --once 2>"$tmp/long.log"
ok $? "253-character node name: --dry-run --once exits 0 (${#long} characters)"
grep -q "starting: node $long," "$tmp/long.log" && grep -q 'node: listed 1 at' "$tmp/long.log"
ok $? "253-character node name: the whole name used, its Node listed"
grep -Eo '] "dry run: set [^"]*"' "$tmp/long.log" | sort >"$tmp/got"
sort >"$tmp/want" <<'WANT'
] "dry run: set 10.96.7.1:80/tcp flags=0x8 backends=[10.244.7.1:8080@1]"
] "dry run: set 192.0.2.77:30080/tcp flags=0x4 backends=[10.244.7.1:8080@1]"
WANT
diff "$tmp/want" "$tmp/got" >/dev/null
ok $? "253-character node name: the NodePort on its own InternalIP only"
# A --hostname-override that matches no Node yet: a warning, then, as
# kube-proxy, a wait for it: no sync (nothing programmed) and no /healthz
# until it is created 3 s later; then the state equals the API.
hp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$agent" --v 2 --kubeconfig "$tmp/long/kubeconfig" --hostname-override late-node --dry-run \
	--min-sync-period 100ms --healthz-bind-address "127.0.0.1:$hp" 2>"$tmp/late.log" &
ag=$!
wait_log "$tmp/late.log" 'waiting up to 30s for Node late-node to exist with an InternalIP or ExternalIP address' &&
	grep -q 'node: no Node named \\"late-node\\" (--hostname-override' "$tmp/late.log"
ok $? "no Node late-node: warned, and the agent says it waits for it"
sleep 3
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hp/healthz")
! grep -Eq 'dry run: (set|del) |sync done' "$tmp/late.log" && [ "$code" != 200 ]
ok $? "3 s without the Node: nothing programmed, no sync, /healthz not 200 ($code)"
cat >"$tmp/late.json" <<'EOF'
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late-node"},
 "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.79"}]}}
EOF
"$api/kpx-test-apictl" --kubeconfig "$tmp/long/kubeconfig" apply "$tmp/late.json" >/dev/null &&
	wait_log "$tmp/late.log" 'sync done' &&
	grep -q 'Node late-node found with its addresses' "$tmp/late.log"
ok $? "Node late-node created: found, first sync"
grep -Eo '] "dry run: (set|del) [^"]*"' "$tmp/late.log" | sort >"$tmp/got"
sort >"$tmp/want" <<'WANT'
] "dry run: set 10.96.7.1:80/tcp flags=0x8 backends=[10.244.7.1:8080@1]"
] "dry run: set 192.0.2.79:30080/tcp flags=0x4 backends=[10.244.7.1:8080@1]"
WANT
diff -u "$tmp/want" "$tmp/got" >&2
ok $? "after the Node: the state equals the API (ClusterIP, NodePort on its InternalIP)"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hp/healthz")
ok $([ "$code" = 200 ] && echo 0 || echo 1) "after the first sync: /healthz 200 ($code)"
kill "$ag"
wait "$ag" 2>/dev/null
ag=
# A Node that never comes, default --detect-local-mode: the wait for its
# IPs (30 s, 2 s here) ends with an error and the agent goes on without
# it: the ClusterIP only.
t0=$(date +%s.%N)
KPX_TEST_NODE_WAIT_MS=2000,3000 timeout 30 "$agent" --v 2 --kubeconfig "$tmp/long/kubeconfig" \
	--hostname-override ghost-node --dry-run --once 2>"$tmp/ghost.log"
st=$?
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
grep -Eo '] "dry run: (set|del) [^"]*"' "$tmp/ghost.log" >"$tmp/got"
[ $st = 0 ] && awk -v e="$el" 'BEGIN { exit !(e >= 2) }' &&
	grep -q '^E.*] "timed out waiting for Node ghost-node to exist: going on without it' "$tmp/ghost.log" &&
	[ "$(cat "$tmp/got")" = '] "dry run: set 10.96.7.1:80/tcp flags=0x8 backends=[10.244.7.1:8080@1]"' ]
ok $? "no Node ever: after the IPs timeout ($el s) an error, then the sync without it (rc $st)"
# --detect-local-mode NodeCIDR: the wait says 5 min for spec.podCIDRs (the
# real timeouts); then, shortened, kube-proxy's outcome: exit 1, nothing
# programmed, no /healthz; likewise for a Node without podCIDRs.
KPX_TEST_NODE_WAIT_MS=0,300000 "$agent" --v 2 --kubeconfig "$tmp/long/kubeconfig" --hostname-override ghost-node \
	--dry-run --detect-local-mode NodeCIDR 2>"$tmp/ghost2.log" &
ag=$!
wait_log "$tmp/ghost2.log" 'NodeCIDR: waiting up to 300s for Node ghost-node to exist and to be allocated spec.podCIDRs'
ok $? "NodeCIDR, no Node: waits 5 min for its podCIDRs, logged"
kill "$ag"
wait "$ag" 2>/dev/null
ag=
t0=$(date +%s.%N)
KPX_TEST_NODE_WAIT_MS=1000,3000 timeout 30 "$agent" --v 2 --kubeconfig "$tmp/long/kubeconfig" \
	--hostname-override ghost-node --dry-run --detect-local-mode NodeCIDR \
	--healthz-bind-address "127.0.0.1:$hp" 2>"$tmp/ghost3.log" &
ag=$!
sleep 2
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hp/healthz")
wait "$ag"
st=$?
ag=
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ $st = 1 ] && [ "$code" != 200 ] && awk -v e="$el" 'BEGIN { exit !(e >= 4) }' &&
	grep -q '^E.*] "timeout waiting for node \\"ghost-node\\" to exist' "$tmp/ghost3.log" &&
	! grep -Eq 'dry run: (set|del) |sync done' "$tmp/ghost3.log"
ok $? "NodeCIDR, no Node ever: exit 1 after 1 + 3 s (rc $st, $el s), nothing programmed, /healthz not 200 ($code)"
KPX_TEST_NODE_WAIT_MS=1000,2000 timeout 30 "$agent" --v 2 --kubeconfig "$tmp/long/kubeconfig" \
	--hostname-override "$other" --dry-run --detect-local-mode NodeCIDR 2>"$tmp/ghost4.log"
st=$?
[ $st = 1 ] && grep -q 'timeout waiting for PodCIDR allocation on node' "$tmp/ghost4.log" &&
	! grep -Eq 'dry run: (set|del) |sync done' "$tmp/ghost4.log"
ok $? "NodeCIDR, a Node without podCIDRs: exit 1, kube-proxy's message (rc $st)"
kill "$srv2"
wait "$srv2" 2>/dev/null

# 7. The bearer token and plain http: a loopback listener records what
#    the agent sends.  server: without a scheme is https (a TLS
#    ClientHello, no token in clear); only an explicit http:// sends the
#    token over plain http (with a warning); ftp:// is refused.
cat >"$tmp/capture.py" <<'EOF'
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".port", "w").write("%d\n" % s.getsockname()[1])
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        data = c.recv(4096)
    except OSError:
        data = b""
    with open(sys.argv[1], "ab") as f:
        f.write(data)
    c.close()
EOF
python3 "$tmp/capture.py" "$tmp/capture" &
cap=$!
for _ in $(seq 50); do [ -s "$tmp/capture.port" ] && break; sleep 0.1; done
cport=$(cat "$tmp/capture.port")
kc_with() {	# kc_with SERVER: a kubeconfig with a token for SERVER
	cat >"$tmp/kc-plain" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: secret-token-7f3a}}]
EOF
}
kc_with "127.0.0.1:$cport"
timeout 4 "$agent" --kubeconfig "$tmp/kc-plain" --hostname-override node-a --dry-run --once \
	2>"$tmp/plain1.log"
grep -q "server https://127.0.0.1:$cport," "$tmp/plain1.log" &&
	[ -s "$tmp/capture" ] && [ "$(head -c 1 "$tmp/capture" | od -An -tx1 | tr -d ' ')" = 16 ] &&
	! grep -aq 'secret-token-7f3a' "$tmp/capture"
ok $? "server 127.0.0.1:PORT (no scheme): https, a TLS handshake, the token never in clear"
: >"$tmp/capture"
kc_with "http://127.0.0.1:$cport"
timeout 4 "$agent" --kubeconfig "$tmp/kc-plain" --hostname-override node-a --dry-run --once \
	2>"$tmp/plain2.log"
grep -aq 'Authorization: Bearer secret-token-7f3a' "$tmp/capture" &&
	grep -q 'is plain http: the bearer token is sent unencrypted' "$tmp/plain2.log"
ok $? "server http://127.0.0.1:PORT (explicit): the token is sent, with a warning"
kill "$cap"
wait "$cap" 2>/dev/null
kc_with "ftp://127.0.0.1:$cport"
out=$(timeout 10 "$agent" --kubeconfig "$tmp/kc-plain" --hostname-override node-a --dry-run --once 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q 'scheme ftp is not http or https' <<<"$out"
ok $? "server ftp://: refused at start ($rc: $(tail -n 1 <<<"$out"))"

# 8. The logs as a shipper for kube-proxy reads them (tests/lib/klogparse.py,
# klog's grammar): every line the agents above wrote in the default text
# format, then a --logging-format=json run, both with the V(2) sync line.
kp() { python3 "$top/agent/tests/lib/klogparse.py" "$@"; }
out=$(kp text "$tmp/once.log" "$tmp/watch.log" "$tmp/late.log" "$tmp/ghost.log" \
	--want-msg "sync done" --want-key frontends --want-key duration_ms)
ok $? "text logs parse as klog's format: $out"
timeout 30 "$agent" --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a \
	--dry-run --once --v 2 --logging-format=json 2>"$tmp/json.log"
rc=$?
out=$(kp json "$tmp/json.log" --want-msg "sync done" --want-v 0 --want-v 2 --want-key frontends)
ok $? "--logging-format=json: component-base's JSON lines (rc $rc): $out"
grep -Eo '"msg":"dry run: (set|del) [^"]*"' "$tmp/json.log" | sed 's/^"msg":/] /' | sort >"$tmp/got"
grep -Eo '] "dry run: (set|del) [^"]*"' "$tmp/once.log" | sort | diff -u - "$tmp/got" >&2
ok $? "--logging-format=json: the same changes as the text run"
printf '%s\n' '2026-12-01T12:00:00.000Z level=info comp=sync msg="x"' >"$tmp/logfmt.log"
printf '%s\n' 'I1201 12:00:00.000000    1234 a.c:1] "bad \q escape"' >"$tmp/badq.log"
printf '%s\n' '{"ts":1.5,"caller":"a.c:1","msg":"x","v":0}' >"$tmp/badts.log"
! kp text "$tmp/logfmt.log" >/dev/null && ! kp text "$tmp/badq.log" >/dev/null &&
	! kp json "$tmp/badts.log" >/dev/null && ! kp json "$tmp/once.log" >/dev/null
ok $? "the parser refuses logfmt lines, a bad escape, ts in seconds, text as JSON"

tap_done
