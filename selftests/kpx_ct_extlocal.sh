#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kpx_ct_extlocal: UDP conntrack cleanup through the KPX_SVC_F_EXT_LOCAL
# redirect.  A local client's flow to an externalTrafficPolicy: Local
# frontend (E, 10.96.0.61:53, own backend pod3) is scheduled with the
# Service's ClusterIP frontend (C, 10.96.0.60:53, pod1 and pod2), so its
# conntrack entry is keyed by E but DNATed to a backend of C:
#   1. C drops the flow's backend: the entry is deleted and the flow moves
#      to C's survivor (it used to stay on the removed backend);
#   2. E drops its own backend: the entry, DNATed to C's live backend, is
#      kept (same conntrack id; it used to be deleted);
#   3. DEL of C: the entry (to a backend of C, which E no longer reaches)
#      is deleted.
#
#   cli 10.0.1.2 (local: --local-cidr 10.0.1.0/24) --> node --> pod1..3
. "$(dirname "$0")/lib.sh"
HERE=$SELFTESTS/tools
require_guest
require_module
setup_trap
web_pods 3 || skip "topology setup failed"
P1=10.244.1.2:8080 P2=10.244.2.2:8080 P3=10.244.3.2:8080
K="$KPXCTL"
C=10.96.0.60:53 E=10.96.0.61:53
$K config --local-cidr 10.0.1.0/24
$K set udp $C $P1 $P2
$K set udp $E $P3 --ext-local $C
ms() { date +%s%3N; }
# the conntrack id of cli's entry to E ("" if none); its DNAT target
ct_e() { conntrack -L -p udp -d 10.96.0.61 -o id 2>/dev/null | grep -o "$1" | head -n 1; }

ip netns exec cli $HERE/udpflow.py 20 100 $E >"$TMPD/flow" &
FLOW=$!
sleep 3
on=$(awk '$3 ~ /^pod/ { x = $3 } END { print x }' "$TMPD/flow")
log "the local flow to E is on $on"
assert_match "1: the local client is scheduled with C's backends" '^pod[12]$' "$on"
if [ "$on" = pod1 ]; then keep=pod2 keepbe=$P2; else keep=pod1 keepbe=$P1; fi
T1=$(ms)
$K set udp $C $keepbe
sleep 3
id1=$(ct_e 'id=[0-9]*')
T2=$(ms)
$K set udp $E --ext-local $C
sleep 2
id2=$(ct_e 'id=[0-9]*')
T3=$(ms)
$K del udp $C
wait $FLOW
results() { awk -v a="$1" -v b="$2" '$1 >= a && $1 < b && $3 != "timeout" { print $3 }' "$TMPD/flow" | sort -u | tr '\n' ' ' | sed 's/ $//'; }
log "results: before [$(results 0 "$T1")] 1 [$(results $((T1 + 1000)) "$T2")] 2 [$(results "$T2" "$T3")] 3 [$(results $((T3 + 1000)) $((T3 + 100000)))]"
assert_eq "1: C dropped the flow's backend: it moved to the survivor" "$keep" \
	"$(results $((T1 + 1000)) "$T2")"
assert_match "2: the entry has a conntrack id" '^id=[0-9]+$' "$id1"
assert_eq "2: E lost its own backend: the redirected entry is kept" "$id1" "$id2"
assert_eq "2: and answered by C's survivor" "$keep" "$(results "$T2" "$T3")"
# E (empty, DROP_EMPTY not set) now refuses the local client
assert_eq "3: DEL of C: the entry to C's backend is gone, E refuses" "refused" \
	"$(results $((T3 + 1000)) $((T3 + 100000)))"
ksft_exit
