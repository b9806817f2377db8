#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_cases: the shared cases that are data (testdata/cases/NN/expect.json),
# run by the table-driven runner cases/run.sh (case_lib.sh's helpers) with
# the real agent in the proxy mode under test: every case but the
# LoadBalancer ones kpx_cases_lb runs, the conntrack and restart ones
# kpx_cases_ct runs and the flow ones kpx_cases_flows runs (split so that
# no test runs the whole table under TCG).  KPX_CASES="06 09" runs only those.
# kpx-timeout: 1800
[ -n "${KPX_CASES:-}" ] || export KPX_CASES_EXCEPT="01 02 03 04 05 15 18 30 38 39 41"
exec bash "$(dirname "$0")/cases/run.sh" "$@"
