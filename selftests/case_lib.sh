#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# case_lib.sh: helpers of the kpx_case_NN.sh selftests and the case runner
# (cases/run.sh), which run the real kpx-agent against the test API server
# loaded with a shared case's objects (testdata/cases/NN/objects.json).
# Sourced after lib.sh.
#
# Topology (lib.sh's, plus node-a's identity):
#
#   cli netns 10.0.1.2 (an external client) --veth-- node = VM root netns
#     node: kpx.ko, kpx-agent --hostname-override node-a, test API server
#           (127.0.0.1); kpx-node dummy also holds 192.0.2.11 (node-a's
#           InternalIP: NodePorts there are local); LB and external IP
#           ranges 198.51.100.0/24, 203.0.113.0/24 routed to kpx-node so
#           that node-local clients have a route
#     pods: netns with the case's endpoint IPs (pod_add), routed /32

CASES_DIR=${KPX_CASES_DIR:-$REPO/testdata/cases}
APIDIR=$SELFTESTS/apiserver
NODE_A=192.0.2.11
# The source address masqueraded traffic has at a pod: MASQUERADE takes the
# address of the node's pod-facing veth (lib.sh's link-local gateway).
MASQ4=169.254.1.1
AGENT_PID=
API_PID=

# case_objects NN: the objects.json of case NN.
case_objects() {
	[ -e "$CASES_DIR/$1/objects.json" ] && echo "$CASES_DIR/$1/objects.json"
}

# case_init NN: checks, trap, topology; sets OBJECTS.
case_init() {
	require_guest
	require_module
	require_file "$KPXCTL" "$KPX_AGENT" "$ECHO_BIN" "$CLIENT_BIN" \
		"$APIDIR/kpx-test-apiserver.py" "$APIDIR/gen-certs.sh" \
		"$APIDIR/kpx-test-apictl"
	OBJECTS=$(case_objects "$1") || skip "no objects.json for case $1 under '$CASES_DIR'"
	setup_trap 'case_stop'
	node_setup && cli_setup || skip "topology setup failed"
	ip addr add $NODE_A/32 dev kpx-node
	ip route add 198.51.100.0/24 dev kpx-node src $NODE4
	ip route add 203.0.113.0/24 dev kpx-node src $NODE4
}

# case_stop: stop the agent and the API server (then lib.sh's cleanup).
case_stop() {
	agent_stop
	if [ -n "$API_PID" ]; then
		kill "$API_PID" 2>/dev/null
		wait "$API_PID" 2>/dev/null
	fi
	if [ "$FAILS" -gt 0 ] && [ -s "$TMPD/agent.log" ]; then
		log "agent log (tail):"
		tail -n 40 "$TMPD/agent.log" | sed 's/^/#   /'
	fi
}

# api_start [FILE...]: the test API server with the case's objects (or
# FILEs); sets KUBECONFIG_F.  The certificates are made once per test.
api_start() {
	local files=("$@")

	[ ${#files[@]} -gt 0 ] || files=("$OBJECTS")
	[ -s "$TMPD/certs/client.key" ] ||
	"$APIDIR/gen-certs.sh" "$TMPD/certs" >"$TMPD/certs.log" 2>&1 || {
		cat "$TMPD/certs.log"
		skip "gen-certs.sh failed"
	}
	mkdir -p "$TMPD/state"
	python3 "$APIDIR/kpx-test-apiserver.py" --dir "$TMPD/state" --port 0 \
		--certs "$TMPD/certs" --objects "${files[@]}" 2>"$TMPD/apiserver.log" &
	API_PID=$!
	for _ in $(seq 1 150); do
		[ -s "$TMPD/state/port" ] && break
		sleep 0.2
	done
	[ -s "$TMPD/state/port" ] || { tail -n 20 "$TMPD/apiserver.log"; skip "API server did not start"; }
	KUBECONFIG_F=$TMPD/state/kubeconfig
}

# apictl ARGS...: the API server's control CLI.
apictl() { python3 "$APIDIR/kpx-test-apictl" --kubeconfig "$KUBECONFIG_F" "$@"; }

# step N: apply step N of the case; asserts apictl's status.
step() { assert_rc "apply step $1" 0 apictl step "$1"; }

# agent_start [FLAGS...]: kpx-agent as node $AGENT_NODE (default node-a),
# kube-proxy defaults (--cluster-cidr 10.244.0.0/16) plus FLAGS.
AGENT_NODE=node-a
agent_start() {
	"$KPX_AGENT" --kubeconfig "$KUBECONFIG_F" --hostname-override "$AGENT_NODE" \
		--cluster-cidr 10.244.0.0/16 --v 2 --proxy-mode "$KPX_PROXY_MODE" "$@" >>"$TMPD/agent.log" 2>&1 &
	AGENT_PID=$!
}

agent_stop() {
	[ -n "$AGENT_PID" ] || return 0
	kill -TERM "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
}

# expect_backends PROTO VIP:PORT WANT [SECONDS]: wait until the frontend's
# backends (from /proc, sorted "addr:port,...", "-" none) are WANT; assert.
expect_backends() {
	local t

	t=$(wait_proc_backends "$1" "$2" "$3" "${4:-10}")
	assert_eq "$1 $2: backends programmed" "$3" "$(proc_backends "$1" "$2")"
	[ "$t" = timeout ] || log "$1 $2 had backends '$3' after $t s"
}

# drop_flag PROTO VIP:PORT: "drop" or "reject" from the frontend's /proc
# flags (KPX_SVC_F_DROP_EMPTY = bit 0), "none" if it is absent.
drop_flag() {
	local f

	f=$(proc_svc "$1" "$2" flags)
	[[ "$f" =~ ^0x[0-9a-fA-F]+$ ]] || { echo none; return; }
	if (($f & 1)); then echo drop; else echo reject; fi
}

# expect_empty_action PROTO VIP:PORT drop|reject: what the frontend does
# when it has no backend.
expect_empty_action() {
	assert_eq "$1 $2: action without backend (drop-empty flag)" "$3" "$(drop_flag "$1" "$2")"
}

# wait_empty_action PROTO VIP:PORT drop|reject [SECONDS]: poll for it.
wait_empty_action() {
	local i

	for ((i = 0; i < ${4:-5} * 10; i++)); do
		[ "$(drop_flag "$1" "$2")" = "$3" ] && break
		sleep 0.1
	done
	expect_empty_action "$1" "$2" "$3"
}

# _uflag PROTO: kpx_client's protocol flag.
_uflag() {
	case "$1" in
	udp) echo -u ;;
	sctp) echo --sctp ;;
	esac
}

# _eflag PROTO: kpx_echo's protocol flag (SCTP: the module loaded first).
_eflag() {
	case "$1" in
	udp) echo -u ;;
	sctp) modprobe sctp 2>/dev/null; echo -s ;;
	*) echo -t ;;
	esac
}

# expect_refused NS PROTO ADDR:PORT [N [MS]]: N attempts (default 2) all
# fail with ECONNREFUSED, the slowest in under MS ms (default 100).
expect_refused() {
	local ns=$1 proto=$2 dst=$3 n=${4:-2} ms=${5:-100}

	client "$ns" -n "$n" -t 2000 $(_uflag "$proto") "$dst"
	assert_eq "$proto $dst from $ns: refused" "$n" "$(error_count ECONNREFUSED)"
	assert_lt_ms "$proto $dst from $ns: slowest refusal" "$ms" "$(summary_field max_ms)"
	client_show_if_failed
}

# expect_timeout NS PROTO ADDR:PORT [N] [TIMEOUT_MS]: every attempt gets no
# answer and no refusal (dropped): each times out.
expect_timeout() {
	local ns=$1 proto=$2 dst=$3 n=${4:-2} tmo=${5:-500}

	client "$ns" -n "$n" -t "$tmo" $(_uflag "$proto") "$dst"
	assert_eq "$proto $dst from $ns: answered" 0 "$(summary_field ok)"
	assert_eq "$proto $dst from $ns: refused" 0 "$(error_count ECONNREFUSED)"
	assert_eq "$proto $dst from $ns: timed out" "$n" "$(summary_field failed)"
	client_show_if_failed
}

# expect_answered NS PROTO ADDR:PORT N BACKENDS [PEERS]: N attempts all
# answered, by exactly BACKENDS ("addr:port,..." sorted), and (if given)
# the backends saw exactly the source addresses PEERS (sorted, comma
# separated, without ports).
expect_answered() {
	local ns=$1 proto=$2 dst=$3 n=$4 want=$5 peers=${6:-}

	client_all "$want" "$ns" -n "$n" -t 2000 $(_uflag "$proto") "$dst"
	assert_eq "$proto $dst from $ns: answered" "$n" "$(summary_field ok)"
	assert_eq "$proto $dst from $ns: backends answering" "$want" "$(answer_field 2)"
	[ -z "$peers" ] ||
		assert_eq "$proto $dst from $ns: source address seen by the backend" \
			"$peers" "$(peer_addrs)"
	client_show_if_failed
}

# udp_flow_start NS NAME SECONDS EVERY_MS ADDR:PORT: in the background,
# tools/udpflow.py in NS: one connected UDP socket (one source port for its
# whole life, as a stub resolver or a statsd client) sends a datagram every
# EVERY_MS ms for SECONDS s.  Its lines "EPOCH_MS TARGET RESULT" (RESULT =
# the answering echo's ID, "refused" or "timeout") go to $TMPD/flow-NAME.out.
udp_flow_start() {
	local x=()

	[ "$1" = node ] || x=(ip netns exec "$1")
	# exec: $! is python's own PID, so that kill "$FLOW_PID_NAME" stops it
	(exec "${x[@]}" python3 "$SELFTESTS/tools/udpflow.py" "$3" "$4" "$5" \
		>"$TMPD/flow-$2.out" 2>&1) &
	PIDS+=($!)
	eval "FLOW_PID_$2=$!"
}

# udp_flow_wait NAME: wait for flow NAME to end.
udp_flow_wait() {
	local v="FLOW_PID_$1"

	[ -z "${!v:-}" ] || wait "${!v}" 2>/dev/null
}

# udp_flow_stop NAME: stop flow NAME now.
udp_flow_stop() {
	local v="FLOW_PID_$1"

	[ -z "${!v:-}" ] || kill "${!v}" 2>/dev/null
}

# flow_count NAME RESULT [FROM_MS [TO_MS]]: datagrams of flow NAME sent in
# [FROM_MS, TO_MS) (epoch ms) with RESULT ("" = any).
flow_count() {
	awk -v r="$2" -v a="${3:-0}" -v b="${4:-99999999999999}" \
		'$1 >= a && $1 < b && (r == "" || $3 == r) { n++ } END { print n + 0 }' \
		"$TMPD/flow-$1.out"
}

# flow_first NAME RESULT [FROM_MS]: epoch ms of the first datagram sent at
# or after FROM_MS with RESULT ("none" if none).
flow_first() {
	awk -v r="$2" -v a="${3:-0}" \
		'$1 >= a && $3 == r { print $1; f = 1; exit } END { if (!f) print "none" }' \
		"$TMPD/flow-$1.out"
}

# flow_results NAME [FROM_MS [TO_MS]]: the distinct results in the window,
# sorted, comma separated.
flow_results() {
	awk -v a="${2:-0}" -v b="${3:-99999999999999}" \
		'$1 >= a && $1 < b { print $3 }' "$TMPD/flow-$1.out" | sort -u | paste -sd, -
}

# now_ms: the wall clock in epoch milliseconds (as the flow lines).
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# ct_count PATTERN: conntrack entries matching the extended regex PATTERN,
# from a ctnetlink dump ("conntrack -L"; the lines read as in
# /proc/net/nf_conntrack without the family columns).  Not the /proc file:
# its reader resumes each chunk by counting entries from the table's start,
# so entries that expire meanwhile (a former test's TIME_WAITs) make it
# skip live ones (kpx_ctclean missed its own flow's entry that way); a
# ctnetlink dump resumes after the last entry it sent.  "conntrack-failed"
# (never a count) when the dump fails.
ct_count() {
	local l

	l=$(conntrack -L 2>/dev/null) || { echo conntrack-failed; return; }
	grep -cE "$1" <<<"$l"
}

# peer_addrs: the distinct source addresses (no port) the backends saw in
# the last client run, sorted, comma separated.
peer_addrs() {
	local -A seen=()
	local line w p

	for line in "${CL_ANS[@]}"; do
		read -r -a w <<<"$line"
		p=${w[2]#peer=}
		p=${p%:*}
		p=${p#[}
		p=${p%]}
		seen[$p]=1
	done
	local out
	out=$(sorted_words "${!seen[@]}")
	echo "${out// /,}"
}
