#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx-timeout: 480
# kpx_sched: the module's schedulers and ClientIP session affinity, end to
# end: rr gives exactly equal shares, sh keeps a client on one backend, mh
# (Maglev) keeps >= 98% of the clients of the remaining backends when one
# of 100 backends leaves, lc avoids a backend with open connections (its
# active counts follow conntrack, and a backend whose connections closed is
# picked again), and ClientIP affinity holds a
# client, drops it the moment its backend leaves, expires after the
# timeout, and its table grows past its initial size without evicting.
#
#   cli 10.0.1.2 + 10.0.1.10..209 + 10.0.2.1..150 --veth--> node (kpx.ko) --> pod1..pod4 10.244.N.2:8080
#                                                         --> podm 10.244.200.1..100:8080
#   VIPs: tcp 10.96.0.20:80 (rr, sh, affinity), tcp 10.96.0.21:80 (mh),
#         tcp 10.96.0.22:80 (lc)
. "$(dirname "$0")/lib.sh"

require_guest
require_module
require_file "$KPXCTL" "$ECHO_BIN" "$CLIENT_BIN"
command -v python3 >/dev/null || skip "python3 missing"
setup_trap

node_setup && cli_setup && pods_setup 4 || skip "topology setup failed"
for i in 1 2 3 4; do
	echo_start "pod$i" -t "pod$i" "10.244.$i.2:8080"
done
be4=(10.244.1.2:8080 10.244.2.2:8080 10.244.3.2:8080 10.244.4.2:8080)
V=10.96.0.20 VM=10.96.0.21
NSRC=200

# Many client source addresses in cli (10.0.1.10 ..), one connection each.
srcs=()
for i in $(seq 10 $((10 + NSRC - 1))); do
	srcs+=("10.0.1.$i")
done
printf 'addr add %s/32 dev eth0\n' "${srcs[@]}" | ip -n cli -batch - ||
	skip "cannot add client addresses"

# by_source VIP:PORT COUNT SRC...: one TCP connection per SRC (COUNT times
# each), printing "SRC BACKEND_ADDR:PORT" per answer ("SRC fail" if none).
cat >"$TMPD/by_source.py" <<'PY'
import os, socket, sys
if not os.path.exists("/etc/kpx-guest"):
    sys.exit("refusing to run outside the kpx test VM")
host, port = sys.argv[1].rsplit(":", 1)
count = int(sys.argv[2])
for src in sys.argv[3:]:
    for _ in range(count):
        s = socket.socket()
        s.settimeout(3)
        try:
            s.bind((src, 0))
            s.connect((host, int(port)))
            line = s.makefile().readline().split()
            print(src, line[1])
        except OSError as e:
            print(src, "fail", e)
        finally:
            s.close()
PY
by_source() {
	ip netns exec cli python3 "$TMPD/by_source.py" "$@"
}

# --- rr: 1000 connections over 4 backends give exactly 250 each ---------
assert_rc "set rr" 0 "$KPXCTL" set tcp $V:80 "${be4[@]}" --scheduler rr
client cli -n 1000 -t 3000 -q $V:80
assert_eq "rr: attempts ok" 1000 "$(summary_field ok)"
for i in 1 2 3 4; do
	assert_eq "rr: answers from pod$i" 250 "$(ident_count "pod$i")"
done
kpx_snapshot
assert_eq "rr: kpxctl shows the scheduler" rr \
	"$(jq -r '.services[0].scheduler' <<<"$KS_JSON")"
for i in 1 2 3 4; do
	assert_eq "rr: module counter of pod$i" 250 \
		"$(be_counter tcp $V 80 10.244.$i.2 8080)"
done

# --- sh: one client, one backend; many clients spread ---------------------
assert_rc "set sh" 0 "$KPXCTL" set tcp $V:80 "${be4[@]}" --scheduler sh
client cli -n 100 -t 3000 -q $V:80
assert_eq "sh: attempts ok" 100 "$(summary_field ok)"
assert_eq "sh: one client, one backend" 1 "$(ident_names | wc -w)"
by_source $V:80 1 "${srcs[@]:0:40}" >"$TMPD/sh.out"
assert_eq "sh: 40 clients answered" 0 "$(grep -c fail "$TMPD/sh.out")"
assert_ge "sh: 40 clients use several backends" 3 \
	"$(awk '{print $2}' "$TMPD/sh.out" | sort -u | wc -l)"
by_source $V:80 1 "${srcs[@]:0:40}" >"$TMPD/sh2.out"
assert_eq "sh: every client keeps its backend" "" \
	"$(diff "$TMPD/sh.out" "$TMPD/sh2.out")"

# --- mh: 100 backends, one leaves, >= 98% of the others' clients stay ----
pod_add podm $(seq -f '10.244.200.%g' 1 100) || skip "podm setup failed"
echo_start podm -t podm 0.0.0.0:8080
bem=()
for i in $(seq 1 100); do
	bem+=("10.244.200.$i:8080")
done
assert_rc "set mh, 100 backends" 0 "$KPXCTL" set tcp $VM:80 "${bem[@]}" \
	--scheduler mh --mh-size 65537
by_source $VM:80 1 "${srcs[@]}" >"$TMPD/mh1.out"
assert_eq "mh: $NSRC clients answered" 0 "$(grep -c fail "$TMPD/mh1.out")"
# Remove the backend with the most clients (the harshest case).
gone=$(awk '{print $2}' "$TMPD/mh1.out" | sort | uniq -c | sort -rn |
	awk 'NR == 1 {print $2}')
log "mh: removing $gone ($(grep -c " $gone\$" "$TMPD/mh1.out") clients)"
rest=()
for b in "${bem[@]}"; do
	[ "$b" = "$gone" ] || rest+=("$b")
done
assert_rc "set mh, 99 backends" 0 "$KPXCTL" set tcp $VM:80 "${rest[@]}" \
	--scheduler mh --mh-size 65537
by_source $VM:80 1 "${srcs[@]}" >"$TMPD/mh2.out"
kept=$(join <(sort "$TMPD/mh1.out") <(sort "$TMPD/mh2.out") |
	awk -v g="$gone" '$2 != g { n++; if ($2 == $3) k++ }
		END { printf "%d %d", k, n }')
read -r k n <<<"$kept"
log "mh: $k of $n clients of the remaining backends kept their backend"
assert_ge "mh: >= 98% of $n clients keep their backend" \
	$(((n * 98 + 99) / 100)) "$k"
assert_eq "mh: clients of the removed backend moved" 0 \
	"$(grep -c " $gone\$" "$TMPD/mh2.out")"

# --- lc: held connections make a backend busy; new ones go elsewhere -----
# A backend's active count grows when a connection is sent to it and is
# recounted from conntrack about once a second (every lc namespace shares
# one walk): a closed connection stops counting at the next recount.  The
# checks wait for the count they expect (wait_active) instead of sleeping
# for a recount, and the held connections end when their client is killed,
# not on a timer.
VL=10.96.0.22
# active ADDR [VIP]: KPX_BE_A_ACTIVE of backend ADDR:8080 of VIP:80 now.
active() {
	kpx_json | jq -r ".services[] | select(.vip == \"${2:-$VL}\") |
		.backends[] | select(.addr == \"$1\") | .active"
}
# wait_active ADDR N: until backend ADDR of $VL has N active connections
# (at most 100 reads: each recount pass is a second or more apart, longer
# under load); prints the last count seen, and logs each count seen with
# the states of $VL's conntrack entries then.
wait_active() {
	local i a last="" seen="" t0=$SECONDS
	for i in $(seq 1 100); do
		a=$(active "$1")
		[ "$a" = "$last" ] ||
			seen+=" $a@$((SECONDS - t0))s[$(conntrack -L -p tcp -d $VL 2>/dev/null |
				awk '{ n[$4]++ } END { for (s in n) printf " %s %d", s, n[s] }')]"
		last=$a
		[ "$a" = "$2" ] && break
		sleep 0.2
	done
	log "wait_active $1 $2: saw$seen" >&2
	echo "$a"
}
# hold N VIP OUT: N connections held open (60 s at most) from cli, their
# pids in HELD (to be killed: that closes them).  The client is started by
# /usr/sbin/ip itself, not through lib.sh's ip() function: a function in
# the background runs in a subshell of its own, so $! would be that
# subshell's pid and killing it would leave the client holding its
# connection until its 60 s are over.
hold() {
	local i
	HELD=()
	for i in $(seq 1 "$1"); do
		/usr/sbin/ip netns exec cli "$CLIENT_BIN" --hold 60000 -t 3000 \
			"$2:80" >"$TMPD/$3$i.out" 2>&1 &
		PIDS+=($!)
		HELD+=($!)
	done
}
# held_on OUT N POD: how many of the N held connections OUT1..OUTN answered
# from POD (waits up to 10 s for each to connect).
held_on() {
	local i j n=0
	for i in $(seq 1 "$2"); do
		for j in $(seq 1 50); do
			grep -q '^hold connected' "$TMPD/$1$i.out" && break
			sleep 0.2
		done
		grep -q "^hold connected $3 " "$TMPD/$1$i.out" && n=$((n + 1))
	done
	echo "$n"
}
assert_rc "set lc, pod1 only" 0 "$KPXCTL" set tcp $VL:80 10.244.1.2:8080 \
	--scheduler lc
hold 4 $VL h1
h1=("${HELD[@]}")
assert_eq "lc: 4 held connections on pod1" 4 "$(held_on h1 4 pod1)"
assert_eq "lc: pod1 active = 4" 4 "$(wait_active 10.244.1.2 4)"
assert_rc "set lc, pod1 + pod2" 0 "$KPXCTL" set tcp $VL:80 \
	10.244.1.2:8080 10.244.2.2:8080 --scheduler lc
client cli -n 4 -t 3000 -q $VL:80
assert_eq "lc: 4 new connections all go to the idle backend" 4 \
	"$(ident_count pod2)"
assert_eq "lc: pod2 active = 0 once recounted (its connections closed)" 0 \
	"$(wait_active 10.244.2.2 0)"
assert_eq "lc: pod1 active = 4 held connections" 4 "$(active 10.244.1.2)"
# 3 more held connections: pod2 is the less loaded (0, 1, 2 < 4).
hold 3 $VL h2
h2=("${HELD[@]}")
assert_eq "lc: 3 more held connections on pod2" 3 "$(held_on h2 3 pod2)"
assert_eq "lc: pod2 active = 3" 3 "$(wait_active 10.244.2.2 3)"
# pod1's 4 close: after the recount pod1 (0) is less loaded than pod2 (3),
# so the next 3 connections go there; without the decrement (4 > 3) they
# would all have gone to pod2.
kill "${h1[@]}" 2>/dev/null
wait "${h1[@]}" 2>/dev/null
assert_eq "lc: pod1 active = 0 after its connections closed" 0 \
	"$(wait_active 10.244.1.2 0)"
# kpx_client ends a hold at SIGTERM and prints its summary then: all four
# summaries are there once wait returns (a kill that missed the clients would
# leave them holding for 60 s, no summary yet)
assert_eq "lc: pod1's held clients ended at the kill (their summaries printed)" 4 \
	"$(cat "$TMPD"/h1?.out | grep -c '^hold summary')"
assert_eq "lc: pod2 active still 3" 3 "$(active 10.244.2.2)"
client cli -n 3 -t 3000 -q $VL:80
assert_eq "lc: after the close, 3 new connections all go to pod1" 3 \
	"$(ident_count pod1)"
kill "${h2[@]}" 2>/dev/null
wait "${h2[@]}" 2>/dev/null
# The node's own connections to an ext-local frontend are scheduled with
# its ClusterIP frontend (here the lc one), and the recount counts them
# there: a SET that replaces pod2 (a fresh backend object, active 0) shows
# them again only through the recount.
VE=10.96.0.23
assert_rc "set lc, pod2 only" 0 "$KPXCTL" set tcp $VL:80 10.244.2.2:8080 \
	--scheduler lc
assert_eq "lc: pod2 active = 0 (pod2's connections closed)" 0 \
	"$(wait_active 10.244.2.2 0)"
assert_rc "set ext-local -> $VL:80" 0 "$KPXCTL" set tcp $VE:80 \
	10.244.3.2:8080 --ext-local $VL:80
HELD=()
for i in 1 2 3; do
	"$CLIENT_BIN" --hold 60000 -t 3000 $VE:80 >"$TMPD/he$i.out" 2>&1 &
	PIDS+=($!)
	HELD+=($!)
done
assert_eq "lc: node -> ext-local: 3 held connections on pod2" 3 \
	"$(held_on he 3 pod2)"
assert_rc "set lc, pod1 only" 0 "$KPXCTL" set tcp $VL:80 10.244.1.2:8080 \
	--scheduler lc
assert_rc "set lc, pod2 only again" 0 "$KPXCTL" set tcp $VL:80 \
	10.244.2.2:8080 --scheduler lc
assert_eq "lc: node -> ext-local: the recount finds pod2's 3 connections" 3 \
	"$(wait_active 10.244.2.2 3)"
kill "${HELD[@]}" 2>/dev/null
wait "${HELD[@]}" 2>/dev/null

# --- ClientIP affinity ----------------------------------------------------
assert_rc "set rr + affinity 3 s" 0 "$KPXCTL" set tcp $V:80 "${be4[@]}" \
	--scheduler rr --affinity 3
client cli -n 200 -t 3000 -q $V:80
assert_eq "affinity: attempts ok" 200 "$(summary_field ok)"
assert_eq "affinity: 200 connections, one backend" 1 "$(ident_names | wc -w)"
first=$(ident_names)
kpx_snapshot
assert_eq "affinity: kpxctl shows the timeout" 3 \
	"$(jq -r '.services[] | select(.vip == "'$V'") | .affinity.timeout' <<<"$KS_JSON")"
# Remove that backend: the client moves at once, and stays on its new one.
rest=()
for i in 1 2 3 4; do
	[ "pod$i" = "$first" ] || rest+=("10.244.$i.2:8080")
done
assert_rc "remove $first" 0 "$KPXCTL" set tcp $V:80 "${rest[@]}" \
	--scheduler rr --affinity 3
client cli -n 20 -t 3000 -q $V:80
assert_eq "affinity: after removal, attempts ok" 20 "$(summary_field ok)"
second=$(ident_names)
assert_eq "affinity: after removal, one backend" 1 "$(echo $second | wc -w)"
assert_ne "affinity: moved off the removed backend" "$first" "$second"
# Within the timeout the client stays; after it, rr moves it on.  (The
# exact timeout, to the millisecond, is checked by the unit tests; here a
# new client process under TCG may take a second to start.)
client cli -n 1 -t 3000 -q $V:80
assert_eq "affinity: next connection, same backend" "$second" "$(ident_names)"
sleep 4
client cli -n 1 -t 3000 -q $V:80
third=$(ident_names)
assert_ne "affinity: 4 s idle > 3 s timeout, rr moves the client" \
	"$second" "$third"

# --- affinity table growth: 150 clients, no eviction -----------------------
# A table starts at 64 entries and grows (x8) in the background at 3/4
# full, up to KPX_AFFINITY_MAX_DEFAULT: 150 clients fit with no eviction.
big=()
for i in $(seq 1 150); do
	big+=("10.0.2.$i")
done
printf 'addr add %s/32 dev eth0\n' "${big[@]}" | ip -n cli -batch - ||
	skip "cannot add client addresses"
ip route add 10.0.2.0/24 dev v-cli
assert_rc "set rr + affinity 60 s" 0 "$KPXCTL" set tcp $V:80 "${be4[@]}" \
	--scheduler rr --affinity 60
by_source $V:80 1 "${big[@]}" >"$TMPD/big.out"
assert_eq "growth: 150 clients answered" 0 "$(grep -c fail "$TMPD/big.out")"
kpx_snapshot
assert_eq "growth: no affinity eviction" 0 \
	"$(jq -r '.services[] | select(.vip == "'$V'") | .affinity.evictions' <<<"$KS_JSON")"
by_source $V:80 1 "${big[@]:0:30}" "${big[@]:120:30}" >"$TMPD/big2.out"
assert_eq "growth: first and last 30 clients keep their backend" "" \
	"$(diff <(grep -F -f <(awk '{print $1" "}' "$TMPD/big2.out") "$TMPD/big.out" | sort) <(sort "$TMPD/big2.out"))"

ksft_exit
