#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/aff/run.sh [REV...]: the affinity hash-flooding benchmark: the
# per-connection cost of a ClientIP affinity frontend for 65,536 IPv6
# clients that share one bucket of the affinity table's former fixed-seed
# hash against 65,536 random ones (guest.sh), for kpx.ko built from each
# git revision given (default: the working tree only; "run.sh da77232^
# WORKTREE" compares with the fixed seed), all in one VM boot on Debian's
# kernel.  Prints the JSON lines; with KPX_AFF_RESULT=FILE also writes them
# there.  Environment: KPX_AFF_N, KPX_AFF_ROUNDS (guest.sh), KPX_VM_CACHE
# and those of run-vm.sh.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
bench_build aff affbench "$@" || exit 1
bench_vm aff "${KPX_AFF_RESULT:-}" KPX_AFF_N="${KPX_AFF_N:-}" KPX_AFF_ROUNDS="${KPX_AFF_ROUNDS:-}"
