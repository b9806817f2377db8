#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# style.sh: the style checks of "make style" (part of make check).
#   - the agent: clang-format (agent/.clang-format, kernel-like: tabs, 80
#     columns, Linux braces) over the files listed in agent/.clang-format-files.
#     clang-format cannot write the tab-aligned trailing comments and macro
#     continuations the agent uses everywhere, so formatting the whole tree
#     would rewrite about 2,500 lines and their history; the list holds the
#     files that follow it, and a new file joins it; a file that follows it
#     but is not listed fails the check.  "make style-diff"
#     checks the lines changed since BASE (default main) with
#     git clang-format instead.
#   - kmod/ and uapi/: the kernel's checkpatch.pl (--no-tree),
#     from CHECKPATCH, a kernel build tree, the debug kernel's source in
#     KPX_VM_CACHE, or extracted once from Debian's linux-source-6.1 into
#     ~/.cache/kpx/ (packaging/install-deps.sh installs it).
# Prints each finding and fails when there is one.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
fail=0

# ---- agent: clang-format
if ! command -v clang-format >/dev/null; then
	echo "style: clang-format not found (packaging/install-deps.sh installs it)" >&2
	exit 1
fi
files=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' agent/.clang-format-files)
n=0
for f in $files; do
	n=$((n + 1))
	if ! clang-format --dry-run --Werror --style=file "agent/$f" 2>/tmp/style.$$; then
		head -n 20 /tmp/style.$$ >&2
		fail=1
	fi
done
rm -f /tmp/style.$$
[ $fail = 0 ] && echo "style: $n agent files follow agent/.clang-format"
# Every agent file that already follows it is listed, so that it keeps to it.
unlisted=0
for f in $(cd agent && { git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' | sed 's|^\./||'; }); do
	case " $(echo $files) " in *" $f "*) continue ;; esac
	if clang-format --dry-run --Werror --style=file "agent/$f" 2>/dev/null; then
		echo "style: agent/$f follows agent/.clang-format but is not in agent/.clang-format-files" >&2
		unlisted=$((unlisted + 1))
		fail=1
	fi
done
[ $unlisted = 0 ] && echo "style: every agent file that follows agent/.clang-format is listed"

# ---- kmod, uapi: checkpatch
find_checkpatch() {
	local c cache
	for c in ${CHECKPATCH:-} /lib/modules/*/build/scripts/checkpatch.pl \
		 "${KPX_VM_CACHE:-$top/selftests/qemu/.cache}"/debug-kernel/*/linux-source-*/scripts/checkpatch.pl; do
		[ -f "$c" ] && { echo "$c"; return 0; }
	done
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/kpx/checkpatch
	if [ ! -f "$cache/scripts/checkpatch.pl" ] && [ -f /usr/src/linux-source-6.1.tar.xz ]; then
		mkdir -p "$cache" &&
		tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$cache" --strip-components=1 \
			--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' 2>/dev/null
	fi
	[ -f "$cache/scripts/checkpatch.pl" ] && { echo "$cache/scripts/checkpatch.pl"; return 0; }
	return 1
}
if ! cp=$(find_checkpatch); then
	echo "style: checkpatch.pl not found (CHECKPATCH=, or install linux-source-6.1)" >&2
	exit 1
fi
kfiles=$(ls kmod/*.c kmod/*.h uapi/linux/kpx.h | grep -v '\.mod\.c$')
out=$(perl "$cp" --no-tree --terse --show-types -f $kfiles 2>&1 |
	grep -v '^total: 0 errors, 0 warnings, ')
if [ -n "$out" ]; then
	echo "$out" >&2
	fail=1
else
	echo "style: $(echo "$kfiles" | wc -l) kmod/uapi files pass checkpatch"
fi
exit $fail
