#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the stub initramfs (busybox sh).  Mounts the host's / (9p tag
# "hostroot", read-only) under a tmpfs overlay, marks it as the guest
# (/etc/kpx-guest) and switches to it, running the stage-2 script named by
# kpx.init= on the kernel command line (a path in the host's tree).

fail() {
	echo "KPX-STUB: $*"
	echo "KPX-VM-EXIT: 125"
	reboot -f
	sleep 5
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

stage2=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	kpx.init=*) stage2=${arg#kpx.init=} ;;
	esac
done
[ -n "$stage2" ] || fail "no kpx.init= on the kernel command line"

for m in $(cat /etc/modorder); do
	insmod "/lib/modules/$m" || fail "insmod $m failed"
done

mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 \
	hostroot /lower || fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=0755 tmpfs /upper || fail "cannot mount tmpfs"
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w \
	overlay /newroot || fail "cannot mount the overlay"
echo "kpx test VM: this root is a throw-away overlay" >/newroot/etc/kpx-guest ||
	fail "cannot create /etc/kpx-guest"

# busybox "mount --move" does not move here; "-o move" does.
for d in proc sys dev; do
	mount -o move "/$d" "/newroot/$d" || fail "cannot move /$d"
done
[ -x "/newroot$stage2" ] || fail "stage 2 $stage2 not found or not executable"
exec switch_root /newroot "$stage2"
fail "switch_root failed"
