#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_names: every frontend carries the Service it belongs to.  The real
# agent programs the real objects (testdata/real-objects); then kpxctl list
# --json and /proc/net/kpx/services name each frontend's namespace/name:port
# and kind (ClusterIP, NodePort, LoadBalancer), and flags print by name.
# With the agent stopped, kpxctl shows what the module does with names: a
# SET without one keeps it, an invalid one (newline, control character,
# space, 300 bytes) is EINVAL and changes nothing, '' clears it, and an
# old-style "kpxctl set" without --service still works.
#
#   node (root netns): kpx.ko, kpx-agent as node-a, kpx-test-apiserver
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

DATA=$REPO/testdata/real-objects
agent_require
require_mode kpx
setup_trap agent_lib_stop

# PROTO VIP:PORT SERVICE KIND: what the objects define (ClusterIPs and the
# load-balancer addresses, testdata/real-objects/frontends.txt; the NodePorts
# are checked apart).
mapfile -t EXPECTED < <(grep -v '^#' "$DATA/frontends.txt")

# fe PROTO VIP:PORT: "SERVICE KIND FLAGS" of that frontend from kpxctl
# list --json (null for none, FLAGS comma separated), "absent" if none.
fe() {
	local vip=${2%:*} port=${2##*:}

	"$KPXCTL" list --json | jq -r --arg p "$1" --arg v "$vip" --argjson n "$port" \
		'[.services[] | select(.protocol == $p and .vip == $v and .port == $n)] |
		 if length == 0 then "absent" else .[0] |
		 "\(.service) \(.kind) \(.flags | join(","))" end'
}

# proc_name PROTO VIP:PORT: the Service and Kind columns of /proc.
proc_name() {
	awk -v p="${1^^}" -v k="$2" '$1 == p && $2 == k { print $6, $7 }' \
		/proc/net/kpx/services
}

generation() { "$KPXCTL" stats --json | jq .generation; }

node_setup || skip "topology setup failed"
kpx_api_start --objects "$DATA"/0*.json "$DATA/node-a.json"
kpx_agent_start --hostname-override node-a
log "agent's first sync after $(wait_agent_synced) s"
t=$(wait_proc_backends tcp 10.96.100.80:80 10.244.1.202:80 30)
assert_ne "agent's first sync (s)" timeout "$t"
"$KPXCTL" list 2>&1 | sed 's/^/#   /'

# --- what the agent programmed ----------------------------------------------
for e in "${EXPECTED[@]}"; do
	read -r proto key name kind <<<"$e"
	read -r got_name got_kind got_flags <<<"$(fe "$proto" "$key")"
	assert_eq "$proto $key: Service (kpxctl list --json)" "$name" "$got_name"
	assert_eq "$proto $key: kind (kpxctl list --json)" "$kind" "$got_kind"
	assert_eq "$proto $key: /proc/net/kpx/services" "$name $kind" \
		"$(proc_name "$proto" "$key")"
	if [ "$kind" = cluster-ip ]; then
		assert_match "$proto $key: flags by name" "(^|,)cluster-ip(,|$)" "$got_flags"
	fi
done
np=$("$KPXCTL" list --json | jq -c '[.services[] | select(.port == 30391) |
	"\(.service) \(.kind)"] | unique')
assert_eq "NodePort 30391 frontends: name and kind" \
	'["gateway-system/envoy-shop-storefront-http:tcp-80 node-port"]' "$np"
assert_eq "every frontend is named" 0 \
	"$("$KPXCTL" list --json | jq '[.services[] | select(.service == null or .kind == null)] | length')"
# the first five /proc columns are where they were
assert_eq "/proc: rejects of tcp 10.96.0.10:53 (fifth column)" 0 \
	"$(proc_svc tcp 10.96.0.10:53 rejects)"
flags=$(proc_svc tcp 10.96.0.10:53 flags)
assert_eq "/proc: tcp 10.96.0.10:53's flags (third column, $flags) have 0x8 cluster-ip" 8 \
	"$(( ${flags:-0} & 8 ))"
# the table: flags by name, the Service and its kind last
assert_match "kpxctl list: tcp 10.96.0.10:53's row" \
	'TCP  10\.96\.0\.10:53 +[a-z,-]*cluster-ip[a-z,-]* .* kube-system/kube-dns:dns-tcp cluster-ip' \
	"$("$KPXCTL" list | grep '^TCP  10\.96\.0\.10:53 ')"

kpx_agent_stop
assert_eq "agent exit status" 0 "$AGENT_STATUS"

# --- the module's rules, through kpxctl ---------------------------------------
# An old-style SET (no --service, no --kind) works and keeps the name.
out=$("$KPXCTL" set tcp 10.96.0.10:53 10.244.0.3:53 2>&1)
assert_eq "old-style kpxctl set: exit status" "0" "$?"
assert_eq "  keeps the Service and kind (flags now none)" \
	"kube-system/kube-dns:dns-tcp cluster-ip " "$(fe tcp 10.96.0.10:53)"
assert_eq "  and it took the new backends" "10.244.0.3:53" \
	"$(proc_backends tcp 10.96.0.10:53)"

# Invalid names: EINVAL with the kernel's message, nothing changed.
long=$(printf 'a%.0s' $(seq 300))
for bad in $'kube-system/kube-dns\n:dns-tcp' $'kube-system/kube\x01dns' \
	'kube-system/kube dns' "$long"; do
	gen=$(generation)
	out=$("$KPXCTL" set tcp 10.96.0.10:53 10.244.0.4:53 --service "$bad" 2>&1)
	rc=$?
	what="name of ${#bad} bytes ($(printf %q "${bad:0:24}"))"
	assert_eq "$what: exit status" 1 "$rc"
	assert_match "$what: EINVAL and the reason" \
		"Invalid argument.*(visible ASCII|policy validation)" "$out"
	assert_eq "$what: generation unchanged" "$gen" "$(generation)"
	assert_eq "$what: name, kind and backends unchanged" \
		"kube-system/kube-dns:dns-tcp cluster-ip  10.244.0.3:53" \
		"$(fe tcp 10.96.0.10:53) $(proc_backends tcp 10.96.0.10:53)"
done
gen=$(generation)
out=$("$KPXCTL" set tcp 10.96.0.10:53 --kind bogus 2>&1)
assert_eq "unknown --kind: usage error" 2 "$?"
assert_eq "  nothing sent" "$gen" "$(generation)"

# A new name and kind, then a SET without them keeps both.
"$KPXCTL" set tcp 10.96.0.10:53 10.244.0.3:53 --service edge/dns:tcp --kind external-ip
assert_eq "--service and --kind set" "edge/dns:tcp external-ip " "$(fe tcp 10.96.0.10:53)"
assert_eq "  /proc too" "edge/dns:tcp external-ip" "$(proc_name tcp 10.96.0.10:53)"
"$KPXCTL" set tcp 10.96.0.10:53 10.244.0.3:53 --masq-nonlocal --drop-empty
assert_eq "a SET without them keeps both; flags by name" \
	"edge/dns:tcp external-ip drop-empty,masq-nonlocal" "$(fe tcp 10.96.0.10:53)"
assert_match "  the table's Flags column by name" \
	'^TCP  10\.96\.0\.10:53 +drop-empty,masq-nonlocal +[0-9]+ +[0-9]+ ' \
	"$("$KPXCTL" list | grep '^TCP  10\.96\.0\.10:53 ')"
"$KPXCTL" set tcp 10.96.0.10:53 10.244.0.3:53 --service ''
assert_eq "--service '' clears the name, keeps the kind" "null external-ip " \
	"$(fe tcp 10.96.0.10:53)"
assert_eq "  /proc shows - for it" "- external-ip" "$(proc_name tcp 10.96.0.10:53)"
"$KPXCTL" set tcp 10.96.0.10:53 10.244.0.3:53 --kind -
assert_eq "--kind - clears the kind" "null null " "$(fe tcp 10.96.0.10:53)"

# A frontend never named: null in JSON, "- -" in /proc.
"$KPXCTL" set udp 10.96.0.99:53 10.244.9.5:53
assert_eq "a frontend without a name" "null null " "$(fe udp 10.96.0.99:53)"
assert_eq "  /proc" "- -" "$(proc_name udp 10.96.0.99:53)"

ksft_exit
