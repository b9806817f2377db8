#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/genl/guest.sh KO...: the hostile-SET benchmark in the VM (run by
# bench/genl/run.sh).  For each kpx.ko given: load it, make netns "genlb"
# and run genlbench's cases there, KPX_GENL_REPS (default 20) requests
# each (empty106k, lists, max, max1; see bench/tools/genlbench.c), then
# FLUSH.  Prints one JSON line per case: genlbench's object with "ko".
set -u
[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../tools/genlbench
reps=${KPX_GENL_REPS:-20}
ip() { /usr/sbin/ip "$@"; }

modprobe -a nf_conntrack nf_nat nf_reject_ipv4 nf_reject_ipv6 || exit 1
for ko in "$@"; do
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps
	insmod "$ko" || { echo "# insmod $ko failed"; exit 1; }
	rev=$(basename "$(dirname "$(dirname "$ko")")")
	ip netns add genlb
	for c in empty106k lists max max1; do
		out=$(ip netns exec genlb "$tool" "$c" "$reps") ||
			echo "# $rev $c: unexpected replies"
		echo "{\"ko\": \"$rev\", ${out#\{}"
	done
	ip netns exec genlb "$tool" flush || echo "# $rev: flush failed"
	ip netns del genlb
	sleep 2
	rmmod kpx
done
