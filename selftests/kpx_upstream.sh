#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_upstream: kube-proxy's own packet-flow tables (the runPacketFlowTests
# tables of its proxier tests: testdata/upstream/iptables.json, the
# iptables proxier's, in iptables mode; testdata/upstream/nftables.json in
# the other modes; KPX_UPSTREAM_TABLES=FILE names another) on a real node: cases/upstream-cases.py turns each upstream test into a
# case of the table-driven runner (one phase per table: its Services and
# EndpointSlices applied, the agent restarted when its flags change), and
# cases/run.sh sends every flow, checking which endpoint answered, refused
# or dropped, and the source address the backend saw.
#
# All the tables take about 25 minutes under TCG: they run with
# KPX_UPSTREAM=1 (make vm-check-upstream, part of check-all, in every proxy
# mode); without it (make check) the quick ones below.  KPX_CASES names
# upstream tests ("TestLoadBalancer TestNodePorts") to run only those.
# kpx-timeout: 2700
QUICK="TestNoEndpointsReject TestExternalTrafficPolicyLocal TestExternalTrafficPolicyCluster"
SELF=$(cd "$(dirname "$0")" && pwd)
MODE=${KPX_PROXY_MODE:-kpx}
TABLES=nftables.json
[ "$MODE" != iptables ] || TABLES=iptables.json
TABLES=${KPX_UPSTREAM_TABLES:-$SELF/../testdata/upstream/$TABLES}
OUT=$(mktemp -d /tmp/kpx_upstream.XXXXXX) || exit 1
trap 'rm -rf "$OUT"' EXIT
echo "# tables: ${TABLES##*/} (proxy mode $MODE)"
python3 "$SELF/cases/upstream-cases.py" "$TABLES" "$OUT" "$MODE" |
	sed 's/^/# upstream test, flows, left out: /'
for f in "$OUT"/*/scenario.md; do
	sed -n 's/^- left out: /# left out: /p' "$f"
done
if [ -z "${KPX_CASES:-}" ] && [ "${KPX_UPSTREAM:-0}" != 1 ]; then
	echo "# the quick tables only ($QUICK); KPX_UPSTREAM=1 (make vm-check-upstream) runs them all"
	export KPX_CASES=$QUICK
fi
export KPX_CASES_DIR=$OUT KPX_CASES_NAME=kpx_upstream
bash "$SELF/cases/run.sh" "$@"
