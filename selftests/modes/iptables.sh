#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# modes/iptables.sh: modes/basic.sh's hooks for --proxy-mode iptables
# (agent/dp/ipt/dp_ipt.c): iptables-restore chains KPX-*.  Beyond the common
# checks: a partial restore leaves the service chains alone; a firewall
# reload that flushes nat and filter is repaired by the periodic re-check;
# a restart rewrites nothing twice and adds the 127.0.0.1 NodePorts of
# kube-proxy's iptables mode (route_localnet, the CVE-2020-8558 guard);
# --cleanup leaves no KPX- chain or jump in iptables-save / ip6tables-save.
# Sourced.

MODE_FLAGS=(--sync-period 5s)

mode_require() { agent_require /usr/sbin/iptables-save /usr/sbin/ip6tables-save; }
mode_exit() { sysctl -q -w net.ipv4.conf.all.route_localnet=0; }
mode_banner() { log "iptables: $(iptables -V) (backend in parentheses)"; }

# mode_eps [FAMILY]: number of KPX-SEP- chains in the nat table of FAMILY (ip).
mode_eps() {
	if [ "${1:-ip}" = ip6 ]; then
		ip6tables-save -t nat | grep -c '^:KPX-SEP-'
	else
		iptables-save -t nat | grep -c '^:KPX-SEP-'
	fi
}

mode_first_sync() {
	grep -q 'proxy mode\|iptables mode' "$TMPD/agent.log" &&
		log "agent: $(grep -m1 'iptables mode' "$TMPD/agent.log" | sed 's/.*] //')"
}

mode_refused() { :; }
mode_affinity() { :; }

SVC_CHAINS=
mode_partial_before() { SVC_CHAINS=$(iptables-save -t nat | grep -c '^:KPX-SVC-'); }
mode_partial_after() {
	assert_eq "service chains unchanged" "$SVC_CHAINS" "$(iptables-save -t nat | grep -c '^:KPX-SVC-')"
}

mode_restart() {
	local missing0 save filter

	# A firewall reload flushes nat and filter: the periodic re-check (every
	# --sync-period, 5 s here) misses KPX-SERVICES and rewrites every chain.
	# One iptables-restore flushes both tables at once, so no re-check can
	# run between them; the agent's log then proves the chain was found
	# missing.
	missing0=$(grep -c 'rewriting every chain' "$TMPD/agent.log")
	assert_rc "nat and filter flushed, their chains deleted" 0 sh -c \
		'printf "*nat\nCOMMIT\n*filter\nCOMMIT\n" | iptables-restore'
	wait_eps 10 30
	assert_eq "after the re-check: endpoint chains rewritten" 10 "$(mode_eps)"
	assert_gt "the re-check logged the missing chain" "$missing0" \
		"$(grep -c 'rewriting every chain' "$TMPD/agent.log")"
	assert_match "the re-check named KPX-SERVICES" 'KPX-SERVICES: exit status .*rewriting every chain' \
		"$(grep 'rewriting every chain' "$TMPD/agent.log" | tail -n 1)"
	expect_answers cli tcp 10.96.0.80:80 4 10.244.1.2:8080
	expect_refused cli tcp 10.96.0.90:80
	tick "firewall reload repaired"

	# Restart: the first commit rewrites, duplicates nothing; now also the
	# 127.0.0.1 NodePorts of kube-proxy's iptables mode (route_localnet).
	kpx_agent_stop
	sysctl -q -w net.ipv4.conf.all.route_localnet=0
	kpx_agent_start "${AGENT_FLAGS[@]}" --nodeport-addresses $NODE_A/32,127.0.0.0/8
	# + 127.0.0.1:30080 (pod1) and 127.0.0.1:30082 (two pods)
	wait_eps 13 60
	save=$(iptables-save -t nat)
	filter=$(iptables-save -t filter)
	assert_eq "after a restart: endpoint chains (with the 127.0.0.1 NodePorts)" 13 "$(grep -c '^:KPX-SEP-' <<<"$save")"
	assert_eq "after a restart: nat jumps to KPX-SERVICES (PREROUTING, OUTPUT)" 2 "$(grep -c '^-A \(PREROUTING\|OUTPUT\) .*-j KPX-SERVICES$' <<<"$save")"
	assert_eq "after a restart: filter jumps to KPX-SERVICES (INPUT, FORWARD, OUTPUT)" 3 "$(grep -c '^-A \(INPUT\|FORWARD\|OUTPUT\) .*-j KPX-SERVICES$' <<<"$filter")"
	assert_eq "after a restart: POSTROUTING jumps to KPX-POSTROUTING" 1 "$(grep -c '^-A POSTROUTING .*-j KPX-POSTROUTING$' <<<"$save")"
	assert_eq "route_localnet set for the 127.0.0.1 NodePorts" 1 "$(sysctl -n net.ipv4.conf.all.route_localnet)"
	assert_match "localnet guard rule (CVE-2020-8558)" 'block incoming localnet connections' "$filter"
	expect_answers cli tcp 10.96.0.80:80 4 10.244.1.2:8080
	expect_answers node tcp 127.0.0.1:30080 4 10.244.1.2:8080 "$MASQ4"
	expect_answers node tcp 127.0.0.1:30082 12 $BOTH4 "$MASQ4"
}

mode_cleanup() {
	local left

	left=$( (iptables-save; ip6tables-save) | grep -c 'KPX-')
	assert_eq "KPX- chains and jumps left after --cleanup" 0 "$left"
	[ "$left" = 0 ] || (iptables-save; ip6tables-save) | grep 'KPX-' | head -n 10 | sed 's/^/#   /'
}

mode_dump() {
	log "iptables-save -t nat (head):"
	iptables-save -t nat 2>&1 | head -n 60 | sed 's/^/#   /'
}
