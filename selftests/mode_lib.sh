# SPDX-License-Identifier: GPL-2.0-only
#
# mode_lib.sh: the proxy mode under test (sourced by lib.sh).  run_guest.sh
# runs the suite with KPX_PROXY_MODE = kpx (default: the module), nftables,
# iptables or ipvs:
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
# (KPX_SVC_A_SCHEDULER values other than random), clusterip-reject
# (KPX_SVC_F_CLUSTER_IP: undefined ports of a ClusterIP refused) and
# clusterip-host-ports (a host daemon does not answer on a ClusterIP) and
# etp-local-shortcut (case 04: in-cluster clients of an eTP Local LB
# IP / NodePort served by any endpoint) and affinity-idle-expiry
# (case 03: a ClientIP affinity entry expires timeoutSeconds after the
# client's last connection) and invalid-drop (case 30: a forwarded reply
# segment of a Service flow that conntrack marks INVALID is dropped, not
# left untranslated), invalid-drop-local (the same for a reply sent by the
# node itself) and invalid-scoped (an INVALID packet of a flow that is no
# Service's is forwarded as without the proxy).
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
	["iptables clusterip-reject"]="undefined ClusterIP ports are not rejected in iptables mode, as in kube-proxy's (its nftables mode and ipvs mode's KUBE-IPVS-FILTER do)"
	["ipvs affinity-idle-expiry"]="IPVS keeps a persistence template while a connection it placed is in its table, TIME_WAIT included (2 min, not settable): ClientIP affinity outlives timeoutSeconds by up to 2 min after the last connection, as in kube-proxy's ipvs mode"
	["nftables etp-local-shortcut"]="in-cluster clients of an eTP Local LB IP/NodePort reach any endpoint only in kpx and iptables modes"
	["ipvs etp-local-shortcut"]="in-cluster clients of an eTP Local LB IP/NodePort reach any endpoint only in kpx and iptables modes"
	["nftables invalid-drop"]="kube-proxy's nftables mode installs no drop of conntrack INVALID packets: a reply segment conntrack marks INVALID leaves untranslated; --conntrack-tcp-be-liberal avoids the out-of-window case"
	["nftables invalid-drop-local"]="kube-proxy's nftables mode installs no drop of conntrack INVALID packets"
	["iptables invalid-drop-local"]="the iptables mode drops conntrack INVALID packets in the forward path only (KPX-FORWARD, as kube-proxy's KUBE-FORWARD): a reply the node itself receives or sends is not covered"
	["ipvs invalid-drop-local"]="the ipvs mode drops conntrack INVALID packets in the forward path only (KPX-IPVS-FORWARD, as kube-proxy's KUBE-FORWARD): a reply the node itself receives or sends is not covered"
	["nftables invalid-drop-masq"]="kube-proxy's nftables mode installs no drop of conntrack INVALID packets"
	["iptables invalid-drop-masq"]="a masqueraded flow's reply is addressed to the node: an INVALID segment of it is not un-NATed, so it is delivered to the node (INPUT), not forwarded, and the forward-path drop (KPX-FORWARD, as kube-proxy's KUBE-FORWARD) never sees it; the node answers it with a RST that resets the backend, as with kube-proxy"
	["ipvs invalid-drop-masq"]="a masqueraded flow's reply is addressed to the node: an INVALID segment of it is not un-NATed, so it is delivered to the node (INPUT), not forwarded, and the forward-path drop (KPX-IPVS-FORWARD, as kube-proxy's KUBE-FORWARD) never sees it; the node answers it with a RST that resets the backend, as with kube-proxy"
	["iptables invalid-scoped"]="the iptables mode's forward-path drop (KPX-FORWARD, as kube-proxy's KUBE-FORWARD) takes every forwarded INVALID packet, Service traffic or not: conntrack attaches no entry to an INVALID packet, so a rule cannot tell whose flow it is"
	["ipvs invalid-scoped"]="the ipvs mode's forward-path drop (KPX-IPVS-FORWARD, as kube-proxy's KUBE-FORWARD) takes every forwarded INVALID packet, Service traffic or not: conntrack attaches no entry to an INVALID packet, so a rule cannot tell whose flow it is"
)

# require_feature FEATURE...: skip when the mode under test lacks one.
require_feature() {
	local f

	for f; do
		[ -z "${MODE_LACKS["$KPX_PROXY_MODE $f"]:-}" ] ||
			skip "$f: ${MODE_LACKS["$KPX_PROXY_MODE $f"]}"
	done
}

# lacks_feature FEATURE: true when this proxy mode lacks FEATURE; the part
# of the test it guards is then skipped, logged with the reason and added to
# the skip list.
lacks_feature() {
	local why=${MODE_LACKS["$KPX_PROXY_MODE $1"]:-}

	[ -n "$why" ] || return 1
	MODE_SKIPS=$((MODE_SKIPS + 1))
	log "skip: $1: $why"
	[ -z "$KPX_SKIP_LIST" ] || echo "$TEST_NAME: $1 ($why)" >>"$KPX_SKIP_LIST"
	return 0
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

# agent_syncs: the finished syncs in the agent's log so far (the log is
# appended to across agent restarts: count before a restart, then
# wait_agent_synced COUNT+1 for the new agent's first sync).
agent_syncs() { grep -c '] "sync done"' "$AGENT_LOG" 2>/dev/null; }

# wait_agent_synced [N]: wait until the agent's log ($AGENT_LOG) shows N
# (default 1) finished syncs ("sync done"), however long the agent takes to
# start and list under a loaded TCG host; prints the seconds waited, or
# "agent exited" (the agent, $AGENT_PID, died) or "timeout" (600 s, a
# bound that is only there so that a hung agent does not hang the test:
# the runner's per-test timeout is lower by default).  Every proxy mode.
wait_agent_synced() {
	local n=${1:-1} t0=$SECONDS

	until [ "$(agent_syncs)" -ge "$n" ]; do
		if [ -n "${AGENT_PID:-}" ] && ! kill -0 "$AGENT_PID" 2>/dev/null; then
			echo "agent exited"
			return 1
		fi
		((SECONDS - t0 < 600)) || { echo timeout; return 1; }
		sleep 0.2
	done
	echo $((SECONDS - t0))
}

# expect_node_refused PROTO ADDR:PORT [N]: case_lib.sh's expect_refused
# from the node itself (N attempts, default 1).  Outside kpx mode a UDP
# datagram the node sends to a frontend that rejects it (no endpoint,
# undefined port) is rejected in the output hook before it leaves: send()
# fails with EPERM instead of an ICMP port unreachable arriving
# (ECONNREFUSED); kube-proxy's nftables and iptables modes behave the same.
# Either counts as refused there; in kpx mode only ECONNREFUSED does.
expect_node_refused() {
	local proto=$1 dst=$2 n=${3:-1} got

	if mode_is kpx || [ "$proto" != udp ]; then
		expect_refused node "$proto" "$dst" "$n"
		return
	fi
	client node -n "$n" -t 2000 -u "$dst"
	got=$(($(error_count ECONNREFUSED) + $(error_count EPERM)))
	assert_eq "$proto $dst from node: refused (ECONNREFUSED, or EPERM on send: $KPX_PROXY_MODE mode rejects node-originated UDP in the output hook)" "$n" "$got"
	assert_lt_ms "$proto $dst from node: slowest refusal" 100 "$(summary_field max_ms)"
	client_show_if_failed
}

# skip_assert DESC REASON: the assertion DESC does not apply in this mode
# (REASON, one line): logged and listed in the run's skip list.
skip_assert() {
	MODE_SKIPS=$((MODE_SKIPS + 1))
	log "skip: $1: $2"
	[ -z "$KPX_SKIP_LIST" ] ||
		echo "$TEST_NAME: $1 ($2)" >>"$KPX_SKIP_LIST"
}

# agent_frontend PROTO VIP:PORT: "FLAGS BACKENDS" of the frontend as the
# agent last programmed it in a finished sync (its --v 2 log), BACKENDS
# "addr:port,..." in the agent's (= the module's) order or "-"; "absent".
# A long backend list continues on "set+ KEY backends=[...]" lines
# (agent/sync/sync.c log_op).  A mode without KPX_DP_CAP_DUMP (nftables,
# iptables) rewrites everything in an agent's first sync: what that sync
# does not set is gone.
agent_frontend() {
	[ -r "$AGENT_LOG" ] || { echo absent; return; }
	awk -v k="$2/${1,,}" -v dump="$(mode_is ipvs && echo 1 || echo 0)" '
	# the "[...]" list of a set or set+ message m, as " a@w b@w"
	function blist(m,   l) {
		l = substr(m, index(m, "backends=[") + 10)
		sub(/\]"[^"]*$/, "", l)
		return l == "" ? "" : " " l
	}
	{
		p = index($0, "] \"")
		if (!p)
			next
		m = substr($0, p + 3)
		if (index(m, "set " k " flags=") == 1) {
			match(m, /flags=0x[0-9a-fA-F]+/)
			cf = substr(m, RSTART + 6, RLENGTH - 6)
			cl = blist(m)
			touched = 1
		} else if (index(m, "set+ " k " backends=") == 1) {
			cl = cl blist(m)
		} else if (index(m, "del " k "\"") == 1) {
			cf = "absent"
			touched = 1
		} else if (index(m, "kpx-agent ") == 1 && index(m, " starting: ") && !dump) {
			fresh = 1
			touched = 0
		} else if (index(m, "sync done\"") == 1) {
			if (fresh && !touched)
				cf = "absent"
			fresh = 0
			if (cf != "") {
				lf = cf
				ll = cl
			}
		}
	}
	END {
		if (lf == "" || lf == "absent") {
			print "absent"
			exit
		}
		n = split(ll, b, " ")
		out = ""
		for (i = 1; i <= n; i++) {
			sub(/@[0-9]+$/, "", b[i])
			out = out (i > 1 ? "," : "") b[i]
		}
		print lf, (out == "" ? "-" : out)
	}' "$AGENT_LOG"
}

# _agent_backends PROTO VIP:PORT: as proc_backends, from agent_frontend.
_agent_backends() {
	local f b

	read -r f b < <(agent_frontend "$1" "$2")
	[ "$f" = absent ] && echo absent || echo "$b"
}
