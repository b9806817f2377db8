#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Builds kpx.ko with DKMS against the headers of kernel $1, in scratch
# source/dkms/install trees, from exactly the files `make dkms-install`
# installs (packaging/dkms-files).  Nothing is installed on the host.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: dkms-build.sh KERNEL-VERSION}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
scratch=$(mktemp -d /tmp/kpx-dkms.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

src=$scratch/src/kpx-$ver
mkdir -p "$src"
(cd "$top" && cp --parents $(cat packaging/dkms-files) "$src/")
dk="--sourcetree $scratch/src --dkmstree $scratch/tree --installtree $scratch/inst"
dkms add $dk -m kpx -v "$ver" >/dev/null
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
