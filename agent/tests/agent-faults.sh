#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-agent fault tests on the host, loopback only, --dry-run, against the
# test API server, through selftests/apiserver/faultproxy.py for the faults
# the server cannot produce.  After each fault the agent's state (its dry-run
# SET/DEL log replayed) must equal what a fresh "--once --dry-run" agent
# computes from the API server directly ("the API's state"):
#  1. watches dropped mid-stream (socket shut down), with changes around it
#  2. 410 Gone: history compacted past the agent's resourceVersion (its
#     watches stalled, then cut by the proxy) -> relist
#  3. a malformed Service: logged and skipped, every other change applied
#  4. a stalled watch (proxy stops forwarding): detected within
#     --watch-stall-timeout, re-watched, changes made meanwhile arrive
#  5. an HTTP 500 burst: retried with backoff, no crash
#  6. a server certificate from another CA: a clear TLS error, retried,
#     recovers when the right certificate is back
#  7. a rotated service-account token: 401 with the old one, the new one is
#     read from the token file on the next retry
#  8. 10,000 Services listed in pages of 500 (--once) from a server without
#     a watch cache (--no-watch-cache), which pages lists at resourceVersion=0
#  9. --kube-api-qps / --kube-api-burst slow those requests down
# 10. a relist answered 200 "{}" (an auth proxy's), a list without
#     metadata.resourceVersion and a 200 Status: errors, nothing deleted
# 11. a relist in pages of 2 whose second page fails (500), a Service of
#     page 1 deleted meanwhile, then its continue token expires (410): the
#     new list drops that Service
# 12. a watch event that does not parse, and one without a type: the watch
#     is resumed from the last resourceVersion, the change is not lost
# 13. a watch answered "too large resource version" (504, cause
#     ResourceVersionTooLarge) until the agent lists: it relists
# (The fault controls use curl -k: the proxy may be serving the wrong CA.)
# Usage: tests/agent-faults.sh [path/to/kpx-agent]   TAP on stdout.
ITEST_NAME=faults ITEST_WAIT_TENTHS=200
KPX_REAL_OBJECTS=
. "$(dirname "$0")/lib/itest.sh"
ag= srv=
# fl_svc, fl_replay (the dry-run state a log leads to), fl_fault, ...
. "$api/faults_lib.sh"
fault() { fl_fault "$@"; }
replay() { fl_replay "$@"; }
# truth: what a fresh agent computes from the API server directly
truth() {
	timeout 60 "$agent" --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a \
		--dry-run --once 2>"$tmp/truth.log" || return 1
	replay "$tmp/truth.log"
}
# converged DESC: the agent's state equals the truth within 20 s
converged() {
	local want got

	want=$(truth)
	# up to 45 s: after several faults in a row a resource's retry backoff
	# reaches its 30 s cap (k8s.c: the next try 15-30 s later)
	for _ in $(seq 225); do
		got=$(replay "$tmp/agent.log")
		[ "$got" = "$want" ] && break
		sleep 0.2
	done
	[ -n "$want" ] && [ "$got" = "$want" ]
	ok $? "$1: state equals the API's ($(wc -l <<<"$want") frontends)"
	[ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | sed 's/^/#   /' | head -20
}
apply_svc() { fl_svc "$@" >"$tmp/svc.json" && apictl apply "$tmp/svc.json"; }
# relist NAME IP: make every resource relist (as in the 410 test): the
# watches are held while Service NAME (IP) is applied and history is
# compacted past them, then cut.
relist() {
	fault 'stall?on=1' && apply_svc "$1" "$2" 80 10.244.9.9 && apictl compact &&
		fault drop && fault 'stall?on=0'
}
dels() { grep -c 'dry run: del ' "$tmp/agent.log"; }
blip=0 wip=0

echo "TAP version 13"
api_certs "$tmp/other-ca" || { echo "Bail out! gen-certs.sh failed"; exit 1; }
itest_server "$tmp/server.log" --bookmark-interval 1 \
	--objects "$objects"/0[12]*.json "$objects/node-a.json"
fl_proxy_start "$tmp/proxy" "$tmp/certs" "$tmp/other-ca" "$(cat "$tmp/state/port")" ||
	{ echo "Bail out! no fault proxy"; cat "$tmp/proxy/proxy.log"; exit 1; }
# The agent's kubeconfig: through the proxy, token from a file (rotation).
cp "$tmp/certs/token" "$tmp/sa-token"
fl_kubeconfig "$tmp/state/kubeconfig" "$tmp/sa-token" "$tmp/agent-kubeconfig" ||
	{ echo "Bail out! kubeconfig"; exit 1; }

"$agent" --kubeconfig "$tmp/agent-kubeconfig" --hostname-override node-a --dry-run \
	--min-sync-period 100ms --watch-stall-timeout 3s --healthz-bind-address 127.0.0.1:0 \
	--metrics-bind-address 127.0.0.1:0 --v 2 2>"$tmp/agent.log" &
ag=$!
wait_log "$tmp/agent.log" 'sync done'
ok $? "agent through the proxy: first sync"
converged "start"

# 1. dropped mid-stream
apply_svc a 10.96.1.1 80 10.244.1.1
apictl drop-watches
apply_svc b 10.96.1.2 80 10.244.1.2 10.244.1.3
wait_log "$tmp/agent.log" 'watch failed: transfer closed'
ok $? "dropped: the watch failure is logged"
converged "dropped mid-stream"

# 2. 410 Gone
# The agent must not see the last revision before history is compacted
# (bookmarks keep it current otherwise): its watches are stalled, c is
# applied, history compacted, and the proxy cuts the watches before
# forwarding anything more.
fault 'stall?on=1' && apply_svc c 10.96.1.3 80 10.244.1.4 && apictl compact &&
	fault drop && fault 'stall?on=0'
wait_log "$tmp/agent.log" 'resourceVersion [0-9]+ expired, relisting'
ok $? "410: expired resourceVersion seen, relisting"
converged "410 Gone"

# 3. malformed object
fl_bad_service "$tmp/bad.json"
apictl apply "$tmp/bad.json" && apply_svc d 10.96.1.4 80 10.244.1.5
wait_log "$tmp/agent.log" 'skipping malformed object t/bad'
ok $? "malformed Service logged and skipped"
wait_log "$tmp/agent.log" 'dry run: set 10.96.1.4:80/tcp'
ok $? "the next Service is still applied"
converged "malformed object"

# 4. stalled watch
restarts0=$(grep -c 'watch stalled' "$tmp/agent.log")
fault 'stall?on=1' && apply_svc e 10.96.1.5 80 10.244.1.6
sleep 1
grep -q 'dry run: set 10.96.1.5:80/tcp' "$tmp/agent.log"
ok $((! $?)) "stalled: the change does not arrive"
wait_log "$tmp/agent.log" 'watch stalled or timed out' 100
ok $? "stall detected within the 3 s stall timeout (+ margin)"
fault 'stall?on=0'
converged "stalled watch"

# 5. HTTP 500 burst
fault 'http500?n=5' && apictl drop-watches && apply_svc f 10.96.1.6 80 10.244.1.7
wait_log "$tmp/agent.log" 'HTTP 500: injected by faultproxy'
ok $? "500s logged"
converged "HTTP 500 burst"
kill -0 "$ag"
ok $? "agent still running"

# 6. wrong CA
fault 'cert?alt=1' && apictl drop-watches && apply_svc g 10.96.1.7 80 10.244.1.8
wait_log "$tmp/agent.log" 'watch failed: SSL certificate problem|certificate verify failed'
ok $? "wrong CA: a clear TLS error ($(grep -Eo 'watch failed: [^"]*(SSL|certificate)[^"]*' "$tmp/agent.log" | head -n1))"
sleep 2
kill -0 "$ag"
ok $? "wrong CA: agent still running, retrying"
fault 'cert?alt=0'
converged "wrong CA, then the right one"

# 7. rotated token
openssl rand -hex 24 >"$tmp/new-token"
fault "token?file=$tmp/new-token" && apictl drop-watches && apply_svc h 10.96.1.8 80 10.244.1.9
wait_log "$tmp/agent.log" 'HTTP 401'
ok $? "old token: 401 logged"
cp "$tmp/new-token" "$tmp/sa-token.new" && mv "$tmp/sa-token.new" "$tmp/sa-token"
converged "rotated token"
# the upstream's token back in the file before the proxy stops checking
cp "$tmp/certs/token" "$tmp/sa-token.new" && mv "$tmp/sa-token.new" "$tmp/sa-token"
fault 'token?file='

# 10. lists that are not lists
for m in empty:'without an items array' norv:'without metadata.resourceVersion' \
	 status:'without an items array'; do
	d0=$(dels) l0=$(grep -c 'services: list failed: list response' "$tmp/agent.log")
	fault "badlist?mode=${m%%:*}" && relist "bl-${m%%:*}" "10.96.3.$((++blip))"
	# the list and its retry may each wait up to 30 s: the backoff grew in the faults above
	for _ in $(seq 900); do
		[ "$(grep -c 'services: list failed: list response' "$tmp/agent.log")" -ge $((l0 + 2)) ] &&
			grep -q "services: list failed: list response ${m#*:}" "$tmp/agent.log" && break
		sleep 0.1
	done
	l1=$(grep -c 'services: list failed: list response' "$tmp/agent.log")
	ok $([ "$l1" -ge $((l0 + 2)) ] && echo 0 || echo 1) \
		"200 ${m%%:*}: refused, retried ($((l1 - l0)) failed lists: ${m#*:})"
	ok $([ "$(dels)" = "$d0" ] && echo 0 || echo 1) "200 ${m%%:*}: nothing deleted ($(($(dels) - d0)) dels)"
	fault 'badlist?mode=off'
	converged "200 ${m%%:*}, then a real list"
done

# 11. a paginated relist that fails partway, then its continue token expires
cat >"$tmp/first.json" <<'EOF'
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "first", "namespace": "aaa"},
 "spec": {"clusterIP": "10.96.4.1", "clusterIPs": ["10.96.4.1"], "ports": [{"port": 80, "targetPort": 8080}]}}
EOF
apictl apply "$tmp/first.json"
wait_log "$tmp/agent.log" 'dry run: set 10.96.4.1:80/tcp'
ok $? "paginated: Service aaa/first programmed"
page1=$(curl -sS --cacert "$tmp/certs/ca.crt" -H "Authorization: Bearer $(cat "$tmp/certs/token")" \
	"https://127.0.0.1:$(cat "$tmp/state/port")/api/v1/services?limit=2" |
	python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d["items"]), d["items"][0]["metadata"]["name"], "continue" in d["metadata"])')
ok $([ "$page1" = "2 first True" ] && echo 0 || echo 1) "paginated: page 1 of 2 holds aaa/first, a continue token ($page1)"
fault 'limit?n=2' && fault 'continue?mode=500&path=/api/v1/services' && relist pg 10.96.4.2
wait_log "$tmp/agent.log" 'services: list failed: HTTP 500: injected by faultproxy \(continue\)'
ok $? "paginated: page 2 failed"
apictl delete Service aaa first
sleep 1
fault 'continue?mode=410&path=/api/v1/services'
wait_log "$tmp/agent.log" 'services: list continue token expired'
ok $? "paginated: continue token expired (410), listing from the first page"
wait_log "$tmp/agent.log" 'dry run: del 10.96.4.1:80/tcp'
ok $? "paginated: the Service deleted meanwhile is gone"
converged "paginated relist: page failed, continue expired, page-1 Service deleted"
fault 'limit?n=0'

# 12. watch events that cannot be decoded
for how in json type; do
	ip=10.96.5.$((++wip))
	case $how in
	json) want='malformed watch event' ;;
	type) want='watch event without type or object' ;;
	esac
	fault "corrupt?n=1&path=/api/v1/services&how=$how" && apply_svc "bad-$how" "$ip" 80 10.244.5.$wip
	wait_log "$tmp/agent.log" "services: $want, re-watching from resourceVersion [0-9]+"
	ok $? "corrupt event ($how): watch ended, re-watched from the last resourceVersion"
	wait_log "$tmp/agent.log" "dry run: set $ip:80/tcp"
	ok $? "corrupt event ($how): its Service arrives all the same"
	converged "corrupt watch event ($how)"
done

# 13. too large resource version
fault 'toolarge?path=/api/v1/services' && apictl drop-watches && apply_svc tl 10.96.6.1 80 10.244.6.1
wait_log "$tmp/agent.log" 'services: resourceVersion [0-9]+ is too large for this API server, relisting'
ok $? "too large resourceVersion: relisting"
converged "too large resource version"

kill -TERM "$ag"
wait "$ag"
ok $? "SIGTERM after the faults: exit 0"
ag=

# 8. 10,000 Services in pages
mkdir -p "$tmp/big"
fl_big_services 10000 "$tmp/big/objects.json"
api_start "$tmp/bigstate" "$tmp/big.log" --no-watch-cache --objects "$tmp/big/objects.json" ||
	{ echo "Bail out! no big API server"; exit 1; }
timeout 120 "$agent" --v 2 --kubeconfig "$tmp/bigstate/kubeconfig" --hostname-override node-a \
	--dry-run --once --kube-api-qps 0 2>"$tmp/big-agent.log"
ok $? "10,000 Services: --once exits 0"
grep -q '] "services: listed 10000 at' "$tmp/big-agent.log"
ok $? "listed 10000 Services"
pages=$(grep -c 'GET /api/v1/services?.*limit=500' "$tmp/big.log")
ok $([ "$pages" = 20 ] && echo 0 || echo 1) "in 20 pages of 500 ($pages requests)"
# client-go's pager: the first page at resourceVersion=0 (a server without
# a watch cache pages it), the continue pages without a resourceVersion
first=$(grep -c 'GET /api/v1/services?[^ ]*&resourceVersion=0&limit=500 ' "$tmp/big.log")
contrv=$(grep 'GET /api/v1/services?[^ ]*continue=' "$tmp/big.log" | grep -c 'resourceVersion=')
ok $([ "$first" = 1 ] && [ "$contrv" = 0 ] && echo 0 || echo 1) \
	"first page at resourceVersion=0 ($first), continue pages without one ($contrv)"
grep -q 'sync done" .*frontends=10000 sets=10000 dels=0 errors=0' "$tmp/big-agent.log"
ok $? "one sync of 10000 frontends"

# 9. client-side rate limit: 22 requests (20 pages, slices, node) at
#    --kube-api-qps 5 --kube-api-burst 2 take at least (22 - 2) / 5 = 4 s.
t0=$(date +%s.%N)
timeout 120 "$agent" --kubeconfig "$tmp/bigstate/kubeconfig" --hostname-override node-a \
	--dry-run --once --kube-api-qps 5 --kube-api-burst 2 --v 4 2>"$tmp/qps-agent.log"
st=$?
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
[ $st = 0 ] && awk -v e="$el" 'BEGIN { exit !(e >= 4) }' &&
	grep -q 'client-side rate limit' "$tmp/qps-agent.log"
ok $? "qps 5, burst 2: 22 requests took $el s (>= 4 s), limit logged at --v 4"

[ "$TAP_FAILED" = 0 ] || { echo "# agent log (tail):"; tail -n 30 "$tmp/agent.log" | sed 's/^/#   /'; }
tap_done
