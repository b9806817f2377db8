#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# get-kernel.sh [KVER]: fetch Debian's linux-image-KVER into the cache and
# extract it, so the VM boots the same kernel the module is built against.
# Idempotent: a second call only prints the paths.
#
#   KVER          default: the version whose headers are installed
#   KPX_VM_CACHE  cache directory (default: selftests/qemu/.cache)
#
# Prints the extracted root (KIMG) on stdout; the kernel is
# $KIMG/boot/vmlinuz-KVER and the modules are under $KIMG/lib/modules/KVER.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm-env.sh"

kver=${1:-$KPX_KVER}
kimg=$KPX_VM_CACHE/kernel-$kver

if [ ! -e "$kimg/.done" ]; then
	mkdir -p "$KPX_VM_CACHE/debs"
	deb=$(ls "$KPX_VM_CACHE"/debs/linux-image-"$kver"_*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$deb" ]; then
		(cd "$KPX_VM_CACHE/debs" && apt-get download "linux-image-$kver" >&2)
		deb=$(ls "$KPX_VM_CACHE"/debs/linux-image-"$kver"_*.deb | head -n1)
	fi
	rm -rf "$kimg.tmp"
	dpkg-deb -x "$deb" "$kimg.tmp"
	depmod -b "$kimg.tmp" "$kver"
	[ -r "$kimg.tmp/boot/vmlinuz-$kver" ] || {
		echo "get-kernel: no vmlinuz-$kver in $deb" >&2
		exit 1
	}
	rm -rf "$kimg"
	mv "$kimg.tmp" "$kimg"
	touch "$kimg/.done"
fi
echo "$kimg"
