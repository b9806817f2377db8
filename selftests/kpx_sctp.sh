#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kpx_sctp: SCTP through kpx (ClusterIP, 3 backends), sequential associations.
# Each association may take 7 s: SCTP retransmits a lost INIT or COOKIE
# after RTO.Initial = 3 s (net.sctp.rto_initial), so one loss on a loaded
# TCG host must not count as a failure; a decision the module did not make
# still does (the frontend counters are listed below).

. "$(dirname "$0")/lib.sh"
HERE=$SELFTESTS/tools
require_guest
require_module
setup_trap
modprobe sctp || skip "no sctp module"
node_setup && cli_setup && pods_setup 3 || skip "topology setup failed"
for i in 1 2 3; do
	PIDS+=("$(ip netns exec pod$i $HERE/sctpecho.py pod$i 10.244.$i.2 8080)")
	PIDS+=("$(ip netns exec pod$i $HERE/sctpecho.py pod$i fd00:10:244:$i::2 8080)")
done
sleep 1
log "direct to pod1:"
ip netns exec cli $HERE/sctpcli.py 12 2 10.244.1.2 8080 | sed 's/^/#   /' | tail -3
"$KPXCTL" set sctp 10.96.0.30:80 10.244.1.2:8080 10.244.2.2:8080 10.244.3.2:8080
ip netns exec cli $HERE/sctpcli.py 36 7 10.96.0.30 80 >"$TMPD/o"
grep -v " ok " "$TMPD/o" | sed 's/^/#   /'
assert_eq "sctp via kpx: failures" "summary n=36 failed=0" "$(tail -n1 "$TMPD/o")"
"$KPXCTL" set sctp "[fd00:10:96::30]:80" "[fd00:10:244:1::2]:8080" "[fd00:10:244:2::2]:8080" "[fd00:10:244:3::2]:8080"
ip netns exec cli $HERE/sctpcli.py 36 7 fd00:10:96::30 80 >"$TMPD/o"
grep -v " ok " "$TMPD/o" | sed 's/^/#   /'
assert_eq "sctp6 via kpx from cli: failures" "summary n=36 failed=0" "$(tail -n1 "$TMPD/o")"
$HERE/sctpcli.py 36 7 10.96.0.30 80 >"$TMPD/o"
grep -v " ok " "$TMPD/o" | sed 's/^/#   /'
assert_eq "sctp4 via kpx from the node (LOCAL_OUT): failures" "summary n=36 failed=0" "$(tail -n1 "$TMPD/o")"
$HERE/sctpcli.py 36 7 fd00:10:96::30 80 >"$TMPD/o"
grep -v " ok " "$TMPD/o" | sed 's/^/#   /'
assert_eq "sctp6 via kpx from the node (LOCAL_OUT): failures" "summary n=36 failed=0" "$(tail -n1 "$TMPD/o")"
"$KPXCTL" set sctp 10.96.0.30:80 10.244.1.2:8080 10.244.2.2:8080
ip netns exec cli $HERE/sctpcli.py 24 7 10.96.0.30 80 >"$TMPD/o"
grep -v " ok " "$TMPD/o" | sed 's/^/#   /'
assert_eq "sctp4 after removing pod3: failures" "summary n=24 failed=0" "$(tail -n1 "$TMPD/o")"
assert_eq "sctp4 after removing pod3: not pod3" "" "$(grep -c pod3 "$TMPD/o" | grep -v '^0$')"
"$KPXCTL" list
ksft_exit
