#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# agent_lib.sh: the test API server and kpx-agent of the kpx_agent_*.sh
# selftests.  Sourced after lib.sh.  The names do not clash with
# case_lib.sh's (api_start, agent_start, agent_stop).
#
#   agent_require [FILE...]        guest, module, binaries, API server files
#   web_objects VIP FILE           Service default/web VIP:80/tcp -> pods
#                                  10.244.1.2, 10.244.2.2 :8080 (pods_setup 2)
#   kpx_api_start SERVER_ARGS...   gen-certs.sh + kpx-test-apiserver.py
#   kpx_apictl ARGS...             kpx-test-apictl against it
#   kpx_agent_start FLAGS...       kpx-agent --kubeconfig $KUBECONFIG_F FLAGS
#   kpx_agent_stop                 SIGTERM, wait; AGENT_STATUS = exit status
#   kpx_agent_syncs                "sync done" lines logged so far
#   wait_served SECONDS VIP:PORT WANT  until 8 fresh TCP connections from
#                                  netns cli are all answered, by the
#                                  backends WANT (answer_field 2's form)
#   agent_lib_stop                 both stopped (for setup_trap)
#   save_values FILE...            FILEs' contents (sysctls) written back
#                                  by restore_saved
#   put_file SRC DST               DST is SRC until restore_saved
#   restore_saved                  both undone (in the test's trap)
#   assert_ct LABEL MAX HASH EST CW  the conntrack sysctls now; CT_WANT_MAX
#                                  is kube-proxy's nf_conntrack_max here

APIDIR=$SELFTESTS/apiserver
API_PID=
AGENT_PID=
AGENT_STATUS=
KUBECONFIG_F=

# agent_require [FILE...]: skip unless in the guest with the module loaded
# and the binaries and API server files (and FILEs) present.
agent_require() {
	require_guest
	require_module
	require_file "$KPXCTL" "$KPX_AGENT" "$ECHO_BIN" "$CLIENT_BIN" \
		"$APIDIR/kpx-test-apiserver.py" "$APIDIR/gen-certs.sh" \
		"$APIDIR/kpx-test-apictl" "$@"
}

# web_objects VIP FILE: write a v1 List with Service default/web
# (clusterIP VIP, port 80/TCP "http", targetPort 8080) and its
# EndpointSlice web-1 with the ready endpoints 10.244.1.2 and 10.244.2.2
# (lib.sh's pods_setup 2 addresses), and the Node node-a (InternalIP
# 192.0.2.11: the agent waits for its Node at start) into FILE.
web_objects() {
	cat >"$2" <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
  "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.11"}]}},
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
  "spec": {"clusterIP": "$1", "clusterIPs": ["$1"], "ipFamilies": ["IPv4"],
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "web-1", "namespace": "default",
               "labels": {"kubernetes.io/service-name": "web"}},
  "addressType": "IPv4", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
  "endpoints": [{"addresses": ["10.244.1.2"], "conditions": {"ready": true}},
                {"addresses": ["10.244.2.2"], "conditions": {"ready": true}}]}]}
EOF
}

# kpx_api_start SERVER_ARGS...: certificates in $TMPD/certs, then the test
# API server on 127.0.0.1 (any port) with state in $TMPD/state and
# SERVER_ARGS (e.g. --objects FILE... --bookmark-interval 1); its log is
# $TMPD/apiserver.log.  Sets API_PID, KUBECONFIG_F; skips the test if it
# does not start within 30 s.
kpx_api_start() {
	"$APIDIR/gen-certs.sh" "$TMPD/certs" >"$TMPD/certs.log" 2>&1 || {
		sed 's/^/#   /' "$TMPD/certs.log"
		skip "gen-certs.sh failed"
	}
	mkdir -p "$TMPD/state"
	python3 "$APIDIR/kpx-test-apiserver.py" --dir "$TMPD/state" --port 0 \
		--certs "$TMPD/certs" "$@" 2>"$TMPD/apiserver.log" &
	API_PID=$!
	for _ in $(seq 1 150); do
		[ -s "$TMPD/state/port" ] && break
		sleep 0.2
	done
	[ -s "$TMPD/state/port" ] || {
		tail -n 20 "$TMPD/apiserver.log" | sed 's/^/#   /'
		skip "API server did not start"
	}
	KUBECONFIG_F=$TMPD/state/kubeconfig
}

# kpx_apictl ARGS...: the API server's control CLI (apply, delete, step,
# compact, drop-watches, stats).
kpx_apictl() {
	python3 "$APIDIR/kpx-test-apictl" --kubeconfig "$TMPD/state/kubeconfig" "$@"
}

# kpx_agent_start FLAGS...: kpx-agent --kubeconfig $KUBECONFIG_F --v 2 FLAGS
# in the background in the mode under test (--proxy-mode $KPX_PROXY_MODE,
# mode_lib.sh; a --proxy-mode or --v in FLAGS wins: the last one counts),
# output appended to $TMPD/agent.log; sets AGENT_PID.  --v 2: the per-sync
# "sync done" line and each change, as kube-proxy's V(2).
kpx_agent_start() {
	"$KPX_AGENT" --kubeconfig "$KUBECONFIG_F" --proxy-mode "${KPX_PROXY_MODE:-kpx}" --v 2 \
		"$@" >>"$TMPD/agent.log" 2>&1 &
	AGENT_PID=$!
}

# kpx_agent_stop: SIGTERM to the agent, wait; AGENT_STATUS = its exit status.
kpx_agent_stop() {
	[ -n "$AGENT_PID" ] || return 0
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID"
	AGENT_STATUS=$?
	AGENT_PID=
}

# kpx_agent_syncs: the number of "sync done" lines in $TMPD/agent.log.
kpx_agent_syncs() { grep -c '] "sync done"' "$TMPD/agent.log"; }

# holds_connected N: waits (10 s at most) until the kpx_client --hold runs
# writing $TMPD/hold.* have all N printed "hold connected", and asserts it.
holds_connected() {
	local _

	for _ in $(seq 1 100); do
		[ "$(cat "$TMPD"/hold.* 2>/dev/null | grep -c '^hold connected')" = "$1" ] && break
		sleep 0.1
	done
	assert_eq "connections held open" "$1" "$(cat "$TMPD"/hold.* | grep -c '^hold connected')"
}

# wait_served SECONDS VIP:PORT WANT: until, within about SECONDS tries a
# second apart, 8 fresh TCP connections from netns cli to VIP:PORT are all
# answered and the backends that answered are WANT ("addr:port,..." as
# answer_field 2 prints them); 1 if never (the last try's output is kept).
wait_served() {
	local i

	for ((i = 0; i < $1; i++)); do
		client cli -n 8 -t 1000 "$2"
		[ "$(summary_field ok)" = 8 ] && [ "$(answer_field 2)" = "$3" ] && return 0
		sleep 1
	done
	return 1
}

# agent_lib_stop: stop the agent and the API server.
agent_lib_stop() {
	kpx_agent_stop
	if [ -n "$API_PID" ]; then
		kill "$API_PID" 2>/dev/null
		wait "$API_PID" 2>/dev/null
		API_PID=
	fi
}

# save_values FILE...: remember each FILE's value (a sysctl or module
# parameter) for restore_saved.
declare -A SAVED=()
save_values() {
	local f

	for f; do
		SAVED[$f]=$(cat "$f")
	done
}

# put_file SRC DST: DST (in the guest's root) is SRC until restore_saved
# (the former DST back, or none).
RESTORE_FILES=()
put_file() {
	if [ -e "$2" ]; then
		mkdir -p "$TMPD/saved$(dirname "$2")"
		cp -a "$2" "$TMPD/saved/$2"
	fi
	RESTORE_FILES+=("$2")
	mkdir -p "$(dirname "$2")"
	cp "$1" "$2"
}

# restore_saved: the values save_values kept written back, the files
# put_file replaced restored (or removed).
restore_saved() {
	local f

	for f in "${!SAVED[@]}"; do
		echo "${SAVED[$f]}" >"$f" 2>/dev/null
	done
	for f in "${RESTORE_FILES[@]}"; do
		if [ -e "$TMPD/saved/$f" ]; then
			cp -a "$TMPD/saved/$f" "$f"
		else
			rm -f "$f"
		fi
	done
}

# The conntrack settings kube-proxy's start-up writes (agent/config/
# ctsysctl.c): CT_WANT_MAX = max(--conntrack-max-per-core 32768 x CPUs,
# --conntrack-min 131072).
NF=/proc/sys/net/netfilter
HASH=/sys/module/nf_conntrack/parameters/hashsize
CT_WANT_MAX=$((32768 * $(nproc)))
[ $CT_WANT_MAX -ge 131072 ] || CT_WANT_MAX=131072

# assert_ct LABEL MAX HASH EST CW: nf_conntrack_max, the hash size and the
# TCP established and close-wait timeouts (s) now.
assert_ct() {
	assert_eq "$1: nf_conntrack_max" "$2" "$(cat $NF/nf_conntrack_max)"
	assert_eq "$1: hashsize" "$3" "$(cat $HASH)"
	assert_eq "$1: tcp_timeout_established" "$4" "$(cat $NF/nf_conntrack_tcp_timeout_established)"
	assert_eq "$1: tcp_timeout_close_wait" "$5" "$(cat $NF/nf_conntrack_tcp_timeout_close_wait)"
}
