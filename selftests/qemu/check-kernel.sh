#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-kernel.sh KVER [TEST...]: builds kpx.ko for another kernel series
# (e.g. Debian 12's 6.12 from bookworm-security) in a scratch copy of kmod/
# (the in-tree kmod/kpx.ko stays built for the default kernel), boots that
# kernel and runs the given selftests (default: kpx_clusterip) on it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kver=${1:?usage: check-kernel.sh KVER [TEST...]}
shift
tests=${*:-kpx_clusterip}
export KPX_KVER=$kver
. "$here/vm-env.sh"

build=$KPX_VM_CACHE/kmod-$kver
rm -rf "$build"
mkdir -p "$build"
cp -r "$repo/kmod" "$repo/uapi" "$build/"
make -C "$build/kmod" clean >/dev/null
echo "check-kernel: building kpx.ko for $kver"
make -C "$build/kmod" KVER="$kver" KERNELDIR="/lib/modules/$kver/build"
modinfo -F vermagic "$build/kmod/kpx.ko" | grep -q "^$kver " ||
	{ echo "check-kernel: kpx.ko is not built for $kver" >&2; exit 1; }
KPX_CHECK_NO_BUILD=1 KPX_KO=$build/kmod/kpx.ko KPX_TESTS=$tests \
	exec "$here/check.sh"
