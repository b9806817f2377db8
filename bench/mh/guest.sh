#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/mh/guest.sh KO...: the Maglev memory benchmark in the VM (run by
# bench/mh/run.sh).  For each kpx.ko given and each case of KPX_MH_CASES
# (default: "mix:50000:1:10:1 shared:50000:1:10:2 largest:1000:700:700:1",
# NAME:FRONTENDS:MIN:MAX:SHARE[:MH_SIZE], see mhbench set): load it, make
# netns "mhb", drop the page cache, read /proc/meminfo, program the
# frontends (mhbench set, one SET per frontend, scheduler mh), read it
# again, FLUSH, wait for the deferred frees and read it a third time.
# Prints one JSON line per case: {"ko", "case", "frontends", "backends",
# "share", "mh_size", "set" (mhbench's SET times), "before", "after",
# "flushed" (Slab, SUnreclaim, VmallocUsed, Percpu in KiB), "delta_kib"
# (Slab + VmallocUsed, after - before), "per_frontend_b",
# "left_after_flush_kib"}.
set -u
[ -e /etc/kpx-guest ] || { echo "refusing to run outside the kpx test VM" >&2; exit 4; }
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/../tools/mhbench
cases=${KPX_MH_CASES:-"mix:50000:1:10:1 shared:50000:1:10:2 largest:1000:700:700:1"}
ip() { /usr/sbin/ip "$@"; }

modprobe -a nf_conntrack nf_nat nf_reject_ipv4 nf_reject_ipv6 || exit 1
# mem: {"slab": KiB, "sunreclaim": KiB, "vmalloc": KiB, "percpu": KiB} after
# dropping caches
mem() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '$1 == "Slab:" { s = $2 } $1 == "SUnreclaim:" { u = $2 }
		$1 == "VmallocUsed:" { v = $2 } $1 == "Percpu:" { p = $2 }
		END { printf "{\"slab\": %d, \"sunreclaim\": %d, \"vmalloc\": %d, \"percpu\": %d}", s, u, v, p }' /proc/meminfo
}
sv() { sed 's/.*"slab": \([0-9]*\).*"vmalloc": \([0-9]*\).*/\1 \2/' <<<"$1" | awk '{ print $1 + $2 }'; }

for ko in "$@"; do
	deps=$(modinfo -F depends "$ko" | tr ',' ' ')
	[ -z "$deps" ] || modprobe -a $deps
	insmod "$ko" || { echo "# insmod $ko failed"; exit 1; }
	rev=$(basename "$(dirname "$(dirname "$ko")")")
	for c in $cases; do
		IFS=: read -r name n min max share size <<<"$c"
		ip netns add mhb
		ip -n mhb link set lo up
		sleep 1
		before=$(mem)
		set=$(ip netns exec mhb "$tool" set "$n" "$min" "$max" "$share" ${size:+"$size"}) ||
			echo "# $rev $name: mhbench set failed: $set"
		sleep 2
		after=$(mem)
		ip netns exec mhb "$tool" flush || echo "# $rev $name: flush failed"
		sleep 5
		flushed=$(mem)
		# backends programmed: sum over Services of MIN + s % (MAX - MIN + 1)
		nbe=$(awk -v n="$n" -v a="$min" -v b="$max" -v sh="$share" \
			'BEGIN { for (i = 0; i < n; i++) t += a + int(i / sh) % (b - a + 1); print t }')
		d=$(($(sv "$after") - $(sv "$before")))
		printf '{"ko": "%s", "case": "%s", "frontends": %d, "backends": %d, "share": %d, "mh_size": %s, "set": %s, "before": %s, "after": %s, "flushed": %s, "delta_kib": %d, "per_frontend_b": %d, "left_after_flush_kib": %d}\n' \
			"$rev" "$name" "$n" "$nbe" "$share" "${size:-null}" "${set:-null}" \
			"$before" "$after" "$flushed" "$d" $((d * 1024 / n)) \
			$(($(sv "$flushed") - $(sv "$before")))
		ip netns del mhb
		sleep 3
	done
	rmmod kpx
done
