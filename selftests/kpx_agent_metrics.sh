#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_metrics: the agent on the real module answers /healthz, /livez
# and /metrics as kube-proxy does, with kpx's module counters; --cleanup
# flushes the module.  Expected:
#  - /healthz: 200 application/json {"lastUpdated":...,"currentTime":...,
#    "nodeEligible":true,"healthy":true,"status":{"IPv4":{...}[,"IPv6"...]}};
#    /livez: the same without nodeEligible (RFC 3339 times);
#  - /metrics: kube-proxy's histograms and counters (sync count >= 1,
#    last sync timestamp recent, service/endpoint changes = objects listed);
#    kpx_frontend_connections_total and kpx_backend_connections_total equal
#    to kpxctl's counters after N client connections, and the per-Service
#    kpx_service_connections_total; kpx_module_* totals;
#    process_start_time_seconds, rest_client_requests_total,
#    kubernetes_build_info;
#    kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family,traffic_policy}
#    0, then 1 internal + 1 external with a Local-policy Service whose
#    endpoint is on another node, whose dropped connections count as its
#    kpx_service_drops_total{reason="no_endpoints"};
#  - "kpx-agent --cleanup": exit 0 and no frontend left.
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (VM root netns, kpx) --veth--
# pod1 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.60:80/tcp -> both.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

HZ=127.0.0.1:10256
MT=127.0.0.1:10249
agent_require
setup_trap agent_lib_stop

web_pods 2 || skip "topology setup failed"

web_objects 10.96.0.60 "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"
kpx_agent_start --hostname-override node-a --healthz-bind-address $HZ --metrics-bind-address $MT --metrics-per-backend
t=$(wait_proc_backends tcp 10.96.0.60:80 10.244.1.2:8080,10.244.2.2:8080 60)
assert_ne "agent programs 10.96.0.60:80" timeout "$t"

# --- health ------------------------------------------------------------------
rfc='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z'
st="\"status\":\\{\"IPv4\":\\{\"lastUpdated\":\"$rfc\",\"healthy\":true\\}(,\"IPv6\":\\{\"lastUpdated\":\"$rfc\",\"healthy\":true\\})?\\}"
code=$(curl -sS -D "$TMPD/h.hdr" -o "$TMPD/h.body" -w '%{http_code}' "http://$HZ/healthz")
assert_eq "/healthz status" 200 "$code"
assert_match "/healthz content type" '[Cc]ontent-[Tt]ype: application/json' "$(cat "$TMPD/h.hdr")"
assert_match "/healthz body" "^\{\"lastUpdated\":\"$rfc\",\"currentTime\":\"$rfc\",\"nodeEligible\":true,\"healthy\":true,$st\}$" \
	"$(cat "$TMPD/h.body")"
code=$(curl -sS -o "$TMPD/l.body" -w '%{http_code}' "http://$HZ/livez")
assert_eq "/livez status" 200 "$code"
assert_match "/livez body" "^\{\"lastUpdated\":\"$rfc\",\"currentTime\":\"$rfc\",\"healthy\":true,$st\}$" "$(cat "$TMPD/l.body")"

# --- traffic, then the counters in /metrics ------------------------------------
client cli -n 40 -t 2000 10.96.0.60:80
assert_eq "40 connections answered" 40 "$(summary_field ok)"
client_show_if_failed
curl -sS -o "$TMPD/metrics" "http://$MT/metrics"
assert_eq "/metrics fetched" 0 $?
metric() { awk -v k="$1" '$1 == k { print $2 }' "$TMPD/metrics"; }
kpx_snapshot
svc=$(svc_counter tcp 10.96.0.60 80 conns)
b1=$(be_counter tcp 10.96.0.60 80 10.244.1.2 8080)
b2=$(be_counter tcp 10.96.0.60 80 10.244.2.2 8080)
assert_ge "kpxctl: frontend conns" 40 "$svc"
assert_eq "kpx_frontend_connections_total == kpxctl" "$svc" \
	"$(metric 'kpx_frontend_connections_total{protocol="tcp",vip="10.96.0.60",port="80"}')"
assert_eq "kpx_backend_connections_total 10.244.1.2 == kpxctl" "$b1" \
	"$(metric 'kpx_backend_connections_total{protocol="tcp",vip="10.96.0.60",port="80",backend_ip="10.244.1.2",backend_port="8080"}')"
assert_eq "kpx_backend_connections_total 10.244.2.2 == kpxctl" "$b2" \
	"$(metric 'kpx_backend_connections_total{protocol="tcp",vip="10.96.0.60",port="80",backend_ip="10.244.2.2",backend_port="8080"}')"
assert_eq "the backends' counters add up" "$svc" "$((b1 + b2))"
assert_eq "kpx_service_connections_total of default/web:http == kpxctl" "$svc" \
	"$(metric 'kpx_service_connections_total{namespace="default",service="web",port="http"}')"
assert_eq "kpx_service_rejects_total of default/web:http" 0 \
	"$(metric 'kpx_service_rejects_total{namespace="default",service="web",port="http"}')"
assert_ge "kpx_module_connections_total" "$svc" "$(metric kpx_module_connections_total)"
assert_eq "kpx_module_frontends" 1 "$(metric kpx_module_frontends)"
assert_eq "sync histogram buckets (IPv4)" 16 "$(grep -c '^kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv4",' "$TMPD/metrics")"
assert_ge "syncs counted" 1 "$(metric 'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"}')"
assert_eq "service changes = Services listed" 1 "$(metric kubeproxy_sync_proxy_rules_service_changes_total)"
assert_eq "endpoint changes = slices listed" 1 "$(metric kubeproxy_sync_proxy_rules_endpoint_changes_total)"
assert_eq "netlink errors" 0 "$(metric kpx_netlink_errors_total)"
last=$(metric 'kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}')
assert_match "process_start_time_seconds" '^[0-9]{10}' "$(metric process_start_time_seconds)"
assert_match "rest_client_requests_total of the lists" '^[0-9]+$' \
	"$(awk '$1 ~ /^rest_client_requests_total[{]code="200",host="[^"]+",method="GET"[}]$/ { print $2 }' "$TMPD/metrics")"
assert_eq "kubernetes_build_info" 1 "$(awk '$1 ~ /^kubernetes_build_info[{]/ { print $2 }' "$TMPD/metrics")"
assert_eq "last sync timestamp within 60 s" 0 \
	"$(awk -v t="$last" -v now="$(date +%s)" 'BEGIN { print !(t > now - 60 && t <= now + 1) }')"
assert_eq "/proxyMode" kpx "$(curl -sS "http://$MT/proxyMode")"

# --- Local traffic policies without a local endpoint ------------------------------
# kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy}: 0 with
# web (Cluster policies); then Service t/local (internalTrafficPolicy and,
# as a NodePort, externalTrafficPolicy Local) whose one ready endpoint is on
# node-b: 1 internal, 1 external, and its ClusterIP drops (no backend here).
assert_eq "no_local_endpoints internal, web only" 0 \
	"$(metric 'kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="internal"}')"
cat >"$TMPD/local.json" <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "local", "namespace": "t"},
  "spec": {"type": "NodePort", "clusterIP": "10.96.0.61", "clusterIPs": ["10.96.0.61"],
           "internalTrafficPolicy": "Local", "externalTrafficPolicy": "Local",
           "ports": [{"port": 80, "targetPort": 8080, "nodePort": 30061}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "local-1", "namespace": "t", "labels": {"kubernetes.io/service-name": "local"}},
  "addressType": "IPv4", "ports": [{"port": 8080, "protocol": "TCP"}],
  "endpoints": [{"addresses": ["10.244.2.2"], "nodeName": "node-b", "conditions": {"ready": true}}]}]}
EOF
assert_rc "apply Service t/local" 0 kpx_apictl apply "$TMPD/local.json"
t=$(wait_proc_backends tcp 10.96.0.61:80 - 20)
assert_ne "t/local's ClusterIP programmed without backends" timeout "$t"
# The Service and its slice are two watch events: a sync between them
# programs the ClusterIP as having no endpoint at all (reject); the slice
# (an endpoint, none on this node) then makes it drop.
local_flags() {
	kpx_json | jq -c '.services[] | select(.vip == "10.96.0.61" and .port == 80) | .flags'
}
for _ in $(seq 1 100); do
	[ "$(local_flags)" = '["drop-empty","cluster-ip"]' ] && break
	sleep 0.2
done
assert_eq "t/local's ClusterIP drops (drop-empty)" '["drop-empty","cluster-ip"]' "$(local_flags)"
# three new connections to it are dropped: counted as the frontend's drops
# (and rejects), and as t/local's no_endpoints drops, not as refusals
client cli -n 3 -t 300 10.96.0.61:80
assert_eq "t/local's ClusterIP: 3 connections unanswered" 0 "$(summary_field ok)"
ldrops=$(kpx_json | jq '.services[] | select(.vip == "10.96.0.61" and .port == 80) | .drops')
assert_ge "kpxctl: t/local's ClusterIP drops" 3 "$ldrops"
assert_eq "kpxctl: t/local's ClusterIP rejects include the drops" "$ldrops" \
	"$(kpx_json | jq '.services[] | select(.vip == "10.96.0.61" and .port == 80) | .rejects')"
curl -sS -o "$TMPD/metrics" "http://$MT/metrics"
assert_eq "kpx_service_drops_total{reason=no_endpoints} of t/local == kpxctl" "$ldrops" \
	"$(metric 'kpx_service_drops_total{namespace="t",service="local",port="",reason="no_endpoints"}')"
assert_eq "kpx_service_rejects_total of t/local: none refused" 0 \
	"$(metric 'kpx_service_rejects_total{namespace="t",service="local",port=""}')"
for _ in $(seq 1 50); do
	curl -sS -o "$TMPD/metrics" "http://$MT/metrics"
	[ "$(metric 'kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="internal"}')" = 1 ] && break
	sleep 0.2
done
assert_eq "no_local_endpoints internal" 1 \
	"$(metric 'kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="internal"}')"
assert_eq "no_local_endpoints external" 1 \
	"$(metric 'kubeproxy_sync_proxy_rules_no_local_endpoints_total{ip_family="IPv4",traffic_policy="external"}')"

# --- --cleanup ------------------------------------------------------------------
kpx_agent_stop
assert_rc "kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup
assert_eq "frontends after --cleanup" 0 "$(kpx_json | jq '.services | length')"

if [ "$FAILS" -gt 0 ]; then
	log "agent log (tail):"
	tail -n 30 "$TMPD/agent.log" | sed 's/^/#   /'
fi
ksft_exit
