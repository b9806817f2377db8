#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# itest.sh: the set-up the agent's host tests against the test API server
# share (agent/tests/agent-*.sh, run by make itest).  Sourced with the
# test's own arguments ([path/to/kpx-agent]) after ITEST_NAME is set: sets
# top (the repository), agent, api (selftests/apiserver), objects
# (testdata/real-objects, or KPX_REAL_OBJECTS) and tmp (a scratch folder
# the test's cleanup removes), the TAP helpers (selftests/tap.sh), and:
#
#   wait_log FILE ERE [TENTHS]  until a line of FILE matches ERE (default
#                               ITEST_WAIT_TENTHS, 100 = 10 s); 1 if never
#   apictl ARGS...              the API server's control CLI, quiet
#   itest_server LOG ARGS...    the certificates in $tmp/certs, then the API
#                               server with its state in $tmp/state (lib/
#                               apiserver.sh api_start); sets srv; bails out
#                               of the test if it does not start
#   itest_cleanup               (the EXIT trap) ends every process the test
#                               left in the background, removes $tmp, kept
#                               when a test point failed
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
agent=${1:-$top/agent/kpx-agent}
api=$top/selftests/apiserver
objects=${KPX_REAL_OBJECTS:-$top/testdata/real-objects}
tmp=$(mktemp -d "/tmp/kpx-agent-$ITEST_NAME.XXXXXX")
. "$top/selftests/tap.sh"
. "$top/agent/tests/lib/apiserver.sh"
API_CERTS=$tmp/certs

wait_log() {
	for _ in $(seq "${3:-${ITEST_WAIT_TENTHS:-100}}"); do
		grep -Eq "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

apictl() { "$api/kpx-test-apictl" --kubeconfig "$tmp/state/kubeconfig" "$@" >/dev/null; }

itest_server() {
	api_certs "$API_CERTS" || { echo "Bail out! gen-certs.sh failed"; exit 1; }
	api_start "$tmp/state" "$@" || { echo "Bail out! no API server"; exit 1; }
	srv=$API_PID
}

itest_cleanup() {
	local p

	for p in $(jobs -p); do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ "${TAP_FAILED:-0}" = 0 ]; then
		rm -rf "$tmp"
	else
		echo "# kept $tmp"
	fi
}
trap itest_cleanup EXIT
