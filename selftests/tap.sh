#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tap.sh: TAP output of the shell tests that report each check as a TAP line
# (agent/tests/agent-*.sh; the VM tests report theirs as "# ok:" comments
# through lib.sh's assert_*, one TAP line per test, see run_guest.sh).
# Sourced.  TAP_FAILED is 1 once a check failed.
#
#   ok STATUS DESCRIPTION   "ok N - DESCRIPTION" if STATUS is 0, else "not ok"
#   tap_skip DESCRIPTION    "ok N # SKIP DESCRIPTION"
#   tap_done                the plan "1..N"; returns TAP_FAILED

TAP_N=0
TAP_FAILED=0

ok() {
	TAP_N=$((TAP_N + 1))
	if [ "$1" = 0 ]; then
		echo "ok $TAP_N - $2"
	else
		echo "not ok $TAP_N - $2"
		TAP_FAILED=1
	fi
}

tap_skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP $1"
}

tap_done() {
	echo "1..$TAP_N"
	return "$TAP_FAILED"
}
