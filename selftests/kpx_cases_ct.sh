#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_cases_ct: the conntrack and restart cases of the shared cases that
# are data, 30 (a reply segment conntrack marks INVALID, injected into live
# connections), 38 (UDP cleanup against a 10,000-entry table: only the
# entries of the backend that left go), 39 (the conntrack sizing flags, and
# a full table: new connections dropped, established ones kept, recovery
# without the agent) and 41 (agent stopped, killed and started again, the
# kpx module reloaded under it), run by cases/run.sh as kpx_cases runs the
# others (split so that no test runs the whole table under TCG).
# KPX_CASES="30" runs only that one.
# kpx-timeout: 900
export KPX_CASES=${KPX_CASES:-"30 38 39 41"} KPX_CASES_NAME=kpx_cases_ct
exec bash "$(dirname "$0")/cases/run.sh" "$@"
