#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# apiserver.sh: start the test API server (selftests/apiserver) on loopback,
# for the agent's host tests (lib/itest.sh) and bench/agent/run.sh.  Sourced
# after api (selftests/apiserver) is set.
#
#   api_certs DIR           the CA, server certificate and token in DIR
#                           (gen-certs.sh), made once; 1 on failure
#   api_start DIR LOG ARG.. the server, its state in DIR (DIR/kubeconfig,
#                           DIR/port), stderr to LOG, ARGs passed on
#                           (--objects FILE..., --bookmark-interval MS, ...),
#                           certificates from API_CERTS; sets API_PID;
#                           1 if it dies or listens on no port within 60 s
#                           (LOG is printed as TAP comments)

api_certs() {
	[ -s "$1/token" ] || "$api/gen-certs.sh" "$1" >/dev/null 2>&1
}

api_start() {
	local dir=$1 log=$2

	shift 2
	mkdir -p "$dir"
	python3 "$api/kpx-test-apiserver.py" --dir "$dir" --certs "$API_CERTS" "$@" 2>"$log" &
	API_PID=$!
	for _ in $(seq 600); do
		[ -s "$dir/port" ] && return 0
		kill -0 "$API_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# /' "$log"
	return 1
}
