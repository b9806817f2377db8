#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/ct/guest.sh KO...: the conntrack-cleanup benchmark in the VM (run by
# bench/ct/run.sh).  For each kpx.ko given: load it, fill the conntrack
# table of netns "ctb" with KPX_CT_ENTRIES (500,000) unreplied UDP entries
# (ctbench fill; one in KPX_CT_MATCH goes to a frontend VIP), then
#   create: KPX_CT_SYNC (1,000) UDP frontends with 2 backends each
#           (ctbench sync create: each new frontend asks for its entries
#           without DNAT to go)
#   drop:   the same frontends with one backend (each lost a backend)
# and measure the SETs' wall time, the time until the cleanups are done
# (every conntrack walk started has returned and none started for 3 s),
# the number of walks (nf_ct_iterate_cleanup_net calls, kprobe events) and
# the entries deleted (nf_conntrack_count).  Prints one JSON line per step:
# {"ko", "step", "frontends", "set_ms", "done_ms", "walks", "deleted",
# "entries"}.
set -u
[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../tools/ctbench
n=${KPX_CT_ENTRIES:-500000}
match=${KPX_CT_MATCH:-500}
nsync=${KPX_CT_SYNC:-1000}
ip() { /usr/sbin/ip "$@"; }

modprobe -a nf_conntrack nf_nat nf_conntrack_netlink nf_reject_ipv4 nf_reject_ipv6 nf_nat || exit 1
sysctl -qw net.netfilter.nf_conntrack_max=$((n + 100000))
echo 262144 >/sys/module/nf_conntrack/parameters/hashsize
tr=/sys/kernel/tracing
mountpoint -q $tr || mount -t tracefs nodev $tr
echo 'p:kpxwalk nf_ct_iterate_cleanup_net' >>$tr/kprobe_events || echo "# no kprobe events"
echo 'r:kpxwalked nf_ct_iterate_cleanup_net' >>$tr/kprobe_events
echo 1 >$tr/events/kprobes/enable
walks() { awk -v e="${1:-kpxwalk}" '$1 == e { print $2 }' $tr/kprobe_profile; }
count() { ip netns exec ctb cat /proc/sys/net/netfilter/nf_conntrack_count; }
ms() { date +%s%3N; }

for ko in "$@"; do
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps
	insmod "$ko" || { echo "# insmod $ko failed"; exit 1; }
	ip netns add ctb
	ip -n ctb link set lo up
	t0=$(ms)
	ip netns exec ctb "$tool" fill "$n" "$match" >/tmp/fill.json || exit 1
	echo "# $ko: filled $(cat /tmp/fill.json) in $(($(ms) - t0)) ms, count $(count)"
	# the first SET in the netns switches conntrack on there: before the fill
	for step in create drop; do
		c0=$(count) w0=$(walks) t0=$(ms)
		ip netns exec ctb "$tool" sync "$nsync" $step >/tmp/sync.json || exit 1
		t1=$(ms)
		# done: every walk started has returned, nothing new for 3 s
		done_at=$t1 ret=$(walks kpxwalked) still=0
		while [ $still -lt 30 ]; do
			sleep 0.1
			r=$(walks kpxwalked)
			if [ "$r" != "$ret" ]; then
				ret=$r done_at=$(ms) still=0
			elif [ "$r" = "$(walks)" ]; then
				still=$((still + 1))
			fi
		done
		last=$(count)
		printf '{"ko": "%s", "step": "%s", "frontends": '"$nsync"', "set_ms": %s, "done_ms": %s, "walks": %s, "deleted": %s, "entries": %s}\n' \
			"$(basename "$(dirname "$(dirname "$ko")")")" $step "$((t1 - t0))" "$((done_at - t0))" \
			"$(($(walks) - w0))" "$((c0 - last))" "$c0"
	done
	ip netns del ctb
	sleep 2
	rmmod kpx
done
