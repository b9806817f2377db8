#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_cases_lb: the LoadBalancer cases of the shared cases that are data,
# 04 (externalTrafficPolicy Local and its healthCheckNodePort), 05
# (terminating endpoints, a connection held across the change) and 15
# (loadBalancerSourceRanges under endpoint churn), run by cases/run.sh as
# kpx_cases runs the others (split so that neither test runs the whole
# table under TCG).  KPX_CASES="04" runs only that one.
# kpx-timeout: 900
export KPX_CASES=${KPX_CASES:-"04 05 15"} KPX_CASES_NAME=kpx_cases_lb
exec bash "$(dirname "$0")/cases/run.sh" "$@"
