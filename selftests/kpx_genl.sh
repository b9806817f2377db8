#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_genl: the generic netlink interface rejects invalid input with EINVAL
# and a specific extack message, changing nothing, and refuses mutations
# without CAP_NET_ADMIN in the initial user namespace (EPERM), also to a
# user that owns the user namespace of its network namespace (unshare
# -Urn), while dumps, stats and /proc/net/kpx stay available.  The checks
# are in tools/kpx_genl.c (kselftest_harness); this wrapper runs it in the
# node (VM root netns) and, without its large tests, in a fresh netns
# (state is per netns).
#
#   node (root netns): kpx_genl          netns genl1: kpx_genl (quick)
#
# kpx-timeout: 600
. "$(dirname "$0")/lib.sh"

require_guest
require_module
GENL_BIN=$SELFTESTS/tools/kpx_genl
require_file "$GENL_BIN"
setup_trap

# Debian's kernel lets users create user namespaces (as Debian 12 ships it).
[ -e /proc/sys/kernel/unprivileged_userns_clone ] &&
	echo 1 >/proc/sys/kernel/unprivileged_userns_clone

"$GENL_BIN"
assert_eq "kpx_genl in the root netns: exit status" 0 $?

# Per-netns state: kpx_genl flushes and programs netns genl1 only, so a
# frontend set in the root netns must survive it untouched.
assert_rc "kpxctl set tcp 10.96.0.99:80 in the root netns" 0 \
	"$KPXCTL" set tcp 10.96.0.99:80 10.244.9.2:8080
ip netns add genl1 && NETNS+=(genl1)
ip netns exec genl1 env KPX_GENL_QUICK=1 "$GENL_BIN" >"$TMPD/ns.out" 2>&1
rc=$?
sed 's/^/# /' "$TMPD/ns.out"
assert_eq "kpx_genl in netns genl1: exit status" 0 $rc
json=$(kpx_json)
assert_eq "root netns frontends after the genl1 run" 1 "$(jq '.services | length' <<<"$json")"
assert_eq "root netns frontend kept its backend" "10.244.9.2:8080" \
	"$(jq -r '.services[0].backends[0] | "\(.addr):\(.port)"' <<<"$json")"
assert_eq "genl1 frontends after its run" 0 \
	"$(ip netns exec genl1 "$KPXCTL" stats --json | jq -r .services)"

# nobody, with a user and network namespace of its own (unshare -Urn), is
# root there but may not program kpx: EPERM; it may read (kpxctl list and
# /proc/net/kpx/services, of its own empty namespace and of the node's).
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
out=$(as_nobody unshare -Urn "$KPXCTL" set tcp 10.96.0.97:80 10.244.9.5:8080 2>&1)
rc=$?
assert_eq "nobody in its own userns+netns: kpxctl set fails" 1 $rc
assert_match "  with EPERM" "^kpxctl: .*Operation not permitted" "$out"
out=$(as_nobody unshare -Urn "$KPXCTL" flush 2>&1)
assert_match "  kpxctl flush too" "Operation not permitted" "$out"
assert_eq "  kpxctl list there still works (its own, empty namespace)" 0 \
	"$(as_nobody unshare -Urn "$KPXCTL" list --json | jq '.services | length')"
assert_eq "  and so does /proc/net/kpx/services" "Prot VIP:Port Flags Conns Rejects Service Kind" \
	"$(as_nobody unshare -Urn cat /proc/net/kpx/services)"
assert_eq "nobody reads the node's frontends (kpxctl list)" "10.96.0.99" \
	"$(as_nobody "$KPXCTL" list --json | jq -r '.services[0].vip')"
assert_match "  and /proc/net/kpx/services" "^TCP  10.96.0.99:80 " \
	"$(as_nobody cat /proc/net/kpx/services | sed -n 2p)"
assert_eq "the node's frontends are untouched" 1 "$(kpx_json | jq '.services | length')"

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
