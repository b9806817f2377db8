#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_systemd: the shipped unit (packaging/systemd/kpx-agent.service,
# copied unchanged) run by the real systemd of the Debian root, on a "fresh
# node" whose conntrack sysctls are the kernel's.  PID 1 of the VM is not
# systemd, so systemd runs as a container's init: PID 1 of new PID, mount,
# cgroup and UTS namespaces (its own cgroup2 subtree, a fresh /run,
# $container set), in the VM's network namespace, where kpx.ko and the test
# API server are.  Only /etc/default/kpx-agent (the unit's EnvironmentFile=:
# the kubeconfig and the node name) and /etc/kpx/kubeconfig are the test's.
# Asserted:
#  - the unit reaches active and does not restart; ExecStartPre=+ (modprobe,
#    kpx-agent --init-only) set the conntrack sysctls (values read back);
#  - the main process logged the read-only /proc/sys once (journal), no
#    sysctl warning, and keeps running;
#  - the Service is programmed in kpx.ko (kpxctl list, /proc/net/kpx) and
#    both pods answer its ClusterIP;
#  - /proc/PID/status of the main process: Seccomp 2 (SystemCallFilter=,
#    RestrictAddressFamilies=, MemoryDenyWriteExecute=, RestrictNamespaces=
#    ... are seccomp filters), NoNewPrivs 1, CapBnd = CapEff = CapAmb =
#    CAP_NET_ADMIN; its mounts: / and /proc/sys read-only, /tmp and /dev of
#    its own; its UTS namespace is not systemd's (ProtectHostname=);
#  - systemctl stop: SIGTERM, result "success", the frontend stays.
# What differs from a node, and why:
#  - the units that a boot would start before basic.target and that would
#    act on the whole VM (systemd-tmpfiles-setup empties /tmp, systemd-sysctl
#    sets the sysctls under test, udev, timers, ...) are masked in the
#    container's /run/systemd/system; journald runs (the unit logs to it);
#  - kpx.ko is loaded by the suite (insmod), not installed: modprobe sees a
#    module tree of the container's own holding kpx.ko, finds it live and
#    does nothing;
#  - every directive of the unit is applied by systemd itself, none fails
#    here; the seccomp ones are checked as a whole (filter mode, filters
#    installed), not syscall by syscall.
# systemd logs to the container's journal (kmsg before journald runs).
# Under TCG on a loaded host the whole test has taken 170 s:
# kpx-timeout: 420
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (kpx) --veth-- pod1
# 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.50:80/tcp -> both.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

UNITF=$REPO/packaging/systemd/kpx-agent.service
BIN=/usr/sbin/kpx-agent
SYSTEMD=/lib/systemd/systemd
UNIT=kpx-agent.service

agent_require "$UNITF" "$SYSTEMD"
for c in unshare nsenter systemctl journalctl depmod; do
	command -v $c >/dev/null || skip "no $c"
done

CG=$TMPD/cgroup		# the VM's cgroup2 hierarchy, for the test
CTCG=$CG/kpx-systemd	# the container's root cgroup
CT_PID=			# the container's init (systemd), as the VM sees it
UNSHARE_PID=

# ct CMD...: CMD in the container's mount and PID namespaces.
ct() { nsenter -t "$CT_PID" -m -p -- "$@"; }

systemd_stop() {
	if mountpoint -q "$CG"; then
		# Every process of the container (unshare, systemd, its units).
		[ ! -e "$CTCG/cgroup.kill" ] || echo 1 >"$CTCG/cgroup.kill"
		[ -z "$UNSHARE_PID" ] || wait "$UNSHARE_PID" 2>/dev/null
		# Leaf first: a cgroup goes once it has no children and no tasks.
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			find "$CTCG" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$CTCG" ] || break
			sleep 0.5
		done
		umount "$CG"
	fi
	agent_lib_stop
	restore_saved
}
setup_trap systemd_stop

save_values $NF/nf_conntrack_max $NF/nf_conntrack_tcp_timeout_established \
	$NF/nf_conntrack_tcp_timeout_close_wait $HASH


web_pods 2 || skip "topology setup failed"
web_objects 10.96.0.50 "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"
"$KPXCTL" flush >/dev/null

# The image's binary is this build; the node's configuration.
put_file "$KPX_AGENT" $BIN
chmod 755 $BIN
cp "$TMPD/state/kubeconfig" "$TMPD/kubeconfig"
put_file "$TMPD/kubeconfig" /etc/kpx/kubeconfig
echo 'KPX_AGENT_OPTS="--kubeconfig /etc/kpx/kubeconfig --hostname-override node-a"' >"$TMPD/envfile"
put_file "$TMPD/envfile" /etc/default/kpx-agent

# The kernel's values on a node nobody has tuned (1 GiB, defaults).
echo 16384 >$NF/nf_conntrack_max
echo 4096 >$HASH
echo 432000 >$NF/nf_conntrack_tcp_timeout_established
echo 60 >$NF/nf_conntrack_tcp_timeout_close_wait
assert_ct "fresh node" 16384 4096 432000 60

# The container's /run/systemd/system: the unit, the target that starts it,
# masks for what would act on the whole VM.
kver=$(uname -r)
RUNSYS=$TMPD/run-system
mkdir -p "$RUNSYS" "$TMPD/mods/lib/modules/$kver/updates"
cp "$UNITF" "$RUNSYS/$UNIT"
cat >"$RUNSYS/kpx-test.target" <<EOF
[Unit]
Description=kpx test: the agent's unit
Wants=$UNIT
EOF
masked=()
for t in sysinit sockets timers paths basic local-fs network-online multi-user; do
	for u in /lib/systemd/system/$t.target.wants/* /etc/systemd/system/$t.target.wants/*; do
		[ -e "$u" ] || [ -L "$u" ] || continue
		u=${u##*/}
		case "$u" in
		systemd-journald.service|systemd-journald.socket|systemd-journald-dev-log.socket) continue ;;
		esac
		ln -sfn /dev/null "$RUNSYS/$u"
		masked+=("$u")
	done
done
for u in tmp.mount systemd-remount-fs.service; do
	ln -sfn /dev/null "$RUNSYS/$u"
	masked+=("$u")
done
log "masked in the container: ${masked[*]}"
cp "$KPX_KO" "$TMPD/mods/lib/modules/$kver/updates/kpx.ko"
depmod -b "$TMPD/mods" "$kver" 2>/dev/null
[ -s "$TMPD/mods/lib/modules/$kver/modules.dep.bin" ] || skip "depmod made no module index"

mkdir -p "$CG"
mount -t cgroup2 cgroup2 "$CG" || skip "cannot mount cgroup2"
mkdir "$CTCG" || skip "cannot make $CTCG"

# Inside: the container's mounts (private), its cgroup, then systemd as
# PID 1 of new PID, cgroup and UTS (it sets the host name) namespaces, with
# a procfs and a cgroup2 mount of its own.
cat >"$TMPD/ct.sh" <<EOF
set -e
mount --make-rprivate /
echo \$\$ >"$CTCG/cgroup.procs"
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/systemd /run/lock
cp -a "$RUNSYS" /run/systemd/system
mkdir -p /run/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\nRateLimitBurst=0\n' >/run/systemd/journald.conf.d/kpx-test.conf
mount --bind "$TMPD/mods/lib/modules/$kver" "/lib/modules/$kver"
exec unshare --pid --fork --cgroup --uts --mount --mount-proc --propagation private -- \
	/bin/bash -c 'mount -t cgroup2 cgroup2 /sys/fs/cgroup &&
		exec env -i container=kpx-test PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		$SYSTEMD --unit=kpx-test.target --log-target=journal-or-kmsg --log-level=info --show-status=no'
EOF
log "starting $SYSTEMD in its own PID, mount, cgroup and UTS namespaces"
unshare --mount -- bash "$TMPD/ct.sh" >"$TMPD/systemd.log" 2>&1 &
UNSHARE_PID=$!
sd_exe=$(readlink -f $SYSTEMD)
t0=$EPOCHSECONDS
while [ $((EPOCHSECONDS - t0)) -lt 90 ]; do
	for p in $(cat "$CTCG"/cgroup.procs "$CTCG"/init.scope/cgroup.procs 2>/dev/null); do
		[ "$(readlink /proc/"$p"/exe 2>/dev/null)" = "$sd_exe" ] && CT_PID=$p
	done
	[ -n "$CT_PID" ] && [ -S /proc/"$CT_PID"/root/run/systemd/private ] && break
	sleep 0.2
done
if [ -z "$CT_PID" ] || [ ! -S /proc/"$CT_PID"/root/run/systemd/private ]; then
	sed 's/^/#   /' "$TMPD/systemd.log"
	_fail "systemd did not start"
	ksft_exit
fi
assert_eq "systemd is PID 1 of its namespace" "$CT_PID 1" \
	"$(awk '/^NSpid:/ { print $2, $3 }' /proc/"$CT_PID"/status)"

# wait_state STATE SECONDS: until the unit's ActiveState is STATE.
wait_state() {
	local t0=$EPOCHSECONDS s

	while [ $((EPOCHSECONDS - t0)) -lt "$2" ]; do
		s=$(ct systemctl show -P ActiveState $UNIT 2>/dev/null)
		[ "$s" = "$1" ] && return 0
		sleep 0.5
	done
	echo "$s"
	return 1
}
prop() { ct systemctl show -P "$1" $UNIT; }
journal() { ct journalctl -q -o cat -u $UNIT; }

st=$(wait_state active 90)
assert_eq "$UNIT active" "" "$st"
assert_eq "systemctl is-active $UNIT" active "$(ct systemctl is-active $UNIT)"
assert_ct "after ExecStartPre=+" "$CT_WANT_MAX" $((CT_WANT_MAX / 4)) 86400 3600

# The main process, as the VM sees it: the service cgroup's only task, once
# the agent's start-up removal of other modes' leftovers, which runs
# iptables-save, ipvsadm and the like as children, is over (at most 30 s).
for _ in $(seq 60); do
	[ "$(wc -l <"$CTCG/system.slice/$UNIT/cgroup.procs" 2>/dev/null)" = 1 ] && break
	sleep 0.5
done
main=$(cat "$CTCG/system.slice/$UNIT/cgroup.procs" 2>/dev/null)
assert_eq "$UNIT: one process, systemd's MainPID" "$(prop MainPID)" \
	"$(awk '/^NSpid:/ { print $3 }' /proc/"$main"/status 2>/dev/null)"
assert_eq "main process is kpx-agent" $BIN "$(readlink /proc/"$main"/exe)"
st=$(cat /proc/"$main"/status)
assert_eq "main: Seccomp (filter mode)" 2 "$(awk '/^Seccomp:/ { print $2 }' <<<"$st")"
assert_ge "main: seccomp filters" 1 "$(awk '/^Seccomp_filters:/ { print $2 }' <<<"$st")"
assert_eq "main: NoNewPrivs" 1 "$(awk '/^NoNewPrivs:/ { print $2 }' <<<"$st")"
assert_eq "main: uid" 0 "$(awk '/^Uid:/ { print $2 }' <<<"$st")"
for s in CapBnd CapEff CapPrm CapAmb; do
	assert_eq "main: $s = CAP_NET_ADMIN" 0000000000001000 "$(awk -v s="$s:" '$1 == s { print $2 }' <<<"$st")"
done
mi=$(cat /proc/"$main"/mountinfo)
assert_match "main: / read-only" '^ro(,|$)' "$(awk '$5 == "/" { print $6 }' <<<"$mi" | tail -n1)"
assert_match "main: /proc/sys read-only" '^ro(,|$)' "$(awk '$5 == "/proc/sys" { print $6 }' <<<"$mi" | tail -n1)"
assert_eq "main: /tmp its own tmpfs" tmpfs "$(awk '$5 == "/tmp" { print $9 }' <<<"$mi" | tail -n1)"
assert_eq "main: /dev its own tmpfs (PrivateDevices=)" tmpfs "$(awk '$5 == "/dev" { print $9 }' <<<"$mi" | tail -n1)"
assert_ne "main: UTS namespace of its own (ProtectHostname=)" "$(readlink /proc/"$CT_PID"/ns/uts)" \
	"$(readlink /proc/"$main"/ns/uts)"
assert_eq "main: network namespace is the VM's" "$(readlink /proc/self/ns/net)" "$(readlink /proc/"$main"/ns/net)"

t=$(wait_proc_backends tcp 10.96.0.50:80 10.244.1.2:8080,10.244.2.2:8080 60)
assert_ne "10.96.0.50:80 programmed" timeout "$t"
assert_match "kpxctl list: the Service's frontend" '10\.96\.0\.50:80' "$("$KPXCTL" list 2>&1)"
client_all 10.244.1.2:8080,10.244.2.2:8080 cli -n 12 -t 2000 10.96.0.50:80
assert_eq "connections answered" 12 "$(summary_field ok)"
assert_eq "backends answering" 10.244.1.2:8080,10.244.2.2:8080 "$(answer_field 2)"
client_show_if_failed

t0=$EPOCHSECONDS
while [ $((EPOCHSECONDS - t0)) -lt 30 ]; do
	journal | grep -q '/proc/sys is read-only' && break
	sleep 0.5
done
j=$(journal)
assert_eq "read-only /proc/sys logged once" 1 "$(grep -c '/proc/sys is read-only' <<<"$j")"
assert_eq "no sysctl warning (ExecStartPre= set them)" 0 "$(grep -c 'cannot set' <<<"$j")"
assert_eq "$UNIT: no restart" 0 "$(prop NRestarts)"
assert_eq "$UNIT: still the same main process" "$main" "$(cat "$CTCG/system.slice/$UNIT/cgroup.procs")"
assert_eq "$UNIT still active" active "$(ct systemctl is-active $UNIT)"

ct systemctl stop $UNIT
assert_eq "$UNIT after stop" inactive "$(ct systemctl is-active $UNIT)"
assert_eq "$UNIT: result after SIGTERM" success "$(prop Result)"
assert_eq "frontend kept after stop" 10.244.1.2:8080,10.244.2.2:8080 "$(proc_backends tcp 10.96.0.50:80)"

if [ "$FAILS" -gt 0 ]; then
	log "the container's start and systemd's log:"
	sed 's/^/#   /' "$TMPD/systemd.log"
	ct journalctl -q -o cat _PID=1 | tail -n 40 | sed 's/^/#   /'
	log "systemctl status:"
	ct systemctl --no-pager status $UNIT 2>&1 | sed 's/^/#   /'
	ct systemctl --no-pager list-jobs 2>&1 | sed 's/^/#   /'
	log "$UNIT's journal (tail):"
	journal | tail -n 40 | sed 's/^/#   /'
fi
ksft_exit
