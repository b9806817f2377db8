#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_modes: modes/basic.sh once per fallback proxy mode (modes/nftables.sh,
# modes/iptables.sh, modes/ipvs.sh: how each mode's rules are read), each
# with its own topology, API server and agent (--proxy-mode picked here, so
# the test runs in the kpx-mode suite: require_mode kpx in basic.sh).
# KPX_MODES_RUN="iptables" runs only that one.  Exit status: kselftest's:
# a failure in any mode fails the test; otherwise a mode that skipped makes
# the test a skip (named), so a mode's coverage cannot vanish as a pass.
# kpx-timeout: 1500
here=$(dirname "$0")
failed=() skipped=() passed=()
for m in ${KPX_MODES_RUN:-nftables iptables ipvs}; do
	echo "# --- proxy mode $m (modes/basic.sh $m)"
	bash "$here/modes/basic.sh" "$m"
	r=$?
	echo "# --- proxy mode $m: exit $r"
	case "$r" in
	0) passed+=("$m") ;;
	4) skipped+=("$m") ;;
	*) failed+=("$m") ;;
	esac
done
echo "# modes passed: ${passed[*]:-none}; skipped: ${skipped[*]:-none}; failed: ${failed[*]:-none}"
[ ${#failed[@]} = 0 ] || exit 1
[ ${#skipped[@]} = 0 ] || exit 4
exit 0
