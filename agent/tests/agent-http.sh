#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-agent's /healthz, /livez and /metrics on the host, loopback only, with
# --dry-run against the test API server (selftests/apiserver):
#  1. /healthz and /livez: 200, application/json, kube-proxy's body
#     (ProxyHealth as json.Marshal writes it: lastUpdated, currentTime,
#     nodeEligible (/healthz only), healthy, status per family with its
#     own lastUpdated and healthy; RFC 3339 times);
#  2. /metrics: read by prometheus_client's parser (lib/promcheck.py) and
#     checked against upstream's names, types, labels and buckets
#     (lib/upstream-metrics.json), ip_family on the per-family metrics,
#     rest_client_* counting the agent's own requests, process_*; change
#     counters equal to the objects listed, per-frontend kpx_* series
#     equal to the frontends of the dry run's first sync;
#  3. an EndpointSlice with endpoints.kubernetes.io/last-change-trigger-time
#     2 s in the past: one network_programming_duration_seconds observation
#     between 2 and 4 s, endpoint_changes_total + 1; the watches dropped and
#     every slice relisted unchanged: no further observation;
#  4. the own Node tainted ToBeDeletedByClusterAutoscaler: /healthz 503 with
#     "nodeEligible": false, /livez still 200; healthz_total counts codes;
#  5. a dropped watch shows in kpx_watch_restarts_total.
# Usage: tests/agent-http.sh [path/to/kpx-agent]   TAP on stdout.
ITEST_NAME=http
. "$(dirname "$0")/lib/itest.sh"
srv= ag=
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# metric NAME{LABELS}: the sample's value ("" if absent)
metric() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/metrics"; }
scrape() { curl -sS -o "$tmp/metrics" "http://127.0.0.1:$mport/metrics"; }

echo "TAP version 13"
itest_server "$tmp/server.log" --bookmark-interval 1000 \
	--objects "$objects"/0[12]*.json "$objects/node-a.json"
hport=$(free_port) mport=$(free_port)

"$agent" --v 2 --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a --dry-run \
	--min-sync-period 100ms --sync-period 2s \
	--healthz-bind-address "127.0.0.1:$hport" --metrics-bind-address "127.0.0.1:$mport" --metrics-per-backend \
	2>"$tmp/agent.log" &
ag=$!
wait_log "$tmp/agent.log" 'sync done'
ok $? "agent synced once"

# 1. health
code=$(curl -sS -D "$tmp/h.hdr" -o "$tmp/h.body" -w '%{http_code}' "http://127.0.0.1:$hport/healthz")
ok $([ "$code" = 200 ] && echo 0 || echo 1) "/healthz: 200 ($code)"
grep -qi '^content-type: application/json' "$tmp/h.hdr"
ok $? "/healthz: Content-Type application/json"
rfc='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z$'
fams='["IPv4"]'
[ -e /proc/sys/net/ipv6 ] && fams='["IPv4","IPv6"]'
jq -e --arg rfc "$rfc" --argjson fams "$fams" '
	(keys_unsorted == ["lastUpdated", "currentTime", "nodeEligible", "healthy", "status"]) and
	(.lastUpdated | test($rfc)) and (.currentTime | test($rfc)) and
	.lastUpdated == .currentTime and .nodeEligible == true and .healthy == true and
	(.status | keys) == $fams and
	([.status[] | (keys_unsorted == ["lastUpdated", "healthy"]) and .healthy == true and
	  (.lastUpdated | test($rfc))] | all)' "$tmp/h.body" >/dev/null
ok $? "/healthz body: kube-proxy's fields in its order, status of $fams: $(cat "$tmp/h.body")"
code=$(curl -sS -o "$tmp/l.body" -w '%{http_code}' "http://127.0.0.1:$hport/livez")
jq -e 'keys_unsorted == ["lastUpdated", "currentTime", "healthy", "status"] and .healthy == true' \
	"$tmp/l.body" >/dev/null && [ "$code" = 200 ]
ok $? "/livez: 200 without nodeEligible ($(cat "$tmp/l.body"))"
fam=IPv4
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport/nope")
ok $([ "$code" = 404 ] && echo 0 || echo 1) "other path on the health port: 404"

# 2. metrics
scrape
ok $? "/metrics scraped"
pfams=IPv4
[ -e /proc/sys/net/ipv6 ] && pfams=IPv4,IPv6
/usr/bin/python3 "$top/agent/tests/lib/promcheck.py" "$top/agent/tests/lib/upstream-metrics.json" kpx "$pfams" \
	"$tmp/metrics" >"$tmp/promcheck.out"
ok $? "prometheus_client parses /metrics; $(tail -n 1 "$tmp/promcheck.out" | sed 's/^# //')"
while read -r res what; do
	ok $([ "$res" = PASS ] && echo 0 || echo 1) "$what"
done < <(grep -E '^(PASS|FAIL) ' "$tmp/promcheck.out")
c=$(metric "kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"$fam\"}")
[ "${c:-0}" -ge 1 ]
ok $? "sync count >= 1 ($c)"
host=$(sed -n 's|.*server: https://\([^/]*\).*|\1|p' "$tmp/state/kubeconfig")
c=$(metric "rest_client_requests_total{code=\"200\",host=\"$host\",method=\"GET\"}")
[ "${c:-0}" -ge 3 ]
ok $? "rest_client_requests_total: the 3 lists at least ($c, host $host)"
[ "$(metric "rest_client_request_duration_seconds_count{host=\"$host\",verb=\"GET\"}")" -ge 3 ] &&
	[ "$(metric "rest_client_rate_limiter_duration_seconds_count{host=\"$host\",verb=\"GET\"}")" -ge 6 ]
ok $? "rest_client latency: each list; rate limiter: each request"
st=$(metric process_start_time_seconds)
awk -v t="$st" -v now="$(date +%s)" 'BEGIN { exit !(t > now - 60 && t <= now + 1) }' &&
	[ "$(metric process_open_fds)" -ge 5 ] && [ "$(metric process_resident_memory_bytes)" -gt 1000000 ]
ok $? "process_*: started $st, $(metric process_open_fds) fds, $(metric process_resident_memory_bytes) bytes resident"
last=$(metric "kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"$fam\"}")
awk -v t="$last" -v now="$(date +%s.%N)" 'BEGIN { exit !(t > now - 30 && t <= now + 1) }'
ok $? "last sync timestamp is recent ($last)"
ok $([ "$(metric kubeproxy_sync_proxy_rules_service_changes_total)" = 5 ] && echo 0 || echo 1) \
	"service_changes_total == 5 Services listed ($(metric kubeproxy_sync_proxy_rules_service_changes_total))"
ok $([ "$(metric kubeproxy_sync_proxy_rules_endpoint_changes_total)" = 2 ] && echo 0 || echo 1) \
	"endpoint_changes_total == 2 slices listed ($(metric kubeproxy_sync_proxy_rules_endpoint_changes_total))"
[ "$(metric kubeproxy_sync_proxy_rules_endpoint_changes_pending)" = 0 ]
ok $? "nothing pending after the sync"
fronts=$(sed -n 's/.*] "sync done" .*frontends=\([0-9]*\).*/\1/p' "$tmp/agent.log" | head -n 1)
[ "$(grep -c '^kpx_frontend_connections_total{' "$tmp/metrics")" = "$fronts" ] &&
	grep -q '^kpx_frontend_backends{protocol="udp",vip="10.96.0.10",port="53"} 2$' "$tmp/metrics" &&
	grep -q '^kpx_backend_connections_total{protocol="tcp",vip="10.96.0.1",port="443",backend_ip="192.0.2.10",backend_port="6443"} 0$' "$tmp/metrics"
ok $? "kpx_frontend_*/kpx_backend_*: the $fronts dry-run frontends"
awk '!/^#/ && NF { if (NF != 2 || $2 !~ /^[-+0-9.e]+$/ && $2 != "+Inf") bad = 1 } END { exit bad }' "$tmp/metrics"
ok $? "every sample line is NAME[{LABELS}] VALUE"
[ "$(curl -sS "http://127.0.0.1:$mport/proxyMode")" = kpx ] &&
	[ "$(curl -sS "http://127.0.0.1:$mport/healthz")" = ok ]
ok $? "metrics port: /proxyMode kpx, /healthz ok"

# 3. network programming latency from the trigger-time annotation (only
#    trigger times after the agent started count, as in kube-proxy)
sleep 3
trig=$(date -u -d '-2 seconds' +%Y-%m-%dT%H:%M:%SZ)
cat >"$tmp/slice.json" <<EOF
{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
 "metadata": {"name": "web-xyz", "namespace": "shop",
              "labels": {"kubernetes.io/service-name": "web"},
              "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": "$trig"}},
 "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
 "endpoints": [{"addresses": ["10.244.1.5"], "conditions": {"ready": true}}]}
EOF
apictl apply "$tmp/slice.json"
ok $? "apply a slice triggered at $trig"
np="kubeproxy_network_programming_duration_seconds"
for _ in $(seq 50); do
	scrape
	[ "$(metric "${np}_count{ip_family=\"IPv4\"}")" = 1 ] && break
	sleep 0.1
done
ok $([ "$(metric "${np}_count{ip_family=\"IPv4\"}")" = 1 ] && echo 0 || echo 1) \
	"one network programming observation, IPv4 (the slice's addressType)"
s=$(metric "${np}_sum{ip_family=\"IPv4\"}")
awk -v s="$s" 'BEGIN { exit !(s >= 1 && s < 5) }'
ok $? "its latency is about 2 s ($s; the trigger time has 1 s resolution)"
[ "$(metric "${np}_bucket{ip_family=\"IPv4\",le=\"1\"}")" = 0 ] &&
	[ "$(metric "${np}_bucket{ip_family=\"IPv4\",le=\"5\"}")" = 1 ]
ok $? "in a bucket between 1 and 5 s"
ok $([ "$(metric kubeproxy_sync_proxy_rules_endpoint_changes_total)" = 3 ] && echo 0 || echo 1) \
	"endpoint_changes_total 3"
# the same slice sent again unchanged (as a relist resends it): no new sample
apictl apply "$tmp/slice.json"
ok $? "the slice applied again, unchanged"
sleep 0.5
scrape
ok $([ "$(metric "${np}_count{ip_family=\"IPv4\"}")" = 1 ] && echo 0 || echo 1) \
	"an unchanged slice adds no network programming sample ($(metric "${np}_count{ip_family=\"IPv4\"}"))"

# 4. node eligibility
cat >"$tmp/node.json" <<'EOF'
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "node-a", "labels": {"topology.kubernetes.io/zone": "z1"}},
 "spec": {"taints": [{"key": "ToBeDeletedByClusterAutoscaler", "effect": "NoSchedule"}]}}
EOF
apictl apply "$tmp/node.json"
for _ in $(seq 50); do
	code=$(curl -sS -o "$tmp/h.body" -w '%{http_code}' "http://127.0.0.1:$hport/healthz")
	[ "$code" = 503 ] && break
	sleep 0.1
done
ok $([ "$code" = 503 ] && jq -e '.nodeEligible == false and .healthy == true' "$tmp/h.body" >/dev/null && echo 0 || echo 1) \
	"tainted node: /healthz 503, nodeEligible false, the proxy itself healthy ($(cat "$tmp/h.body"))"
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport/livez")
ok $([ "$code" = 200 ] && echo 0 || echo 1) "tainted node: /livez 200"
scrape
[ "$(metric 'kubeproxy_proxy_healthz_total{code="503"}')" -ge 1 ] &&
	[ "$(metric 'kubeproxy_proxy_healthz_total{code="200"}')" -ge 1 ] &&
	[ "$(metric 'kubeproxy_proxy_livez_total{code="200"}')" -ge 2 ]
ok $? "proxy_healthz_total / proxy_livez_total by code"

# 5. watch restarts
apictl drop-watches
for _ in $(seq 50); do
	scrape
	[ "$(metric 'kpx_watch_restarts_total{resource="services"}')" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(metric 'kpx_watch_restarts_total{resource="services"}')" -ge 1 ] &&
	[ "$(metric 'kpx_watch_restarts_total{resource="endpointslices"}')" -ge 1 ]
ok $? "dropped watches counted in kpx_watch_restarts_total"

kill -TERM "$ag"
wait "$ag"
ok $? "SIGTERM: exit 0"
ag=
[ "$TAP_FAILED" = 0 ] || { echo "# agent log:"; sed 's/^/#   /' "$tmp/agent.log" | tail -40; }
tap_done
