#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_modeconf: the fallback modes' own KubeProxyConfiguration fields,
# from one --config file, in the mode they belong to and in kpx mode:
#
#   ipvs.strictARP true          ipvs: net.ipv4.conf.all.arp_ignore 0 -> 1,
#                                arp_announce 0 -> 2
#   ipvs.tcpTimeout 1h,          ipvs: IPVS_CMD_SET_CONFIG, read back with
#   tcpFinTimeout 30s,           ipvsadm -L --timeout (3600 30 45, from the
#   udpTimeout 45s               kernel's 900 120 300)
#   iptables.masqueradeBit 12    ipvs: the KPX-IPVS-* rules set and test mark
#                                0x1000 (iptables-save), no 0x4000, and a
#                                client outside the cluster CIDR is seen by
#                                the pods masqueraded (169.254.1.1): the
#                                mark set is the mark matched
#   ipvs.excludeCIDRs            ipvs: an IPVS service someone else adds on
#     [10.96.0.80/32]            a kpx-ipvs0 address in them (10.96.0.80:9999)
#   ipvs.syncPeriod 3s           outlives the full syncs; one on a VIP
#                                outside them (Service web2's 10.96.0.81:9999)
#                                is taken for a stale one and deleted
#
# then the same file with mode kpx: one "not applicable" line each at
# start-up, and neither the ARP sysctls nor the IPVS timeouts touched.
# Runs in the kpx-mode suite (the module for the kpx step).
#
#   cli 10.0.1.2 --veth-- node (kpx-agent, API server)
#                           |-- veth -- pod1 10.244.1.2 :8080
#                           `-- veth -- pod2 10.244.2.2 :8080
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

VIP=10.96.0.80
BOTH=10.244.1.2:8080,10.244.2.2:8080
ARPI=/proc/sys/net/ipv4/conf/all/arp_ignore
ARPA=/proc/sys/net/ipv4/conf/all/arp_announce
require_mode kpx
agent_require /usr/sbin/ipvsadm /usr/sbin/ipset /usr/sbin/iptables-save /usr/bin/curl /usr/bin/jq
for m in ip_vs ip_vs_rr dummy; do
	modprobe "$m" || skip "modprobe $m failed: the guest kernel has no IPVS"
done
setup_trap 'agent_lib_stop; "$KPX_AGENT" --cleanup >/dev/null 2>&1; ipvsadm --set 900 120 300; restore_saved'
web_pods 2 || skip "topology setup failed"
web_objects $VIP "$TMPD/objects1.json"
# and Service web2 on 10.96.0.81, the same pods
jq '.items += [.items[] | select(.kind != "Node") |
	.metadata.name |= sub("^web"; "web2") |
	if .kind == "Service" then .spec.clusterIP = "10.96.0.81" | .spec.clusterIPs = ["10.96.0.81"]
	else .metadata.labels["kubernetes.io/service-name"] = "web2" end]' \
	"$TMPD/objects1.json" >"$TMPD/objects.json" || skip "jq failed"
kpx_api_start --objects "$TMPD/objects.json"
save_values $ARPI $ARPA
echo 0 >$ARPI
echo 0 >$ARPA
ipvsadm --set 900 120 300 || skip "ipvsadm --set failed"
assert_eq "before: IPVS timeouts the kernel's" "Timeout (tcp tcpfin udp): 900 120 300" \
	"$(ipvsadm -L --timeout)"

# config MODE: the file, in $TMPD/config-MODE.yaml
config() {
	cat >"$TMPD/config-$1.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: $1
hostnameOverride: node-a
clusterCIDR: 10.244.0.0/16
clientConnection:
  kubeconfig: $KUBECONFIG_F
iptables:
  masqueradeBit: 12
ipvs:
  excludeCIDRs: [10.96.0.80/32]
  syncPeriod: 3s
  strictARP: true
  tcpTimeout: 1h
  tcpFinTimeout: 30s
  udpTimeout: 45s
EOF
}

# peers: the sources the pods saw, sorted, comma separated.
peers() { answer_field 3 | tr , '\n' | sed 's/^peer=//; s/:[0-9]*$//' | sort -u | paste -sd,; }

# --- ipvs mode ---------------------------------------------------------------------
config ipvs
: >"$TMPD/agent.log"
kpx_agent_start --config "$TMPD/config-ipvs.yaml"
wait_served 90 $VIP:80 "$BOTH"
assert_eq "ipvs: TCP $VIP:80 from cli, backends" "$BOTH" "$(answer_field 2)"
client_show_if_failed
assert_eq "ipvs: the source the pods see from cli (masqueraded by mark 0x1000)" 169.254.1.1 "$(peers)"
assert_eq "ipvs: strictARP: arp_ignore" 1 "$(cat $ARPI)"
assert_eq "ipvs: strictARP: arp_announce" 2 "$(cat $ARPA)"
assert_eq "ipvs: IPVS timeouts (ipvsadm -L --timeout)" "Timeout (tcp tcpfin udp): 3600 30 45" \
	"$(ipvsadm -L --timeout)"
assert_match "ipvs: the timeouts change logged with the old values" \
	'IPVS timeouts tcp 3600 s, tcpfin 30 s, udp 45 s \(were 900, 120, 300\)' "$(cat "$TMPD/agent.log")"
nat=$(iptables-save -t nat | grep -E '^-A KPX-IPVS-')
assert_match "ipvs: KPX-IPVS-MARK-MASQ sets bit 12" \
	'^-A KPX-IPVS-MARK-MASQ -j MARK --set-xmark 0x1000/0x1000$' "$(grep MARK-MASQ <<<"$nat" | grep -- -j.MARK)"
assert_match "ipvs: KPX-IPVS-POSTROUTING returns packets without bit 12" \
	'-A KPX-IPVS-POSTROUTING -m mark ! --mark 0x1000/0x1000 -j RETURN' "$nat"
assert_eq "ipvs: no rule of the default mark 0x4000" 0 "$(grep -c 0x4000 <<<"$nat")"
# others' IPVS services on the two VIPs kpx-ipvs0 holds
ipvsadm -A -t 10.96.0.80:9999 -s rr && ipvsadm -A -t 10.96.0.81:9999 -s rr || skip "ipvsadm -A failed"
for _ in $(seq 1 60); do
	ipvsadm -Ln | grep -q '10.96.0.81:9999' || break
	sleep 0.5
done
vs=$(ipvsadm -Ln | awk '$1 == "TCP" { print $2 }' | LC_ALL=C sort | paste -sd' ')
assert_eq "ipvs: excludeCIDRs: 10.96.0.80:9999 kept, 10.96.0.81:9999 deleted by a full sync as stale" \
	"10.96.0.80:80 10.96.0.80:9999 10.96.0.81:80" "$vs"
kpx_agent_stop
assert_eq "ipvs: agent exit status on SIGTERM" 0 "$AGENT_STATUS"
assert_rc "ipvs: kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup

# --- kpx mode: the same fields are not applicable -----------------------------------
echo 0 >$ARPI
echo 0 >$ARPA
ipvsadm --set 900 120 300
config kpx
: >"$TMPD/agent.log"
kpx_agent_start --config "$TMPD/config-kpx.yaml"
wait_served 90 $VIP:80 "$BOTH"
assert_eq "kpx: TCP $VIP:80 from cli, backends" "$BOTH" "$(answer_field 2)"
client_show_if_failed
log=$(cat "$TMPD/agent.log")
assert_match "kpx: ipvs.strictARP logged as not applicable" \
	'ipvs.strictARP: not applicable in the kpx mode' "$log"
assert_match "kpx: the IPVS timeouts logged as not applicable" \
	'ipvs.tcpTimeout, tcpFinTimeout, udpTimeout: not applicable in the kpx mode' "$log"
assert_match "kpx: ipvs.excludeCIDRs logged as not applicable" \
	'ipvs.excludeCIDRs: not applicable in the kpx mode' "$log"
assert_match "kpx: iptables.masqueradeBit logged as not applicable" \
	'iptables.masqueradeBit 12: not applicable in the kpx mode' "$log"
assert_eq "kpx: arp_ignore not touched" 0 "$(cat $ARPI)"
assert_eq "kpx: arp_announce not touched" 0 "$(cat $ARPA)"
assert_eq "kpx: IPVS timeouts not touched" "Timeout (tcp tcpfin udp): 900 120 300" \
	"$(ipvsadm -L --timeout)"
kpx_agent_stop
assert_eq "kpx: agent exit status on SIGTERM" 0 "$AGENT_STATUS"
assert_rc "kpx: kpx-agent --cleanup" 0 "$KPX_AGENT" --cleanup

ksft_exit
