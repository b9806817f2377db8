#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# cases/run.sh [NN...]: the table-driven runner of the shared cases.  For
# each case NN (default: every testdata/cases/NN with an expect.json but
# those in KPX_CASES_EXCEPT, or those in KPX_CASES) it builds the case's pods, starts the test API server
# with testdata/cases/NN/objects.json and the real kpx-agent in the proxy
# mode under test, and walks the phases of testdata/cases/NN/expect.json
# (format: cases/README.md): restart the agent as another node or with
# other flags, apply steps or files, delete objects, then assert each
# frontend's backends and action without backend, each probe's answers
# (which backends, which source address the backend saw) or verdict
# (refused at once, or dropped), the module's counters, and the node's
# conntrack table (filled by tools/kpx_ctfill, its entries counted, its
# statistics, sysctls and the agent's view of them).  The same
# expect.json is asserted against the model by agent/tests/test_model_cases.
# One topology, one certificate set and one process for all cases; each
# case gets its own pods, API server and agent.  Sourced helpers: lib.sh,
# case_lib.sh.
#
#   cli 10.0.1.2 --veth-- node (kpx.ko, kpx-agent as the phase's node, API
#                               server; kpx-node 192.0.2.11, 192.0.2.12)
#                           `-- veth -- the case's pods (expect.json "pods")
. "$(dirname "$0")/../lib.sh"
. "$SELFTESTS/case_lib.sh"
TEST_NAME=${KPX_CASES_NAME:-kpx_cases}
# every probe reads kpx_client --json (lib.sh: client, parse_client_json)
CLIENT_JSON=1

# expect_lines FILE: expect.json as one line per row, fields separated by
# $US (ASCII unit separator), one jq run per case (an exec costs up to 1 s
# under TCG).
US=$'\x1f'
expect_lines() {
	jq -r '
	def row: map(tostring) | join("\u001f");
	def words: . // [] | join(" ");
	def list: . // [] | join(",");
	# a row for some proxy modes only ("modes"), or not for some ("not_modes")
	def inmode: (.modes == null or (.modes | index($mode))) and
		((.not_modes // []) | index($mode) | not);
	((.api_objects // [])[] | ["api", .] | row),
	((.pods // [])[] as $p |
		(["pod", $p.name, ($p.ip | list)] | row),
		(($p.echo // [])[] | ["echo", $p.name, .protocol, (.ident // $p.name), (.listen | words)] | row)),
	(.phases[] |
		# deltas over the whole phase: marked before its agent operation
		(if .deltas_since == "phase" and (.deltas // []) != [] then ["mark"] | row else empty end),
		(["phase", .desc, (.node // ""), (if .flags == null then "=" else (.flags | words) end),
		  (.step // ""), (.restore | list), (.apply | words), (.delete | list),
		  (if .step_first then "1" else "" end), (.agent // ""), (.kill_ms // "")] | row),
		(.drop_pinned // empty |
			["droppin", .pin, .restore, .protocol, .destination] | row),
		(.dmesg_clean // empty | ["dmesgmark", .] | row),
		(.module // empty | ["module", .] | row),
		(.set_sysctl // {} | to_entries | map("\(.key)=\(.value)") | join(" ") |
			if . == "" then empty else ["setsysctl", .] | row end),
		((.addrs // [])[] | ["addr", .] | row),
		(.pause_s // empty | ["pause", .] | row),
		(if .agent_running then ["running"] | row else empty end),
		(.log_clean // empty | ["logclean", .] | row),
		((.frontends // [])[] | select(inmode) |
			["fe", .protocol, .destination,
			 (if .absent then "absent" elif (.backends | length) == 0 then "-" else (.backends | list) end),
			 (.empty // ""), (.wait // ""), (.masquerade // ""), (.within_ms // "")] | row),
		(.settle_s // empty | ["settle", .] | row),
		(.sync_sets // empty | ["syncsets", .] | row),
		((.sysctl // [])[] |
			["sysctl", .name, (.value // "" | tostring), (.min // "" | tostring)] | row),
		((.ipvs_services // [])[] | select(inmode) |
			["ipvs", .protocol, .destination, (if .present then "present" else "absent" end)] | row),
		((.log_match // [])[] | select(inmode) |
			["logmatch", .pattern, (.wait // ""), (.count // "" | tostring)] | row),
		((.flag_bits // [])[] | ["fbits", .protocol, .destination, .mask, .value] | row),
		((.listed // [])[] |
			["listed", .protocol, .destination, (.flags // "" | if . == "" then . else tojson end),
			 (if has("cluster") then (.cluster // "null") else "" end)] | row),
		((.hold // [])[] |
			["hold", .name, .from, .destination, (.ms // 10000), (.every_ms // 200),
			 (.timeout_ms // 1000), (.ident // ""), (.protocol // "tcp")] | row),
		((.flows // [])[] |
			["flow", .name, .from, .destination, (.s // 60), (.every_ms // 200),
			 (.wait_for // ""), (.wait_count // 5)] | row),
		((.flow_check // [])[] |
			["flowck", .name, (.since // "phase"), (.first // ""), (.first_within_ms // ""),
			 (.after_ms // 0), (.sent_min // ""), (.results // ""),
			 ([(.min // {} | to_entries[] | "min:\(.key)=\(.value)"),
			   (.max // {} | to_entries[] | "max:\(.key)=\(.value)"),
			   (.counters // {} | to_entries[] | "counter:\(.key)=\(.value)")] | join(" ")),
			 (if .stop then "1" else "" end),
			 (.rx_max // {} | to_entries | map("\(.key)=\(.value)") | join(" "))] | row),
		((.ct_fill // [])[] |
			["ctfill", .source, .destination, (.backend // ""), .count, (.timeout_s // 600),
			 (if .assured then "1" else "" end), (if .full then "1" else "" end),
			 (if .delete then "1" else "" end)] | row),
		((.until // [])[] |
			["until", .from, .protocol, .destination, (.verdict // "answered"), (.tries // 50),
			 (.timeout_ms // 200)] | row),
		(if (.deltas // []) != [] and .deltas_since != "phase" then ["mark"] | row else empty end),
		(.churn // empty |
			["churn", .apply, .restore, (.times // 3), (.every_s // 2)] | row),
		((.soak // [])[] |
			["soak", .from, .protocol, .destination, .duration_ms, (.timeout_ms // 200),
			 (.min_attempts // 1), (.verdict // "dropped"), (.requires // "")] | row),
		(if .churn then ["churn_end"] | row else empty end),
		((.flood // [])[] | ["flood", .from, .destination, .count] | row),
		((.probes // [])[] |
			["probe", .from, .protocol, .destination, (.count // 2), (.backends | list),
			 ((.mode_verdict // {})[$mode] // .verdict // "answered"), (.source // ""),
			 (.timeout_ms // ""),
			 (.counters // {} | to_entries | map("\(.key)=\(.value)") | join(" ")),
			 (.never | words), (.requires // ""), (.interval_ms // ""),
			 (.pin // ""), (.pinned // ""), (.not_pinned // ""), (.backend_match // ""),
			 (.distinct_min // ""), (.distinct_requires // ""),
			 (.spread.backends // ""), (.spread.chi2_max // "")] | row),
		((.pins_distinct // [])[] | ["pins", (.pins | words), .min] | row),
		((.deltas // [])[] |
			["delta", (.stat // ""), (.protocol // ""), (.destination // ""), (.backends | list),
			 (.field // "conns"), .delta, (.requires // "")] | row),
		((.health // [])[] |
			["health", .address, .status, (.service // ""), (.local_endpoints // "" | tostring)] | row),
		((.conntrack // [])[] |
			["ct", (.desc // .match), .match, (.count // ""), (.min // ""), (.wait // "")] | row),
		((.ct_stats // [])[] |
			["ctstat", .name, (.min // "" | tostring), (.max // "" | tostring)] | row),
		((.metrics // [])[] | ["metric", .name, (.ct_stat // "")] | row),
		(.agent_peak_rss_mib // empty | ["peakrss", .] | row),
		((.invalid // [])[] | select(inmode) |
			["invalid", .from, .destination, (.stray // "dropped"),
			 (.counters // {} | to_entries | map("\(.key)=\(.value)") | join(" ")),
			 (.requires // ""), (.zone // "" | tostring)] | row),
		(.neighbour_loopback // empty |
			["neighbour", .destination, (.count // 2), (.timeout_ms // 1000)] | row),
		((.hold_end // [])[] | ["hold_end", .name, (if .stop then "1" else "" end)] | row),
		(.dmesg_clean // empty | ["dmesgck", .] | row),
		((.listeners // [])[] | select(inmode) |
			["listen", .port, .count, (.family // "")] | row),
		((.after // [])[] |
			["after", .protocol, .destination, (.nbackends // ""), (.backend // ""),
			 (.conns_min // "")] | row))
	' --arg mode "$KPX_PROXY_MODE" "$1"
}

# src_addr FROM: the address a client in FROM has ("node": the address a
# pod sees for the node, the pod veths' gateway).
declare -A POD_IP POD_IP6
src_addr() {
	case "$1" in
	cli) echo "$CLI4" ;;
	node) echo "$MASQ4" ;;
	*) echo "${POD_IP[$1]}" ;;
	esac
}

# src_addr6 FROM: the IPv6 address a client in FROM has, for an IPv6
# destination.
src_addr6() {
	case "$1" in
	cli) echo "$CLI6" ;;
	*) echo "${POD_IP6[$1]:-}" ;;
	esac
}

# pod_setup NAME ADDR...: pod_add; a pod with many addresses (an endpoint
# farm) gets them and their routes in one ip -batch each (IPv4).
pod_setup() {
	local name=$1 a

	shift
	[ $# -gt 8 ] || { pod_add "$name" "$@"; return; }
	pod_add "$name" || return 1
	for a; do
		echo "route add $a/32 dev v-$name src $NODE4"
	done >"$TMPD/node.batch"
	for a; do
		echo "addr add $a/32 dev eth0"
	done >"$TMPD/pod.batch"
	ip -batch "$TMPD/node.batch" && ip -n "$name" -batch "$TMPD/pod.batch"
}

# restart_agent NODE FLAGS: the agent as NODE with FLAGS (space separated),
# waiting for its first sync (until then the node keeps the former
# agent's state).
CUR_NODE= CUR_FLAGS=
restart_agent() {
	local n

	n=$(agent_syncs)
	agent_stop
	AGENT_NODE=$1
	CUR_NODE=$1 CUR_FLAGS=$2
	# shellcheck disable=SC2086
	agent_start $2
	log "agent as $1${2:+ ($2)}: first sync after $(wait_agent_synced $((${n:-0} + 1))) s"
}

# masq_flag PROTO VIP:PORT: "always" (KPX_SVC_F_MASQ = bit 2),
# "off-cluster" (KPX_SVC_F_MASQ_NONLOCAL = bit 1) or "never" from the
# frontend's flags, "none" if it is absent.
masq_flag() {
	local f

	f=$(proc_svc "$1" "$2" flags)
	[[ "$f" =~ ^0x[0-9a-fA-F]+$ ]] || { echo none; return; }
	if (($f & 4)); then echo always; elif (($f & 2)); then echo off-cluster; else echo never; fi
}

# check_fe PROTO DST WANT EMPTY WAIT MASQ: a frontend's backends (polled up
# to WAIT s), its action without backend (polled up to 5 s) and its
# masquerade flags.
check_fe() {
	expect_backends "$1" "$2" "$3" "${5:-10}"
	[ -z "$4" ] || wait_empty_action "$1" "$2" "$4"
	[ -z "${6:-}" ] || assert_eq "$1 $2: masquerades (flags)" "$6" "$(masq_flag "$1" "$2")"
}

# check_source FROM PROTO DST SOURCE: the source address the backends saw
# in the last client run: "kept" (the client's own), "masqueraded" (the
# node's), "hairpin" (the node's on connections the client pod answered
# itself, its own on the others), or an address: exactly that one.
check_source() {
	local from=$1 what="$2 $3 from $1" line w self_bad=0 other_bad=0 self=0 other=0
	local own

	own=$(src_addr "$from")
	[[ "$3" != \[* ]] || own=$(src_addr6 "$from")
	case "$4" in
	kept) assert_eq "$what: source address seen by the backend" "$own" "$(peer_addrs)" ;;
	masqueraded)
		if [[ "$3" == \[* ]]; then
			# IPv6: the address the kernel's masquerade chose
			# (nf_nat_masquerade_ipv6: source address selection over
			# every interface), one of the node's own, never the client's
			w=$(peer_addrs)
			assert_eq "$what: masqueraded to one address of the node (not the client's $own)" \
				"$w local" "$w $(ip -6 route show table local to "$w" 2>/dev/null | awk '{print $1}')"
		else
			assert_eq "$what: source address seen by the backend" "$MASQ4" "$(peer_addrs)"
		fi ;;
	*[.:]*) assert_eq "$what: source address seen by the backend" "$4" "$(peer_addrs)" ;;
	hairpin)
		for line in "${CL_ANS[@]}"; do
			read -r -a w <<<"$line"
			if [ "${w[0]}" = "$from" ]; then
				self=$((self + 1))
				[[ "${w[2]}" == peer=$MASQ4:* ]] || self_bad=$((self_bad + 1))
			else
				other=$((other + 1))
				[[ "${w[2]}" == peer=$own:* ]] || other_bad=$((other_bad + 1))
			fi
		done
		log "hairpin $3: $self to itself, $other to another pod"
		assert_eq "hairpin $3: connections to itself not from $MASQ4" 0 "$self_bad"
		[ "$other" = 0 ] ||
			assert_eq "hairpin $3: connections to another pod not from $own" 0 "$other_bad"
		;;
	esac
}

# probe FROM PROTO DST COUNT BACKENDS VERDICT SOURCE TIMEOUT COUNTERS NEVER
# REQUIRES INTERVAL_MS PIN PINNED NOT_PINNED BACKEND_MATCH DISTINCT_MIN
# DISTINCT_REQUIRES: the attempts INTERVAL_MS apart when given; then
# pin_check.
probe() {
	local from=$1 proto=$2 dst=$3 n=$4 want=$5 verdict=$6 src=$7 tmo=$8
	local counters=$9 never=${10} req=${11} ivl=${12:+-i ${12}} kv id

	if [ -n "$req" ] && [ -n "${MODE_LACKS["$KPX_PROXY_MODE $req"]:-}" ]; then
		skip_assert "$proto $dst from $from: $verdict" "${MODE_LACKS["$KPX_PROXY_MODE $req"]}"
		return
	fi
	[ -z "$counters" ] || stats_mark
	case "$verdict" in
	unanswered)
		client "$from" -n "$n" -t "${tmo:-500}" $(_uflag "$proto") "$dst"
		assert_eq "$proto $dst from $from: answered" 0 "$(summary_field ok)"
		client_show_if_failed ;;
	refused)
		if [ "$from" = node ]; then
			expect_node_refused "$proto" "$dst" "$n"
		else
			expect_refused "$from" "$proto" "$dst" "$n" "$tmo"
		fi ;;
	dropped) expect_timeout "$from" "$proto" "$dst" "$n" "${tmo:-500}" ;;
	answered)
		if [ -n "$want" ]; then
			want=$(sorted_words ${want//,/ })
			want=${want// /,}
			client_all "$want" "$from" -n "$n" $ivl -t "${tmo:-2000}" $(_uflag "$proto") "$dst"
		else
			client "$from" -n "$n" $ivl -t "${tmo:-2000}" $(_uflag "$proto") "$dst"
		fi
		assert_eq "$proto $dst from $from: answered" "$n" "$(summary_field ok)"
		[ -z "$want" ] ||
			assert_eq "$proto $dst from $from: backends answering" "$want" "$(answer_field 2)"
		for id in $never; do
			assert_eq "$proto $dst from $from: answers by $id" 0 "$(ident_count "$id")"
		done
		[ -z "$src" ] || check_source "$from" "$proto" "$dst" "$src"
		pin_check "$proto $dst from $from" "${@:13:7}"
		[ -z "${19:-}" ] || spread_check "$proto $dst from $from" "${19}" "${20}"
		client_show_if_failed
		;;
	*) _fail "expect.json: unknown verdict '$verdict'" ;;
	esac
	for kv in $counters; do
		assert_ge "$proto $dst from $from: module counter ${kv%%=*} grew by" "${kv#*=}" \
			"$(stats_delta "${kv%%=*}")"
	done
}

# pin_check WHAT PIN PINNED NOT_PINNED BACKEND_MATCH DISTINCT_MIN
# DISTINCT_REQUIRES: ClientIP affinity over the last client run.  PIN NAME:
# every attempt answered by one backend, remembered as NAME; PINNED NAME:
# by NAME's backend; NOT_PINNED NAME: by one backend, not NAME's;
# BACKEND_MATCH: the backends that answered (sorted, comma separated)
# match the ERE; DISTINCT_MIN N: at least N backends answered (unless the
# mode lacks DISTINCT_REQUIRES: skipped, listed).
declare -A PIN
pin_check() {
	local what=$1 got

	got=$(answer_field 2)
	if [ -n "$2" ]; then
		assert_match "$what: one backend (pinned as $2)" '^[^,]+:[0-9]+$' "$got"
		PIN[$2]=$got
	fi
	[ -z "$3" ] || assert_eq "$what: the backend pinned as $3" "${PIN[$3]:-none}" "$got"
	if [ -n "$4" ]; then
		assert_match "$what: one backend" '^[^,]+:[0-9]+$' "$got"
		assert_ne "$what: not the backend pinned as $4" "${PIN[$4]:-none}" "$got"
	fi
	[ -z "$5" ] || assert_match "$what: backends" "$5" "$got"
	[ -n "$6" ] || return 0
	log "$what: backends $got"
	lacks_feature "$7" ||
		assert_ge "$what: distinct backends" "$6" "$(tr , '\n' <<<"$got" | grep -c .)"
}

# spread_check WHAT N CHI2_MAX: the last client run's answers spread over
# N backends: each answered (at least once) and the chi-square statistic
# of their counts against an even spread is below CHI2_MAX.
spread_check() {
	local used chi min max

	read -r used chi min max < <(printf '%s\n' "${CL_ANS[@]}" | awk -v k="$2" '
		{ c[$2]++; n++ }
		END {
			e = n / k
			for (a in c) {
				used++
				chi += (c[a] - e) * (c[a] - e) / e
				if (min == "" || c[a] < min) min = c[a]
				if (c[a] > max) max = c[a]
			}
			chi += (k - used) * e	# never answering: (0 - e)^2 / e
			printf "%d %.2f %d %d\n", used, chi, min, max
		}')
	log "$1: per-backend answers min $min max $max, chi-square $chi"
	assert_eq "$1: backends that answered" "$2" "$used"
	assert_ge "$1: fewest answers of one backend" 1 "$min"
	assert_lt_ms "$1: chi-square over $2 backends" "$3" "$chi"
}

# pins_distinct "NAME..." MIN: the backends pinned as NAMEs are at least
# MIN distinct ones (clients scheduled independently, not all to one).
pins_distinct() {
	local -A seen=()
	local p

	for p in $1; do
		[ -z "${PIN[$p]:-}" ] || seen[${PIN[$p]}]=1
	done
	assert_ge "distinct backends pinned as $1" "$2" "${#seen[@]}"
}

# drop_pinned NAME "KIND NS SLICE STEP" PROTO DST: objects.json's SLICE at
# STEP applied again without the endpoint whose address the backend pinned
# as NAME has; waits (up to 10 s) until frontend PROTO DST no longer has it.
drop_pinned() {
	local addr=${PIN[$1]:-}
	local -a o

	read -r -a o <<<"$2"
	[ -n "$addr" ] || { _fail "expect.json: nothing pinned as '$1'"; return; }
	jq --arg k "${o[0]}" --arg ns "${o[1]}" --arg n "${o[2]}" --arg s "${o[3]}" \
		--arg ip "${addr%:*}" '
		.items[] | select(.kind == $k and .metadata.name == $n and
			(.metadata.namespace // "-") == $ns and
			(.metadata.annotations["cases.kpr.test/step"] // "0") == $s) |
		.endpoints |= map(select(.addresses[0] != $ip))' "$OBJECTS" >"$TMPD/drop.json"
	assert_rc "apply ${o[2]} without $addr (pinned as $1)" 0 apictl apply "$TMPD/drop.json"
	for _ in $(seq 1 100); do
		[[ ",$(proc_backends "$3" "$4")," != *",$addr,"* ]] && break
		sleep 0.1
	done
	log "$addr left $3 $4: $(proc_backends "$3" "$4")"
}

# after PROTO DST NBACKENDS BACKEND CONNS_MIN: kpxctl list's view.
after() {
	kpx_snapshot
	local vip=${2%:*} port=${2##*:}

	[ -z "$3" ] || assert_eq "$1 $2: backend count in kpxctl list" "$3" \
		"$(svc_counter "$1" "$vip" "$port" nbackends)"
	[ -z "$4" ] || assert_ge "$1 $2: conns of backend $4" "$5" \
		"$(be_counter "$1" "$vip" "$port" "${4%:*}" "${4##*:}")"
}

# sysctl_check NAME VALUE [MIN]: a sysctl's value now (the agent's
# settings): VALUE exactly ("N*ncpu": N times the CPUs this shell may run
# on, as the agent counts them), and/or at least MIN.  A NAME that is a
# path (/sys/module/nf_conntrack/parameters/hashsize) is read as a file.
sysctl_check() {
	local want=$2 got

	want=$(ncpu_expr "$want")
	if [[ "$1" == /* ]]; then
		got=$(cat "$1" 2>/dev/null)
	else
		got=$(sysctl -n "$1" 2>/dev/null)
	fi
	[ -z "$want" ] || assert_eq "sysctl $1" "$want" "$got"
	[ -z "${3:-}" ] || assert_ge "sysctl $1" "$(ncpu_expr "$3")" "$got"
}

# ncpu_expr VALUE: "N*ncpu" as N times the CPUs this shell may run on (as
# the agent counts them), "max(N*ncpu,M)" the larger of that and M; any
# other VALUE as it is.
ncpu_expr() {
	if [[ "$1" =~ ^([0-9]+)\*ncpu$ ]]; then
		echo $((BASH_REMATCH[1] * $(nproc)))
	elif [[ "$1" =~ ^max\(([0-9]+)\*ncpu,([0-9]+)\)$ ]]; then
		local a=$((BASH_REMATCH[1] * $(nproc)))
		echo $((a > BASH_REMATCH[2] ? a : BASH_REMATCH[2]))
	else
		echo "$1"
	fi
}

# log_match ERE [WAIT [COUNT]]: the agent's log matches ERE (polled up to
# WAIT s: a line the agent writes at its next periodic check); with COUNT,
# exactly COUNT lines match.
log_match() {
	local t0=$SECONDS

	while ! grep -qE -- "$1" "$TMPD/agent.log" && ((SECONDS - t0 < ${2:-0})); do
		sleep 0.5
	done
	assert_match "agent log: '$1'" "$1" "$(cat "$TMPD/agent.log")"
	[ -z "${3:-}" ] || assert_eq "agent log: lines matching '$1'" "$3" \
		"$(grep -cE -- "$1" "$TMPD/agent.log")"
}

# flag_bits PROTO DST MASK VALUE: the frontend's flags (/proc, or what the
# agent programmed in the other modes) masked with MASK are VALUE.
flag_bits() {
	local f

	f=$(proc_svc "$1" "$2" flags)
	[[ "$f" =~ ^0x[0-9a-fA-F]+$ ]] && f=$((f & $3))
	assert_eq "$1 $2: flags & $3" "$4" "$f"
}

# listed PROTO DST FLAGS CLUSTER: kpxctl list's view of a frontend: its
# flags (JSON, as kpxctl prints them) and the ClusterIP frontend an eTP
# Local frontend names ("null": none); module state, kpx mode only.
listed() {
	local vip=${2%:*} port=${2##*:} got

	kpx_snapshot
	[ -z "$3" ] || assert_eq "$1 $2: flags in kpxctl list" "$3" \
		"$(svc_counter "$1" "$vip" "$port" flags)"
	[ -z "$4" ] && return
	got=$MODE_NA
	! mode_is kpx || got=$(jq -r --arg p "$1" --arg v "$vip" --argjson n "$port" \
		'.services[] | select(.protocol == $p and .vip == $v and .port == $n) | .cluster' \
		<<<"$KS_JSON")
	assert_eq "$1 $2: ClusterIP frontend named in kpxctl list" "$4" "$got"
}

# hold_start NAME FROM DST MS EVERY_MS TIMEOUT_MS IDENT PROTO: in the
# background, kpx_client --hold from FROM keeps one TCP connection (PROTO
# udp: one UDP flow, one source port) to DST open MS ms, exchanging a line
# every EVERY_MS ms; asserts it connected (to IDENT).
declare -A HOLD_PID HOLD_IDENT
hold_start() {
	local f=$TMPD/hold-$1.out u=

	u=$(_uflag "$8")
	# shellcheck disable=SC2086
	in_ns "$2" "$CLIENT_BIN" $u --hold "$4" --every "$5" -t "$6" "$3" >"$f" 2>&1 &
	HOLD_PID[$1]=$!
	HOLD_IDENT[$1]=${7:-[^ ]+}
	PIDS+=("$!")
	for _ in $(seq 1 50); do
		grep -q '^hold connected' "$f" && break
		sleep 0.1
	done
	assert_match "held connection $1 from $2 to $3" "^hold connected ${HOLD_IDENT[$1]} " \
		"$(grep '^hold connected' "$f")"
}

# hold_check NAME [STOP]: the held connection NAME ran to its end (STOP 1:
# ended now, SIGTERM to the kpx_client the background job runs), every
# exchange answered by the same backend (the proxy reset nothing, a UDP
# flow neither lost nor moved).
hold_check() {
	[ -n "${HOLD_PID[$1]:-}" ] || { _fail "expect.json: no held connection '$1'"; return; }
	# the job is in_ns's subshell: kpx_client (ip netns exec's) is its child
	[ "$2" != 1 ] || pkill -TERM -P "${HOLD_PID[$1]}" kpx_client
	wait "${HOLD_PID[$1]}" 2>/dev/null
	assert_match "held connection $1 to its end (no reset by the proxy)" \
		"^hold summary ident=${HOLD_IDENT[$1]} exchanges=[1-9][0-9]* failed=0\$" \
		"$(grep '^hold summary' "$TMPD/hold-$1.out")"
}

# flow_start NAME FROM DST SECONDS EVERY_MS WAIT_FOR WAIT_COUNT: in the
# background, tools/udpflow.py from FROM keeps one connected UDP socket
# (one source port, as a stub resolver) sending a datagram to DST every
# EVERY_MS ms for SECONDS s, across the phases that follow (case_lib.sh's
# udp_flow_start); then waits up to 30 s (python starts slowly under TCG)
# for WAIT_COUNT datagrams with the result WAIT_FOR (flow_n; "" any).
# The module's totals are marked for the flow's counters.
declare -A FLOW_T0 FLOW_DST FLOW_ST0 FE_MS
flow_start() {
	local i k

	stats_read
	for k in "${!ST[@]}"; do
		FLOW_ST0["$1 $k"]=${ST[$k]}
	done
	FLOW_T0[$1]=$(now_ms)
	FLOW_DST[$1]=$3
	udp_flow_start "$2" "$1" "$4" "$5" "$3"
	for ((i = 0; i < 60; i++)); do
		[ "$(flow_n "$1" "${6:-sent}" 2>/dev/null)" -ge "$7" ] 2>/dev/null && break
		sleep 0.5
	done
	log "flow $1 from $2 to $3: $(flow_n "$1" sent) datagrams in $(($(now_ms) - FLOW_T0[$1])) ms"
}

# flow_n NAME WHAT [FROM_MS [TO_MS]]: datagrams of flow NAME sent in the
# window with the result WHAT: "sent" (any), "answered" (neither refused
# nor timed out) or that result (an echo's ident, "refused", "timeout").
flow_n() {
	case "$2" in
	sent) flow_count "$1" "" "${3:-0}" "${4:-99999999999999}" ;;
	answered)
		awk -v a="${3:-0}" -v b="${4:-99999999999999}" \
			'$1 >= a && $1 < b && $3 != "refused" && $3 != "timeout" { n++ }
			END { print n + 0 }' "$TMPD/flow-$1.out" ;;
	*) flow_count "$1" "$2" "${3:-0}" "${4:-99999999999999}" ;;
	esac
}

# flow_check NAMES SINCE FIRST FIRST_WITHIN_MS AFTER_MS SENT_MIN RESULTS
# RULES STOP RX: each flow of NAMES (space separated) over a window that
# starts at SINCE ("start": the flow's start, "phase": the phase's, "now")
# or, with FIRST, at the first datagram since then answered by FIRST
# (asserted: there is one, and with FIRST_WITHIN_MS it was sent less than
# that long after the flow's UDP frontend's backends were checked by the
# phase's frontends rows), and ends AFTER_MS ms from now.  In it: at least
# SENT_MIN datagrams sent; the distinct results (sorted, comma separated)
# match the ERE RESULTS; RULES "min:WHAT=N", "max:WHAT=N" (flow_n's WHAT;
# N a count, "P%" of those sent, or "sent") and "counter:STAT=N" (the
# module total STAT grew since the flow started by at least N, kpx mode).
# RX "POD=N ...": each pod's eth0 received at most N packets over the
# AFTER_MS wait.  STOP 1: the flows end.
flow_check() {
	local since=$2 first=$3 within=$4 base t0 t1 tf tp d sent kv k v got what name
	local -A rx0=()

	case "$since" in
	start | phase) base=$PHASE_MS ;;
	now) base=$(now_ms) ;;
	*) _fail "expect.json: flow_check since '$since'"; return ;;
	esac
	for kv in ${10}; do
		rx0[${kv%%=*}]=$(rx_packets "${kv%%=*}")
	done
	sleep "$(awk -v m="$5" 'BEGIN { print m / 1000 }')"
	t1=$(now_ms)
	for kv in ${10}; do
		k=${kv%%=*}
		got=$(($(rx_packets "$k") - rx0[$k]))
		assert_ge "pod $k: packets received in $(($5 / 1000)) s, at most ${kv#*=} (got $got)" \
			"$got" "${kv#*=}"
	done
	for name in $1; do
		[ -n "${FLOW_T0[$name]:-}" ] || { _fail "expect.json: no flow '$name'"; continue; }
		t0=$base
		[ "$since" != start ] || t0=${FLOW_T0[$name]}
		if [ -n "$first" ]; then
			tf=$(flow_first "$name" "$first" "$t0")
			assert_ne "flow $name: the same socket answered by $first" none "$tf"
			if [ -n "$within" ]; then
				tp=${FE_MS["udp ${FLOW_DST[$name]}"]:-$t0}
				log "flow $name: phase at +0 ms, backends checked at +$((tp - t0)) ms," \
					"first answer sent at +$((${tf/none/$t1} - t0)) ms; lost in between:" \
					"$(flow_n "$name" refused "$t0" "${tf/none/$t1}") refused," \
					"$(flow_n "$name" timeout "$t0" "${tf/none/$t1}") timed out"
				d=$((${tf/none/$((tp + 99999))} - tp))
				((d >= 0)) || d=0
				assert_lt_ms "flow $name: first answer after the backends were programmed" \
					"$within" "$d"
			fi
			[ "$tf" = none ] || t0=$tf
		fi
		what="flow $name over $((t1 - t0)) ms${first:+ from its first answer}"
		sent=$(flow_n "$name" sent "$t0" "$t1")
		log "$what: $sent sent, results $(flow_results "$name" "$t0" "$t1")," \
			"$(flow_n "$name" timeout "$t0" "$t1") timed out"
		[ -z "$6" ] || assert_ge "$what: datagrams sent" "$6" "$sent"
		[ -z "$7" ] || assert_match "$what: results" "$7" "$(flow_results "$name" "$t0" "$t1")"
		for kv in $8; do
			k=${kv%%=*} v=${kv#*=}
			case "$v" in
			sent) v=$sent ;;
			*%) v=$((sent * ${v%\%} / 100)) ;;
			esac
			case "$k" in
			min:*)
				assert_ge "$what: ${k#min:} (of $sent)" "$v" \
					"$(flow_n "$name" "${k#min:}" "$t0" "$t1")" ;;
			max:*)
				got=$(flow_n "$name" "${k#max:}" "$t0" "$t1")
				assert_ge "$what: ${k#max:} at most $v (of $sent; got $got)" "$got" "$v" ;;
			counter:*)
				k=${k#counter:} got=$MODE_NA
				if mode_is kpx; then
					stats_read
					got=$((ST[$k] - FLOW_ST0["$name $k"]))
				fi
				assert_ge "$what: module counter $k grew by" "$v" "$got" ;;
			*) _fail "expect.json: flow_check rule '$kv'" ;;
			esac
		done
		[ "$9" != 1 ] || udp_flow_stop "$name"
	done
}

# sync_sets N: a second after the frontends' checks, the first "sync done"
# line the agent logged since the phase's start that set any frontend says
# it set N (one frontend set for one endpoint change).
sync_sets() {
	local line

	sleep 1
	line=$(grep 'sync done' "$TMPD/agent.log" | tail -n +"$((${SYNC0:-0} + 1))" |
		grep -v 'sets=0\|"sets":"0"' | head -n 1)
	log "first sync that set a frontend: $line"
	assert_match "the agent's sync set $1 frontend(s)" "(sets=|\"sets\":\")$1\\b" "$line"
}

# rx_packets POD: packets received on the pod's eth0.
rx_packets() { ip -n "$1" -s -j link show eth0 | jq '.[0].stats64.rx.packets'; }

# health ADDR:PORT[/PATH] STATUS SERVICE LOCAL: GET http://ADDR:PORT/ (a
# healthCheckNodePort, [IPv6]:PORT too; polled up to 5 s for STATUS, "000"
# no connection) and kube-proxy's JSON body: the Service (NAMESPACE/NAME)
# and its localEndpoints.  With a PATH (the agent's /healthz), its status.
health() {
	local code i got url="http://$1"

	[[ "$1" == */* ]] || url+=/
	for ((i = 0; i < 25; i++)); do
		code=$(curl -s -m 2 -o "$TMPD/hc.body" -w '%{http_code}' "$url")
		[ "$code" = "$2" ] && break
		sleep 0.2
	done
	assert_eq "health check $1 status" "$2" "$code"
	got=$(jq -r '"\(.service.namespace)/\(.service.name) \(.localEndpoints)"' \
		"$TMPD/hc.body" 2>/dev/null)
	[ -z "$3" ] || assert_eq "health check $1 body service" "$3" "${got% *}"
	[ -z "$4" ] || assert_eq "health check $1 body localEndpoints" "$4" "${got##* }"
}

# ct_list: the node's conntrack table (conntrack -L) into CT_LIST, which
# the phase's conntrack rows share (a listing of 10,000 entries costs
# seconds under TCG): taken by the first row, again by a row that polls,
# dropped when a phase starts or ct_fill changes the table.  Entries only
# go meanwhile (a cleanup), so a later listing serves the rows after it.
ct_list() {
	CT_LIST=$(conntrack -L 2>/dev/null) || CT_LIST=conntrack-failed
}

# ct_check DESC ERE COUNT [MIN [WAIT]]: conntrack entries matching ERE:
# exactly COUNT (polled up to WAIT s, for a cleanup that runs after the
# sync), and/or at least MIN.
CT_LIST=
ct_check() {
	local n t0=$SECONDS

	[ -n "$CT_LIST" ] || ct_list
	n=$(grep -cE -- "$2" <<<"$CT_LIST")
	while [ -n "$3" ] && [ "$n" != "$3" ] && ((SECONDS - t0 < ${5:-0})); do
		sleep 0.5
		ct_list
		n=$(grep -cE -- "$2" <<<"$CT_LIST")
	done
	[ -z "$3" ] || assert_eq "$1: conntrack entries" "$3" "$n"
	[ -z "${4:-}" ] || assert_ge "$1: conntrack entries" "$4" "$n"
}

# ct_fill SRC DST BACKEND N TIMEOUT_S ASSURED FULL DELETE: kpx_ctfill
# makes N UDP conntrack entries on the node from SRC onwards to DST (DNATed
# to BACKEND when given: the reply tuple from BACKEND, as the proxy's own
# DNAT makes it), ASSURED ones when set (never evicted early); every one
# made, or with FULL the table full: the entries the kernel could evict
# deleted first (kpx_ctfill -E: none is left to make room for a new
# connection), then some refused with ENOMEM and nf_conntrack_count at
# nf_conntrack_max.  DELETE: the same N deleted again (the load gone):
# every one the fill made is found.  Marks the kernel's conntrack
# statistics for ct_stat_check.
declare -A CTST0 CT_MADE
ct_fill() {
	local what="conntrack entries $1.. -> $2${3:+ (DNAT $3)}" out k made failed err
	local -a args=(-t "$5")

	[ -z "$6" ] || args+=(-a)
	[ -z "$7" ] || args+=(-E)
	[ -z "$8" ] || args+=(-D)
	for k in drop early_drop insert_failed; do
		CTST0[$k]=$(ct_stat "$k")
	done
	CT_LIST=
	out=$("$SELFTESTS/tools/kpx_ctfill" "${args[@]}" "$4" "$1" "$2" $3 2>&1)
	log "kpx_ctfill ${args[*]} $4 $1 $2 $3: $out"
	if [ -n "$8" ]; then
		assert_eq "$what: deleted (all those made)" "${CT_MADE["$1 $2"]:-$4}" \
			"$(jq -r .deleted <<<"$out" 2>/dev/null)"
		return
	fi
	read -r made failed err < <(jq -r '"\(.made) \(.failed) \(.errno)"' <<<"$out" 2>/dev/null)
	CT_MADE["$1 $2"]=$made
	if [ -z "$7" ]; then
		assert_eq "$what: made" "$4" "$made"
		return
	fi
	assert_ge "$what: refused (table full)" 1 "${failed:-0}"
	assert_eq "$what: refused with" ENOMEM "$err"
	assert_eq "nf_conntrack_count at nf_conntrack_max" "$(sysctl -n net.netfilter.nf_conntrack_max)" \
		"$(sysctl -n net.netfilter.nf_conntrack_count)"
}

# ct_stat_check NAME MIN MAX: the kernel's conntrack statistic NAME
# (/proc/net/stat/nf_conntrack: drop, early_drop, insert_failed) grew
# since the last ct_fill by at least MIN and/or at most MAX.
ct_stat_check() {
	local d=$(($(ct_stat "$1") - ${CTST0[$1]:-0}))

	[ -z "$2" ] || assert_ge "conntrack statistic $1 grew by" "$2" "$d"
	[ -z "$3" ] || assert_ge "conntrack statistic $1 grew by at most $3 (grew by $d)" "$d" "$3"
}

# metric_check NAME CT_STAT: the agent's /metrics (127.0.0.1:10249, the
# default bind address) has NAME, equal to the kernel's conntrack
# statistic CT_STAT summed over the CPUs (ct_stat) when given.
metric_check() {
	local v

	v=$(curl -s -m 5 http://127.0.0.1:10249/metrics | awk -v n="$1" '$1 == n { print $2 }')
	assert_match "/metrics: $1" '^[0-9]' "$v"
	[ -z "$2" ] || assert_eq "/metrics: $1 = the kernel's $2" "$(ct_stat "$2")" "${v%%.*}"
}

# peak_rss MIB: the agent's peak resident memory so far (VmHWM) is at most
# MIB MiB.
peak_rss() {
	local kib

	kib=$(awk '$1 == "VmHWM:" { print $2 }' /proc/"$AGENT_PID"/status 2>/dev/null)
	log "agent peak RSS: ${kib:-?} KiB"
	assert_ge "agent peak RSS (VmHWM ${kib:-?} KiB) at most $1 MiB" "${kib:-999999999}" $(($1 * 1024))
}

# delta_mark: the module's totals and kpxctl list's counters before the
# phase's probes, for delta_check (its own copies: a probe's counters row
# marks the totals again).
declare -A DST0 DKS0
delta_mark() {
	local k

	stats_read
	kpx_snapshot
	DST0=() DKS0=()
	for k in "${!ST[@]}"; do
		DST0[$k]=${ST[$k]}
	done
	for k in "${!KS[@]}"; do
		DKS0[$k]=${KS[$k]}
	done
}

# delta_check STAT PROTO DST BACKENDS FIELD DELTA REQUIRES: over the
# phase's probes, the module total STAT (kpxctl stats) or, without STAT,
# the FIELD counter (conns, rejects) of frontend PROTO DST (or the sum of
# its BACKENDS' conns, "ADDR:PORT,...") changed by exactly DELTA.
delta_check() {
	local stat=$1 p=$2 vip=${3%:*} port=${3##*:} field=$5 want=$6 req=$7
	local -a bes=()
	local be now=0 was=0 what

	if [ -n "$req" ] && [ -n "${MODE_LACKS["$KPX_PROXY_MODE $req"]:-}" ]; then
		skip_assert "${stat:-$p $3 $field} over the probes" "${MODE_LACKS["$KPX_PROXY_MODE $req"]}"
		return
	fi
	if ! mode_is kpx; then
		assert_eq "${stat:-$p $3 $field}: changed over the probes by" "$want" "$MODE_NA"
		return
	fi
	if [ -n "$stat" ]; then
		stats_read
		assert_eq "module total $stat: changed over the probes by" "$want" \
			"$((${ST[$stat]:-0} - ${DST0[$stat]:-0}))"
		return
	fi
	kpx_snapshot
	IFS=, read -r -a bes <<<"$4"
	if [ ${#bes[@]} = 0 ]; then
		what="$p $3 $field"
		now=${KS["$p $vip $port $field"]:-0} was=${DKS0["$p $vip $port $field"]:-0}
	else
		what="$p $3 conns of backends $4"
		for be in "${bes[@]}"; do
			now=$((now + ${KS["$p $vip $port ${be%:*} ${be##*:} conns"]:-0}))
			was=$((was + ${DKS0["$p $vip $port ${be%:*} ${be##*:} conns"]:-0}))
		done
	fi
	assert_eq "$what: changed over the probes by" "$want" "$((now - was))"
}

# until FROM PROTO DST VERDICT TRIES TIMEOUT_MS: single attempts, 0.1 s
# apart, until one gets VERDICT (answered, or dropped: not answered); the
# change a phase applied has reached the data path.  Not an assertion: the
# probes after it are.
until_verdict() {
	local i ok

	for ((i = 0; i < $5; i++)); do
		client "$1" -n 1 -t "$6" $(_uflag "$2") "$3"
		ok=$(summary_field ok)
		{ [ "$4" = answered ] && [ "$ok" = 1 ]; } && break
		{ [ "$4" != answered ] && [ "$ok" = 0 ]; } && break
		sleep 0.1
	done
	log "$2 $3 from $1: $4 after $((i + 1)) attempt(s)"
}

# ipvs_service PROTO ADDR:PORT present|absent: whether IPVS has that
# virtual service (ipvs mode).
ipvs_service() {
	local got=absent

	ipvsadm -Ln "--$1-service" "$2" >/dev/null 2>&1 && got=present
	assert_eq "IPVS $1 service $2" "$3" "$got"
}

# martian_drops: packets KPX-IPVS-INPUT's martian drop rule (a loopback
# destination from outside, CVE-2020-8558) dropped so far.
martian_drops() {
	iptables -w -n -v -x -L KPX-IPVS-INPUT 2>/dev/null |
		awk '$3 == "DROP" && $8 == "!127.0.0.0/8" && $9 == "127.0.0.0/8" { n += $1 } END { print n + 0 }'
}

# neighbour DST COUNT TIMEOUT_MS: the external client routes DST (a
# loopback address, its own 127.0.0.1 removed) to the node and sends COUNT
# SYNs: each is dropped (times out; not answered, not refused: a RST would
# mean the SYN reached the node's stack), the frontend counts no
# connection, and in ipvs mode KPX-IPVS-INPUT's martian drop counts them.
# The client's netns is as before afterwards (the next cases share it).
neighbour() {
	local c0 m0

	ip -n cli addr del 127.0.0.1/8 dev lo
	ip netns exec cli sysctl -q -w net.ipv4.conf.all.route_localnet=1 \
		net.ipv4.conf.eth0.route_localnet=1
	ip -n cli route add "${1%:*}/32" via 10.0.1.1 dev eth0
	c0=$(proc_svc tcp "$1" conns)
	m0=$(martian_drops)
	client cli -n "$2" -t "$3" "$1"
	if [ "$(error_count ETIMEDOUT)" = "$2" ] || [ "$(summary_field ok)" != 0 ] ||
		[ "$(error_count ECONNREFUSED)" != 0 ]; then
		assert_eq "neighbour SYN to $1: answered" 0 "$(summary_field ok)"
		assert_eq "neighbour SYN to $1: timed out (dropped)" "$2" "$(error_count ETIMEDOUT)"
		assert_eq "$1 frontend's connections after the neighbour's SYNs" "$c0" \
			"$(proc_svc tcp "$1" conns)"
		! mode_is ipvs || assert_ge "neighbour SYN to $1 (ipvs): dropped by KPX-IPVS-INPUT's martian drop" \
			$((m0 + $2)) "$(martian_drops)"
		client_show_if_failed
	else
		skip_assert "neighbour SYN to $1" "the neighbour could not send it: $(sed -n '1p' "$TMPD/client.out")"
	fi
	ip -n cli route del "${1%:*}/32" via 10.0.1.1 dev eth0
	ip netns exec cli sysctl -q -w net.ipv4.conf.all.route_localnet=0 \
		net.ipv4.conf.eth0.route_localnet=0
	ip -n cli addr add 127.0.0.1/8 dev lo
}

# churn_start FILE RESTORE TIMES EVERY_S: in the background, TIMES times:
# apply FILE (in the case's folder), EVERY_S s later the object RESTORE
# ("KIND NS NAME STEP", objects.json's version) again, EVERY_S s later.
CHURN_PID=
churn_start() {
	local obj

	read -r -a obj <<<"$2"
	jq --arg k "${obj[0]}" --arg ns "${obj[1]}" --arg n "${obj[2]}" --arg s "${obj[3]}" '
		.items[] | select(.kind == $k and .metadata.name == $n and
			(.metadata.namespace // "-") == $ns and
			(.metadata.annotations["cases.kpr.test/step"] // "0") == $s)' \
		"$OBJECTS" >"$TMPD/churn-restore.json"
	(
		for ((i = 0; i < $3; i++)); do
			apictl apply "$CASES_DIR/$CASE/$1" >/dev/null
			sleep "$4"
			apictl apply "$TMPD/churn-restore.json" >/dev/null
			sleep "$4"
		done
	) &
	CHURN_PID=$!
	PIDS+=("$CHURN_PID")
}

# churn_wait: the churn has ended.
churn_wait() {
	[ -z "$CHURN_PID" ] || wait "$CHURN_PID" 2>/dev/null
	CHURN_PID=
}

# soak FROM PROTO DST DURATION_MS TIMEOUT_MS MIN_ATTEMPTS VERDICT REQUIRES:
# attempts for DURATION_MS ms (kpx_client -d), at least MIN_ATTEMPTS, none
# answered and none refused (VERDICT dropped), read from kpx_client --json.
soak() {
	local what="$2 $3 from $1 over $4 ms"

	if [ -n "$8" ] && [ -n "${MODE_LACKS["$KPX_PROXY_MODE $8"]:-}" ]; then
		skip_assert "$what: $7" "${MODE_LACKS["$KPX_PROXY_MODE $8"]}"
		return
	fi
	[ "$7" = dropped ] || { _fail "expect.json: soak verdict '$7' (only dropped)"; return; }
	local fails0=$FAILS

	client "$1" -d "$4" -t "$5" $(_uflag "$2") "$3"
	assert_ge "$what: attempts" "$6" "$(summary_field attempts)"
	assert_eq "$what: answered" 0 "$(summary_field ok)"
	assert_eq "$what: refused" 0 "$(error_count ECONNREFUSED)"
	[ "$FAILS" = "$fails0" ] || sed -n '1,5p;$p' "$TMPD/client.out" | sed 's/^/#   /'
}

# flood FROM DST COUNT: a SYN flood, COUNT TCP connections opened from
# FROM's address to DST without waiting for them (tools/tcpsyn.py: each a
# new source port, so each a new flow), every SYN sent.  What it did is
# asserted by the phase's ct_stats and deltas rows.
flood() {
	local out

	out=$(in_ns "$1" python3 "$SELFTESTS/tools/tcpsyn.py" "$3" "$2" "$(src_addr "$1")" 2>&1)
	log "SYN flood $2 from $1: $out"
	assert_eq "SYN flood of $2 from $1: SYNs sent" "sent $3" "$out"
}

# host_addr "add|del ADDR/LEN [DEV]" | "flap ADDR/LEN N [DEV]": the node's
# interface addresses change at run time, as DHCP or keepalived change them
# (DEV default kpx-node): an address added or deleted, or added and deleted
# N times in a row (one ip -batch), after which the agent's open
# descriptors are no more than before (nothing leaked per change).  Undone
# at the case's end (addrs_undo).
ADDR_UNDO=()
host_addr() {
	local op a dev n fd0 fd1 i nd=
	local -a w

	read -r -a w <<<"$1"
	op=${w[0]} a=${w[1]}
	[[ "$a" == *:* ]] && nd=nodad
	case "$op" in
	add | del)
		dev=${w[2]:-kpx-node}
		# shellcheck disable=SC2086
		assert_rc "ip addr $op $a dev $dev" 0 ip addr "$op" "$a" dev "$dev" $nd
		if [ "$op" = add ]; then
			ADDR_UNDO+=("del $a dev $dev")
		else
			ADDR_UNDO+=("add $a dev $dev $nd")
		fi ;;
	flap)
		n=${w[2]} dev=${w[3]:-kpx-node}
		fd0=$(agent_fds)
		for ((i = 0; i < n; i++)); do
			echo "addr add $a dev $dev $nd"
			echo "addr del $a dev $dev"
		done >"$TMPD/flap.batch"
		assert_rc "$n flaps of $a on $dev (ip -batch)" 0 ip -batch "$TMPD/flap.batch"
		# the syncs the flaps caused are over
		sleep 3
		fd1=$(agent_fds)
		log "agent's descriptors: $fd0 before $n flaps, $fd1 after"
		assert_ge "agent's open descriptors before $n flaps of $a, not fewer than after ($fd1)" \
			"$fd1" "$fd0" ;;
	*) _fail "expect.json: unknown addrs row '$1'" ;;
	esac
}

# agent_fds: the agent's open file descriptors now.
agent_fds() {
	local f n=0

	for f in /proc/"$AGENT_PID"/fd/*; do
		[ -e "$f" ] && n=$((n + 1))
	done
	echo "$n"
}

# addrs_undo: the node's addresses as before the case (host_addr's changes
# undone, last first).
addrs_undo() {
	local i

	for ((i = ${#ADDR_UNDO[@]} - 1; i >= 0; i--)); do
		# shellcheck disable=SC2086
		ip addr ${ADDR_UNDO[i]} 2>/dev/null
	done
	ADDR_UNDO=()
}

# check_listeners PORT COUNT [FAMILY]: exactly COUNT TCP sockets listen on
# PORT (of FAMILY 4 or 6 only, when given; a dual-stack [::] socket counts
# for 6), whoever owns them: no port-holding socket on a NodePort, one
# health-check listener per address and family.
check_listeners() {
	local f=() n

	[ -z "${3:-}" ] || f=("-$3")
	n=$(ss -Hltn "${f[@]}" "sport = :$1" 2>/dev/null | wc -l)
	assert_eq "TCP listeners on port $1${3:+ (IPv$3)}" "$2" "$n"
}

# ct_stat FIELD: a column of /proc/net/stat/nf_conntrack (the kernel's
# per-CPU conntrack statistics, hex), summed over the CPUs.
ct_stat() {
	local -a v
	local i c="" sum=0 first=1

	while read -r -a v; do
		if [ "$first" = 1 ]; then
			first=0
			for i in "${!v[@]}"; do
				[ "${v[i]}" != "$1" ] || c=$i
			done
			[ -n "$c" ] || { echo none; return; }
			continue
		fi
		sum=$((sum + 0x${v[c]}))
	done </proc/net/stat/nf_conntrack
	echo "$sum"
}

# invalid FROM DST STRAY COUNTERS REQUIRES: kpx_invalid from FROM through
# DST (a TCP Service address, or a pod's own for a flow without NAT): the
# backend's namespace sends a reply segment 2^30 beyond its sequence
# number, which conntrack marks INVALID (asserted: the kernel's invalid
# statistic grew).  STRAY "dropped": it never reaches the client with the
# backend's address; "delivered": it reaches the client as sent (not
# Service traffic, not the proxy's to drop).  Either way the client sends
# no RST to the backend and the connection still echoes.  COUNTERS as for
# probes (kpxctl stats, kpx mode).  ZONE: the flow in that conntrack zone
# (a raw-priority "ct zone set" for every packet from or to FROM's address,
# as a CNI or an OVS-style data path tags its flows, both directions and
# the node's own replies; removed after the row).
invalid() {
	local from=$1 dst=$2 stray=$3 counters=$4 req=$5 zone=$6
	local what="stray INVALID reply on $2 from $1${6:+ in conntrack zone $6}"
	local -a args=()
	local p a out ct0 kv leaked rsts alive c

	if [ -n "$req" ] && [ -n "${MODE_LACKS["$KPX_PROXY_MODE $req"]:-}" ]; then
		skip_assert "$what: $stray" "${MODE_LACKS["$KPX_PROXY_MODE $req"]}"
		return
	fi
	if [ -n "$zone" ]; then
		c=$(src_addr "$from")
		nft -f - <<-EOF || { _fail "$what: ct zone rules not loaded"; return; }
		table inet kpx_test_zone {
			chain pre {
				type filter hook prerouting priority raw;
				ip saddr $c ct zone set $zone
				ip daddr $c ct zone set $zone
			}
			chain out {
				type filter hook output priority raw;
				ip saddr $c ct zone set $zone
				ip daddr $c ct zone set $zone
			}
		}
		EOF
	fi
	for p in "${!POD_IP[@]}"; do
		args+=(-n "${POD_IP[$p]}=/run/netns/$p")
	done
	for a in $NODE_A 192.0.2.12 192.0.2.13 $NODE4; do
		args+=(-n "$a=/proc/$$/ns/net")
	done
	stats_mark
	ct0=$(ct_stat invalid)
	out=$(in_ns "$from" "$SELFTESTS/tools/kpx_invalid" "${args[@]}" "$dst" 2>&1)
	log "kpx_invalid $dst from $from: $out"
	assert_ge "$what: conntrack's invalid statistic grew by" 1 $(($(ct_stat invalid) - ct0))
	if [ -n "$zone" ]; then
		# the flow's entry really was in the zone
		assert_match "$what: the flow's conntrack entry in zone $zone" \
			"src=$c .*zone=$zone" "$(conntrack -L -s "$c" -p tcp 2>/dev/null)"
		nft delete table inet kpx_test_zone
	fi
	leaked=$(sed -n 's/.* leaked=\([0-9]*\).*/\1/p' <<<"$out")
	rsts=$(sed -n 's/.* rsts=\([0-9]*\).*/\1/p' <<<"$out")
	alive=$(sed -n 's/.* alive=\([0-9]*\).*/\1/p' <<<"$out")
	case "$stray" in
	dropped) assert_eq "$what: segments from the backend's own address at the client" 0 "$leaked" ;;
	delivered) assert_eq "$what: the stray segment delivered as sent" 1 "$leaked" ;;
	*) _fail "expect.json: unknown stray '$stray'" ;;
	esac
	assert_eq "$what: RSTs from the client to the backend" 0 "$rsts"
	assert_eq "$what: the connection still echoes" 1 "$alive"
	for kv in $counters; do
		assert_ge "$what: module counter ${kv%%=*} grew by" "${kv#*=}" \
			"$(stats_delta "${kv%%=*}")"
	done
}

# agent_op OP [KILL_MS]: the phase's "agent": stop (SIGTERM), kill
# (SIGKILL), start (again, waiting for its first sync), restart (stop and
# start, waiting for the new one's first sync); kill-busy: SIGKILL
# KILL_MS ms after the phase's changes were applied (it is handling them).
# A stopped agent stays down until a phase starts it.
AGENT_DOWN=
agent_op() {
	local n

	case "$1" in
	stop)
		agent_stop
		AGENT_DOWN=1
		log "agent stopped (SIGTERM)" ;;
	kill|kill-busy)
		[ "$1" = kill ] || sleep "$(awk -v m="${2:-0}" 'BEGIN { print m / 1000 }')"
		if [ -n "$AGENT_PID" ]; then
			kill -KILL "$AGENT_PID" 2>/dev/null
			wait "$AGENT_PID" 2>/dev/null
		fi
		AGENT_PID="" AGENT_DOWN=1
		log "agent killed (SIGKILL)" ;;
	start | restart)
		n=$(agent_syncs)
		[ "$1" = start ] || agent_stop
		AGENT_DOWN=
		# shellcheck disable=SC2086
		agent_start $CUR_FLAGS
		log "agent ${1}ed: first sync after $(wait_agent_synced $((${n:-0} + 1))) s" ;;
	*) _fail "expect.json: unknown agent operation '$1'" ;;
	esac
}

# module_op reload: the kpx module unloaded and loaded again while the
# agent runs (kpx mode; skipped elsewhere): its frontends and settings are
# gone until the agent programs it again.
module_op() {
	if ! mode_is kpx; then
		skip_assert "module $1" "the $KPX_PROXY_MODE mode uses no kpx module"
		return
	fi
	[ "$1" = reload ] || { _fail "expect.json: unknown module operation '$1'"; return; }
	assert_rc "rmmod kpx" 0 rmmod kpx
	assert_rc "insmod $KPX_KO" 0 insmod "$KPX_KO"
	log "kpx reloaded: $("$KPXCTL" stats --json 2>&1 | tr -d '\n')"
}

# set_sysctl NAME=VALUE...: node sysctls (dotted names) for the rest of the
# case; the values they had are restored when the case ends.
declare -A SYSCTL0
set_sysctl() {
	local kv name

	for kv in $1; do
		name=${kv%%=*}
		[ -n "${SYSCTL0[$name]+x}" ] || SYSCTL0[$name]=$(sysctl -n "$name")
		assert_rc "sysctl $kv" 0 sysctl -q -w "$kv"
	done
}

# phase DESC NODE FLAGS STEP RESTORE APPLY DELETE STEP_FIRST AGENT KILL_MS:
# the agent as NODE with FLAGS ("=" the former ones), then steps up to STEP
# (before the agent's start with STEP_FIRST), the objects RESTORE
# ("KIND NS NAME STEP,...": objects.json's version of that step, again),
# the files APPLY (space separated, in the case's folder), the objects
# DELETE ("KIND NS NAME,..."); AGENT (agent_op) before them, or for
# kill-busy after them.
phase() {
	local desc=$1 node=${2:-${CUR_NODE:-node-a}} flags=$3 upto=$4 file obj
	local aop=$9 kill_ms=${10}
	local -a dels=() restores=()

	log "--- case $CASE: $desc"
	PHASE_MS=$(now_ms)
	SYNC0=$(grep -c 'sync done' "$TMPD/agent.log" 2>/dev/null)
	CT_LIST=
	[ "$flags" != "=" ] || flags=$CUR_FLAGS
	# step_first: the API has the step's objects before the agent
	# (re)starts (its own Node: no start-up wait for it)
	while [ -n "$8" ] && [ -n "$upto" ] && [ "$STEP" -lt "$upto" ]; do
		STEP=$((STEP + 1))
		step "$STEP"
	done
	case "$aop" in
	stop|kill|start|restart) agent_op "$aop" ;;
	esac
	if [ -n "$AGENT_DOWN" ]; then
		:
	elif [ -z "$CUR_NODE" ]; then
		CUR_NODE=$node CUR_FLAGS=$flags AGENT_NODE=$node
		# shellcheck disable=SC2086
		agent_start $flags
		log "agent's first sync after $(wait_agent_synced) s"
	elif [ "$node" != "$CUR_NODE" ] || [ "$flags" != "$CUR_FLAGS" ]; then
		restart_agent "$node" "$flags"
	fi
	while [ -n "$upto" ] && [ "$STEP" -lt "$upto" ]; do
		STEP=$((STEP + 1))
		step "$STEP"
	done
	IFS=, read -r -a restores <<<"$5"
	for obj in "${restores[@]}"; do
		restore_obj $obj
	done
	for file in $6; do
		assert_rc "apply $file" 0 apictl apply "$CASES_DIR/$CASE/$file"
	done
	IFS=, read -r -a dels <<<"$7"
	for obj in "${dels[@]}"; do
		# shellcheck disable=SC2086
		assert_rc "delete $obj" 0 apictl delete $obj
	done
	CHANGES_MS=$(now_ms)
	[ "$aop" != kill-busy ] || agent_op kill-busy "$kill_ms"
}

# restore_obj KIND NS NAME STEP: apply objects.json's version of the object
# at STEP (0: the one without a step) again ("-" NS: cluster scoped).
restore_obj() {
	jq --arg k "$1" --arg ns "$2" --arg n "$3" --arg s "$4" '
		.items[] | select(.kind == $k and .metadata.name == $n and
			(.metadata.namespace // "-") == $ns and
			(.metadata.annotations["cases.kpr.test/step"] // "0") == $s)' \
		"$OBJECTS" >"$TMPD/restore.json"
	assert_rc "apply $1 $2/$3 as at step $4 again" 0 apictl apply "$TMPD/restore.json"
}

# run_case NN: one case, start to end; its pods and processes are gone
# afterwards.
run_case() {
	local kind a b c d e f g h i j k l m n o p q r s t fe lines localnet
	local fails0=$FAILS checks0=$CHECKS npids=${#PIDS[@]} t0=$SECONDS
	local -a fes=() pods=() api=()

	CASE=$1 STEP=0 CUR_NODE= CUR_FLAGS= POD_IP=() POD_IP6=() AGENT_DOWN= CT_MADE=()
	FE_MS=() FLOW_T0=() FLOW_DST=() FLOW_ST0=() PIN=()
	# a case may make the agent set it (localhost NodePorts): put back after
	localnet=$(sysctl -n net.ipv4.conf.all.route_localnet)
	OBJECTS=$CASES_DIR/$CASE/objects.json
	log "=== case $CASE: $(sed -n '1s/^# *//p' "$CASES_DIR/$CASE/scenario.md")"
	lines=$(expect_lines "$CASES_DIR/$CASE/expect.json") ||
		{ _fail "case $CASE: expect.json unreadable"; return; }
	while IFS=$US read -r kind a b c d; do
		case "$kind" in
		api) api+=("$REPO/testdata/$a") ;;
		pod)
			[ "$a" != node ] || continue
			pods+=("$a")
			POD_IP[$a]=${b%%,*}
			for i in ${b//,/ }; do
				[[ "$i" != *:* ]] || { POD_IP6[$a]=$i; break; }
			done
			pod_setup "$a" ${b//,/ } || { _fail "case $CASE: pod $a not set up"; return; } ;;
		echo)
			if [ "$a" = node ]; then
				# shellcheck disable=SC2086
				i=$("$ECHO_BIN" "$(_eflag "$b")" -d "$c" $d) &&
					PIDS+=("$i") || _fail "case $CASE: kpx_echo $c on the node did not start"
			else
				echo_start "$a" "$(_eflag "$b")" "$c" $d
			fi ;;
		esac
	done <<<"$lines"
	rm -rf "$TMPD/state" "$TMPD/agent.log"
	api_start "$OBJECTS" "${api[@]}"
	while IFS=$US read -r kind a b c d e f g h i j k l m n o p q r s t; do
		case "$kind" in
		phase)
			fes=()
			phase "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$i" "$j" ;;
		module) module_op "$a" ;;
		setsysctl) set_sysctl "$a" ;;
		invalid) invalid "$a" "$b" "$c" "$d" "$e" "$f" ;;
		pause)
			sleep "$a" ;;
		running)
			kill -0 "$AGENT_PID" 2>/dev/null
			assert_eq "agent still running" 0 $? ;;
		logclean)
			assert_no_match "agent log: no '$a'" "$a" "$(cat "$TMPD/agent.log")" ;;
		fe)
			fes+=("$a$US$b$US$c$US$d")
			check_fe "$a" "$b" "$c" "$d" "$e" "$f"
			FE_MS["$a $b"]=$(now_ms)
			[ -z "$g" ] || assert_lt_ms "$a $b: backends programmed after the phase's changes" \
				"$g" "$((FE_MS["$a $b"] - CHANGES_MS))" ;;
		settle)
			# the state holds: the same again after a while (the
			# action without backend checked at once, not polled)
			sleep "$a"
			for fe in "${fes[@]}"; do
				IFS=$US read -r a b c d <<<"$fe"
				[ -z "$d" ] || expect_empty_action "$a" "$b" "$d"
				expect_backends "$a" "$b" "$c" 2
			done ;;
		probe)
			probe "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$i" "$j" "$k" "$l" "$m" "$n" \
				"$o" "$p" "$q" "$r" "$s" "$t" ;;
		pins) pins_distinct "$a" "$b" ;;
		droppin) drop_pinned "$a" "$b" "$c" "$d" ;;
		after)
			after "$a" "$b" "$c" "$d" "$e" ;;
		sysctl) sysctl_check "$a" "$b" "$c" ;;
		ipvs) ipvs_service "$a" "$b" "$c" ;;
		logmatch) log_match "$a" "$b" "$c" ;;
		neighbour) neighbour "$a" "$b" "$c" ;;
		fbits) flag_bits "$a" "$b" "$c" "$d" ;;
		listed) listed "$a" "$b" "$c" "$d" ;;
		hold) hold_start "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" ;;
		hold_end) hold_check "$a" "$b" ;;
		syncsets) sync_sets "$a" ;;
		dmesgmark) DMESG0=$(dmesg | grep -cE -- "$a") ;;
		dmesgck)
			assert_eq "kernel log lines matching '$a' since the phase's start" "$DMESG0" \
				"$(dmesg | grep -cE -- "$a")" ;;
		flow) flow_start "$a" "$b" "$c" "$d" "$e" "$f" "$g" ;;
		flowck) flow_check "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$i" "$j" ;;
		health) health "$a" "$b" "$c" "$d" ;;
		ct) ct_check "$a" "$b" "$c" "$d" "$e" ;;
		ctfill) ct_fill "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" ;;
		ctstat) ct_stat_check "$a" "$b" "$c" ;;
		metric) metric_check "$a" "$b" ;;
		peakrss) peak_rss "$a" ;;
		mark) delta_mark ;;
		until) until_verdict "$a" "$b" "$c" "$d" "$e" "$f" ;;
		churn) churn_start "$a" "$b" "$c" "$d" ;;
		soak) soak "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" ;;
		flood) flood "$a" "$b" "$c" ;;
		churn_end) churn_wait ;;
		delta) delta_check "$a" "$b" "$c" "$d" "$e" "$f" "$g" ;;
		addr) host_addr "$a" ;;
		listen) check_listeners "$a" "$b" "$c" ;;
		esac
	done <<<"$lines"
	case_stop
	addrs_undo
	API_PID=
	for ((i = npids; i < ${#PIDS[@]}; i++)); do
		kill "${PIDS[i]}" 2>/dev/null
		wait "${PIDS[i]}" 2>/dev/null
	done
	PIDS=("${PIDS[@]:0:npids}")
	for i in "${pods[@]}"; do
		ip netns pids "$i" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$i" 2>/dev/null
	done
	clean_dataplane
	sysctl -q -w net.ipv4.conf.all.route_localnet="$localnet"
	for i in "${!SYSCTL0[@]}"; do
		sysctl -q -w "$i=${SYSCTL0[$i]}"
	done
	SYSCTL0=()
	log "case $CASE: $((FAILS - fails0)) of $((CHECKS - checks0)) checks failed ($((SECONDS - t0)) s)"
}

# clean_dataplane: nothing of the case left for the next (the module's
# frontends or the mode's rules, conntrack entries).
clean_dataplane() {
	if mode_is kpx; then
		"$KPXCTL" flush >/dev/null 2>&1
	else
		"$KPX_AGENT" --cleanup >/dev/null 2>&1
	fi
	conntrack -F >/dev/null 2>&1
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || read -r -a cases <<<"${KPX_CASES:-}"
if [ ${#cases[@]} = 0 ]; then
	for f in "$CASES_DIR"/*/expect.json; do
		[ -e "$f" ] || continue
		f=$(basename "$(dirname "$f")")
		[[ " ${KPX_CASES_EXCEPT:-} " == *" $f "* ]] || cases+=("$f")
	done
fi
[ ${#cases[@]} -gt 0 ] || skip "no testdata/cases/*/expect.json"
require_file /usr/bin/jq
case_init "${cases[0]}"
ip addr add 192.0.2.12/32 dev kpx-node
ip addr add 192.0.2.13/32 dev kpx-node
for nn in "${cases[@]}"; do
	[ -e "$CASES_DIR/$nn/expect.json" ] || { _fail "case $nn: no expect.json"; continue; }
	run_case "$nn"
done
ksft_exit
