#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Builds the kpx-dkms and kpx-agent .debs with dpkg-buildpackage in a scratch
# copy of the tree (the source tree is left untouched) and copies them, with
# the .buildinfo/.changes, into OUTDIR.  Unit tests are skipped (nocheck):
# `make unit` runs them.  Usage: build-debs.sh OUTDIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-debs.sh OUTDIR}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
scratch=$(mktemp -d /var/tmp/kpx-build.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

src=$scratch/kpx-$ver
mkdir -p "$src" "$out"
# Tracked and new files, not build products (.gitignore).
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -co --exclude-standard -z |
		xargs -0 cp --parents -t "$src")
else
	cp -a "$top/." "$src/"
	make -C "$src/agent" clean >/dev/null
fi
if ! (cd "$src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1; then
	tail -n 40 "$scratch/build.log" >&2
	echo "build-debs: FAIL: dpkg-buildpackage" >&2
	exit 1
fi
cp "$scratch"/kpx-dkms_"$ver"_all.deb "$scratch"/kpx-agent*_"$ver"_*.deb \
   "$scratch"/kpx_"$ver"_*.buildinfo "$scratch"/kpx_"$ver"_*.changes "$out/"
ls "$scratch"/*.deb | sed 's|.*/|build-debs: |'
