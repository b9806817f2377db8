#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# mkinitramfs.sh [KVER]: build the stub initramfs that boots the VM into the
# host's root file system (9p, read-only, under a tmpfs overlay).  Contents:
# busybox-static, the Debian modules needed to mount it (with dependencies,
# in load order) and stub-init.sh as /init.  Rebuilt only when an input is
# newer than the image.  Prints the image path on stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm-env.sh"

kver=${1:-$KPX_KVER}
kimg=$("$here/get-kernel.sh" "$kver")
out=$KPX_VM_CACHE/initramfs-$kver.cpio.gz
mods="virtio_pci 9pnet_virtio 9p overlay"
busybox=/bin/busybox

if [ -e "$out" ] && [ "$out" -nt "$here/stub-init.sh" ] &&
   [ "$out" -nt "$here/mkinitramfs.sh" ] && [ "$out" -nt "$kimg/.done" ]; then
	echo "$out"
	exit 0
fi

busybox --list >/dev/null 2>&1 && [ -z "$(ldd "$busybox" 2>/dev/null | grep '=>')" ] || {
	echo "mkinitramfs: need a static $busybox (apt-get install busybox-static)" >&2
	exit 1
}

root=$(mktemp -d "$KPX_VM_CACHE/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,etc,lower,upper,newroot,lib/modules}
cp "$busybox" "$root/bin/busybox"
for applet in sh mount umount mkdir insmod switch_root cat echo sleep reboot grep sed; do
	ln -s busybox "$root/bin/$applet"
done

# Resolve the modules with their dependencies; built-ins print "builtin".
: >"$root/etc/modorder"
for m in $mods; do
	modprobe -d "$kimg" -S "$kver" --show-depends "$m" | while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		# busybox insmod takes plain .ko only: decompress.
		name=$(basename "$path")
		name=${name%.xz}
		name=${name%.zst}
		name=${name%.gz}
		grep -qx "$name" "$root/etc/modorder" && continue
		case "$path" in
		*.xz) xz -dc "$path" ;;
		*.zst) zstd -qdc "$path" ;;
		*.gz) gzip -dc "$path" ;;
		*) cat "$path" ;;
		esac >"$root/lib/modules/$name"
		echo "$name" >>"$root/etc/modorder"
	done
done

cp "$here/stub-init.sh" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp.$$"
mv "$out.tmp.$$" "$out"	# per process: runs from two trees may rebuild at once
echo "$out"
