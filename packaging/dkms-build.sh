#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Builds kpx.ko with DKMS against the headers of each kernel given, in scratch
# source/dkms/install trees, from exactly the files `make dkms-install`
# installs (packaging/dkms-files).  Nothing is installed on the host.
# Usage: dkms-build.sh KERNEL-VERSION [KERNEL-VERSION...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: dkms-build.sh KERNEL-VERSION..." >&2; exit 2; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
scratch=$(mktemp -d /tmp/kpx-dkms.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

src=$scratch/src/kpx-$ver
mkdir -p "$src" "$scratch/tree" "$scratch/inst"
(cd "$top" && cp --parents $(ls $(cat packaging/dkms-files) | grep -v "\.mod\.c$") "$src/")
dk="--sourcetree $scratch/src --dkmstree $scratch/tree --installtree $scratch/inst"
dkms add $dk -m kpx -v "$ver" >/dev/null

for kver; do
	if [ ! -e "/lib/modules/$kver/build" ]; then
		echo "dkms-build: FAIL: no headers for $kver" \
		     "(/lib/modules/$kver/build)" >&2
		exit 1
	fi
	if ! dkms build $dk -m kpx -v "$ver" -k "$kver"; then
		cat "$scratch"/tree/kpx/"$ver"/build/make.log 2>/dev/null || true
		echo "dkms-build: FAIL: dkms build for $kver" >&2
		exit 1
	fi
	ko=$(find "$scratch/tree/kpx/$ver/$kver" -name 'kpx.ko*' | head -n 1)
	[ -n "$ko" ] || { echo "dkms-build: FAIL: no kpx.ko for $kver" >&2; exit 1; }
	modinfo -F vermagic "$ko" | grep -q "^$kver " ||
		{ echo "dkms-build: FAIL: vermagic of $ko is not $kver" >&2; exit 1; }
	echo "dkms-build: ok: kpx $ver built for $kver"
done
