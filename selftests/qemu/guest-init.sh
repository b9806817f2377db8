#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stage 2 of the VM boot, PID 1 on the overlaid host root.  Kernel command
# line: kpx.kimg=DIR (the extracted Debian kernel package, whose
# lib/modules/KVER is bound over /lib/modules/KVER), kpx.cmdfile=FILE (a bash
# script written by run-vm.sh).  Runs it with the console as stdout/stderr,
# prints "KPX-VM-EXIT: <status>" and reboots (QEMU runs with -no-reboot).

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
exec </dev/null >/dev/console 2>&1

finish() {
	echo "KPX-VM-EXIT: $1"
	sync
	/bin/busybox reboot -f
	sleep 10
}

die() {
	echo "KPX-VM: $*"
	finish 125
}

kimg= cmdfile= hosttmp=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	kpx.kimg=*) kimg=${arg#kpx.kimg=} ;;
	kpx.cmdfile=*) cmdfile=${arg#kpx.cmdfile=} ;;
	kpx.hosttmp=*) hosttmp=${arg#kpx.hosttmp=} ;;
	esac
done
kver=$(uname -r)

# /tmp is the guest's own tmpfs, except for the host's directories named by
# kpx.hosttmp= (comma-separated /tmp/NAME; "/tmp" keeps the host's whole
# /tmp), which the harness needs (a checkout or cache under /tmp): they are
# bound back from the overlaid host root.
mount -t tmpfs -o mode=0755 tmpfs /run || die "mount /run"
case ",$hosttmp," in
*,/tmp,*) ;;
*)
	mkdir -p /run/kpx-hosttmp
	mount --bind /tmp /run/kpx-hosttmp || die "bind the host's /tmp"
	mount --make-private /run/kpx-hosttmp || die "make /run/kpx-hosttmp private"
	mount -t tmpfs -o mode=1777 tmpfs /tmp || die "mount /tmp"
	for d in ${hosttmp//,/ }; do
		[ -d "/run/kpx-hosttmp/${d#/tmp/}" ] || die "kpx.hosttmp: no $d"
		mkdir -p "$d"
		mount --bind "/run/kpx-hosttmp/${d#/tmp/}" "$d" || die "bind $d"
	done
	umount -l /run/kpx-hosttmp
	rmdir /run/kpx-hosttmp
	;;
esac
mkdir -p /dev/pts /dev/shm /run/lock
# What udev would make: bash process substitution needs /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
[ -d "$kimg/lib/modules/$kver" ] || die "no modules in kpx.kimg=$kimg"
mkdir -p "/lib/modules/$kver"
mount --bind "$kimg/lib/modules/$kver" "/lib/modules/$kver" ||
	die "cannot bind the kernel's modules"

hostname kpx-vm
/usr/sbin/ip link set lo up
for m in crc32c_generic libcrc32c nf_defrag_ipv4 nf_defrag_ipv6 \
	 nf_conntrack nf_nat nf_reject_ipv4 nf_reject_ipv6 veth; do
	modprobe "$m" || die "modprobe $m failed"
done
sysctl -q -w net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
	net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0 ||
	die "sysctl failed"

[ -r "$cmdfile" ] || die "no command file (kpx.cmdfile=$cmdfile)"
echo "KPX-VM: guest ready at $(cut -d' ' -f1 /proc/uptime) s, running $cmdfile"
bash "$cmdfile"
finish $?
