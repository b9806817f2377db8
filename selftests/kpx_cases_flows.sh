#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_cases_flows: the shared cases about where flows and clients go over
# time, run by the table-driven runner cases/run.sh as kpx_cases runs the
# others: one UDP socket across a Service's empty and first endpoint and an
# agent restart (01), senders' UDP sockets across a scale to zero and a
# removed endpoint (02), ClientIP affinity and its timeout (03), a 400
# endpoint Service's spread and changes (18).  KPX_CASES="03" runs only
# that one.
# kpx-timeout: 1200
export KPX_CASES=${KPX_CASES:-"01 02 03 18"} KPX_CASES_NAME=kpx_cases_flows
exec bash "$(dirname "$0")/cases/run.sh" "$@"
