#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-agent's /statusz (the report kpxctl status prints) on the host, with
# --dry-run against the test API server:
#  1. after the first sync: mode kpx, synced, a full sync without errors
#     whose sets and the desired count are the frontends the dry run
#     logged ("dry run: set ..."), its time (RFC 3339) and unix_ms the
#     same instant and recent; nothing refused, missing, differing or
#     unexpected, not compared (a dry run dumps no data plane);
#  2. a Service with one endpoint added: one frontend more, the next sync
#     partial with that one set, later than the first;
#  3. the Service deleted: one frontend less, a partial sync with one del.
# Usage: tests/agent-statusz.sh [path/to/kpx-agent]   TAP on stdout.
ITEST_NAME=statusz
. "$(dirname "$0")/lib/itest.sh"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
statusz() { curl -sS "http://127.0.0.1:$mport/statusz"; }
syncs() { grep -c '"sync done' "$tmp/agent.log"; }
# wait_sync N: until the log shows more than N finished syncs
wait_sync() {
	for _ in $(seq 100); do
		[ "$(syncs)" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# check DESC JQ: the filter JQ is true of the report in $st
check() { jq -e "$2" <<<"$st" >/dev/null; ok $? "$1"; }

echo "TAP version 13"
itest_server "$tmp/server.log" --objects "$objects"/0[12]*.json "$objects/node-a.json"
mport=$(free_port)
"$agent" --v 2 --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a --dry-run \
	--min-sync-period 100ms --sync-period 1h --metrics-bind-address "127.0.0.1:$mport" \
	2>"$tmp/agent.log" &
ag=$!
wait_log "$tmp/agent.log" 'sync done'
ok $? "agent synced once"

# 1. the first sync
st=$(statusz)
echo "# /statusz: $st"
n=$(grep -c '"dry run: set ' "$tmp/agent.log")
now=$(date +%s)
check "mode kpx, synced, a full sync without errors or failed changes" \
	'.mode == "kpx" and .synced == true and .last_sync.full == true and
	 .last_sync.errors == 0 and .last_sync.failed.total == 0 and .last_sync.dels == 0'
check "desired and the sync's sets: the $n frontends the dry run set" \
	".desired == $n and .last_sync.sets == $n and $n > 10"
check "last_sync.time (RFC 3339) is unix_ms's second, within 60 s of now" \
	"(.last_sync.time | fromdateiso8601) == (.last_sync.unix_ms / 1000 | floor) and
	 ($now - (.last_sync.unix_ms / 1000 | floor)) < 60 and .last_sync.duration_seconds >= 0"
check "nothing refused, missing, differing or unexpected; a dry run compares nothing" \
	'.refused.total == 0 and .missing.total == 0 and .differ.total == 0 and
	 .unexpected.total == 0 and .compared == false and .programmed == 0'
t1=$(jq .last_sync.unix_ms <<<"$st")

# 2. one Service more
cat >"$tmp/extra.json" <<'JSON'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "extra", "namespace": "default"},
  "spec": {"clusterIP": "10.96.50.50", "clusterIPs": ["10.96.50.50"], "ipFamilies": ["IPv4"],
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "extra-1", "namespace": "default",
               "labels": {"kubernetes.io/service-name": "extra"}},
  "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
  "endpoints": [{"addresses": ["10.244.7.7"], "conditions": {"ready": true}}]}]}
JSON
before=$(syncs)
apictl apply "$tmp/extra.json"
wait_log "$tmp/agent.log" '"dry run: set 10\.96\.50\.50:80/tcp .*10\.244\.7\.7:8080' && wait_sync "$before"
ok $? "the agent sets the new Service's frontend"
st=$(statusz)
echo "# /statusz: $st"
check "one frontend more: desired $((n + 1)); a partial sync of one set, later than the first" \
	".desired == $((n + 1)) and .last_sync.full == false and .last_sync.sets == 1 and
	 .last_sync.dels == 0 and .last_sync.errors == 0 and .last_sync.unix_ms > $t1"

# 3. and deleted
before=$(syncs)
apictl delete Service default extra
wait_log "$tmp/agent.log" '"dry run: del 10\.96\.50\.50:80/tcp' && wait_sync "$before"
ok $? "the agent deletes the Service's frontend"
st=$(statusz)
echo "# /statusz: $st"
check "one frontend less: desired $n; a partial sync of one del" \
	".desired == $n and .last_sync.full == false and .last_sync.sets == 0 and
	 .last_sync.dels == 1 and .last_sync.errors == 0"
kill "$ag"
wait "$ag"
ok $? "SIGTERM: exit 0"
[ "$TAP_FAILED" = 0 ] || { echo "# agent log:"; sed 's/^/#   /' "$tmp/agent.log" | tail -40; }
tap_done
