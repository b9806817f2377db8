# SPDX-License-Identifier: GPL-2.0-only
#
# mode_lib.sh: the proxy mode under test (sourced by lib.sh).  run_guest.sh
# runs the suite with KPX_PROXY_MODE = kpx (default: the module), nftables,
# iptables or ipvs (issue 6):
#
# - tests that drive the kpx module directly are skipped by run_guest.sh in
#   the other modes ("ok N name # SKIP <reason>");
# - agent-driven tests (case_lib.sh's agent_start passes --proxy-mode) run in
#   every mode.  Their traffic assertions hold in all modes.  Module state:
#     * a frontend's backends and flags (proc_backends, wait_proc_backends,
#       proc_svc FLAGS, so case_lib.sh's expect_backends and drop_flag): in
#       the other modes, what the agent programmed, from its --v 2 log
#       ("set KEY flags=0x.. backends=[...]" or "del KEY", counted once a
#       later "sync done" line shows the sync ended), so the waits and these
#       assertions still mean something;
#     * counters (conns, rejects, drops, filtered: kpxctl stats/list,
#       /proc/net/kpx) exist only in the module: in the other modes the
#       readers return $MODE_NA, and an assert_* given $MODE_NA as the value
#       it checks is skipped, logged and listed at the end of the run;
# - require_mode MODE...: the test makes sense only in those modes;
#   require_feature FEATURE: skip when the mode lacks it (MODE_LACKS below).

KPX_PROXY_MODE=${KPX_PROXY_MODE:-kpx}
# What a module-only reader returns in another mode.
MODE_NA="n/a($KPX_PROXY_MODE)"
# Where skipped assertions are listed for run_guest.sh ("" = nowhere).
KPX_SKIP_LIST=${KPX_SKIP_LIST:-}
# The agent's log, for the frontends it programmed (case_lib.sh's).
AGENT_LOG=${AGENT_LOG:-$TMPD/agent.log}
MODE_SKIPS=0

# mode_is MODE...: true when the mode under test is one of MODEs.
mode_is() {
	local m

	for m; do
		[ "$KPX_PROXY_MODE" = "$m" ] && return 0
	done
	return 1
}

# require_mode MODE...: skip unless the mode under test is one of MODEs.
require_mode() {
	mode_is "$@" || skip "only in proxy mode $* (this run: $KPX_PROXY_MODE)"
}

# What a mode cannot do, "MODE FEATURE" -> reason.  Features: sched-NAME
# (KPX_SVC_A_SCHEDULER values other than random).
declare -A MODE_LACKS=(
	["nftables sched-rr"]="nftables mode schedules with numgen random only (kube-proxy's nftables mode)"
	["nftables sched-wrr"]="nftables mode schedules with numgen random only (kube-proxy's nftables mode)"
	["nftables sched-lc"]="nftables mode schedules with numgen random only (kube-proxy's nftables mode)"
	["nftables sched-sh"]="nftables mode schedules with numgen random only (kube-proxy's nftables mode)"
	["nftables sched-mh"]="nftables mode schedules with numgen random only (kube-proxy's nftables mode)"
	["iptables sched-rr"]="iptables mode schedules with -m statistic random only (kube-proxy's iptables mode)"
	["iptables sched-wrr"]="iptables mode schedules with -m statistic random only (kube-proxy's iptables mode)"
	["iptables sched-lc"]="iptables mode schedules with -m statistic random only (kube-proxy's iptables mode)"
	["iptables sched-sh"]="iptables mode schedules with -m statistic random only (kube-proxy's iptables mode)"
	["iptables sched-mh"]="iptables mode schedules with -m statistic random only (kube-proxy's iptables mode)"
)

# require_feature FEATURE...: skip when the mode under test lacks one.
require_feature() {
	local f

	for f; do
		[ -z "${MODE_LACKS["$KPX_PROXY_MODE $f"]:-}" ] ||
			skip "$f: ${MODE_LACKS["$KPX_PROXY_MODE $f"]}"
	done
}

# _mode_na DESC GOT: true (and the assertion DESC is skipped) when GOT is
# $MODE_NA, a module-only value in another mode.
_mode_na() {
	[ "$2" = "$MODE_NA" ] || return 1
	MODE_SKIPS=$((MODE_SKIPS + 1))
	log "skip: $1: module state, not in proxy mode $KPX_PROXY_MODE"
	[ -z "$KPX_SKIP_LIST" ] ||
		echo "$TEST_NAME: $1 (module state)" >>"$KPX_SKIP_LIST"
	return 0
}

# agent_frontend PROTO VIP:PORT: "FLAGS BACKENDS" of the frontend as the
# agent last programmed it in a finished sync (its --v 2 log), BACKENDS
# "addr:port,..." in the agent's (= the module's) order or "-"; "absent".
# A mode without KPX_DP_CAP_DUMP (nftables, iptables) rewrites everything
# in an agent's first sync: what that sync does not set is gone.
agent_frontend() {
	[ -r "$AGENT_LOG" ] || { echo absent; return; }
	awk -v k="$2/${1,,}" -v dump="$(mode_is ipvs && echo 1 || echo 0)" '
	{
		p = index($0, "msg=\"")
		if (!p)
			next
		m = substr($0, p + 5)
		if (index(m, "set " k " flags=") == 1) {
			cur = m
			touched = 1
		} else if (index(m, "del " k "\"") == 1) {
			cur = "absent"
			touched = 1
		} else if (index(m, "kpx-agent ") == 1 && index(m, " starting: ") && !dump) {
			fresh = 1
			touched = 0
		} else if (index(m, "sync done\"") == 1) {
			if (fresh && !touched)
				cur = "absent"
			fresh = 0
			if (cur != "")
				last = cur
		}
	}
	END {
		if (last == "" || last == "absent") {
			print "absent"
			exit
		}
		match(last, /flags=0x[0-9a-fA-F]+/)
		f = substr(last, RSTART + 6, RLENGTH - 6)
		l = substr(last, index(last, "backends=[") + 10)
		sub(/\]"[^"]*$/, "", l)
		n = split(l, b, " ")
		out = ""
		for (i = 1; i <= n; i++) {
			sub(/@[0-9]+$/, "", b[i])
			out = out (i > 1 ? "," : "") b[i]
		}
		print f, (out == "" ? "-" : out)
	}' "$AGENT_LOG"
}

# _agent_backends PROTO VIP:PORT: as proc_backends, from agent_frontend.
_agent_backends() {
	local f b

	read -r f b < <(agent_frontend "$1" "$2")
	[ "$f" = absent ] && echo absent || echo "$b"
}
