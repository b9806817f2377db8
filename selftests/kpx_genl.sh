#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_genl: the generic netlink interface rejects invalid input with EINVAL
# and a specific extack message, changing nothing, and refuses mutations
# without CAP_NET_ADMIN (EPERM) while dumps and stats stay available.  The
# checks are in tools/kpx_genl.c (kselftest_harness); this wrapper runs it
# in the node (VM root netns) and in a fresh netns (state is per netns).
#
#   node (root netns): kpx_genl          netns genl1: kpx_genl
. "$(dirname "$0")/lib.sh"

require_guest
require_module
GENL_BIN=$SELFTESTS/tools/kpx_genl
require_file "$GENL_BIN"
setup_trap

"$GENL_BIN"
assert_eq "kpx_genl in the root netns: exit status" 0 $?

# Per-netns state: kpx_genl flushes and programs netns genl1 only, so a
# frontend set in the root netns must survive it untouched.
assert_rc "kpxctl set tcp 10.96.0.99:80 in the root netns" 0 \
	"$KPXCTL" set tcp 10.96.0.99:80 10.244.9.2:8080
ip netns add genl1 && NETNS+=(genl1)
ip netns exec genl1 "$GENL_BIN" >"$TMPD/ns.out" 2>&1
rc=$?
sed 's/^/# /' "$TMPD/ns.out"
assert_eq "kpx_genl in netns genl1: exit status" 0 $rc
json=$(kpx_json)
assert_eq "root netns frontends after the genl1 run" 1 "$(jq '.services | length' <<<"$json")"
assert_eq "root netns frontend kept its backend" "10.244.9.2:8080" \
	"$(jq -r '.services[0].backends[0] | "\(.addr):\(.port)"' <<<"$json")"
assert_eq "genl1 frontends after its run" 0 \
	"$(ip netns exec genl1 "$KPXCTL" stats --json | jq -r .services)"

# KPX_STATS_A_GENERATION: +1 per set (new or replaced), per delete of an
# existing frontend and per flush, in this netns only; nothing else moves it.
gen() { ${1:+ip netns exec "$1"} "$KPXCTL" stats --json | jq -r .generation; }
g0=$(gen) n0=$(gen genl1)
assert_match "root netns generation is a positive number" '^[1-9][0-9]*$' "$g0"
"$KPXCTL" set tcp 10.96.0.98:80 10.244.9.3:8080
"$KPXCTL" set tcp 10.96.0.98:80 10.244.9.4:8080
assert_eq "generation after a new and a replacing set" $((g0 + 2)) "$(gen)"
"$KPXCTL" del tcp 10.96.0.98:80
"$KPXCTL" del tcp 10.96.0.98:80 2>/dev/null
"$KPXCTL" stats >/dev/null
"$KPXCTL" list >/dev/null
assert_eq "generation after a delete, a failed delete, a stats and a list" $((g0 + 3)) "$(gen)"
"$KPXCTL" flush
assert_eq "generation after a flush" $((g0 + 4)) "$(gen)"
assert_eq "genl1's generation did not move" "$n0" "$(gen genl1)"
assert_match "kpxctl stats prints it" "^generation: $((g0 + 4))\$" "$("$KPXCTL" stats | tail -n 1)"
ksft_exit
