#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/aff/guest.sh KO...: the affinity hash-flooding benchmark in the VM
# (run by bench/aff/run.sh).  For each kpx.ko given: load it, make netns
# "affb" with the tun device aff0 (fd00:1::1/64) and a blackhole route for
# the backends (a DNATed SYN goes no further: no reply, no socket), then
# KPX_AFF_ROUNDS (default 2) rounds of three cases, each on a frontend
# made afresh (TCP [fd00:96::1]:80, backends [fd00:244::1]:8080 and
# [fd00:244::2]:8080):
#   plain:    no affinity, KPX_AFF_N (65,536) random clients
#   random:   ClientIP affinity (10800 s), KPX_AFF_N random clients
#   collide:  the same frontend, KPX_AFF_N clients of one bucket of the
#             former fixed-seed hash
# one SYN per client written into aff0 by affbench (in the writer's CPU,
# pinned to CPU 0).  Prints one JSON line per case: affbench's object with
# "ko", "round", "case" and "conns" (the frontend's connection counter
# after it, from /proc/net/kpx/services: must be KPX_AFF_N).
set -u
[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../tools/affbench
n=${KPX_AFF_N:-65536}
rounds=${KPX_AFF_ROUNDS:-2}
kpxctl=$here/../../agent/kpxctl
ip() { /usr/sbin/ip "$@"; }

modprobe -a nf_conntrack nf_nat nf_reject_ipv4 nf_reject_ipv6 tun || exit 1
sysctl -qw net.netfilter.nf_conntrack_max=$((n * 4))
ip netns add affb
ip -n affb link set lo up
ip -n affb tuntap add dev aff0 mode tun || exit 1
ip -n affb link set aff0 up
ip -n affb -6 addr add fd00:1::1/64 dev aff0 nodad
ip -n affb -6 route add blackhole fd00:244::/64
ip -n affb -6 route add 2001:db8::/32 dev aff0
conns() {
	ip netns exec affb awk '$2 == "[fd00:96::1]:80" { print $4 }' /proc/net/kpx/services
}
for ko in "$@"; do
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps
	insmod "$ko" || { echo "# insmod $ko failed"; exit 1; }
	rev=$(basename "$(dirname "$(dirname "$ko")")")
	for ((r = 1; r <= rounds; r++)); do
		for c in plain:random random:random collide:collide; do
			aff=()
			[ "${c%%:*}" = plain ] || aff=(--affinity 10800)
			ip netns exec affb "$kpxctl" del tcp '[fd00:96::1]:80' 2>/dev/null
			ip netns exec affb conntrack -F >/dev/null 2>&1
			ip netns exec affb "$kpxctl" set tcp '[fd00:96::1]:80' \
				'[fd00:244::1]:8080' '[fd00:244::2]:8080' "${aff[@]}" ||
				{ echo "# $rev: kpxctl set failed"; exit 1; }
			out=$(ip netns exec affb taskset -c 0 "$tool" aff0 "$n" "${c#*:}") ||
				{ echo "# $rev ${c%%:*}: affbench failed"; exit 1; }
			printf '{"ko": "%s", "round": %d, "case": "%s", "conns": %s, %s\n' \
				"$rev" $r "${c%%:*}" "$(conns)" "${out#\{}"
		done
	done
	ip netns exec affb "$kpxctl" flush
	sleep 2
	rmmod kpx
done
