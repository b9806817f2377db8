#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_kubeproxy_cleanup: kpx-agent --cleanup removes kube-proxy's own
# state, as kube-proxy --cleanup does, and nothing else.  Installed first,
# in kube-proxy's layout (testdata/kube-proxy/):
#
#   iptables   iptables.save: its iptables mode's chains in nat, filter and
#              mangle (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-*, KUBE-EXT-*,
#              KUBE-NODEPORTS, KUBE-POSTROUTING, KUBE-MARK-MASQ,
#              KUBE-FORWARD, KUBE-PROXY-FIREWALL, KUBE-PROXY-CANARY, ...)
#              with the jumps from the built-in chains; beside them the
#              kubelet's KUBE-FIREWALL, KUBE-KUBELET-CANARY and
#              KUBE-IPTABLES-HINT and a site's SITE-INPUT / SITE-SNAT;
#              ip6tables: its IPv6 KUBE-SERVICES with the PREROUTING jump
#   nftables   nft.ruleset: tables ip and ip6 kube-proxy; beside them a
#              site's table inet site
#   ipvs       kube-ipvs0 holding 10.96.0.80 with its virtual server, its
#              NodePort virtual server 10.0.0.1:30080 (port in
#              KUBE-NODE-PORT-TCP); beside them IPVS services that are not
#              its own (192.0.2.50:8443, 10.0.0.1:9999)
#   ipsets     ipset.save: its KUBE-* sets of both families; beside them
#              KUBE-SRC-SITE1 (a network policy agent's) and site-allow
#
# then asserts that none of kube-proxy's is left and everything else is.
#
# Then the start-up path (kube-proxy's platformCleanup()): kpx's own
# nftables mode leaves its tables (an agent run in that mode, stopped) and
# the module holds a frontend made by hand; kube-proxy's state above is
# installed again; kpx-agent starts in iptables mode and, before its first
# sync, removes the other modes' leftovers and kube-proxy's of every kind
# (of the mode in use, iptables, kube-proxy's chains only).  Asserted as
# above, plus kpx's nftables tables and the module's frontends gone and
# the iptables mode's own KPX-SERVICES programmed.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

FIX=$REPO/testdata/kube-proxy
agent_require /usr/sbin/nft /usr/sbin/iptables-restore /usr/sbin/ip6tables-restore /usr/bin/jq \
	/usr/sbin/ipvsadm /usr/sbin/ipset
for m in ip_vs ip_vs_rr dummy ip_set_hash_ipport ip_set_hash_ipportip ip_set_bitmap_port \
	ip_set_hash_ip ip_set_hash_net; do
	modprobe "$m" || skip "modprobe $m failed"
done
site_cleanup() {
	"$KPX_AGENT" --cleanup >/dev/null 2>&1
	iptables -t filter -D INPUT -j SITE-INPUT 2>/dev/null
	iptables -t nat -D POSTROUTING -s 192.168.100.0/24 -o eth9 -j SITE-SNAT 2>/dev/null
	iptables -D INPUT -j KUBE-FIREWALL 2>/dev/null
	iptables -D OUTPUT -j KUBE-FIREWALL 2>/dev/null
	for t in filter nat mangle; do
		iptables-save -t $t | sed -n 's/^:\(KUBE-[^ ]*\|SITE-[^ ]*\) .*/\1/p' | while read -r c; do
			iptables -t $t -F "$c"
			iptables -t $t -X "$c"
		done
	done
	nft delete table inet site 2>/dev/null
	ipvsadm -C
	ipset destroy KUBE-SRC-SITE1 2>/dev/null
	ipset destroy site-allow 2>/dev/null
}
setup_trap 'agent_lib_stop; site_cleanup'
node_setup || skip "topology setup failed"

# --- kube-proxy's state and the others' --------------------------------------
plant() {
iptables-restore --noflush <"$FIX/iptables.save" || skip "iptables-restore of the fixture failed"
ip6tables-restore --noflush <<'EOF' || skip "ip6tables-restore failed"
*nat
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d fd00:10:96::80/128 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-TCOU7JCQXEZGVUNU
COMMIT
EOF
nft -f "$FIX/nft.ruleset" || skip "nft -f of the fixture failed"
nft -f - <<'EOF' || skip "nft site table failed"
table inet site {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 22 accept
	}
}
EOF
ipset restore <"$FIX/ipset.save" || skip "ipset restore of the fixture failed"
ip link add kube-ipvs0 type dummy && ip addr add 10.96.0.80/32 dev kube-ipvs0 ||
	skip "kube-ipvs0 not created"
ipvsadm -A -t 10.96.0.80:80 -s rr && ipvsadm -a -t 10.96.0.80:80 -r 10.244.1.2:8080 -m &&
	ipvsadm -A -t 10.0.0.1:30080 -s rr && ipvsadm -a -t 10.0.0.1:30080 -r 10.244.1.2:8080 -m &&
	ipvsadm -A -t 192.0.2.50:8443 -s rr && ipvsadm -A -t 10.0.0.1:9999 -s rr ||
	skip "ipvsadm failed"
}
plant

# chains TABLE CMD: the KUBE-*/SITE-* chains of TABLE, sorted, space separated.
chains() { "$2" -t "$1" | sed -n 's/^:\(KUBE-[^ ]*\|SITE-[^ ]*\) .*/\1/p' | LC_ALL=C sort | paste -sd' '; }
vs() { ipvsadm -Ln | awk '$1 == "TCP" || $1 == "UDP" { print $2 }' | LC_ALL=C sort | paste -sd' '; }
sets() { ipset list -n | LC_ALL=C sort | paste -sd' '; }

assert_eq "before: kube-proxy's nat chains" \
	"KUBE-EXT-TCOU7JCQXEZGVUNU KUBE-KUBELET-CANARY KUBE-MARK-MASQ KUBE-NODEPORTS KUBE-POSTROUTING KUBE-PROXY-CANARY KUBE-SEP-IT2ZTR26TO4XFPTO KUBE-SEP-N4G2XR5TDX7PQE7P KUBE-SERVICES KUBE-SVC-TCOU7JCQXEZGVUNU SITE-SNAT" \
	"$(chains nat iptables-save)"
assert_eq "before: IPVS services" "10.0.0.1:30080 10.0.0.1:9999 10.96.0.80:80 192.0.2.50:8443" "$(vs)"
assert_match "before: nft tables" 'table ip kube-proxy.*table ip6 kube-proxy.*table inet site' \
	"$(nft list tables | paste -sd' ')"

"$KPX_AGENT" --cleanup >"$TMPD/cleanup.log" 2>&1
assert_eq "kpx-agent --cleanup: exit status" 0 "$?"
sed 's/^/#   /' "$TMPD/cleanup.log"

# --- none of kube-proxy's left, the rest kept ---------------------------------------
# gone_kept WHEN: the assertions, labelled WHEN.
gone_kept() {
	local save tables w=$1

	assert_eq "$w: iptables nat: the kubelet's canary and the site's chain kept, kube-proxy's gone" \
		"KUBE-KUBELET-CANARY SITE-SNAT" "$(chains nat iptables-save)"
	assert_eq "$w: iptables filter: the kubelet's KUBE-FIREWALL, KUBE-KUBELET-CANARY and SITE-INPUT kept" \
		"KUBE-FIREWALL KUBE-KUBELET-CANARY SITE-INPUT" "$(chains filter iptables-save)"
	assert_eq "$w: iptables mangle: KUBE-PROXY-CANARY gone, the kubelet's kept" \
		"KUBE-IPTABLES-HINT KUBE-KUBELET-CANARY" "$(chains mangle iptables-save)"
	save=$(iptables-save)
	assert_eq "$w: iptables: no jump to a kube-proxy chain left" 0 \
		"$(grep -cE -- '-j (KUBE-SERVICES|KUBE-NODEPORTS|KUBE-POSTROUTING|KUBE-FORWARD|KUBE-PROXY-FIREWALL|KUBE-EXTERNAL-SERVICES)' <<<"$save")"
	assert_match "$w: iptables: the site's and the kubelet's rules kept" \
		'-A INPUT -j KUBE-FIREWALL.*-A INPUT -j SITE-INPUT.*-A SITE-INPUT -p tcp -m tcp --dport 22 -j ACCEPT' \
		"$(paste -sd' ' <<<"$save")"
	assert_match "$w: iptables: the site's SNAT kept" '-A POSTROUTING -s 192.168.100.0/24 -o eth9 -j SITE-SNAT' "$save"
	assert_eq "$w: ip6tables nat: kube-proxy's chains gone" "" "$(chains nat ip6tables-save)"
	assert_eq "$w: ip6tables nat: the PREROUTING jump gone" 0 "$(ip6tables-save -t nat | grep -c KUBE-)"
	tables=$(nft list tables | paste -sd' ')
	assert_no_match "$w: nft: tables ip and ip6 kube-proxy gone" 'kube-proxy' "$tables"
	assert_match "$w: nft: table inet site kept" 'table inet site' "$tables"
	assert_eq "$w: IPVS: kube-proxy's ClusterIP and NodePort services gone, the others kept" \
		"10.0.0.1:9999 192.0.2.50:8443" "$(vs)"
	assert_eq "$w: kube-ipvs0 gone" 0 "$(ip link show kube-ipvs0 2>/dev/null | grep -c kube-ipvs0)"
	assert_eq "$w: ipsets: kube-proxy's gone, KUBE-SRC-SITE1 and site-allow kept" "KUBE-SRC-SITE1 site-allow" "$(sets)"
}
gone_kept "--cleanup"
assert_rc "a second --cleanup finds nothing of it and succeeds" 0 "$KPX_AGENT" --cleanup

# --- at start: the other modes' leftovers and kube-proxy's ---------------------------
site_cleanup
web_objects 10.96.0.80 "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"
# wait_sync SECONDS: until the agent logged its first "sync done".
wait_sync() {
	local i

	for ((i = 0; i < $1 * 5; i++)); do
		[ "$(kpx_agent_syncs)" -gt 0 ] && return 0
		sleep 0.2
	done
	return 1
}
: >"$TMPD/agent.log"
kpx_agent_start --proxy-mode nftables --hostname-override node-a
wait_sync 120
kpx_agent_stop
assert_match "kpx's nftables mode left its table (SIGTERM keeps it)" 'table ip kpx' \
	"$(nft list tables | paste -sd' ')"
"$KPXCTL" set tcp 10.96.0.99:80 10.244.1.2:8080 || skip "kpxctl set failed"
assert_eq "the module holds a frontend" 1 "$("$KPXCTL" stats --json | jq -r .services)"
plant
assert_eq "again before: IPVS services" "10.0.0.1:30080 10.0.0.1:9999 10.96.0.80:80 192.0.2.50:8443" "$(vs)"
tables=$(nft list tables | paste -sd' ')
assert_match "again before: kube-proxy's nft tables and the site's" \
	'table ip kube-proxy.*table ip6 kube-proxy.*table inet site' "$tables"
assert_match "again before: kpx's nftables mode's table" 'table ip kpx( |$)' "$tables"

: >"$TMPD/agent.log"
kpx_agent_start --proxy-mode iptables --hostname-override node-a
wait_sync 120
assert_gt "iptables-mode agent: synced" 0 "$(kpx_agent_syncs)"
grep -E 'leftovers|cleanup' "$TMPD/agent.log" | sed 's/^/#   /'
gone_kept "at start"
assert_no_match "at start: kpx's nftables tables gone" 'table (ip|ip6|inet) kpx( |$)' \
	"$(nft list tables | paste -sd' ')"
assert_eq "at start: the module's frontends gone (not in kpx mode)" 0 \
	"$("$KPXCTL" stats --json | jq -r .services)"
assert_match "at start: the iptables mode's own rules programmed" \
	'-A KPX-SERVICES -d 10.96.0.80/32 -p tcp' "$(iptables-save -t nat)"
assert_eq "at start: no warning about leftovers" 0 "$(grep -c '^W.*leftovers' "$TMPD/agent.log")"
kpx_agent_stop
assert_eq "iptables-mode agent: exit status on SIGTERM" 0 "$AGENT_STATUS"

ksft_exit
