#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/ct/run.sh [REV...]: the conntrack-cleanup benchmark, a sync of
# 1,000 UDP frontends against a 500,000-entry conntrack table (guest.sh),
# for kpx.ko built from each git revision given (default: the working tree
# only; e.g. "run.sh HEAD~3 WORKTREE" compares), all in one VM boot on
# Debian's kernel.  Prints the JSON lines; with KPX_CT_RESULT=FILE also
# writes them there.  Environment: KPX_CT_ENTRIES, KPX_CT_MATCH (guest.sh),
# KPX_VM_CACHE and those of run-vm.sh.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
bench_build ct ctbench "$@" || exit 1
bench_vm ct "${KPX_CT_RESULT:-}"
