#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# sparse.sh: the kernel's semantic checker over kpx.ko ("make sparse", part
# of make check): every file of kmod/ built with C=2 against each installed
# kernel series' headers (Debian 12's 6.1 and 6.12; SPARSE_KVERS= to
# choose), in a scratch copy, so the tree's own objects stay as they are.
# Prints each warning and fails when there is one, or when a build fails.
# A warning sparse cannot be talked out of is fixed in the code or
# annotated there (__acquire() and the like), never filtered here.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

if ! command -v sparse >/dev/null; then
	echo "sparse: not found (packaging/install-deps.sh installs it)" >&2
	exit 1
fi
kvers=${SPARSE_KVERS:-$(ls -d /lib/modules/*/build 2>/dev/null |
	sed 's|/lib/modules/||; s|/build||' | sort -V)}
if [ -z "$kvers" ]; then
	echo "sparse: no kernel headers in /lib/modules/*/build" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/kmod" "$tmp/uapi"
cp $(ls kmod/*.c kmod/*.h | grep -v '\.mod\.c$') kmod/Kbuild "$tmp/kmod/" &&
	cp -r uapi/linux "$tmp/uapi/" || exit 2

fail=0
for k in $kvers; do
	make -s -C "/lib/modules/$k/build" M="$tmp/kmod" clean >/dev/null 2>&1
	out=$(nice make -C "/lib/modules/$k/build" M="$tmp/kmod" C=2 \
		-j"$(nproc)" modules 2>&1)
	rc=$?
	warn=$(echo "$out" | grep -E '(warning|error):' | sed "s|$tmp/||g")
	if [ $rc != 0 ] || [ -n "$warn" ]; then
		[ -n "$warn" ] && echo "$warn" >&2
		[ $rc != 0 ] && echo "$out" | tail -n 20 >&2
		echo "sparse: kmod/ against $k: $(echo "$warn" | grep -c .) finding(s), build exit $rc" >&2
		fail=1
	else
		echo "sparse: kmod/ clean against $k"
	fi
done
exit $fail
