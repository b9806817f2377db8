#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kpx_masq: masquerade decisions and source ranges.
#
#   cli 10.0.1.2 --v-cli--> node (kpx.ko) --v-pod1--> pod1 10.244.1.2 :8080
#   fd00:10:1::2            10.0.0.1       --v-pod2--> pod2 10.244.2.2 :8080
#                           169.254.1.1 on every pod veth (gateway)
#   local CIDRs (kpxctl config): 10.244.0.0/16, fd00:10:244::/48

. "$(dirname "$0")/lib.sh"
HERE=$SELFTESTS/tools
require_guest
require_module
setup_trap

node_setup && cli_setup && pods_setup 2 || skip "topology setup failed"
for i in 1 2; do
	echo_start "pod$i" "pod$i" "10.244.$i.2:8080" "[fd00:10:244:$i::2]:8080"
done

# peer NS [-u] VIP:PORT: the source address the backend saw (1 attempt).
peer() {
	local ns=$1 p

	shift
	client "$ns" -n 3 -t 1000 "$@"
	local w=($(answers | head -n 1)) ids
	ids=$(answer_field 1)
	p=${w[2]:-}
	p=${p#peer=}
	p=${p%:*}
	echo "${p:-none}/${ids:-none}"
}

assert_rc "config local CIDRs" 0 "$KPXCTL" config --local-cidr 10.244.0.0/16 --local-cidr fd00:10:244::/48
assert_eq "config --show" '{"local_cidrs":["10.244.0.0/16","fd00:10:244::/48"],"local_ifname":"","local_ifprefix":""}' "$("$KPXCTL" config --show)"

# 1. pod-to-Service: no SNAT, backend sees the pod.
"$KPXCTL" set tcp 10.96.0.10:80 10.244.2.2:8080
"$KPXCTL" set tcp "[fd00:10:96::10]:80" "[fd00:10:244:2::2]:8080"
assert_eq "pod1 -> svc (pod2), v4: no SNAT" "10.244.1.2/pod2" "$(peer pod1 10.96.0.10:80)"
assert_eq "pod1 -> svc (pod2), v6: no SNAT" "[fd00:10:244:1::2]/pod2" "$(peer pod1 "[fd00:10:96::10]:80")"
assert_eq "cli -> svc without flags: no SNAT" "10.0.1.2/pod2" "$(peer cli 10.96.0.10:80)"

# 2. hairpin: pod1 -> its own Service -> pod1 is always SNATed, and works.
"$KPXCTL" set tcp 10.96.0.11:80 10.244.1.2:8080
"$KPXCTL" set udp 10.96.0.11:53 10.244.1.2:8080
"$KPXCTL" set tcp "[fd00:10:96::11]:80" "[fd00:10:244:1::2]:8080"
assert_eq "hairpin tcp4: SNAT to the node's address" "169.254.1.1/pod1" "$(peer pod1 10.96.0.11:80)"
assert_eq "hairpin udp4: SNAT to the node's address" "169.254.1.1/pod1" "$(peer pod1 -u 10.96.0.11:53)"
h6=$(peer pod1 "[fd00:10:96::11]:80")
assert_match "hairpin tcp6: answered by pod1" "/pod1$" "$h6"
assert_ne "hairpin tcp6: SNATed" "[fd00:10:244:1::2]/pod1" "$h6"
log "hairpin v6 source seen: $h6"
assert_eq "pod2 -> pod1's svc: no SNAT" "10.244.2.2/pod1" "$(peer pod2 10.96.0.11:80)"

# 3. MASQ_NONLOCAL: cli (not local) SNATed, pod1 (local CIDR) not.
"$KPXCTL" set tcp 10.96.0.12:80 10.244.2.2:8080 --masq-nonlocal
"$KPXCTL" set tcp "[fd00:10:96::12]:80" "[fd00:10:244:2::2]:8080" --masq-nonlocal
assert_eq "nonlocal cli -> masq-nonlocal svc: SNAT" "169.254.1.1/pod2" "$(peer cli 10.96.0.12:80)"
assert_eq "local pod1 -> masq-nonlocal svc: no SNAT" "10.244.1.2/pod2" "$(peer pod1 10.96.0.12:80)"
p6=$(peer cli "[fd00:10:96::12]:80")
assert_ne "nonlocal cli v6 -> masq-nonlocal svc: SNAT" "[fd00:10:1::2]/pod2" "$p6"
assert_match "nonlocal cli v6: answered" "/pod2$" "$p6"
assert_eq "local pod1 v6 -> masq-nonlocal svc: no SNAT" "[fd00:10:244:1::2]/pod2" "$(peer pod1 "[fd00:10:96::12]:80")"
assert_eq "flags listed" '["masq-nonlocal"]' "$("$KPXCTL" list --json | jq -c '.services[] | select(.vip=="10.96.0.12") | .flags')"

# local by interface name / prefix instead of CIDR
assert_rc "config ifname v-cli" 0 "$KPXCTL" config --local-ifname v-cli
assert_eq "config --show: CIDRs cleared (empty nest), ifname set" '{"local_cidrs":[],"local_ifname":"v-cli","local_ifprefix":""}' "$("$KPXCTL" config --show)"
assert_eq "ifname: cli is local now: no SNAT" "10.0.1.2/pod2" "$(peer cli 10.96.0.12:80)"
assert_eq "ifname: pod1 (no CIDR any more) SNATed" "169.254.1.1/pod2" "$(peer pod1 10.96.0.12:80)"
assert_rc "config ifprefix v-pod" 0 "$KPXCTL" config --local-ifprefix v-pod
assert_eq "ifprefix: pod1 local: no SNAT" "10.244.1.2/pod2" "$(peer pod1 10.96.0.12:80)"
assert_eq "ifprefix: cli not local: SNAT" "169.254.1.1/pod2" "$(peer cli 10.96.0.12:80)"
"$KPXCTL" config >"$TMPD/o" 2>&1
assert_eq "config cleared: pod1 SNATed" "169.254.1.1/pod2" "$(peer pod1 10.96.0.12:80)"
args=()
for i in $(seq 0 63); do args+=(--local-cidr "10.$((100 + i / 256)).$((i % 256)).0/24"); done
assert_rc "config with 64 CIDRs" 0 "$KPXCTL" config "${args[@]}"
assert_eq "config --show: 64 CIDRs" 64 "$("$KPXCTL" config --show | jq '.local_cidrs | length')"
"$KPXCTL" config --local-cidr 10.244.0.0/16

# 4. MASQ: always.
"$KPXCTL" set tcp 10.96.0.13:80 10.244.2.2:8080 --masq
assert_eq "masq: pod1 SNATed" "169.254.1.1/pod2" "$(peer pod1 10.96.0.13:80)"
assert_eq "masq: cli SNATed" "169.254.1.1/pod2" "$(peer cli 10.96.0.13:80)"

# 5. source ranges: only 10.0.1.0/24 (cli) may connect.
"$KPXCTL" stats --json
f0=$("$KPXCTL" stats --json | jq .filtered)
assert_rc "set with source range" 0 "$KPXCTL" set tcp 10.96.0.14:80 10.244.2.2:8080 --source-range 10.0.1.0/24
assert_eq "source ranges dumped" '["10.0.1.0/24"]' "$("$KPXCTL" list --json | jq -c '.services[] | select(.vip=="10.96.0.14") | .source_ranges')"
assert_eq "in range: cli answered" "10.0.1.2/pod2" "$(peer cli 10.96.0.14:80)"
client pod1 -n 2 -t 400 10.96.0.14:80
assert_eq "out of range: pod1 times out (dropped)" 2 "$(error_count ETIMEDOUT)"
f1=$("$KPXCTL" stats --json | jq .filtered)
assert_ge "stats filtered grew by >= 2" 2 "$((f1 - f0))"
assert_eq "conns of the frontend: only cli's" 3 "$("$KPXCTL" list --json | jq '.services[] | select(.vip=="10.96.0.14") | .conns')"
"$KPXCTL" set tcp 10.96.0.14:80 10.244.2.2:8080
assert_eq "ranges cleared by a SET without them" '[]' "$("$KPXCTL" list --json | jq -c '.services[] | select(.vip=="10.96.0.14") | .source_ranges')"
assert_eq "after clearing: pod1 answered" "10.244.1.2/pod2" "$(peer pod1 10.96.0.14:80)"
assert_rc "v6 source range" 0 "$KPXCTL" set udp "[fd00:10:96::14]:53" "[fd00:10:244:2::2]:8080" --source-range fd00:10:244:1::/64
assert_eq "v6 in range: pod1 answered" "[fd00:10:244:1::2]/pod2" "$(peer pod1 -u "[fd00:10:96::14]:53")"
client cli -u -n 2 -t 400 "[fd00:10:96::14]:53"
assert_eq "v6 out of range: cli times out" 2 "$(error_count ETIMEDOUT)"
"$KPXCTL" set tcp 10.96.0.15:80 10.244.2.2:8080 --source-range fd00::/8 >"$TMPD/o" 2>&1
assert_eq "range of the other family refused" 1 "$?"
log "$(cat "$TMPD/o")"
"$KPXCTL" stats
ksft_exit
