# SPDX-License-Identifier: GPL-2.0-only
#
# vm-env.sh: defaults shared by the VM harness scripts (sourced, not run).
#   KPX_KVER       kernel version (default: the one linux-headers-amd64
#                  depends on, else the oldest installed headers)
#   KPX_VM_CACHE   cache for the kernel and the initramfs
#                  (default: selftests/qemu/.cache)

kpx_qemu_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Default kernel: the one Debian's linux-headers-amd64 metapackage points at
# (the distribution's kernel, even if other headers are installed too),
# else the oldest installed headers.
if [ -z "${KPX_KVER:-}" ]; then
	KPX_KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		   sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
	[ -e "/lib/modules/$KPX_KVER/build/Makefile" ] || KPX_KVER=
fi
if [ -z "${KPX_KVER:-}" ]; then
	for d in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V); do
		if [ -e "$d/Makefile" ]; then
			KPX_KVER=$(basename "$(dirname "$d")")
			break
		fi
	done
fi
: "${KPX_KVER:?no kernel headers installed (/lib/modules/*/build)}"
: "${KPX_VM_CACHE:=$kpx_qemu_dir/.cache}"
mkdir -p "$KPX_VM_CACHE"
KPX_VM_CACHE=$(cd "$KPX_VM_CACHE" && pwd)
export KPX_KVER KPX_VM_CACHE
