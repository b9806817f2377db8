#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/genl/run.sh [REV...]: the hostile-SET benchmark: the reply time of
# the 106,000-empty-list SET, of too many lists, of the largest valid SET
# and of one backend too many (guest.sh), for kpx.ko built from each git
# revision given (default: the working tree only), all in one VM boot on
# Debian's kernel.  Prints the JSON lines; with KPX_GENL_RESULT=FILE also
# writes them there.  Environment: KPX_GENL_REPS (guest.sh), KPX_VM_CACHE
# and those of run-vm.sh.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
bench_build genl genlbench "$@" || exit 1
bench_vm genl "${KPX_GENL_RESULT:-}" KPX_GENL_REPS="${KPX_GENL_REPS:-}"
