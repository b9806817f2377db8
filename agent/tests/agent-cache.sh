#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-agent's lists against a watch cache that lags, on the host, loopback
# only, --dry-run, as client-go's reflector lists (tools/cache/reflector.go):
#  1. the initial list asks resourceVersion=0 (with limit=500) and is served
#     by the cache, here frozen behind the store: the agent programs what
#     the cache holds (a Service deleted since is still there, one created
#     since is not yet);
#  2. the cache catches up (apictl cache follow): the watch brings the
#     creation and the deletion, the state equals the store's;
#  3. a relist (410 on the re-watch) while the cache lags behind what the
#     agent has already seen (an HA peer's cache, frozen at an earlier
#     revision): the list at the last resourceVersion seen, without a limit,
#     is answered 504 ResourceVersionTooLarge after the cache's wait, the
#     agent lists again at once at the latest (no resourceVersion: a quorum
#     read) and deletes nothing that exists;
#  4. the cache follows again: a change arrives through the watch.
# The queries are checked as the server saw them (its listQueries).
# Usage: tests/agent-cache.sh [path/to/kpx-agent]   TAP on stdout.
ITEST_NAME=cache
. "$(dirname "$0")/lib/itest.sh"
. "$api/faults_lib.sh"
srv= ag=

echo "TAP version 13"
itest_server "$tmp/server.log" --bookmark-interval 1000 --objects "$objects/node-a.json"

apply_svc() { fl_svc "$@" >"$tmp/svc.json" && apictl apply "$tmp/svc.json"; }
stats() { "$api/kpx-test-apictl" --kubeconfig "$tmp/state/kubeconfig" stats; }
# svcq [N]: the last N (default all) Service list queries the server saw,
# one "resourceVersion limit from" line each ("-" for none)
svcq() {
	stats | python3 -c '
import json, sys
q = [e for e in json.load(sys.stdin)["listQueries"] if e["resource"] == "services"]
n = int(sys.argv[1]) if len(sys.argv) > 1 else len(q)
for e in q[len(q) - n:]:
    print(e["resourceVersion"] or "-", e["limit"] or "-", e["from"])' "$@"
}
store_rv() { stats | python3 -c 'import json, sys; print(json.load(sys.stdin)["resourceVersion"])'; }
dels() { grep -c 'dry run: del ' "$tmp/agent.log"; }

# 1. The initial list from a lagging cache.
apply_svc a 10.96.70.1 80 10.244.7.1 && apply_svc b 10.96.70.2 80 10.244.7.2 &&
	apictl cache freeze && apply_svc c 10.96.70.3 80 10.244.7.3 &&
	apictl delete Service t b && apictl delete EndpointSlice t b-1
ok $? "Services a, b; cache frozen; c created and b deleted in the store"
"$agent" --v 2 --kubeconfig "$tmp/state/kubeconfig" --hostname-override node-a --dry-run \
	--min-sync-period 100ms 2>"$tmp/agent.log" &
ag=$!
wait_log "$tmp/agent.log" '] "sync done"' 150
ok $? "first sync"
grep -Eq 'services: listed 2 at resourceVersion [0-9]+ \(asked for 0, 1 page\)' "$tmp/agent.log"
ok $? "services listed at resourceVersion=0: the cache's 2"
q=$(svcq)
ok $([ "$q" = "0 500 cache" ] && echo 0 || echo 1) "the server saw one Service list: resourceVersion=0 limit=500, from the cache ($q)"
grep -q 'dry run: set 10.96.70.2:80/tcp' "$tmp/agent.log" && ! grep -q '10.96.70.3:80' "$tmp/agent.log"
ok $? "the cache's view programmed: b (deleted since) set, c (created since) not yet"

# 2. The cache catches up.
apictl cache follow
ok $? "cache follows"
wait_log "$tmp/agent.log" 'dry run: set 10.96.70.3:80/tcp flags=0x8 backends=\[10.244.7.3:8080@1\]' &&
	wait_log "$tmp/agent.log" 'dry run: del 10.96.70.2:80/tcp'
ok $? "caught up: the watch brings c's creation and b's deletion"
want=$(printf '%s\n' "10.96.70.1:80/tcp 8 10.244.7.1:8080@1" "10.96.70.3:80/tcp 8 10.244.7.3:8080@1" | fl_normalize)
got=$(fl_replay "$tmp/agent.log")
ok $([ "$got" = "$want" ] && echo 0 || echo 1) "state equals the store's"

# 3. A relist while the cache lags behind what the agent has seen.
r0=$(store_rv)
apply_svc d 10.96.70.4 80 10.244.7.4
wait_log "$tmp/agent.log" 'dry run: set 10.96.70.4:80/tcp'
ok $? "d created, seen through the watch"
d0=$(dels) n0=$(svcq | wc -l)
apictl cache freeze "$r0" && apictl compact && apictl drop-watches
ok $? "cache frozen at $r0 (before d), history compacted, watches dropped"
wait_log "$tmp/agent.log" 'services: list at resourceVersion [0-9]+: HTTP 504: Too large resource version' 150
ok $? "the list at the last resourceVersion seen: 504 too large"
wait_log "$tmp/agent.log" 'services: listed 3 at resourceVersion [0-9]+ \(relist\) \(asked for the latest' 150
ok $? "listed again at the latest: 3 Services"
q=$(svcq | tail -n +"$((n0 + 1))" | tr '\n' ';')
ok $([[ "$q" =~ ^[0-9]+\ -\ cache\;-\ 500\ store\;$ ]] && echo 0 || echo 1) \
	"the server saw the relist at a resourceVersion without a limit (cache), then a quorum list ($q)"
sleep 1
ok $([ "$(dels)" = "$d0" ] && echo 0 || echo 1) "nothing deleted by the lagging cache (d kept)"

# 4. Following again.
apictl cache follow && apply_svc e 10.96.70.5 80 10.244.7.5
wait_log "$tmp/agent.log" 'dry run: set 10.96.70.5:80/tcp .*backends=\[10\.244\.7\.5:8080'
ok $? "cache follows: e arrives through the watch"
want=$(printf '%s\n' "10.96.70.1:80/tcp 8 10.244.7.1:8080@1" "10.96.70.3:80/tcp 8 10.244.7.3:8080@1" \
	"10.96.70.4:80/tcp 8 10.244.7.4:8080@1" "10.96.70.5:80/tcp 8 10.244.7.5:8080@1" | fl_normalize)
got=$(fl_replay "$tmp/agent.log")
ok $([ "$got" = "$want" ] && echo 0 || echo 1) "state equals the store's"
[ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'

kill -TERM "$ag"
wait "$ag"
ok $? "SIGTERM: exit 0"
ag=
[ "$TAP_FAILED" = 0 ] || { echo "# agent log (tail):"; tail -n 30 "$tmp/agent.log" | sed 's/^/#   /'; }
tap_done
