#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_refused: one Service the module cannot take costs only its
# frontend (agent/sync/sync.h).  With the real module and the test API server:
#  - edge/ranges, a LoadBalancer Service with one loadBalancerSourceRange
#    more than the module takes per frontend and the ingress IP
#    203.0.113.51, and edge/wide, a ClusterIP Service with one ready
#    endpoint more than the module's backend limit (in slices of 1,000 as
#    the API has them); both limits are read from uapi/linux/kpx.h, so the
#    test follows the module;
#  - their refused frontends are not in the module, each is logged once
#    with its namespace/name and reason, and counted in
#    kpx_sync_proxy_rules_frontends_refused / ..._frontend_refused_total;
#    /metrics keeps its per-frontend series (and none per backend);
#  - every other Service answers: default/web, default/lb's ClusterIP and
#    edge/ranges' own ClusterIP; a Service created afterwards is programmed
#    and answers;
#  - default/lb's healthCheckNodePort answers 200 with localEndpoints 1 and
#    serviceProxyHealthy true; /healthz is 200 after 3 x --sync-period;
#  - the agent stays at its quiet rate: over 15 s at --sync-period 3s at
#    most 7 syncs, none full (a failed sync used to bring a full sync every
#    min-sync-period, 1 s), and the refused frontends are tried again at
#    the periodic syncs without being logged again.
# kpx mode only (the limits are the module's).
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node 10.0.0.1 (VM root netns,
# kpx) --veth-- pod1 10.244.1.2:8080 (on node-a), pod2 10.244.2.2:8080
# (on node-b).
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

HZ=127.0.0.1:10256
MT=127.0.0.1:10249
UAPI=$REPO/uapi/linux/kpx.h
agent_require "$UAPI" /usr/bin/curl
mode_is kpx || skip "the limits are the kpx module's (proxy mode $KPX_PROXY_MODE)"
setup_trap agent_lib_stop

# uapi_limit NAME: the value of "#define NAME <number>" in the uapi header.
uapi_limit() { awk -v n="$1" '$1 == "#define" && $2 == n { print $3 }' "$UAPI"; }
RANGES_MAX=$(uapi_limit KPX_SOURCE_RANGES_MAX)
[ -n "$RANGES_MAX" ] || RANGES_MAX=$(uapi_limit KPX_CIDRS_MAX)
BACKENDS_MAX=$(uapi_limit KPX_BACKENDS_MAX)
log "module limits from $UAPI: ${RANGES_MAX:-none} source ranges, ${BACKENDS_MAX:-none} backends"
# Beyond these the objects are too large to build under TCG in time.
[ -n "$RANGES_MAX" ] && ((RANGES_MAX < 60000)) || RANGES_MAX=
[ -n "$BACKENDS_MAX" ] && ((BACKENDS_MAX < 100000)) || BACKENDS_MAX=
[ -n "$RANGES_MAX$BACKENDS_MAX" ] ||
	skip "no module limit small enough to exceed here (uapi/linux/kpx.h)"

web_pods 2 || skip "topology setup failed"
BOTH=10.244.1.2:8080,10.244.2.2:8080

# The objects: Node node-a, default/web, default/lb (eTP Local, health
# check 32070), edge/ranges (RANGES_MAX + 1 source ranges), edge/wide
# (BACKENDS_MAX + 1 ready endpoints).
python3 - "$TMPD/objects.json" "${RANGES_MAX:-0}" "${BACKENDS_MAX:-0}" <<'EOF'
import json, sys

path, nranges, nbackends = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
port = {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}
eport = [{"name": "http", "port": 8080, "protocol": "TCP"}]
pods = [{"addresses": ["10.244.1.2"], "nodeName": "node-a", "conditions": {"ready": True}},
        {"addresses": ["10.244.2.2"], "nodeName": "node-b", "conditions": {"ready": True}}]

def svc(ns, name, ip, spec=None, status=None):
    s = {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"],
         "ports": [dict(port)]}
    s.update(spec or {})
    o = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
         "spec": s}
    if status:
        o["status"] = status
    return o

def eps(ns, name, endpoints, idx=1):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "%s-%d" % (name, idx), "namespace": ns,
                         "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4", "ports": eport, "endpoints": endpoints}

items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
          "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}},
         svc("default", "web", "10.96.0.70"), eps("default", "web", pods),
         svc("default", "lb", "10.96.0.71",
             {"type": "LoadBalancer", "externalTrafficPolicy": "Local",
              "healthCheckNodePort": 32070,
              "ports": [dict(port, nodePort=30071)]},
             {"loadBalancer": {"ingress": [{"ip": "203.0.113.71"}]}}),
         eps("default", "lb", pods)]
if nranges:
    ranges = ["172.%d.%d.0/24" % (16 + i // 256, i % 256) for i in range(nranges + 1)]
    items += [svc("edge", "ranges", "10.96.0.72",
                  {"type": "LoadBalancer", "loadBalancerSourceRanges": ranges,
                   "ports": [dict(port, nodePort=30072)]},
                  {"loadBalancer": {"ingress": [{"ip": "203.0.113.51"}]}}),
              eps("edge", "ranges", pods)]
if nbackends:
    addrs = ["100.%d.%d.%d" % (64 + i // 65536, i // 256 % 256, i % 256)
             for i in range(nbackends + 1)]
    items.append(svc("edge", "wide", "10.96.0.73"))
    for k in range(0, len(addrs), 1000):
        items.append(eps("edge", "wide",
                         [{"addresses": [a], "conditions": {"ready": True}}
                          for a in addrs[k:k + 1000]], k // 1000 + 1))
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(path, "w"))
EOF
assert_eq "objects written" 0 $?

kpx_api_start --objects "$TMPD/objects.json"
kpx_agent_start --hostname-override node-a --sync-period 3s \
	--healthz-bind-address $HZ --metrics-bind-address $MT
t=$(wait_proc_backends tcp 10.96.0.70:80 $BOTH 90)
assert_ne "default/web programmed" timeout "$t"
t=$(wait_proc_backends tcp 10.96.0.71:80 $BOTH 10)
assert_ne "default/lb's ClusterIP programmed" timeout "$t"
t=$(wait_proc_backends tcp 203.0.113.71:80 10.244.1.2:8080 10)
assert_ne "default/lb's LB IP programmed with its local endpoint" timeout "$t"
start=$(date +%s)

refused_line() { grep -c "Service $1: frontend $2 refused by the kpx data plane: Argument list too long: .*$3" \
	"$TMPD/agent.log"; }
if [ -n "$RANGES_MAX" ]; then
	t=$(wait_proc_backends tcp 10.96.0.72:80 $BOTH 10)
	assert_ne "edge/ranges' ClusterIP programmed" timeout "$t"
	assert_eq "edge/ranges' LB frontend not in the module" absent \
		"$(proc_backends tcp 203.0.113.51:80)"
	assert_eq "edge/ranges refused, logged once by name with the reason" 1 \
		"$(refused_line edge/ranges 203.0.113.51:80/tcp "$((RANGES_MAX + 1)) source ranges")"
else
	log "no source range limit small enough: edge/ranges not created"
fi
if [ -n "$BACKENDS_MAX" ]; then
	assert_eq "edge/wide not in the module" absent "$(proc_backends tcp 10.96.0.73:80)"
	assert_eq "edge/wide refused, logged once by name with the reason" 1 \
		"$(refused_line edge/wide 10.96.0.73:80/tcp "$((BACKENDS_MAX + 1)) backends")"
else
	log "no backend limit small enough: edge/wide not created"
fi
nrefused=$(( (${RANGES_MAX:+1} + 0) + (${BACKENDS_MAX:+1} + 0) ))

# answers VIP LABEL: 20 connections from cli, answered by both pods.
answers() {
	client cli -n 20 -t 2000 "$1:80"
	assert_eq "$2: 20 connections answered" 20 "$(summary_field ok)"
	assert_eq "$2: answering backends" "pod1 pod2" "$(ident_names)"
	client_show_if_failed
}
answers 10.96.0.70 "default/web"
answers 10.96.0.71 "default/lb's ClusterIP"
[ -z "$RANGES_MAX" ] || answers 10.96.0.72 "edge/ranges' ClusterIP"

# --- a Service created afterwards ----------------------------------------------
cat >"$TMPD/later.json" <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "later", "namespace": "default"},
  "spec": {"clusterIP": "10.96.0.74", "clusterIPs": ["10.96.0.74"], "ipFamilies": ["IPv4"],
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "later-1", "namespace": "default",
               "labels": {"kubernetes.io/service-name": "later"}},
  "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
  "endpoints": [{"addresses": ["10.244.1.2"], "conditions": {"ready": true}},
                {"addresses": ["10.244.2.2"], "conditions": {"ready": true}}]}]}
EOF
assert_rc "control API: add default/later" 0 kpx_apictl apply "$TMPD/later.json"
t=$(wait_proc_backends tcp 10.96.0.74:80 $BOTH 15)
assert_ne "a Service created afterwards is programmed" timeout "$t"
answers 10.96.0.74 "default/later"

# --- health: another Service's health check, /healthz -------------------------
code=$(curl -s -m 5 -o "$TMPD/hc.body" -w '%{http_code}' "http://10.0.0.1:32070/")
assert_eq "default/lb's healthCheckNodePort: 200" 200 "$code"
assert_eq "default/lb's health check: localEndpoints" 1 "$(jq -r '.localEndpoints' "$TMPD/hc.body")"
assert_eq "default/lb's health check: serviceProxyHealthy" true \
	"$(jq -r '.serviceProxyHealthy' "$TMPD/hc.body")"
left=$((start + 9 - $(date +%s)))
((left > 0)) && sleep "$left"
code=$(curl -s -m 5 -o "$TMPD/hz.body" -w '%{http_code}' "http://$HZ/healthz")
assert_eq "/healthz 3 x sync-period after the refusal: 200" 200 "$code"

# --- quiet rate ----------------------------------------------------------------
from=$(wc -l <"$TMPD/agent.log")
sleep 15
quiet=$(tail -n +"$((from + 1))" "$TMPD/agent.log" | grep '] "sync done"')
n=$(grep -c . <<<"$quiet")
log "syncs in 15 s: $n"
assert_eq "at most 7 syncs in 15 s at --sync-period 3s ($n)" 1 "$((n <= 7))"
assert_ge "the periodic syncs run (at least 3 in 15 s)" 3 "$n"
assert_eq "no full sync" 0 "$(grep -c 'full=true' <<<"$quiet")"
assert_eq "no sync error" 0 "$(grep -vc 'errors=0' <<<"$quiet")"
assert_ge "the refused frontends are tried again at the periodic syncs" 1 \
	"$(grep -c "refused=$nrefused " <<<"$quiet")"
[ -z "$RANGES_MAX" ] || assert_eq "edge/ranges still logged once" 1 \
	"$(refused_line edge/ranges 203.0.113.51:80/tcp .)"
[ -z "$BACKENDS_MAX" ] || assert_eq "edge/wide still logged once" 1 \
	"$(refused_line edge/wide 10.96.0.73:80/tcp .)"
code=$(curl -s -m 5 -o "$TMPD/hz.body" -w '%{http_code}' "http://$HZ/healthz")
assert_eq "/healthz still 200" 200 "$code"
code=$(curl -s -m 5 -o "$TMPD/hc.body" -w '%{http_code}' "http://10.0.0.1:32070/")
assert_eq "default/lb's healthCheckNodePort still 200" 200 "$code"

curl -sS -o "$TMPD/metrics" "http://$MT/metrics"
metric() { awk -v k="$1" '$1 == k { print $2 }' "$TMPD/metrics"; }
# a gauge is a float in the text format ("3", "3.000" and "3e+00" alike)
assert_eq "kpx_sync_proxy_rules_frontends_refused" "$nrefused" \
	"$(metric kpx_sync_proxy_rules_frontends_refused | awk '{ printf "%d", $1 }')"
assert_ge "kpx_sync_proxy_rules_frontend_refused_total counts the retries" $((2 * nrefused)) \
	"$(metric kpx_sync_proxy_rules_frontend_refused_total)"
assert_eq "kpx_sync_errors_total" 0 "$(metric kpx_sync_errors_total)"
# the default per-frontend series, read by a dump that only counts backends
assert_eq "kpx_frontend_backends of default/web" 2 \
	"$(metric 'kpx_frontend_backends{protocol="tcp",vip="10.96.0.70",port="80"}')"
kpx_snapshot
conns=$(svc_counter tcp 10.96.0.70 80 conns)
assert_ge "kpxctl: default/web's connections" 20 "$conns"
assert_eq "kpx_frontend_connections_total of default/web == kpxctl" "$conns" \
	"$(metric 'kpx_frontend_connections_total{protocol="tcp",vip="10.96.0.70",port="80"}')"
assert_eq "no per-backend series without --metrics-per-backend" 0 \
	"$(grep -c '^kpx_backend_' "$TMPD/metrics")"
ksft_exit
