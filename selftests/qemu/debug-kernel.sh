#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# debug-kernel.sh [--print-dir]: build (once) the kpx debug test kernel from
# Debian's linux-source-6.1 with debug.config (KASAN, lockdep, kmemleak,
# KUnit, netfilter built in) and print where it is.
#
# Cache: $KPX_VM_CACHE/debug-kernel/<key> (see vm-env.sh), key = hash of
# debug.config, the base recipe and the linux-source-6.1 package version.
# A second run with the same key only prints the paths.  Layout:
#   <key>/linux-source-6.1   built tree: make -C <tree> M=<dir> modules
#   <key>/root/boot/vmlinuz-<krel>, <key>/root/lib/modules/<krel>
# It also links $KPX_VM_CACHE/kernel-<krel> to <key>/root (the layout
# get-kernel.sh produces), so "KPX_KVER=<krel> run-vm.sh -- CMD" boots it.
#
# Output (stdout): KEY=VALUE lines BZIMAGE, TREE, MODDIR, KREL, ROOT; with
# --print-dir only the tree path.  Build log: <key>/build.log.
# Environment: KPX_VM_CACHE, KPX_DEBUG_SRC (default
# /usr/src/linux-source-6.1.tar.xz), KPX_DEBUG_JOBS (default nproc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm-env.sh"

print_dir=0
case "${1:-}" in
--print-dir) print_dir=1 ;;
"") ;;
*) sed -n '4,20s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

src=${KPX_DEBUG_SRC:-/usr/src/linux-source-6.1.tar.xz}
frag=$here/debug.config
jobs=${KPX_DEBUG_JOBS:-$(nproc)}
# Bump when the base recipe below changes, to invalidate old builds.
recipe="tinyconfig+kvm_guest.config+debug.config v1"

[ -r "$src" ] || {
	echo "debug-kernel: $src missing (apt-get install linux-source-6.1)" >&2
	exit 1
}
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null ||
	 stat -c '%s-%Y' "$src")
key=$( { echo "$recipe"; echo "$srcver"; cat "$frag"; } |
	sha256sum | cut -c1-16)
base=$KPX_VM_CACHE/debug-kernel
dir=$base/$key
tree=$dir/linux-source-6.1
root=$dir/root

log() { echo "debug-kernel: $*" >&2; }

# check_config FRAGMENT CONFIG: every assignment in FRAGMENT must be in
# CONFIG verbatim, every "is not set" must not be set.  Lists the misses.
check_config() {
	local bad=0 line sym
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF -- "$line" "$2" && continue ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			grep -q "^$sym=" "$2" || continue ;;
		*) continue ;;
		esac
		sym=$(echo "$line" | grep -oE 'CONFIG_[A-Za-z0-9_]+')
		log "did not stick: '$line' (got: $(grep -E "^(# )?${sym}[= ]" "$2" ||
			echo absent))"
		bad=1
	done <"$1"
	return "$bad"
}

build() {
	local t0 kmake
	t0=$(date +%s)
	rm -rf "$dir"
	mkdir -p "$dir"
	log "untar $src into $dir"
	tar -xJf "$src" -C "$dir"
	[ -e "$tree/Makefile" ] || { log "no $tree/Makefile after untar"; exit 1; }
	kmake=(nice -n 10 make -C "$tree" -j"$jobs")
	log "configure: tinyconfig + kvm_guest.config + $frag"
	"${kmake[@]}" tinyconfig >/dev/null
	"${kmake[@]}" kvm_guest.config >/dev/null
	(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$frag") >/dev/null
	"${kmake[@]}" olddefconfig >/dev/null
	check_config "$frag" "$tree/.config" || {
		log "config check failed; fix debug.config"
		exit 1
	}
	log "build bzImage + modules with $jobs jobs (log: $dir/build.log)"
	"${kmake[@]}" bzImage modules >"$dir/build.log" 2>&1 || {
		tail -n 30 "$dir/build.log" >&2
		log "build failed"
		exit 1
	}
	krel=$(make -s -C "$tree" kernelrelease)
	mkdir -p "$root/boot"
	make -s -C "$tree" INSTALL_MOD_PATH="$root" modules_install \
		>>"$dir/build.log" 2>&1
	cp "$tree/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$krel"
	cp "$tree/System.map" "$root/boot/System.map-$krel"
	cp "$tree/.config" "$root/boot/config-$krel"
	echo "$krel" >"$dir/krel"
	touch "$root/.done" "$dir/.done"
	log "built $krel in $(($(date +%s) - t0)) s"
}

mkdir -p "$base"
exec 9>"$base/.lock"
flock 9
if [ -e "$dir/.done" ]; then
	krel=$(cat "$dir/krel")
else
	build
fi

# Let the harness find it as kernel-<krel> (what get-kernel.sh would create).
ln -sfn "debug-kernel/$key/root" "$KPX_VM_CACHE/kernel-$krel.tmp"
mv -T "$KPX_VM_CACHE/kernel-$krel.tmp" "$KPX_VM_CACHE/kernel-$krel"

if [ "$print_dir" = 1 ]; then
	echo "$tree"
	exit 0
fi
echo "BZIMAGE=$root/boot/vmlinuz-$krel"
echo "TREE=$tree"
echo "MODDIR=$root/lib/modules/$krel"
echo "KREL=$krel"
echo "ROOT=$root"
