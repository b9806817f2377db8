#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/vm/guest.sh: the side-by-side benchmark, run inside the test VM by
# bench/run.sh (refuses elsewhere).  Prints one "KPX-BENCH {json}" line per
# result on stdout; bench/report.py turns them into tables and a plot.
#
# Topology (selftests/lib.sh's node + cli, plus three pod netns that own
# whole address ranges through a local route, so that 2 x 50,000 endpoints
# need no 100,000 netns):
#   cli 10.0.1.2 --veth-- node (kpx-node 10.0.0.1, VIPs 10.96.0.0/12)
#   bpa: 10.200.0.0/16 (A_i), bpb: 10.201.0.0/16 (B_i), bpc: 10.202.0.0/15
#   (C_i, D_i); each runs "kpx_load serve" on 0.0.0.0:8080 answering its
#   netns name.  Addresses of Service i: bench/vm/gen.py.
# The agent runs with --cluster-cidr 10.0.0.0/8: the client is in-cluster
# (pod to Service traffic, no masquerade), in every mode.
#
# For each N (KPX_BENCH_NS): the floor (no proxy; conntrack on through an
# nftables input-hook rule that forwarded packets never traverse): kpx_load
# conn to the 2N pod addresses, kpx_load bulk to one pod.  Then for each
# mode (KPX_BENCH_MODES) and N, with a fresh test API server holding
# $KPX_BENCH_DATA/objects-N.json:
#   sync: agent start to its first "sync done" (wall), and the sync's own
#     duration_ms; slab and vmalloc totals before the agent, after the sync
#     (N Services, 2N backends) and after slices4-N.json (2N more
#     backends); back to slices2-N.json;
#   conn: kpx_load conn to the N VIPs, alternating with the same to the
#     pods (ROUNDS); bulk: BULK_ROUNDS pairs of kpx_load bulk through VIP 0
#     and straight to A_0 (interleaved(), below);
#   chg: chglat.py, KPX_BENCH_CHANGES single-slice changes timed until a
#     probe connection reaches the new backends; the agent's own sync
#     durations over the same changes, split by sync_kind() into the
#     partial syncs that carried a change ("agent time per
#     change"), the periodic full resyncs (--sync-period) and the idle
#     partial syncs, and the agent's CPU time (cpu_ms) of the first kind;
#     agent VmHWM.
# Then, with KPX_BENCH_BIG=1, the full-sync step for each of
# KPX_BENCH_BIG_MODES: big() below.
# A step over KPX_BENCH_CAP seconds is recorded as "> cap" and the mode's
# larger N are skipped as such.
#
# Environment: KPX_BENCH_DATA (gen.py output, required), KPX_BENCH_MODES
# (default "kpx"), KPX_BENCH_NS (default "1 1000"), KPX_BENCH_SECS (conn
# seconds over all rounds, 5), KPX_BENCH_ROUNDS (3), KPX_BENCH_BULK_SECS
# (seconds per bulk run, 3), KPX_BENCH_BULK_ROUNDS (VIP + pod pairs, 4),
# KPX_BENCH_CONC (connections in flight, 1), KPX_BENCH_CHANGES (100),
# KPX_BENCH_CAP (seconds, 300), KPX_BENCH_BIG (1: run the full-sync step,
# default 0), KPX_BENCH_BIG_S and KPX_BENCH_BIG_E (its Services and
# endpoints per Service, 10000 and 100; gen.py big's files must exist),
# KPX_BENCH_BIG_MODES (default "kpx nftables"), KPX_BENCH_BIG_CAP (its
# cap, seconds, default KPX_BENCH_CAP), KPX_BENCH_BIG_FIRST (1: the
# full-sync step before the modes, default 0: after), KPX_BENCH_MAX_N
# ("MODE:N ...", e.g. "iptables:10000": the largest N a mode runs at; its
# larger N are recorded as skipped, not run), KPX_BENCH_SKIP_N ("MODE:N ...", e.g.
# "nftables:10000": single points recorded as skipped, not run; a run that
# repeats only some points of an earlier one).

. "$(dirname "$0")/../../selftests/lib.sh"
. "$(dirname "$0")/topo.sh"
require_guest

DATA=${KPX_BENCH_DATA:?KPX_BENCH_DATA}
MODES=${KPX_BENCH_MODES:-kpx}
NS=${KPX_BENCH_NS:-1 1000}
SECS=${KPX_BENCH_SECS:-5}
BULK=${KPX_BENCH_BULK_SECS:-3}
CONC=${KPX_BENCH_CONC:-1}
NCHG=${KPX_BENCH_CHANGES:-100}
CAP=${KPX_BENCH_CAP:-300}
LOAD=${KPX_BENCH_LOAD:-$REPO/bench/tools/kpx_load}
ROUNDS=${KPX_BENCH_ROUNDS:-3}
BULK_ROUNDS=${KPX_BENCH_BULK_ROUNDS:-4}
BIG=${KPX_BENCH_BIG:-0}
BIG_S=${KPX_BENCH_BIG_S:-10000}
BIG_E=${KPX_BENCH_BIG_E:-100}
BIG_MODES=${KPX_BENCH_BIG_MODES:-kpx nftables}
BIG_CAP=${KPX_BENCH_BIG_CAP:-$CAP}
BIG_FIRST=${KPX_BENCH_BIG_FIRST:-0}
MAX_N=${KPX_BENCH_MAX_N:-}
SKIP_N=${KPX_BENCH_SKIP_N:-}
CHG=$REPO/bench/vm/chglat.py
APIDIR=$SELFTESTS/apiserver
CERTS=$TMPD/certs
API_PID= AGENT_PID=

# emit JSON: one result line for the host.
emit() { echo "KPX-BENCH $*"; }

# jstr TEXT: TEXT as a JSON string (no control characters expected).
jstr() { local s=${1//\\/\\\\}; printf '"%s"' "${s//\"/\\\"}"; }

# json_or_null TEXT: TEXT if it looks like a JSON object, else null.
json_or_null() { if [[ "$1" == \{* ]]; then echo "$1"; else echo null; fi; }

# mono: seconds since boot with microseconds (bash builtin, no fork).
mono() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# slab_bytes: the kernel's slab total (num_objs x objsize) without the
# per-connection caches (conntrack, TCP sockets, skbs), which traffic moves.
slab_bytes() {
	echo 2 >/proc/sys/vm/drop_caches
	awk 'NR > 2 && $1 !~ /^(nf_conntrack|TCP|tw_sock|request_sock|skbuff|UDP)/ {
		s += $3 * $4 } END { printf "%d\n", s }' /proc/slabinfo
}
vmalloc_bytes() { awk '/^VmallocUsed:/ { print $2 * 1024 }' /proc/meminfo; }

topology() {
	bench_topology && "$APIDIR/gen-certs.sh" "$CERTS" >"$TMPD/certs.log" 2>&1
}

# api_up TAG FILE: a fresh test API server with the objects of FILE; sets
# API_PORT and KUBECONFIG_F.
api_up() {
	local st=$TMPD/state-$1

	rm -rf "$st"	# a stale port file would name the previous server
	mkdir -p "$st"
	python3 "$APIDIR/kpx-test-apiserver.py" --dir "$st" --port 0 --certs "$CERTS" \
		--objects "$2" 2>"$TMPD/api.log" &
	API_PID=$!
	for _ in $(seq 1 $((CAP * 5))); do
		[ -s "$st/port" ] && break
		sleep 0.2
	done
	[ -s "$st/port" ] || return 1
	API_PORT=$(cat "$st/port")
	KUBECONFIG_F=$st/kubeconfig
}
# api_apply FILE: POST a List to the API server's /_test/apply.
api_apply() {
	curl -sS -f -o /dev/null --cacert "$CERTS/ca.crt" \
		-H "Authorization: Bearer $(cat "$CERTS/token")" \
		-H 'Content-Type: application/json' --data-binary @"$1" \
		"https://127.0.0.1:$API_PORT/_test/apply"
}
api_down() {
	[ -n "$API_PID" ] || return 0
	kill "$API_PID" 2>/dev/null
	wait "$API_PID" 2>/dev/null
	API_PID=
}

# agent_up MODE LOG: at --v 2, so that the log holds the "sync done" lines
# (kube-proxy's V(2)) and the "listed" lines the harness polls; a line per
# programmed frontend comes with them.
agent_up() { # MODE LOG
	"$KPX_AGENT" --kubeconfig "$KUBECONFIG_F" --hostname-override node-a \
		--cluster-cidr 10.0.0.0/8 --proxy-mode "$1" --min-sync-period 100ms \
		--kube-api-qps 0 --healthz-bind-address 127.0.0.1:0 \
		--metrics-bind-address 127.0.0.1:0 --v 2 >"$2" 2>&1 &
	AGENT_PID=$!
}
# agent_cpu_s: the agent's CPU time so far, seconds: utime + stime of all
# its threads and cutime + cstime of its exited children (the iptables and
# ipvs modes' iptables-restore and ipset runs), /proc/PID/stat fields 14-17.
agent_cpu_s() {
	awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" \
		'{ printf "%.2f", ($14 + $15 + $16 + $17) / hz }' "/proc/$AGENT_PID/stat" 2>/dev/null || echo 0
}
# agent_down: SIGTERM, and SIGKILL after 10 s (an agent of a fallback mode
# that was capped may be inside one long libnftables or iptables-restore
# call, and finishes it before it exits: at nftables N = 50,000 that held
# the run for over 40 minutes).
agent_down() {
	local i

	[ -n "$AGENT_PID" ] || return 0
	kill -TERM "$AGENT_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$AGENT_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
}

# sync_field LOG FROM FIELD: FIELD of the "sync done" lines after line FROM.
sync_field() {
	tail -n +"$(($2 + 1))" "$1" | grep '] "sync done"' |
		sed -n "s/.* $3=\([0-9]*\).*/\1/p"
}

# sync_kind LOG FROM KIND [FIELD]: FIELD (default duration_ms, the wall
# time; cpu_ms is the agent thread's CPU time) of the "sync done" lines
# after line FROM of one kind: "change" = partial (full=false) with at least one set
# or del (a sync that carried a change), "idle" = partial without any,
# "full" = full=true (the first sync, the periodic --sync-period resync,
# or a repair after an error), with or without changes.
sync_kind() {
	tail -n +"$(($2 + 1))" "$1" | grep '] "sync done"' | awk -v k="$3" -v fld="${4:-duration_ms}" '{
		d = f = s = x = ""
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == fld) d = kv[2]
			else if (kv[1] == "full") f = kv[2]
			else if (kv[1] == "sets") s = kv[2]
			else if (kv[1] == "dels") x = kv[2]
		}
		if (d == "") next
		if (f == "true") { if (k == "full") print d; next }
		if (k == (s + x > 0 ? "change" : "idle")) print d }'
}

# stats_json: {"n":..,"p50":..,"p99":..,"max":..} of the numbers on stdin.
stats_json() {
	sort -n | awk 'NF { v[++n] = $1 } END {
		if (!n) { print "{\"n\":0,\"p50\":null,\"p99\":null,\"max\":null}"; exit }
		a = v[int(0.5 * (n - 1) + 0.5) + 1]; b = v[int(0.99 * (n - 1) + 0.5) + 1]
		printf "{\"n\":%d,\"p50\":%s,\"p99\":%s,\"max\":%s}\n", n, a, b, v[n] }'
}

# wait_sets LOG FROM WANT: until the syncs after line FROM made WANT sets
# (or the agent died, or CAP); prints the seconds or "cap"/"dead".
wait_sets() {
	local t0 sum

	t0=$(mono)
	while :; do
		sum=$(sync_field "$1" "$2" sets | awk '{ s += $1 } END { print s + 0 }')
		[ "$sum" -ge "$3" ] && { elapsed "$t0" "$(mono)"; return 0; }
		kill -0 "$AGENT_PID" 2>/dev/null || { echo dead; return 1; }
		awk -v a="$t0" -v b="$(mono)" -v c="$CAP" 'BEGIN { exit !(b - a > c) }' &&
			{ echo cap; return 1; }
		sleep 0.1
	done
}

load_kpx() {
	local ko=$KPX_KO deps

	grep -q '^kpx ' /proc/modules && return 0
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps || return 1
	insmod "$ko"
}

# state_flush MODE: remove what the mode left in the kernel.
state_flush() {
	local t

	case "$1" in
	kpx) "$KPXCTL" flush >/dev/null 2>&1 ;;
	*)
		nft flush ruleset 2>/dev/null
		for t in nat filter mangle raw; do
			iptables -t $t -F 2>/dev/null
			iptables -t $t -X 2>/dev/null
		done
		ipvsadm -C 2>/dev/null
		ip link del kube-ipvs0 2>/dev/null
		ipset destroy 2>/dev/null ;;
	esac
	conntrack -F >/dev/null 2>&1
}

# conn_pods N SECS / conn_vips N SECS: kpx_load conn from cli to the 2N pod
# addresses / the N VIPs.
conn_pods() {
	ip netns exec cli "$LOAD" conn -d "$2" -c "$CONC" 10.200.0.1:8080+"$1" 10.201.0.1:8080+"$1"
}
conn_vips() { ip netns exec cli "$LOAD" conn -d "$2" -c "$CONC" 10.96.0.1:80+"$1"; }

# interleaved N: ROUNDS alternating runs through the VIPs and straight to
# the pods (the mode's rules in place), so that both see the same host
# load; then BULK_ROUNDS pairs of BULK-second bulk runs through VIP 0 and
# straight to A_0, in the order VIP, pod in even pairs and pod, VIP in odd
# ones (so that a drift of the host's load over a pair cancels out over
# two).  Prints JSON arrays: "conn":[..],"conn_pod":[..],"bulk":[..],
# "bulk_pod":[..] (bulk[k] and bulk_pod[k] are pair k), and
# "agent_conn":{"cpu_s":..,"wall_s":..}: the agent's CPU time (user and
# system, all threads, exited children) over the connection rounds' wall time (a mode whose
# agent is busy, e.g. with periodic resyncs, takes CPU from the data path
# on this 2-vCPU guest: its VIP and pod rounds both pay for it).
interleaved() {
	local n=$1 r t=$(awk -v s="$SECS" -v r="$ROUNDS" 'BEGIN { printf "%.2f", s / r }')
	local cv=() cp=() bv=() bp=() v p c0 c1 w0

	c0=$(agent_cpu_s) w0=$(mono)
	for ((r = 0; r < ROUNDS; r++)); do
		conntrack -F >/dev/null 2>&1
		cv+=("$(json_or_null "$(conn_vips "$n" "$t")")")
		cp+=("$(json_or_null "$(conn_pods "$n" "$t")")")
	done
	c1=$(agent_cpu_s)
	echo -n "\"agent_conn\":{\"cpu_s\":$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')," \
		"\"wall_s\":$(elapsed "$w0" "$(mono)")},"
	for ((r = 0; r < BULK_ROUNDS; r++)); do
		if ((r % 2)); then
			p=$(ip netns exec cli "$LOAD" bulk -d "$BULK" 10.200.0.1:8080)
			v=$(ip netns exec cli "$LOAD" bulk -d "$BULK" 10.96.0.1:80)
		else
			v=$(ip netns exec cli "$LOAD" bulk -d "$BULK" 10.96.0.1:80)
			p=$(ip netns exec cli "$LOAD" bulk -d "$BULK" 10.200.0.1:8080)
		fi
		bv+=("$(json_or_null "$v")")
		bp+=("$(json_or_null "$p")")
	done
	local IFS=,
	echo "\"conn\":[${cv[*]}],\"conn_pod\":[${cp[*]}],\"bulk\":[${bv[*]}],\"bulk_pod\":[${bp[*]}]"
}

floor() { # N
	local n=$1 c b

	conntrack -F >/dev/null 2>&1
	c=$(conn_pods "$n" "$SECS")
	b=$(ip netns exec cli "$LOAD" bulk -d "$BULK" 10.200.0.1:8080)
	emit "{\"kind\":\"floor\",\"n\":$n,\"conn\":$(json_or_null "$c"),\"bulk\":$(json_or_null "$b")}"
}

capped() { # MODE N WHY
	emit "{\"kind\":\"mode\",\"mode\":\"$1\",\"n\":$2,\"capped\":$(jstr "$3")}"
	diag "$1" "$2"
}

# diag MODE N: the tails of the agent's and the API server's logs, as
# comments on the console (for a capped or failed step).
diag() {
	log "agent log ($1, N=$2), tail:"
	tail -n 8 "$TMPD/agent-$1-$2.log" 2>/dev/null | cut -c1-300 | sed 's/^/#   /'
	log "API server log, tail:"
	tail -n 4 "$TMPD/api.log" 2>/dev/null | cut -c1-300 | sed 's/^/#   /'
}

# one MODE N: the measurements of one mode at N Services; 1 = capped.
one() {
	local mode=$1 n=$2 lg=$TMPD/agent-$1-$2.log from t0 t w s0 s1 s2 v0 v1 v2
	local sync_ms t4 t2 c b chg cms cfull cidle rss

	state_flush "$mode"
	api_up "$n" "$DATA/objects-$n.json" || { capped "$mode" "$n" "API server did not start within ${CAP}s"; return 1; }
	s0=$(slab_bytes) v0=$(vmalloc_bytes)
	t0=$(mono)
	agent_up "$mode" "$lg"
	w=$(wait_sets "$lg" 0 "$n")
	if [ "$w" = dead ] || [ "$w" = cap ]; then
		[ "$w" = dead ] && w="agent exited: $(grep -v '^$' "$lg" | tail -n 1)" || w="sync > ${CAP}s"
		agent_down
		api_down
		capped "$mode" "$n" "$w"
		return 1
	fi
	t=$(elapsed "$t0" "$(mono)")
	sync_ms=$(sync_field "$lg" 0 duration_ms | awk '{ s += $1 } END { print s + 0 }')
	sleep 1
	s1=$(slab_bytes) v1=$(vmalloc_bytes)

	from=$(wc -l <"$lg")
	log "$(now) $mode N=$n: synced in ${t}s, 2N more backends"
	api_apply "$DATA/slices4-$n.json" || diag "$mode" "$n"
	t4=$(wait_sets "$lg" "$from" "$n")
	sleep 1
	s2=$(slab_bytes) v2=$(vmalloc_bytes)
	from=$(wc -l <"$lg")
	api_apply "$DATA/slices2-$n.json"
	t2=$(wait_sets "$lg" "$from" "$n")

	log "$(now) $mode N=$n: loads"
	c=$(interleaved "$n")
	log "$(now) $mode N=$n: changes"
	from=$(wc -l <"$lg")
	chg=$(python3 "$CHG" changes "$CERTS" "$API_PORT" "$n" "$NCHG" 10)
	cms=$(sync_kind "$lg" "$from" change | stats_json)
	cfull=$(sync_kind "$lg" "$from" full | stats_json)
	cidle=$(sync_kind "$lg" "$from" idle | stats_json)
	ccpu=$(sync_kind "$lg" "$from" change cpu_ms | stats_json)
	rss=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$AGENT_PID/status")
	agent_down
	api_down
	emit "{\"kind\":\"mode\",\"mode\":\"$mode\",\"n\":$n,\"sync_wall_s\":$t," \
		"\"sync_agent_ms\":$sync_ms,\"resync4_s\":$(jstr "$t4"),\"resync2_s\":$(jstr "$t2")," \
		"\"slab\":[$s0,$s1,$s2],\"vmalloc\":[$v0,$v1,$v2]," \
		"$c," \
		"\"chg\":$(json_or_null "$chg"),\"chg_agent_ms\":$cms," \
		"\"chg_agent_full_ms\":$cfull,\"chg_agent_idle_ms\":$cidle," \
		"\"chg_agent_cpu_ms\":$ccpu," \
		"\"agent_rss_mib\":${rss:-null}}"
	state_flush "$mode"
	return 0
}

# log_s LOG REGEX [last]: the time of day, in seconds, of the first (or
# the last) line of LOG matching REGEX (the agent's RFC 3339 UTC stamps;
# a run across midnight is not handled).
log_s() {
	grep -E "$2" "$1" | { [ "${3:-}" = last ] && tail -n 1 || head -n 1; } |
		awk '{ split($2, t, ":"); printf "%.3f\n", t[1] * 3600 + t[2] * 60 + t[3] }'
}

# list_end_s LOG T0: seconds from T0 (date +%s.%N) to the agent's last
# "listed" line in LOG, or null.
list_end_s() {
	awk -v a="$2" -v b="$(log_s "$1" '] "[a-z]+: listed ' last)" 'BEGIN {
		if (b == "") { print "null"; exit }
		split(a, x, "."); d = b - (x[1] % 86400 + ("0." x[2]))
		printf "%.3f\n", d }'
}

# big_capped MODE WHY [EXTRA]: EXTRA, more JSON members (",\"k\":v").
big_capped() {
	emit "{\"kind\":\"big\",\"mode\":\"$1\",\"services\":$BIG_S,\"endpoints\":$BIG_E,\"capped\":$(jstr "$2")${3:-}}"
	diag "$1" big
}

# big MODE: the full sync of BIG_S Services x BIG_E endpoints from an empty
# node (10,000 x 100).  A fresh API server gets the Services,
# then the EndpointSlices in gen.py's chunks (not timed, but within
# BIG_CAP, which is also the sync's cap: the test API server's lists of a
# million endpoints take minutes under TCG, and they come first);
# then the agent starts: sync_wall_s = agent start to the "sync done" lines
# adding up to BIG_S sets, sync_agent_ms = those syncs' own duration_ms
# (the number: syncs), list_s = agent start to its last "listed" line
# before them (the test API server's share, the same for every mode).
# Then one connection from cli to the last Service's VIP must be answered
# by a pod netns ("probe"); slab totals before and after; agent VmHWM.
big() {
	local mode=$1 lg=$TMPD/agent-$1-big.log pre=$DATA/big-$BIG_S-$BIG_E t0 ta w f k
	local t sync_ms nsync list_s s0 s1 v0 v1 rss probe
	local CAP=$BIG_CAP	# for api_up and wait_sets too (dynamic scope)

	state_flush "$mode"
	t0=$(mono)
	api_up big "$pre-svc.json" || { big_capped "$mode" "API server did not start within ${CAP}s"; return 1; }
	for ((k = 0; ; k++)); do
		f=$pre-slices-$k.json
		[ -s "$f" ] || break
		if ! api_apply "$f" || ! kill -0 "$API_PID" 2>/dev/null; then
			api_down
			big_capped "$mode" "applying $f to the API server failed"
			return 1
		fi
		if awk -v a="$t0" -v b="$(mono)" -v c="$CAP" 'BEGIN { exit !(b - a > c) }'; then
			api_down
			big_capped "$mode" "loading the API server took over ${CAP}s"
			return 1
		fi
	done
	log "$(now) big $mode: API server loaded in $(elapsed "$t0" "$(mono)")s ($k chunks)"
	s0=$(slab_bytes) v0=$(vmalloc_bytes)
	t0=$(mono)
	ta=$(date -u +%s.%N)	# the agent's log stamps are wall-clock time
	agent_up "$mode" "$lg"
	w=$(wait_sets "$lg" 0 "$BIG_S")
	if [ "$w" = dead ] || [ "$w" = cap ]; then
		# how long the sync ran without finishing (a lower bound of its time)
		t=$(elapsed "$t0" "$(mono)")
		list_s=$(list_end_s "$lg" "$ta")
		if [ "$w" = cap ]; then
			w="sync > ${CAP}s"
		elif dmesg | grep -q "Killed process $AGENT_PID "; then
			w="agent exited: killed by the OOM killer (guest $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB)"
		else
			w="agent exited: $(grep -v '^$' "$lg" | tail -n 1)"
		fi
		agent_down
		api_down
		state_flush "$mode"
		big_capped "$mode" "$w" ",\"unfinished_after_s\":$t,\"list_s\":$list_s"
		return 1
	fi
	t=$(elapsed "$t0" "$(mono)")
	sync_ms=$(sync_field "$lg" 0 duration_ms | awk '{ s += $1 } END { print s + 0 }')
	nsync=$(grep -c '] "sync done"' "$lg")
	list_s=$(list_end_s "$lg" "$ta")
	probe=$(ip netns exec cli python3 "$CHG" probe $((BIG_S - 1)) 10)
	sleep 1
	s1=$(slab_bytes) v1=$(vmalloc_bytes)
	rss=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$AGENT_PID/status")
	log "$(now) big $mode: synced in ${t}s (agent ${sync_ms} ms in $nsync syncs; lists ${list_s}s), probe $probe"
	agent_down
	api_down
	emit "{\"kind\":\"big\",\"mode\":\"$mode\",\"services\":$BIG_S,\"endpoints\":$BIG_E," \
		"\"sync_wall_s\":$t,\"sync_agent_ms\":$sync_ms,\"syncs\":$nsync,\"list_s\":$list_s," \
		"\"probe\":$(jstr "$probe"),\"slab\":[$s0,$s1],\"vmalloc\":[$v0,$v1]," \
		"\"agent_rss_mib\":${rss:-null}}"
	state_flush "$mode"
	return 0
}

main() {
	local mode n stop lim

	setup_trap 'agent_down; api_down'
	ulimit -n 65536
	topology || { log "topology setup failed"; exit 1; }
	emit "{\"kind\":\"meta\",\"kernel\":$(jstr "$(uname -r)"),\"cpus\":$(nproc)," \
		"\"mem_mib\":$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)," \
		"\"secs\":$SECS,\"bulk_secs\":$BULK,\"bulk_per_run\":true,\"bulk_rounds\":$BULK_ROUNDS," \
		"\"conc\":$CONC,\"changes\":$NCHG,\"cap_s\":$CAP,\"rounds\":$ROUNDS," \
		"\"big\":$([ "$BIG" = 1 ] && echo "{\"services\":$BIG_S,\"endpoints\":$BIG_E,\"cap_s\":$BIG_CAP,\"modes\":$(jstr "$BIG_MODES")}" || echo null)," \
		"\"ns\":$(jstr "$NS"),\"modes\":$(jstr "$MODES")}"

	# The floor: conntrack on, no proxy (an input-hook rule holds it).
	nft add table ip kpxbench
	nft add chain ip kpxbench in '{ type filter hook input priority 0; }'
	nft add rule ip kpxbench in ct state invalid counter
	for n in $NS; do
		floor "$n"
	done
	nft delete table ip kpxbench

	[ "$BIG_FIRST" = 1 ] && big_all
	for mode in $MODES; do
		[ "$mode" = kpx ] && { load_kpx || { capped kpx 0 "kpx.ko did not load"; continue; }; }
		stop=
		for n in $NS; do
			for lim in $MAX_N; do
				[ "${lim%%:*}" = "$mode" ] && [ "$n" -gt "${lim#*:}" ] &&
					stop="skipped: KPX_BENCH_MAX_N $lim"
			done
			if [ -n "$stop" ]; then
				capped "$mode" "$n" "$stop"
				continue
			fi
			if [[ " $SKIP_N " == *" $mode:$n "* ]]; then
				capped "$mode" "$n" "skipped: KPX_BENCH_SKIP_N $mode:$n"
				continue
			fi
			log "$(now) mode $mode N=$n"
			one "$mode" "$n" || stop="skipped: a smaller N was capped"
		done
		[ "$mode" = kpx ] && { "$KPXCTL" flush >/dev/null 2>&1; rmmod kpx; }
	done

	[ "$BIG_FIRST" = 1 ] || big_all
	exit 0
}

# big_all: the full-sync step for each of BIG_MODES (if BIG=1).  Last by
# default, so that its memory use cannot disturb the other steps;
# KPX_BENCH_BIG_FIRST=1 runs it first (a run that must reach it).
big_all() {
	local mode

	[ "$BIG" = 1 ] && for mode in $BIG_MODES; do
		if [ "$mode" = kpx ] && ! load_kpx; then
			big_capped kpx "kpx.ko did not load"
			continue
		fi
		log "$(now) big step: mode $mode, $BIG_S Services x $BIG_E endpoints"
		big "$mode"
		[ "$mode" = kpx ] && { "$KPXCTL" flush >/dev/null 2>&1; rmmod kpx; }
	done
	return 0
}

main
