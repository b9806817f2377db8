#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/mh/run.sh [REV...]: the Maglev memory benchmark: kernel memory
# (Slab + VmallocUsed from /proc/meminfo) and SET time of many mh frontends
# (guest.sh), for kpx.ko built from each git revision given (default: the
# working tree only; e.g. "run.sh 048c08a^ WORKTREE" compares with the
# u32 tables of 65,537 slots), all in one VM boot on Debian's kernel.
# Prints the JSON lines; with KPX_MH_RESULT=FILE also writes them there.
# Environment: KPX_MH_CASES (guest.sh), KPX_VM_MEM (MiB, default here
# 3072), KPX_VM_CACHE and those of run-vm.sh.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
bench_build mh mhbench "$@" || exit 1
bench_vm mh "${KPX_MH_RESULT:-}" KPX_VM_MEM="${KPX_VM_MEM:-3072}" KPX_MH_CASES="${KPX_MH_CASES:-}"
