#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kpx_big: a SET of 16384 IPv6 backends (KPX_SVC_A_BACKENDS plus top-level
# KPX_A_BACKENDS nests) is taken whole, and so is 16385 (the module's limit
# is KPX_BACKENDS_MAX, 65535: tools/kpx_genl.c tests it); a duplicate across
# two nests is refused with EINVAL and an extack message, changing nothing.

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
assert_rc "set 16385 IPv6 backends" 0 "$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}"
n=$("$KPXCTL" list --json | jq '.services[0].backends | length')
assert_eq "16385 backends listed" 16385 "$n"

# a duplicate of the first backend (in KPX_SVC_A_BACKENDS) at the very end
# (in the last top-level KPX_A_BACKENDS)
mapfile -t be < <(gen 9000 "[fd00:10:244:0::2]:8080")
"$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}" >"$TMPD/o" 2>&1
assert_eq "duplicate across nests: exit" 1 "$?"
assert_match "duplicate across nests: extack" "Invalid argument: duplicate backend" "$(cat "$TMPD/o")"
n=$("$KPXCTL" list --json | jq '.services[0].backends | length')
assert_eq "backends unchanged after the refused SET" 16385 "$n"

# 5000 backends, then 3000: the union replaces the set both ways
mapfile -t be < <(gen 5000)
assert_rc "set 5000" 0 "$KPXCTL" set tcp "[fd00:10:96::1]:80" "${be[@]}"
assert_eq "5000 listed" 5000 "$("$KPXCTL" list --json | jq '.services[0].backends | length')"
ksft_exit
