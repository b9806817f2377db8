#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# modes/nftables.sh: modes/basic.sh's hooks for --proxy-mode nftables
# (agent/dp/nft/dp_nft.c, agent/dp/nft/nft_rules.c): tables "ip kpx" / "ip6 kpx" in
# kube-proxy's nftables layout (KEP-3866).  Beyond the common checks: the
# service-ips verdict map holds the frontends; undefined ports of a live
# ClusterIP are refused (as kube-proxy's nftables mode); ClientIP affinity
# fills the endpoint's affinity set, which a partial transaction leaves
# alone; a restart recreates the tables without duplicates; --cleanup
# leaves no kpx table.  Sourced.

MODE_FLAGS=()

mode_require() { agent_require /usr/sbin/nft; }
mode_exit() { :; }
mode_banner() { log "$(nft -v)"; }

# mode_eps [FAMILY]: number of ep- chains in our table of FAMILY (ip).
mode_eps() { nft list table "${1:-ip}" kpx 2>/dev/null | grep -c '^	chain ep-'; }

mode_first_sync() {
	local map

	log "$(now) first sync: $(grep -m1 '] "sync done"' "$TMPD/agent.log" | sed 's/.*] //')"
	map=$(nft list map ip kpx service-ips)
	# each element commented with its Service and kind, as kube-proxy's
	assert_match "service-ips: ClusterIP element" \
		'10\.96\.0\.80 \. tcp \. 80 comment "default/web:http cluster-ip" : goto svc-tcp-10\.96\.0\.80-80' "$map"
	assert_match "service-ips: NodePort element" \
		"${NODE_A//./\\.} \\. tcp \\. 30080 comment \"default/web:http node-port\" : goto svc-tcp-" "$map"
	assert_match "no-endpoint-services: the empty Service rejects" \
		'10\.96\.0\.90 \. udp \. 53 comment "default/empty:[a-z0-9-]+ cluster-ip" : goto reject-chain' \
		"$(nft list map ip kpx no-endpoint-services)"
	assert_match "one vmap lookup in the services chain" \
		'ip daddr \. meta l4proto \. th dport vmap @service-ips' "$(nft list chain ip kpx services)"
	assert_match "per-service numgen dispatch" 'numgen random mod 2 vmap' \
		"$(nft list chain ip kpx svc-tcp-10.96.0.80-80)"
}

# a port no Service has on a live ClusterIP (refused: kube-proxy nftables)
mode_refused() {
	expect_refused cli tcp 10.96.0.80:81
	expect_refused node tcp 10.96.0.80:81
	expect_refused cli udp 10.96.0.80:53
}

AFF=
mode_affinity() {
	AFF=aff-tcp-10.96.0.81-80__${STICKY%:*}-8080
	assert_match "affinity set $AFF holds the client with a timeout" '10\.0\.1\.2 (timeout 1m )?expires' \
		"$(nft list set ip kpx "$AFF" 2>&1)"
}

mode_partial_before() { :; }
mode_partial_after() {
	assert_match "web's dispatch now has one endpoint" 'numgen random mod 1 vmap' \
		"$(nft list chain ip kpx svc-tcp-10.96.0.80-80)"
	assert_match "sticky's affinity entry survived the partial update" '10\.0\.1\.2 ' \
		"$(nft list set ip kpx "$AFF" 2>&1)"
}

# restart: the first commit recreates the tables
mode_restart() {
	kpx_agent_stop
	kpx_agent_start "${AGENT_FLAGS[@]}"
	for _ in $(seq 1 60); do
		[ "$(grep -c 'sync done' "$TMPD/agent.log")" -ge 2 ] && break
		sleep 0.5
	done
	sleep 1
	assert_eq "after a restart: endpoint chains" 10 "$(mode_eps)"
	assert_eq "after a restart: one table per family" 2 "$(nft list tables | grep -c ' kpx$')"
	assert_eq "after a restart: base chains (ip)" 8 \
		"$(nft list table ip kpx | grep -c 'type \(filter\|nat\) hook')"
	expect_answers cli tcp 10.96.0.80:80 4 10.244.1.2:8080
	log "nf_tables modules loaded: $(awk '/^nf|^nft/ { print $1 }' /proc/modules | sort | paste -sd' ')"
}

mode_cleanup() {
	assert_eq "kpx tables left after --cleanup" 0 "$(nft list tables | grep -c ' kpx$')"
}

mode_dump() {
	log "nft list ruleset (head):"
	nft list ruleset 2>&1 | head -n 80 | sed 's/^/#   /'
}
