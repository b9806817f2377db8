#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-agent's Node Events (events.k8s.io/v1) as kube-proxy posts them
# (cmd/kube-proxy/app/server.go), on the host, loopback only, --dry-run,
# read back from the test API server (apictl events):
#  1. through faultproxy.py (POSTs pass through it): the metrics server's
#     address is taken (the API server's own port), so the agent posts a
#     Warning FailedToStartMetricServer with the bind error, then Normal
#     Starting; each regarding the Node (kind Node, name and uid node-a),
#     reportingController kube-proxy, reportingInstance
#     kube-proxy-<hostname>, action StartKubeProxy, in namespace default,
#     eventTime with microseconds; the healthz server serves;
#  2. both addresses taken: FailedToStartProxierHealthcheck as well;
#     with --bind-address-hard-fail (bindAddressHardFail) the agent exits
#     1 instead, before its first sync;
#  3. a server that answers Event posts 403 (--forbid-events, RBAC without
#     events): the failure is logged once, the agent syncs and goes on
#     applying changes.
# Usage: tests/agent-events.sh [path/to/kpx-agent]   TAP on stdout.
ITEST_NAME=events
. "$(dirname "$0")/lib/itest.sh"
. "$api/faults_lib.sh"
srv= srv2= ag=

echo "TAP version 13"
itest_server "$tmp/server.log" --bookmark-interval 1000 --objects "$objects/node-a.json"
port=$(<"$tmp/state/port")
fl_proxy_start "$tmp/proxy" "$tmp/certs" "$tmp/certs" "$port" || { echo "Bail out! no faultproxy"; exit 1; }
cp "$tmp/certs/token" "$tmp/sa-token"
fl_kubeconfig "$tmp/state/kubeconfig" "$tmp/sa-token" "$tmp/proxy-kubeconfig" ||
	{ echo "Bail out! no proxy kubeconfig"; exit 1; }

# events KUBECONFIG: the recorded Events, one line each:
# "type reason action note|regarding.kind/name/uid|controller|instance|namespace|eventTime"
events() {
	"$api/kpx-test-apictl" --kubeconfig "$1" events | python3 -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    r = e.get("regarding", {})
    print("%s %s %s %s|%s/%s/%s|%s|%s|%s|%s" % (e.get("type"), e.get("reason"), e.get("action"),
          e.get("note", ""), r.get("kind"), r.get("name"), r.get("uid"), e.get("reportingController"),
          e.get("reportingInstance"), e["metadata"].get("namespace"), e.get("eventTime")))'
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_events() { # KUBECONFIG N: until N Events are recorded
	for _ in $(seq 100); do
		[ "$(events "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# 1. The metrics address taken.
hp=$(free_port)
"$agent" --v 2 --kubeconfig "$tmp/proxy-kubeconfig" --hostname-override node-a --dry-run \
	--healthz-bind-address "127.0.0.1:$hp" --metrics-bind-address "127.0.0.1:$port" \
	2>"$tmp/agent.log" &
ag=$!
wait_events "$tmp/state/kubeconfig" 2
ok $? "two Events recorded"
ev=$(events "$tmp/state/kubeconfig")
echo "$ev" | sed 's/^/# /'
tail=$(printf '|Node/node-a/node-a|kube-proxy|kube-proxy-%s|default|' "$(hostname)")
grep -qF "Warning FailedToStartMetricServer StartKubeProxy " <<<"$ev" &&
	grep "FailedToStartMetricServer" <<<"$ev" | grep -q "127.0.0.1:$port.*$tail"
ok $? "Warning FailedToStartMetricServer, action StartKubeProxy, the address in the note, regarding the Node"
grep -qF "Normal Starting StartKubeProxy $tail" <<<"$ev"
ok $? "Normal Starting, regarding Node node-a (uid node-a), kube-proxy, kube-proxy-$(hostname), namespace default"
grep -Eq '\|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$' <<<"$ev"
ok $? "eventTime with microseconds (MicroTime)"
! grep -q ProxierHealthcheck <<<"$ev" && curl -sf "http://127.0.0.1:$hp/healthz" >/dev/null
ok $? "the healthz server serves, no Event for it"
posts=$(curl -sS -k "https://127.0.0.1:$FL_PPORT/_fault/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("posts", 0))')
ok $([ "$posts" = 2 ] && echo 0 || echo 1) "both posted through the fault proxy ($posts POSTs)"
kill -TERM "$ag"; wait "$ag"
ok $? "SIGTERM: exit 0"
ag=

# 2. Both addresses taken.
n0=$(events "$tmp/state/kubeconfig" | wc -l)
"$agent" --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a --dry-run \
	--healthz-bind-address "127.0.0.1:$port" --metrics-bind-address "127.0.0.1:$port" \
	2>"$tmp/agent2.log" &
ag=$!
wait_events "$tmp/state/kubeconfig" $((n0 + 3))
ev=$(events "$tmp/state/kubeconfig" | tail -n +"$((n0 + 1))")
grep -c "^Warning FailedToStartProxierHealthcheck StartKubeProxy .*127.0.0.1:$port" <<<"$ev" | grep -qx 1 &&
	grep -c '^Warning FailedToStartMetricServer ' <<<"$ev" | grep -qx 1 &&
	grep -c '^Normal Starting ' <<<"$ev" | grep -qx 1
ok $? "both taken: FailedToStartProxierHealthcheck, FailedToStartMetricServer, Starting"
kill -TERM "$ag"; wait "$ag"
ag=

# 2b. The same with --bind-address-hard-fail: fatal, as kube-proxy's errCh.
"$agent" --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a --dry-run --bind-address-hard-fail \
	--healthz-bind-address "127.0.0.1:$(free_port)" --metrics-bind-address "127.0.0.1:$port" \
	2>"$tmp/agent2b.log" &
ag=$!
timeout 30 tail --pid="$ag" -f /dev/null
kill -0 "$ag" 2>/dev/null && kill "$ag"
wait "$ag"
rc=$?
ag=
ok $([ "$rc" = 1 ] && grep -q 'bindAddressHardFail is set and a server could not listen' "$tmp/agent2b.log" &&
	! grep -q '"sync done"' "$tmp/agent2b.log" && echo 0 || echo 1) \
	"--bind-address-hard-fail, the metrics address taken: exit status 1 ($rc) before any sync, the reason logged"

# 3. Event posts forbidden.
api_start "$tmp/state2" "$tmp/server2.log" --forbid-events \
	--bookmark-interval 1000 --objects "$objects/node-a.json" ||
	{ echo "Bail out! no second API server"; exit 1; }
srv2=$API_PID
k2=$tmp/state2/kubeconfig
: >"$tmp/agent3.log"
fl_svc a 10.96.80.1 80 10.244.8.1 >"$tmp/a.json" &&
	"$api/kpx-test-apictl" --kubeconfig "$k2" apply "$tmp/a.json" >/dev/null
"$agent" --v 2 --kubeconfig "$k2" --hostname-override node-a --dry-run --min-sync-period 100ms \
	--healthz-bind-address "127.0.0.1:$(free_port)" --metrics-bind-address "127.0.0.1:$port" \
	2>"$tmp/agent3.log" &
ag=$!
wait_log "$tmp/agent3.log" 'event [A-Za-z]+ not recorded: HTTP 403: .*forbidden'
ok $? "403 logged"
wait_log "$tmp/agent3.log" 'dry run: set 10.96.80.1:80/tcp'
ok $? "synced all the same"
fl_svc b 10.96.80.2 80 10.244.8.2 >"$tmp/b.json" &&
	"$api/kpx-test-apictl" --kubeconfig "$k2" apply "$tmp/b.json" >/dev/null
wait_log "$tmp/agent3.log" 'dry run: set 10.96.80.2:80/tcp'
ok $? "and goes on: a later Service arrives"
w=$(grep -c '^W.*not recorded: HTTP 403' "$tmp/agent3.log")
ok $([ "$w" = 1 ] && echo 0 || echo 1) "the 403 warned about once ($w), the next one at -v 2"
f=$("$api/kpx-test-apictl" --kubeconfig "$k2" events | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["posts"]["forbidden"], len(d["items"]))')
ok $([ "$f" = "2 0" ] && echo 0 || echo 1) "the server refused 2 posts, recorded none ($f)"
kill -0 "$ag" && kill -TERM "$ag" && wait "$ag"
ok $? "still running; SIGTERM: exit 0"
ag=
[ "$TAP_FAILED" = 0 ] || { echo "# agent log (tail):"; tail -n 20 "$tmp/agent.log" | sed 's/^/#   /'; }
tap_done
