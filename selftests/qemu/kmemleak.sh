# SPDX-License-Identifier: GPL-2.0-only
#
# kmemleak.sh: kmemleak helpers for the debug-kernel guests (sourced by
# check-debug.sh and kmod/tests/run-kunit.sh, in the VM).  Needs a kernel
# with CONFIG_DEBUG_KMEMLEAK, enabled at boot, and debugfs mounted.
#   kmemleak_clear   scan, then forget every suspect so far (the boot's)
#   kmemleak_check   scan twice (objects younger than kmemleak's 5 s
#                    minimum age are not reported), print the suspects as
#                    "# " comments; status 1 if there is any, 2 if kmemleak
#                    is not usable

kmemleak_file=/sys/kernel/debug/kmemleak

kmemleak_clear() {
	[ -w "$kmemleak_file" ] || return 2
	echo scan >"$kmemleak_file" && echo clear >"$kmemleak_file"
}

kmemleak_check() {
	local out n

	[ -w "$kmemleak_file" ] || {
		echo "# kmemleak: $kmemleak_file not writable"
		return 2
	}
	echo scan >"$kmemleak_file" || return 2
	sleep 6
	echo scan >"$kmemleak_file" || return 2
	out=$(cat "$kmemleak_file")
	n=$(grep -c '^unreferenced object' <<<"$out")
	echo "# kmemleak: $n unreferenced object(s)"
	[ "$n" = 0 ] && return 0
	sed 's/^/#   /' <<<"$out" | head -n 200
	return 1
}
