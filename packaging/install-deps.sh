#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Installs, from Debian's archive, whatever `make`, `make check` and `make demo`
# need and this machine lacks, saying what it installs.  Idempotent.
set -eu

PKGS="gcc make pkg-config kmod cpio busybox-static qemu-system-x86
linux-headers-amd64 linux-source-6.1 dkms flex bison bc libelf-dev dwarves rsync xz-utils
libnl-genl-3-dev libnl-3-dev libjson-c-dev libcurl4-openssl-dev libyaml-dev
libmicrohttpd-dev libssl-dev python3 openssl curl jq
clang libclang-rt-14-dev debhelper dh-dkms debootstrap python3-yaml groff-base git linux-headers-6.12-amd64 iproute2 util-linux procps
nftables libnftables-dev iptables ipset libipset-dev ipvsadm libnetfilter-conntrack-dev conntrack libnl-route-3-dev
gnuplot-nox linux-perf clang-format sparse python3-prometheus-client tcpdump"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: apt-get install$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: need root to install packages" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq --no-install-recommends $missing
