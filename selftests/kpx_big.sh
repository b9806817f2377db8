#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kpx_big: a SET of 16384 IPv6 backends (KPX_SVC_A_BACKENDS plus top-level
# KPX_A_BACKENDS nests) is taken whole; 16385 and a duplicate across two
# nests are refused with EINVAL and an extack message, changing nothing.

. "$(dirname "$0")/lib.sh"
HERE=$SELFTESTS/tools
require_guest
require_module
setup_trap

gen() { # N [EXTRA...]
	local i
	for ((i = 0; i < $1; i++)); do
		printf '[fd00:10:244:%x::%x]:8080\n' $((i / 256)) $((i % 256 + 2))
	done
	shift
	[ $# = 0 ] || printf '%s\n' "$@"
}
mapfile -t be < <(gen 16384)
assert_rc "set 16384 IPv6 backends" 0 "$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}"
n=$("$KPXCTL" list --json | jq '.services[0].backends | length')
assert_eq "backends listed" 16384 "$n"
n=$("$KPXCTL" list --json | jq '[.services[0].backends[] | "\(.addr) \(.port)"] | unique | length')
assert_eq "distinct backends listed" 16384 "$n"
stats_read
assert_eq "stats backends" 16384 "${ST[backends]}"

mapfile -t be < <(gen 16385)
"$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}" >"$TMPD/o" 2>&1
assert_eq "16385 backends: exit" 1 "$?"
assert_match "16385 backends: EINVAL + extack" "Invalid argument: too many backends" "$(cat "$TMPD/o")"
n=$("$KPXCTL" list --json | jq '.services[0].backends | length')
assert_eq "backends unchanged after refused SET" 16384 "$n"

# a duplicate of the first backend (in KPX_SVC_A_BACKENDS) at the very end
# (in the last top-level KPX_A_BACKENDS)
mapfile -t be < <(gen 9000 "[fd00:10:244:0::2]:8080")
"$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}" >"$TMPD/o" 2>&1
assert_eq "duplicate across nests: exit" 1 "$?"
assert_match "duplicate across nests: extack" "Invalid argument: duplicate backend" "$(cat "$TMPD/o")"

# 5000 backends, then 3000: the union replaces the set both ways
mapfile -t be < <(gen 5000)
assert_rc "set 5000" 0 "$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}"
assert_eq "5000 listed" 5000 "$("$KPXCTL" list --json | jq '.services[0].backends | length')"
ksft_exit
