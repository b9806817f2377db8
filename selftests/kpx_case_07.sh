#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_07: shared case 07-nodeport-on-localhost with the real agent as
# node-a.  shop/admin-ui (NodePort 30700, 80 -> 8080), one pod 10.244.2.70.
# Setting B (--nodeport-addresses default, "primary" as nftables mode):
# no 127.0.0.1 frontend, 127.0.0.1:30700 and [::1]:30700 refused at once
# from the node, route_localnet untouched (0), 192.0.2.11:30700 served from
# the node and from a neighbour.  Setting A (--nodeport-addresses
# 127.0.0.0/8,primary, kube-proxy iptables mode's localhost NodePorts): the
# agent sets net.ipv4.conf.all.route_localnet=1, 127.0.0.1:30700 from the
# node reaches the pod source-NATed (the pod sees the node's address, not
# 127.0.0.1), [::1]:30700 is still refused at once (not served, never
# hangs), 192.0.2.11:30700 still works, and a neighbour that routes a SYN
# for 127.0.0.1:30700 to the node is dropped (the module never translates
# a loopback destination that arrives from outside).
# ipvs mode, setting A: IPVS cannot serve a loopback source (kubernetes#96879,
# kube-proxy's IPVS mode has no localhost NodePorts either), so the agent
# programs no 127.0.0.1 IPVS service (and warns): 127.0.0.1:30700 is refused
# at once from the node (never hangs).  route_localnet is set all the same
# (the agent sets it for localhost NodePorts in every mode), and the
# neighbour's SYN must be dropped by KPX-IPVS-INPUT's martian drop
# (CVE-2020-8558; its counter grows; without it the node answers a RST).
#
#   cli 10.0.1.2 (neighbour; its 127.0.0.1 routed to the node) --veth--
#     node (kpx.ko, kpx-agent as node-a, API server; kpx-node 192.0.2.11)
#       `-- veth -- adm 10.244.2.70 :8080
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

NP=30700
BE=10.244.2.70:8080
case_init 07
pod_add adm 10.244.2.70 || skip "pod setup failed"
echo_start adm -t adm $BE
LN0=$(sysctl -n net.ipv4.conf.all.route_localnet)
api_start

# --- setting B: primary addresses only ---------------------------------------------
agent_start
log "agent's first sync after $(wait_agent_synced) s"
expect_backends tcp $NODE_A:$NP $BE 30
assert_eq "B: no 127.0.0.1 frontend" absent "$(proc_backends tcp 127.0.0.1:$NP)"
assert_eq "B: route_localnet untouched" "$LN0" "$(sysctl -n net.ipv4.conf.all.route_localnet)"
expect_refused node tcp 127.0.0.1:$NP 2
expect_refused node tcp "[::1]:$NP" 1
expect_answered node tcp $NODE_A:$NP 2 $BE $MASQ4
expect_answered cli tcp $NODE_A:$NP 2 $BE $MASQ4

# --- setting A: localhost NodePorts on ------------------------------------------------
n=$(agent_syncs)
agent_stop
agent_start --nodeport-addresses 127.0.0.0/8,primary
log "restarted agent's first sync after $(wait_agent_synced $((n + 1))) s"
expect_backends tcp 127.0.0.1:$NP $BE 15
expect_backends tcp $NODE_A:$NP $BE 5
assert_eq "A: 127.0.0.1 frontend masquerades (KPX_SVC_F_MASQ)" 4 \
	"$(($(proc_svc tcp 127.0.0.1:$NP flags) & 4))"
# ipvs_svc ADDR:PORT: "present" when IPVS has that TCP service, else "absent".
ipvs_svc() { ipvsadm -Ln -t "$1" >/dev/null 2>&1 && echo present || echo absent; }
# martian_drops: packets KPX-IPVS-INPUT's martian drop rule dropped so far.
martian_drops() {
	iptables -w -n -v -x -L KPX-IPVS-INPUT 2>/dev/null |
		awk '$3 == "DROP" && $8 == "!127.0.0.0/8" && $9 == "127.0.0.0/8" { n += $1 } END { print n + 0 }'
}
assert_eq "A: route_localnet set by the agent" 1 "$(sysctl -n net.ipv4.conf.all.route_localnet)"
if mode_is ipvs; then
	assert_eq "A (ipvs): IPVS services for $NODE_A:$NP / 127.0.0.1:$NP" "present absent" \
		"$(ipvs_svc $NODE_A:$NP) $(ipvs_svc 127.0.0.1:$NP)"
	assert_match "A (ipvs): the agent warns that loopback frontends are not served" \
		"loopback frontends .* not served" "$(cat "$AGENT_LOG")"
	expect_refused node tcp 127.0.0.1:$NP 2
else
	expect_answered node tcp 127.0.0.1:$NP 4 $BE $MASQ4
fi
expect_refused node tcp "[::1]:$NP" 1
expect_answered node tcp $NODE_A:$NP 2 $BE $MASQ4
expect_answered cli tcp $NODE_A:$NP 2 $BE $MASQ4

# the neighbour: its own 127.0.0.1 removed, 127.0.0.1/32 routed to the node
ip -n cli addr del 127.0.0.1/8 dev lo
ip netns exec cli sysctl -q -w net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.eth0.route_localnet=1
ip -n cli route add 127.0.0.1/32 via 10.0.1.1 dev eth0
c0=$(proc_svc tcp 127.0.0.1:$NP conns)
m0=$(martian_drops)
client cli -n 2 -t 1000 127.0.0.1:$NP
# a refusal (RST) also means the SYN reached the node's stack
if [ "$(error_count ETIMEDOUT)" = 2 ] || [ "$(summary_field ok)" != 0 ] ||
	[ "$(error_count ECONNREFUSED)" != 0 ]; then
	assert_eq "A: neighbour SYN to 127.0.0.1:$NP answered" 0 "$(summary_field ok)"
	assert_eq "A: neighbour SYN to 127.0.0.1:$NP timed out (dropped)" 2 "$(error_count ETIMEDOUT)"
	assert_eq "A: 127.0.0.1 frontend's connections after the neighbour's SYNs" "$c0" \
		"$(proc_svc tcp 127.0.0.1:$NP conns)"
	! mode_is ipvs || assert_ge "A (ipvs): dropped by KPX-IPVS-INPUT's martian drop (CVE-2020-8558)" \
		$((m0 + 2)) "$(martian_drops)"
	client_show_if_failed
else
	log "SKIP neighbour -> 127.0.0.1: the neighbour could not send it: $(sed -n '1p' "$TMPD/client.out")"
fi

# --- back to setting B: the agent removes the 127.0.0.1 frontend ----------------------
n=$(agent_syncs)
agent_stop
agent_start
log "restarted agent's first sync after $(wait_agent_synced $((n + 1))) s"
if mode_is ipvs; then
	# never programmed (dump() finds nothing to delete, so the agent's log,
	# which proc_backends reads in this mode, never says "del"): IPVS itself
	assert_eq "B again (ipvs): no IPVS service for 127.0.0.1:$NP" absent "$(ipvs_svc 127.0.0.1:$NP)"
else
	wt=$(wait_proc_backends tcp 127.0.0.1:$NP absent 15)
	assert_eq "B again: 127.0.0.1 frontend removed (after $wt s)" absent "$(proc_backends tcp 127.0.0.1:$NP)"
fi
sysctl -q -w net.ipv4.conf.all.route_localnet="$LN0"

ksft_exit
