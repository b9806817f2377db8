#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_sandbox: the agent runs as the shipped packaging runs it, on a
# "fresh node" whose conntrack sysctls are the kernel's (nf_conntrack_max
# 16384, hashsize 4096, TCP established 5 days, close_wait 60 s).  The
# sandboxes are taken from the files themselves (sandbox_spec.py), so the
# test follows any change to them:
#  1. DaemonSet (packaging/kubernetes/daemonset.yaml): the node-setup init
#     container's command under its securityContext (privileged, read-only
#     root), then the agent's under its own: uid 0, bounding set = the
#     capabilities added (NET_ADMIN), no_new_privs, every mount read-only
#     but /proc and /dev, /proc/sys read-only and runc's masked paths, the
#     service account token bound where the kubelet puts it, in-cluster
#     config from the env, host network.  The init step sets the conntrack
#     sysctls (values asserted); the agent logs the read-only /proc/sys
#     once, programs the Service, and the ClusterIP answers.
#  2. The same agent container without the init step: it keeps running and
#     serving, warns once per sysctl it cannot set, reports each in
#     kpx_sysctl_unset, and changes nothing.
#  3. systemd unit (packaging/systemd/kpx-agent.service): the ExecStartPre=
#     lines ('+': with full rights), then ExecStart= under the unit's
#     directives as systemd applies them (ProtectSystem=strict,
#     ProtectKernelTunables=, PrivateTmp=, PrivateDevices=, ProtectProc=,
#     CapabilityBoundingSet=, AmbientCapabilities=, NoNewPrivileges=, ...),
#     options from its EnvironmentFile=.  PID 1 of the VM is not systemd,
#     so the mount and credential directives are emulated; those that need
#     systemd itself (seccomp filters, namespace restrictions) are listed in
#     the log as not emulated.  The sandbox is checked from outside
#     (/proc/PID/status, /proc/PID/mountinfo).
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (kpx) --veth-- pod1
# 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.50:80/tcp -> both.
# Five sandboxed starts (two init steps, three agents) take minutes under TCG:
# kpx-timeout: 600
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

SPEC=$SELFTESTS/sandbox_spec.py
RUN=$SELFTESTS/sandbox_run.py
DS=$REPO/packaging/kubernetes/daemonset.yaml
UNITF=$REPO/packaging/systemd/kpx-agent.service
BIN=/usr/sbin/kpx-agent
SA=/run/secrets/kubernetes.io/serviceaccount

agent_require "$SPEC" "$RUN" "$DS" "$UNITF"
command -v setpriv >/dev/null || skip "no setpriv"
python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml"

sandbox_stop() {
	agent_lib_stop
	restore_saved
}
setup_trap sandbox_stop

save_values $NF/nf_conntrack_max $NF/nf_conntrack_tcp_timeout_established \
	$NF/nf_conntrack_tcp_timeout_close_wait $HASH

# The kernel's values on a node nobody has tuned (1 GiB, defaults).
fresh_node() {
	echo 16384 >$NF/nf_conntrack_max
	echo 4096 >$HASH
	echo 432000 >$NF/nf_conntrack_tcp_timeout_established
	echo 60 >$NF/nf_conntrack_tcp_timeout_close_wait
}

web_pods 2 || skip "topology setup failed"
web_objects 10.96.0.50 "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"
port=$(cat "$TMPD/state/port")

# The image's binary is this build.
put_file "$KPX_AGENT" $BIN
chmod 755 $BIN

# wait_exec PID: until PID runs kpx-agent (after unshare, bash, setpriv, env).
wait_exec() {
	local t0=$EPOCHSECONDS c

	while [ $((EPOCHSECONDS - t0)) -lt 60 ]; do
		c=
		read -r c 2>/dev/null </proc/"$1"/comm
		[ "$c" = kpx-agent ] && return 0
		sleep 0.1
	done
	return 1
}

# assert_sandbox LABEL PID CAPMASK: the running agent's credentials and mounts.
assert_sandbox() {
	local label=$1 pid=$2 mask=$3 st mi

	st=$(cat /proc/"$pid"/status)
	mi=$(cat /proc/"$pid"/mountinfo)
	assert_eq "$label: uid" 0 "$(awk '/^Uid:/ { print $2 }' <<<"$st")"
	assert_eq "$label: bounding set" "$mask" "$(awk '/^CapBnd:/ { print $2 }' <<<"$st")"
	assert_eq "$label: effective set" "$mask" "$(awk '/^CapEff:/ { print $2 }' <<<"$st")"
	assert_eq "$label: no_new_privs" 1 "$(awk '/^NoNewPrivs:/ { print $2 }' <<<"$st")"
	assert_match "$label: / read-only" '^ro(,|$)' "$(awk '$5 == "/" { print $6 }' <<<"$mi" | tail -n1)"
	assert_match "$label: /proc/sys read-only" '^ro(,|$)' \
		"$(awk '$5 == "/proc/sys" { print $6 }' <<<"$mi" | tail -n1)"
	assert_match "$label: /sys read-only" '^ro(,|$)' "$(awk '$5 == "/sys" { print $6 }' <<<"$mi" | tail -n1)"
}

# serves LABEL: the Service is programmed and both pods answer its ClusterIP.
serves() {
	local t

	t=$(wait_proc_backends tcp 10.96.0.50:80 10.244.1.2:8080,10.244.2.2:8080 60)
	assert_ne "$1: 10.96.0.50:80 programmed" timeout "$t"
	client_all 10.244.1.2:8080,10.244.2.2:8080 cli -n 12 -t 2000 10.96.0.50:80
	assert_eq "$1: connections answered" 12 "$(summary_field ok)"
	assert_eq "$1: backends answering" 10.244.1.2:8080,10.244.2.2:8080 "$(answer_field 2)"
	client_show_if_failed
}

# wait_sync N: until the agent has finished N syncs (30 s): its
# kubeproxy_sync_proxy_rules_duration_seconds count (the "sync done" line
# is at --v 2, which the shipped files do not set).
wait_sync() {
	local t0=$EPOCHSECONDS n

	while [ $((EPOCHSECONDS - t0)) -lt 30 ]; do
		n=$(curl -sS --max-time 5 http://127.0.0.1:10249/metrics 2>/dev/null |
			awk '$1 ~ /^kubeproxy_sync_proxy_rules_duration_seconds_count([{]|$)/ && $2 > n { n = $2 }
			     END { print n + 0 }')
		[ "${n:-0}" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

metric_lines() { curl -sS --max-time 5 http://127.0.0.1:10249/metrics | grep '^kpx_sysctl_unset' | sort; }

# --- 1. DaemonSet -----------------------------------------------------------
spec=$(python3 "$SPEC" daemonset "$DS" spec.nodeName=node-a \
	apiServerHost=127.0.0.1 apiServerPort="$port") || { log "$spec"; skip "cannot read $DS"; }
eval "$spec"
assert_eq "DaemonSet: host network" 1 "$HOSTNET"
assert_eq "DaemonSet: node-setup is privileged" 1 "$SETUP_PRIV"
assert_eq "DaemonSet: the agent is not" 0 "$AGENT_PRIV"

mkdir -p "$TMPD/sa"
cp "$TMPD/certs/token" "$TMPD/certs/ca.crt" "$TMPD/sa/"

# container_opts PREFIX: sandbox_run.sh options and setpriv arguments for
# the container whose sandbox_spec.py variables start with PREFIX, as runc
# builds it (OPTS, SP); ENVV its environment.
container_opts() {
	local p=$1 priv ro caps uid nnp m
	local -n env_ref=${p}ENV mounts_ref=${p}MOUNTS

	priv=${p}PRIV ro=${p}RO_ROOT caps=${p}CAPS uid=${p}UID nnp=${p}NNP
	OPTS=(--tmpfs /run --bind "$TMPD/sa:$SA")
	if [ "${!ro}" = 1 ]; then
		OPTS+=(--ro-root --rw /proc --rw /dev --rw /dev/pts --rw /dev/shm --ro /run)
		[ "${!priv}" = 1 ] && OPTS+=(--rw /sys --rw /sys/kernel/debug)
	fi
	SP=(--reuid="${!uid}" --regid=0 --clear-groups)
	if [ "${!priv}" != 1 ]; then
		OPTS+=(--ro /proc/bus --ro /proc/fs --ro /proc/irq --ro /proc/sys
		       --ro /proc/sysrq-trigger --ro /sys)
		for m in /proc/acpi /proc/kcore /proc/keys /proc/latency_stats /proc/timer_list \
			 /proc/sched_debug /proc/scsi /sys/firmware; do
			OPTS+=(--mask "$m")
		done
		SP+=(--bounding-set=-all${!caps:+,+${!caps//,/,+}} --inh-caps=-all)
	fi
	[ "${!nnp}" = 1 ] && SP+=(--no-new-privs)
	for m in "${mounts_ref[@]}"; do
		case "$m" in
		/lib/modules:ro) ;;	# hostPath /lib/modules: the node's, read-only
		*) log "container mount $m: not read by the agent, not emulated" ;;
		esac
	done
	ENVV=(PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/ "${env_ref[@]}")
}

# run_sandboxed ARGV...: ARGV in a mount namespace of its own, sandboxed by
# OPTS, SP and ENVV; execs, so that "run_sandboxed ... &" leaves the agent's
# PID in $! (in the foreground: in a subshell).
run_sandboxed() {
	exec python3 "$RUN" "${OPTS[@]}" -- "${SP[@]}" -- env -i "${ENVV[@]}" "$@"
}

fresh_node
assert_ct "fresh node" 16384 4096 432000 60
log "node-setup: ${SETUP_ARGV[*]}"
container_opts SETUP_
(run_sandboxed "${SETUP_ARGV[@]}") >"$TMPD/setup.log" 2>&1
rc=$?
sed 's/^/#   /' "$TMPD/setup.log"
assert_eq "DaemonSet node-setup: exit status" 0 "$rc"
assert_ct "after node-setup" "$CT_WANT_MAX" $((CT_WANT_MAX / 4)) 86400 3600

# ds_agent_start: the agent's container, output appended to agent.log.
ds_agent_start() {
	container_opts AGENT_
	run_sandboxed "${AGENT_ARGV[@]}" >>"$TMPD/agent.log" 2>&1 &
	AGENT_PID=$!
	wait_exec "$AGENT_PID" || log "the agent did not start: $(tail -n 5 "$TMPD/agent.log")"
}

log "agent: ${AGENT_ARGV[*]} (${AGENT_ENV[*]})"
: >"$TMPD/agent.log"
ds_agent_start
assert_sandbox "DaemonSet agent" "$AGENT_PID" 0000000000001000
serves "DaemonSet agent"
wait_sync 1
assert_eq "DaemonSet agent: read-only /proc/sys logged once" 1 \
	"$(grep -c '/proc/sys is read-only' "$TMPD/agent.log")"
assert_eq "DaemonSet agent: no sysctl warning (node-setup set them)" 0 \
	"$(grep -c 'cannot set' "$TMPD/agent.log")"
assert_eq "DaemonSet agent: no kpx_sysctl_unset series" "" "$(metric_lines)"
assert_match "DaemonSet agent: /healthz" '"nodeEligible":true' \
	"$(curl -sS --max-time 5 http://127.0.0.1:10256/healthz)"
assert_eq "DaemonSet agent: still running" 0 "$(kill -0 "$AGENT_PID" 2>/dev/null; echo $?)"
kpx_agent_stop
assert_eq "DaemonSet agent: exit status after SIGTERM" 0 "$AGENT_STATUS"

# --- 2. the agent's container without the init step --------------------------
# Each agent below must program the frontend itself.
unprogram() {
	"$KPXCTL" flush >/dev/null
	assert_eq "$1: module flushed" absent "$(proc_backends tcp 10.96.0.50:80)"
}

fresh_node
unprogram "no init step"
: >"$TMPD/agent.log"
ds_agent_start
serves "no init step"
wait_sync 1
sleep 2
assert_eq "no init step: still running" 0 "$(kill -0 "$AGENT_PID" 2>/dev/null; echo $?)"
for s in nf_conntrack_max:16384:$CT_WANT_MAX nf_conntrack_tcp_timeout_established:432000:86400 \
	 nf_conntrack_tcp_timeout_close_wait:60:3600; do
	IFS=: read -r name cur want <<<"$s"
	assert_eq "no init step: net.netfilter.$name warned once" 1 \
		"$(grep -c "cannot set net.netfilter.$name = $want (it is $cur): Read-only file system" "$TMPD/agent.log")"
done
assert_eq "no init step: hashsize left, with a warning" 1 "$(grep -c "cannot set $HASH" "$TMPD/agent.log")"
assert_eq "no init step: kpx_sysctl_unset" \
	"kpx_sysctl_unset{sysctl=\"net.netfilter.nf_conntrack_max\"} 1
kpx_sysctl_unset{sysctl=\"net.netfilter.nf_conntrack_tcp_timeout_close_wait\"} 1
kpx_sysctl_unset{sysctl=\"net.netfilter.nf_conntrack_tcp_timeout_established\"} 1" "$(metric_lines)"
assert_ct "no init step: nothing written" 16384 4096 432000 60
kpx_agent_stop
assert_eq "no init step: exit status after SIGTERM" 0 "$AGENT_STATUS"

# --- 3. systemd unit ----------------------------------------------------------
spec=$(python3 "$SPEC" unit "$UNITF") || { log "$spec"; skip "cannot read $UNITF"; }
eval "$spec"
log "unit directives not emulated (need systemd): ${NOT_EMULATED[*]}"
envfile=${ENVFILE[0]#-}
cp "$TMPD/state/kubeconfig" "$TMPD/kubeconfig"
put_file "$TMPD/kubeconfig" /etc/kpx/kubeconfig
echo 'KPX_AGENT_OPTS="--kubeconfig /etc/kpx/kubeconfig --hostname-override node-a"' >"$TMPD/envfile"
put_file "$TMPD/envfile" "$envfile"

# unit_argv LINE: ARGV of an Exec line, its prefixes in PFX, $VARs from the
# EnvironmentFile split into words as systemd does for a bare $VAR.
unit_argv() {
	local line=$1 w

	PFX=
	while [[ "$line" == [-+@:\!]* ]]; do
		PFX+=${line:0:1}
		line=${line:1}
	done
	ARGV=()
	for w in $line; do
		if [[ "$w" == '$'* ]]; then
			# shellcheck disable=SC2046
			ARGV+=($(. "$envfile"; eval "echo \"\${${w#\$}}\""))
		else
			ARGV+=("$w")
		fi
	done
}

fresh_node
for line in "${PRE[@]}"; do
	unit_argv "$line"
	[[ "$PFX" == *+* ]] || { _fail "ExecStartPre=$line: sandboxed pre steps not emulated"; continue; }
	log "ExecStartPre (full rights): ${ARGV[*]}"
	"${ARGV[@]}" >"$TMPD/pre.log" 2>&1
	rc=$?
	sed 's/^/#   /' "$TMPD/pre.log"
	if [ $rc != 0 ] && [ "${ARGV[*]}" = "/sbin/modprobe kpx" ] && [ -d /sys/module/kpx ]; then
		log "  (kpx.ko was insmod'ed by the suite, not installed: modprobe cannot find it)"
		rc=0
	fi
	[[ "$PFX" == *-* ]] || assert_eq "ExecStartPre=$line: exit status" 0 "$rc"
done
assert_ct "after the unit's ExecStartPre=" "$CT_WANT_MAX" $((CT_WANT_MAX / 4)) 86400 3600

# unit_opts: sandbox_run.sh options and setpriv arguments from U_*.
unit_opts() {
	local c caps=

	OPTS=() SP=()
	case "${U_ProtectProc:-default}${U_ProcSubset:+/$U_ProcSubset}" in
	default) ;;
	default/pid) OPTS+=(--proc subset=pid) ;;
	*/pid) OPTS+=(--proc "hidepid=${U_ProtectProc%/*},subset=pid") ;;
	*) OPTS+=(--proc "hidepid=$U_ProtectProc") ;;
	esac
	[ "${U_ProtectKernelModules:-no}" = yes ] &&
		OPTS+=(--inaccessible /lib/modules --inaccessible /usr/lib/modules)
	[ "${U_ProtectKernelLogs:-no}" = yes ] && OPTS+=(--inaccessible /proc/kmsg --inaccessible /dev/kmsg)
	[ "${U_ProtectKernelTunables:-no}" = yes ] &&
		OPTS+=(--inaccessible /proc/kallsyms --inaccessible /proc/kcore)
	case "${U_ProtectHome:-no}" in
	yes) OPTS+=(--inaccessible /home --inaccessible /root --inaccessible /run/user) ;;
	read-only) OPTS+=(--ro /home --ro /root --ro /run/user) ;;
	tmpfs) OPTS+=(--tmpfs /home --tmpfs /root --tmpfs /run/user) ;;
	esac
	case "${U_ProtectSystem:-no}" in
	strict) OPTS+=(--ro-root --rw /proc --rw /dev --rw /dev/pts --rw /dev/shm)
		[ "${U_ProtectKernelTunables:-no}" = yes ] || OPTS+=(--rw /sys) ;;
	full) OPTS+=(--ro /usr --ro /boot --ro /efi --ro /etc) ;;
	yes) OPTS+=(--ro /usr --ro /boot --ro /efi) ;;
	esac
	[ "${U_PrivateTmp:-no}" = yes ] && OPTS+=(--tmpfs /tmp --tmpfs /var/tmp)
	[ "${U_PrivateDevices:-no}" = yes ] && OPTS+=(--private-dev)
	[ "${U_ProtectKernelTunables:-no}" = yes ] &&
		OPTS+=(--ro /proc/sys --ro /proc/sysrq-trigger --ro /proc/latency_stats --ro /proc/acpi
		       --ro /proc/timer_stats --ro /proc/fs --ro /proc/irq --ro /sys)
	[ "${U_ProtectControlGroups:-no}" = yes ] && OPTS+=(--ro /sys/fs/cgroup)
	[ -z "${U_UMask:-}" ] || OPTS+=(--umask "$U_UMask")
	[ "${U_User:-root}" = root ] || { _fail "User=$U_User not emulated"; return; }
	SP=(--reuid=0 --regid=0 --init-groups)
	for c in ${U_CapabilityBoundingSet:-}; do
		c=${c#CAP_}
		caps+=,+${c,,}
	done
	[ -z "${U_CapabilityBoundingSet:-}" ] || SP+=(--bounding-set=-all$caps)
	caps=
	for c in ${U_AmbientCapabilities:-}; do
		c=${c#CAP_}
		caps+=,+${c,,}
	done
	SP+=(--inh-caps=-all$caps)
	[ -z "$caps" ] || SP+=(--ambient-caps=-all$caps)
	[ "${U_NoNewPrivileges:-no}" = yes ] && SP+=(--no-new-privs)
	for c in ${U_SecureBits:-}; do
		SP+=(--securebits=+${c//-/_})
	done
	ENVV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
}

unit_argv "$START"
unit_opts
unprogram "unit agent"
log "ExecStart (sandboxed): ${ARGV[*]}"
: >"$TMPD/agent.log"
run_sandboxed "${ARGV[@]}" >>"$TMPD/agent.log" 2>&1 &
AGENT_PID=$!
wait_exec "$AGENT_PID" || log "the agent did not start: $(tail -n 5 "$TMPD/agent.log")"
assert_sandbox "unit agent" "$AGENT_PID" 0000000000001000
assert_eq "unit agent: ambient set" 0000000000001000 \
	"$(awk '/^CapAmb:/ { print $2 }' /proc/"$AGENT_PID"/status)"
assert_eq "unit agent: /tmp is its own tmpfs" tmpfs \
	"$(awk '$5 == "/tmp" { print $9 }' /proc/"$AGENT_PID"/mountinfo | tail -n1)"
serves "unit agent"
wait_sync 1
assert_eq "unit agent: read-only /proc/sys logged once" 1 \
	"$(grep -c '/proc/sys is read-only' "$TMPD/agent.log")"
assert_eq "unit agent: no sysctl warning (ExecStartPre= set them)" 0 \
	"$(grep -c 'cannot set' "$TMPD/agent.log")"
assert_eq "unit agent: still running" 0 "$(kill -0 "$AGENT_PID" 2>/dev/null; echo $?)"
kpx_agent_stop
assert_eq "unit agent: exit status after SIGTERM" 0 "$AGENT_STATUS"

if [ "$FAILS" -gt 0 ]; then
	log "agent log (tail):"
	tail -n 40 "$TMPD/agent.log" | sed 's/^/#   /'
fi
ksft_exit
