#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# get-kselftest.sh DIR: extract kselftest_harness.h and kselftest.h from
# Debian's linux-source tarball into DIR (apt-get install linux-source-6.1).
set -euo pipefail

dir=${1:?usage: get-kselftest.sh DIR}
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
[ -n "$tarball" ] || {
	echo "get-kselftest: no /usr/src/linux-source-*.tar.xz" >&2
	exit 1
}
top=$(basename "$tarball" .tar.xz)
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.x.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/kselftest.h"
mv "$tmp/$top/tools/testing/selftests/kselftest.h" \
   "$tmp/$top/tools/testing/selftests/kselftest_harness.h" "$dir/"
