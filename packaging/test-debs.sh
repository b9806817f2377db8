#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Builds the kpx-dkms and kpx-agent packages (dpkg-buildpackage, in a scratch
# copy of the tree), installs them into a fresh debootstrap chroot of Debian 12
# with the headers of KPX_CHROOT_KVER, checks files, versions and DKMS, then
# purges them.  TAP output; exits non-zero if any check fails.
#
# The minbase chroot is debootstrapped once and kept as a tarball, and the
# .debs apt downloads into it are kept too, under KPX_PKG_CACHE
# (default /var/cache/kpx-packaging); each run unpacks a fresh chroot.
# Needs root, debootstrap, dpkg-dev, debhelper, dh-dkms and the build deps.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KPX_PKG_CACHE:-/var/cache/kpx-packaging}
mirror=${KPX_MIRROR:-http://deb.debian.org/debian}
security=${KPX_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
kver=${KPX_CHROOT_KVER:-6.1.0-57-amd64}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
n=0
fails=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
# check DESCRIPTION COMMAND...: one TAP line from the command's status.
check() {
	d=$1
	shift
	if "$@" >"$scratch/out" 2>&1; then ok "$d"; else not_ok "$d"; sed 's/^/# /' "$scratch/out"; fi
}
bail() { echo "Bail out! $1"; tail -n 40 "${2:-/dev/null}" 2>/dev/null | sed 's/^/# /'; exit 1; }

[ "$(id -u)" -eq 0 ] || bail "needs root (debootstrap, chroot)"
[ -n "$ver" ] || bail "no PACKAGE_VERSION in dkms.conf"

# apt's proxy, if any, for debootstrap and for apt inside the chroot.
proxy=$(apt-config dump 2>/dev/null | sed -n 's/^Acquire::http::Proxy "\(.*\)";$/\1/p')
if [ -n "$proxy" ] && [ "$proxy" != DIRECT ]; then
	export http_proxy="$proxy"
fi

scratch=$(mktemp -d /var/tmp/kpx-debs.XXXXXX)
root=$scratch/root
mounted=
cleanup() {
	for m in $mounted; do umount "$m" 2>/dev/null || umount -l "$m"; done
	if grep -q " $root/" /proc/self/mounts; then
		echo "# test-debs: mounts left under $root; not removing $scratch" >&2
	else
		rm -rf "$scratch"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build ------------------------------------------------------------------
for m in "$top"/packaging/man/*.[48]; do
	check "groff -man -ww: $(basename "$m") has no warnings" sh -c \
		"LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z '$m' 2>&1 | (! grep .)"
done
debs=$scratch/debs
if "$top/packaging/build-debs.sh" "$debs" >"$scratch/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b (packaging/build-debs.sh)"
else
	not_ok "dpkg-buildpackage -us -uc -b (packaging/build-debs.sh)"
	bail "package build failed" "$scratch/build.log"
fi
dkms_deb=$(ls "$debs"/kpx-dkms_"$ver"_all.deb 2>/dev/null)
agent_deb=$(ls "$debs"/kpx-agent_"$ver"_*.deb 2>/dev/null | grep -v dbgsym)
[ -n "$dkms_deb" ] && [ -n "$agent_deb" ] || bail "no kpx-dkms/kpx-agent .deb"
ok "built $(basename "$dkms_deb") $(basename "$agent_deb")"

# kpx-dkms ships exactly packaging/dkms-files under /usr/src/kpx-VERSION.
(cd "$top" && git ls-files -co --exclude-standard $(cat packaging/dkms-files)) | sed "s|^|./usr/src/kpx-$ver/|" |
	sort >"$scratch/want"
dpkg-deb -c "$dkms_deb" | awk '$1 !~ /^d/ {print $6}' | grep "^./usr/src/" |
	sort >"$scratch/have"
check "kpx-dkms holds exactly the DKMS files" diff -u "$scratch/want" "$scratch/have"
check "kpx-dkms depends on dkms" sh -c "dpkg-deb -f '$dkms_deb' Depends | grep -q dkms"
dpkg-deb -c "$agent_deb" | awk '{print $6}' >"$scratch/agent.list"
for f in ./usr/sbin/kpx-agent ./usr/sbin/kpxctl ./lib/systemd/system/kpx-agent.service \
	 ./etc/default/kpx-agent ./usr/share/man/man8/kpx-agent.8.gz \
	 ./usr/share/man/man8/kpxctl.8.gz; do
	check "kpx-agent ships $f" grep -qx "$f" "$scratch/agent.list"
done
check "kpx-agent ships the directory ./etc/kpx/" grep -qx ./etc/kpx/ "$scratch/agent.list"
check "kpx-dkms ships kpx(4)" sh -c "dpkg-deb -c '$dkms_deb' | grep -q ' ./usr/share/man/man4/kpx.4.gz$'"
dpkg-deb -e "$agent_deb" "$scratch/agent.ctrl"
check "/etc/default/kpx-agent is a conffile" grep -qx /etc/default/kpx-agent "$scratch/agent.ctrl/conffiles"

# ---- fresh chroot -----------------------------------------------------------
base=$cache/bookworm-minbase.tar
if [ ! -s "$base" ]; then
	echo "# debootstrap --variant=minbase bookworm $mirror (cached in $base)"
	mkdir -p "$cache"
	rm -rf "$cache/base.tmp"
	debootstrap --variant=minbase bookworm "$cache/base.tmp" "$mirror" \
		>"$scratch/debootstrap.log" 2>&1 ||
		bail "debootstrap failed" "$scratch/debootstrap.log"
	tar -C "$cache/base.tmp" --numeric-owner -cf "$base.tmp" . &&
		mv "$base.tmp" "$base" && rm -rf "$cache/base.tmp" ||
		bail "caching the chroot failed"
fi
mkdir -p "$root" "$cache/archives/partial"
tar -C "$root" --numeric-owner -xf "$base" || bail "unpacking $base failed"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# Kernel header packages of the current ABI live in bookworm-security.
printf 'deb %s bookworm main\ndeb %s bookworm-security main\n' "$mirror" "$security" \
	>"$root/etc/apt/sources.list"
if [ -n "${http_proxy:-}" ]; then
	echo "Acquire::http::Proxy \"$http_proxy\";" >"$root/etc/apt/apt.conf.d/01proxy"
fi
cp "$dkms_deb" "$agent_deb" "$root/tmp/"
mount -t proc proc "$root/proc" && mounted="$root/proc"
mount --bind /dev "$root/dev" && mounted="$root/dev $mounted"
mount --bind "$cache/archives" "$root/var/cache/apt/archives" &&
	mounted="$root/var/cache/apt/archives $mounted"

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
apt_in() { in_root apt-get -y -q -o APT::Keep-Downloaded-Packages=true \
	--no-install-recommends "$@"; }

if apt_in update >"$scratch/apt.log" 2>&1; then ok "apt-get update in the chroot"
else bail "apt-get update in the chroot failed" "$scratch/apt.log"; fi
# Headers first, so that kpx-dkms's postinst has a kernel to build for;
# systemd for deb-systemd-helper and systemd-analyze.
if apt_in install "linux-headers-$kver" systemd >>"$scratch/apt.log" 2>&1; then
	ok "install linux-headers-$kver systemd"
else
	not_ok "install linux-headers-$kver systemd"; tail -n 20 "$scratch/apt.log" | sed 's/^/# /'
fi
if apt_in install "/tmp/$(basename "$dkms_deb")" "/tmp/$(basename "$agent_deb")" \
	>"$scratch/install.log" 2>&1; then
	ok "apt-get install ./kpx-dkms ./kpx-agent"
else
	not_ok "apt-get install ./kpx-dkms ./kpx-agent"
	bail "install failed" "$scratch/install.log"
fi
sed -n '/^Building for/,/^DKMS: install completed/p' "$scratch/install.log" | sed 's/^/# /'

# ---- installed system -------------------------------------------------------
for f in /usr/sbin/kpx-agent /usr/sbin/kpxctl /lib/systemd/system/kpx-agent.service \
	 /etc/default/kpx-agent /usr/share/man/man8/kpx-agent.8.gz \
	 /usr/share/man/man8/kpxctl.8.gz /usr/share/man/man4/kpx.4.gz \
	 "/usr/src/kpx-$ver/dkms.conf" "/usr/src/kpx-$ver/uapi/linux/kpx.h"; do
	check "installed $f" test -s "$root$f"
done
check "installed directory /etc/kpx" test -d "$root/etc/kpx"
check "kpxctl --version is kpxctl $ver" sh -c \
	"chroot '$root' /usr/sbin/kpxctl --version | grep -qx 'kpxctl $ver'"
check "kpx-agent --version names $ver" sh -c \
	"chroot '$root' /usr/sbin/kpx-agent --version | grep -q ' $ver'"
in_root dkms status >"$scratch/dkms.status" 2>&1
sed 's/^/# dkms status: /' "$scratch/dkms.status"
check "dkms status: kpx/$ver installed for $kver" \
	grep -q "^kpx/$ver, $kver, x86_64: installed" "$scratch/dkms.status"
ko=$(ls "$root/lib/modules/$kver/updates/dkms/"kpx.ko* 2>/dev/null | head -n 1)
check "kpx.ko installed for $kver" sh -c "[ -n '$ko' ] && modinfo -F vermagic '$ko' | grep -q '^$kver '"
check "modinfo -F version kpx.ko is $ver" sh -c "[ -n '$ko' ] && [ \"\$(modinfo -F version '$ko')\" = '$ver' ]"
check "systemd-analyze verify kpx-agent.service" \
	in_root systemd-analyze verify --man=no /lib/systemd/system/kpx-agent.service
check "kpx-agent.service installed disabled" sh -c \
	"chroot '$root' systemctl is-enabled kpx-agent.service | grep -qx disabled"

# ---- purge ------------------------------------------------------------------
if apt_in purge kpx-dkms kpx-agent >"$scratch/purge.log" 2>&1; then
	ok "apt-get purge kpx-dkms kpx-agent"
else
	not_ok "apt-get purge kpx-dkms kpx-agent"; tail -n 20 "$scratch/purge.log" | sed 's/^/# /'
fi
check "dkms status empty after purge" sh -c "! chroot '$root' dkms status 2>&1 | grep -q kpx"
check "/usr/src/kpx-$ver removed" test ! -e "$root/usr/src/kpx-$ver"
check "kpx.ko removed" sh -c "! ls '$root/lib/modules/$kver/updates/dkms/'kpx.ko* 2>/dev/null"
check "/etc/default/kpx-agent purged" test ! -e "$root/etc/default/kpx-agent"
check "/etc/kpx (empty) removed by purge" test ! -e "$root/etc/kpx"

echo "1..$n"
[ "$fails" -eq 0 ]
