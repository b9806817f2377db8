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
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
agent=${1:-$top/agent/kpx-agent}
api=$top/selftests/apiserver
objects=${KPX_REAL_OBJECTS:-$top/testdata/real-objects}
tmp=$(mktemp -d "/tmp/kpx-agent-$ITEST_NAME.XXXXXX")
. "$top/selftests/tap.sh"

wait_log() {
	for _ in $(seq "${3:-${ITEST_WAIT_TENTHS:-100}}"); do
		grep -Eq "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

apictl() { "$api/kpx-test-apictl" --kubeconfig "$tmp/state/kubeconfig" "$@" >/dev/null; }
