#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kpx_ct: conntrack hygiene for UDP frontends (cases 01, 02).
# One UDP client socket per frontend, kept for the whole test (fixed source
# port), sends every 100 ms from "cli"; at time C the frontends change; the
# answers after C + 1 s must follow the change.
#
#   cli 10.0.1.2 --> node (kpx.ko) --> pod1/pod2/pod3 10.244.N.2 :8080 udp

. "$(dirname "$0")/lib.sh"
HERE=$SELFTESTS/tools
require_guest
require_module
setup_trap
web_pods 3 dual || skip "topology setup failed"
P1=10.244.1.2:8080 P2=10.244.2.2:8080 P3=10.244.3.2:8080
K="$KPXCTL"
$K set udp 10.96.0.51:53 $P1 $P2		# 2 -> 1: drop the one in use
$K set udp 10.96.0.52:53 $P3			# 1 -> 0
						# .53: no frontend -> 1 (case 01)
$K set udp 10.96.0.54:53			# 0 -> 1 (case 01, refused)
$K set udp 10.96.0.55:53 $P1			# DEL
$K set udp 10.96.0.56:53 $P1 $P2 $P3		# same SET again: no change
$K set udp "[fd00:10:96::51]:53" "[fd00:10:244:1::2]:8080" "[fd00:10:244:2::2]:8080"
T=(10.96.0.51:53 10.96.0.52:53 10.96.0.53:53 10.96.0.54:53 10.96.0.55:53 10.96.0.56:53 "[fd00:10:96::51]:53")
ip netns exec cli $HERE/udpflow.py 25 100 "${T[@]}" >"$TMPD/flow" &
FLOW=$!
# the backend each flow is on just before the change
on() { awk -v t="$1" '$2 == t && $3 ~ /^pod/ { x = $3 } END { print x }' "$TMPD/flow"; }
# python starts slowly on a loaded TCG host: until the flows that must be
# answered before the change are (at most 12 s), then 1.5 s of rounds
for _ in $(seq 60); do
	[ -n "$(on 10.96.0.51:53)" ] && [ -n "$(on 10.96.0.56:53)" ] &&
		[ -n "$(on "[fd00:10:96::51]:53")" ] && break
	sleep 0.2
done
sleep 1.5
b51=$(on 10.96.0.51:53) b56=$(on 10.96.0.56:53) b6=$(on "[fd00:10:96::51]:53")
log "before: .51 on $b51, .56 on $b56, v6 on $b6"
declare -A CT
ms() { date +%s%3N; }
C=$(ms)
if [ "$b51" = pod1 ]; then $K set udp 10.96.0.51:53 $P2; keep51=pod2; else $K set udp 10.96.0.51:53 $P1; keep51=pod1; fi
CT[10.96.0.51:53]=$(ms)
$K set udp 10.96.0.52:53; CT[10.96.0.52:53]=$(ms)
$K set udp 10.96.0.53:53 $P2; CT[10.96.0.53:53]=$(ms)
$K set udp 10.96.0.54:53 $P3; CT[10.96.0.54:53]=$(ms)
$K del udp 10.96.0.55:53; CT[10.96.0.55:53]=$(ms)
$K set udp 10.96.0.56:53 $P1 $P2 $P3; CT[10.96.0.56:53]=$(ms)
if [ "$b6" = pod1 ]; then $K set udp "[fd00:10:96::51]:53" "[fd00:10:244:2::2]:8080"; keep6=pod2; else $K set udp "[fd00:10:96::51]:53" "[fd00:10:244:1::2]:8080"; keep6=pod1; fi
CT["[fd00:10:96::51]:53"]=$(ms)
log "changes applied in $(( $(ms) - C )) ms"
wait $FLOW
# results TARGET FROM_MS TO_MS: distinct results in that window, sorted,
# without "timeout" (TCG stalls lose whole rounds now and then)
results() { awk -v t="$1" -v a="$2" -v b="$3" '$2 == t && $1 >= a && $1 < b && $3 != "timeout" { print $3 }' "$TMPD/flow" | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# after TARGET: results from one second after its change on
after() { results "$1" $((CT[$1] + 1000)) $((C + 100000)); }
before() { results "$1" $((C - 1500)) "$C"; }
log "before/after per target (timeouts left out):"
for t in "${T[@]}"; do log "  $t: [$(before "$t")] -> [$(after "$t")]"; done
assert_eq "2->1: the flow on the removed backend moved to the survivor" "$keep51" "$(after 10.96.0.51:53)"
assert_eq "1->0: refused afterwards, nothing to the old backend" "refused" "$(after 10.96.0.52:53)"
assert_eq "no frontend -> 1 backend: was unanswered" "" "$(before 10.96.0.53:53)"
assert_eq "no frontend -> 1 backend: answered afterwards" "pod2" "$(after 10.96.0.53:53)"
assert_eq "0 -> 1 backend: was refused" "refused" "$(before 10.96.0.54:53)"
assert_eq "0 -> 1 backend: answered afterwards" "pod3" "$(after 10.96.0.54:53)"
assert_eq "DEL: was answered by pod1" "pod1" "$(before 10.96.0.55:53)"
assert_eq "DEL: nothing answers afterwards" "" "$(after 10.96.0.55:53)"
assert_eq "same SET: the flow keeps its backend" "$b56" "$(results 10.96.0.56:53 $((C - 1500)) $((C + 100000)))"
assert_eq "v6 2->1: moved to the survivor" "$keep6" "$(after "[fd00:10:96::51]:53")"
n=$(awk '$3 ~ /^pod/ { n++ } END { print n + 0 }' "$TMPD/flow")
assert_gt "answers overall" 200 "$n"
# the first answer after each change, for the report
first() { awk -v t="$1" -v c="${CT[$1]}" -v w="$2" '$2 == t && $1 >= c && $3 == w { print $1 - c; exit }' "$TMPD/flow"; }
log "first answer after the change (ms): .51 $(first 10.96.0.51:53 $keep51), .53 $(first 10.96.0.53:53 pod2), .54 $(first 10.96.0.54:53 pod3), v6 $(first "[fd00:10:96::51]:53" $keep6)"
log "lost rounds of the unchanged .56: $(awk '$2 == "10.96.0.56:53" && $3 == "timeout"' "$TMPD/flow" | wc -l)"
# --- a confirmed entry without a DNAT binding is not kpx's -----------------
# An entry conntrack confirmed without NAT (here one created through
# ctnetlink, like a flow that passed before the namespace had NAT hooks)
# stays IP_CT_NEW while no reply is seen, so the NAT core offers every one
# of its packets to kpx; it can no longer be translated, and kpx neither
# schedules nor counts it.  A new flow to the same frontend is (control).
VN=10.96.0.57
assert_rc "set lc $VN:53" 0 $K set udp $VN:53 $P1 --scheduler lc
assert_rc "conntrack -I an entry without NAT" 0 conntrack -I -p udp \
	-s 10.0.1.2 -d $VN --sport 40000 --dport 53 -t 120
cat >"$TMPD/send.py" <<'PY'
import os, socket, sys, time
if not os.path.exists("/etc/kpx-guest"):
    sys.exit("refusing to run outside the kpx test VM")
host, port, sport, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.1.2", sport))
for i in range(n):
    s.sendto(b"ping\n", (host, port))
    time.sleep(0.05)
PY
ip netns exec cli python3 "$TMPD/send.py" $VN 53 40000 5
ip netns exec cli python3 "$TMPD/send.py" $VN 53 40001 1
sleep 0.5
kpx_snapshot
assert_eq "no-NAT entry: 5 datagrams, only the control flow counted" 1 \
	"$(svc_counter udp $VN 53 conns)"
assert_eq "no-NAT entry: the backend counted the control flow only" 1 \
	"$(be_counter udp $VN 53 10.244.1.2 8080)"
assert_eq "no-NAT entry: lc active = the control flow only" 1 \
	"$(jq -r '.services[] | select(.vip == "'$VN'") | .backends[0].active' <<<"$KS_JSON")"
assert_eq "no-NAT entry: still untranslated" 1 \
	"$(conntrack -L -p udp -d $VN --sport 40000 2>/dev/null | grep -c "src=$VN ")"
assert_eq "control flow: translated to pod1" 1 \
	"$(conntrack -L -p udp -d $VN --sport 40001 2>/dev/null | grep -c "src=10.244.1.2 ")"
ksft_exit
