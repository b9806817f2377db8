#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# modes/ipvs.sh: modes/basic.sh's hooks for --proxy-mode ipvs
# (agent/dp/ipvs/): IPVS services and destinations (ipvsadm -Ln), the
# kpx-ipvs0 dummy holding the VIPs, ipsets KPX-IPVS-* and iptables chains
# KPX-IPVS-*.  mode_eps counts the serving destinations (weight > 0) of the
# common fixture's services.  Beyond the common checks, with objects of its
# own (namespace shop, written by mode_objects; pods web0 10.244.1.10
# fd00:10:244:1::10 and web1 10.244.1.11 fd00:10:244:1::11, mode_topology):
# shop/web LoadBalancer 198.51.100.60 ClusterIP 10.96.40.10, 80/TCP -> 8080
# NodePort 30280 and 53/UDP -> 5353, eTP Cluster; shop/web6 ClusterIP
# fd00:10:96::40:10 (wrr); shop/empty ClusterIP 10.96.40.20 80/TCP + 80/UDP,
# no endpoint; shop/local LoadBalancer 198.51.100.62 eTP Local whose only
# pod is on node-b; shop/fw LoadBalancer 198.51.100.61 (mh) with
# loadBalancerSourceRanges 10.0.1.0/24; shop/sticky ClusterIP 10.96.40.30
# with ClientIP affinity 60 s.  Checks: the schedulers and persistence,
# IPVS conntrack on, kpx-ipvs0 holds the VIPs and not the node address, the
# ipsets' entries; ClusterIP from cli / node / IPv6 reaches both pods, UDP
# too, the backend sees the masqueraded source for node clients, NodePort
# and LB IP (eTP Cluster), the hairpin case, no-endpoint reject (ICMP port
# unreachable: ECONNREFUSED fast, TCP and UDP), eTP Local drop on node-a,
# source ranges (cli allowed, node dropped), mh and persistence keep a
# client on one backend; a restart adopts the state without rewriting it
# (no "set" in the new agent's log, the table and the counters kept); an
# endpoint change is a destination change (the hairpin ipset entry of a
# port no longer used goes); kpx-agent --cleanup removes our IPVS
# services, kpx-ipvs0, the ipsets and the chains, and leaves a foreign
# IPVS service alone.  Sourced.

MODE_FLAGS=()
CIP=10.96.40.10
CIP6=fd00:10:96::40:10
EMPTY=10.96.40.20
SHOP_STICKY=10.96.40.30
SHOP_LB=198.51.100.60
FWLB=198.51.100.61
LOCALLB=198.51.100.62
W0=10.244.1.10
W1=10.244.1.11
W06=fd00:10:244:1::10
W16=fd00:10:244:1::11
WBOTH=$W0:8080,$W1:8080

mode_require() {
	local m

	agent_require /usr/sbin/ipvsadm /usr/sbin/ipset /usr/sbin/iptables-save
	for m in ip_vs ip_vs_rr ip_vs_wrr ip_vs_lc ip_vs_sh ip_vs_mh dummy; do
		modprobe "$m" || skip "modprobe $m failed: the guest kernel has no IPVS"
	done
}
mode_exit() {
	"$KPX_AGENT" --cleanup >/dev/null 2>&1
	ipvsadm -C 2>/dev/null
}
mode_banner() { log "loaded: $(grep -oE '^ip_vs[a-z_]*' /proc/modules | sort | tr '\n' ' ')"; }

# mode_topology: the pods of the shop objects, an echo server each on
# 8080/tcp (IPv4 and IPv6) and 5353/udp.
mode_topology() {
	local p n a

	pod_add web0 $W0 $W06 && pod_add web1 $W1 $W16 || return 1
	for p in web0:$W0 web1:$W1; do
		IFS=: read -r n a <<<"$p"
		echo_start "$n" -t "$n" "$a:8080"
		echo_start "$n" -u "$n" "$a:5353"
	done
	echo_start web0 -t web0 "[$W06]:8080"
	echo_start web1 -t web1 "[$W16]:8080"
}

# mode_objects: the shop objects into $TMPD/ipvs-objects.json, added to
# MODE_OBJECTS (the API server's --objects after the common fixture's).
mode_objects() {
python3 - "$TMPD/ipvs-objects.json" <<'EOF'
import json, sys

def meta(name, **kw):
    m = {"name": name, "namespace": "shop", "uid": "u-" + name, "resourceVersion": "1"}
    m.update(kw)
    return m

def svc(name, typ, cips, ports, fam="IPv4", lb=None, etp=None, sched=None, **spec):
    md = meta(name, annotations={"kpx.io/scheduler": sched}) if sched else meta(name)
    s = {"apiVersion": "v1", "kind": "Service", "metadata": md,
         "spec": {"type": typ, "clusterIP": cips[0], "clusterIPs": cips,
                  "ipFamilies": [fam], "ipFamilyPolicy": "SingleStack",
                  "ports": ports, "sessionAffinity": "None",
                  "internalTrafficPolicy": "Cluster"}, "status": {}}
    if etp:
        s["spec"]["externalTrafficPolicy"] = etp
    if lb:
        s["status"] = {"loadBalancer": {"ingress": [{"ip": lb, "ipMode": "VIP"}]}}
    s["spec"].update(spec)
    return s

def eps(name, svcname, fam, addrs, ports, node="node-a"):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": meta(name, labels={"kubernetes.io/service-name": svcname}),
            "addressType": fam,
            "endpoints": [{"addresses": [a], "conditions": {"ready": True, "serving": True,
                                                            "terminating": False},
                           "nodeName": node} for a in addrs],
            "ports": ports}

def node(name, ip, cidr):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "u-" + name, "resourceVersion": "1",
                         "labels": {"kubernetes.io/hostname": name}},
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr]},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}

tcp80 = lambda np=None: dict({"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
                             **({"nodePort": np} if np else {}))
items = [
    node("node-b", "192.0.2.12", "10.244.2.0/24"),
    svc("web", "LoadBalancer", ["10.96.40.10"],
        [tcp80(30280), {"name": "dns", "protocol": "UDP", "port": 53, "targetPort": 5353,
                        "nodePort": 30253}],
        lb="198.51.100.60", etp="Cluster"),
    eps("web-a", "web", "IPv4", ["10.244.1.10", "10.244.1.11"],
        [{"name": "http", "protocol": "TCP", "port": 8080},
         {"name": "dns", "protocol": "UDP", "port": 5353}]),
    svc("web6", "ClusterIP", ["fd00:10:96::40:10"], [tcp80()], fam="IPv6", sched="wrr"),
    eps("web6-a", "web6", "IPv6", ["fd00:10:244:1::10", "fd00:10:244:1::11"],
        [{"name": "http", "protocol": "TCP", "port": 8080}]),
    svc("empty", "ClusterIP", ["10.96.40.20"],
        [tcp80(), {"name": "u", "protocol": "UDP", "port": 80, "targetPort": 8080}]),
    eps("empty-a", "empty", "IPv4", [], [{"name": "http", "protocol": "TCP", "port": 8080}]),
    svc("local", "LoadBalancer", ["10.96.40.40"], [tcp80(30281)], lb="198.51.100.62",
        etp="Local", healthCheckNodePort=32101),
    eps("local-a", "local", "IPv4", ["10.244.2.50"],
        [{"name": "http", "protocol": "TCP", "port": 8080}], node="node-b"),
    svc("fw", "LoadBalancer", ["10.96.40.50"], [tcp80(30282)], lb="198.51.100.61",
        etp="Cluster", sched="mh", loadBalancerSourceRanges=["10.0.1.0/24"]),
    eps("fw-a", "fw", "IPv4", ["10.244.1.10", "10.244.1.11"],
        [{"name": "http", "protocol": "TCP", "port": 8080}]),
    svc("sticky", "ClusterIP", ["10.96.40.30"], [tcp80()], sessionAffinity="ClientIP",
        sessionAffinityConfig={"clientIP": {"timeoutSeconds": 60}}),
    eps("sticky-a", "sticky", "IPv4", ["10.244.1.10", "10.244.1.11"],
        [{"name": "http", "protocol": "TCP", "port": 8080}]),
]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"), indent=1)
EOF
	MODE_OBJECTS+=("$TMPD/ipvs-objects.json")
}

# mode_eps [FAMILY]: serving destinations (weight > 0: a removed TCP
# backend stays at weight 0 while its connections drain, as kube-proxy's
# graceful termination) of the common fixture's IPVS services of FAMILY
# (ip): its ClusterIPs, LB IP and NodePorts, not the shop objects'.
mode_eps() {
	local re='^(10\.96\.0\.|198\.51\.100\.40:|192\.0\.2\.11:3008)'

	[ "${1:-ip}" = ip ] || re='^\[fd00:10:96::80\]:'
	ipvsadm -Ln | awk -v re="$re" '
		$1 == "TCP" || $1 == "UDP" || $1 == "SCTP" { cur = $2; next }
		$1 == "->" && $2 != "RemoteAddress:Port" && $4 != 0 && cur ~ re { n++ }
		END { print n + 0 }'
}

# ipvs_backends PROTO VIP:PORT: the service's serving destinations from
# ipvsadm (weight > 0), sorted "addr:port,..." ("-" none, "absent" no
# such service).
ipvs_backends() {
	local out

	out=$(ipvsadm -Ln "--${1}-service" "$2" 2>/dev/null) || { echo absent; return; }
	out=$(awk '$1 == "->" && $2 != "RemoteAddress:Port" && $4 != 0 { print $2 }' <<<"$out" | sort | paste -sd,)
	echo "${out:--}"
}

# wait_ipvs PROTO VIP:PORT WANT [SECONDS]: poll, then assert.
wait_ipvs() {
	local i

	for ((i = 0; i < ${4:-10} * 5; i++)); do
		[ "$(ipvs_backends "$1" "$2")" = "$3" ] && break
		sleep 0.2
	done
	assert_eq "ipvs $1 $2 destinations" "$3" "$(ipvs_backends "$1" "$2")"
}

# ipvs_refused NS PROTO DST N: N attempts refused, the slowest in 100 ms.
ipvs_refused() {
	local uflag=()

	[ "$2" = udp ] && uflag=(-u)
	client "$1" -n "$4" -t 2000 "${uflag[@]}" "$3"
	assert_eq "$2 $3 from $1: refused" "$4" "$(error_count ECONNREFUSED)"
	assert_lt_ms "$2 $3 from $1: slowest refusal" 100 "$(summary_field max_ms)"
	client_show_if_failed
}

# ipvs_dropped NS DST N TIMEOUT_MS: N TCP attempts, each timed out (no
# answer, no refusal).
ipvs_dropped() {
	client "$1" -n "$3" -t "$4" "$2"
	assert_eq "tcp $2 from $1: answered" 0 "$(summary_field ok)"
	assert_eq "tcp $2 from $1: refused" 0 "$(error_count ECONNREFUSED)"
	assert_eq "tcp $2 from $1: timed out" "$3" "$(summary_field failed)"
	client_show_if_failed
}

# hairpin_peers NS BACKEND: the source addresses BACKEND saw in the last
# client run, sorted, comma separated.
hairpin_peers() {
	answers | awk -v me="$2" '$2 == me { print $3 }' | sed 's/^peer=//; s/:[0-9]*$//' | sort -u | paste -sd,
}

mode_first_sync() {
	local addrs self other

	wait_ipvs tcp $CIP:80 $WBOTH 60
	wait_ipvs udp $CIP:53 $W0:5353,$W1:5353
	wait_ipvs tcp "[$CIP6]:80" "[$W06]:8080,[$W16]:8080"
	wait_ipvs tcp $NODE_A:30280 $WBOTH
	wait_ipvs tcp $SHOP_LB:80 $WBOTH
	wait_ipvs tcp $EMPTY:80 -
	wait_ipvs udp $EMPTY:80 -
	wait_ipvs tcp $LOCALLB:80 -
	wait_ipvs tcp $FWLB:80 $WBOTH
	log "ipvsadm -Ln:"
	ipvsadm -Ln | sed 's/^/#   /'

	# kernel state
	assert_match "ClusterIP service uses rr (random mapped)" "TCP  $CIP:80 rr" "$(ipvsadm -Ln)"
	assert_match "shop/sticky: persistent 60 s" "TCP  $SHOP_STICKY:80 rr persistent 60" "$(ipvsadm -Ln)"
	assert_match "web6: wrr" "TCP  \\[$CIP6\\]:80 wrr" "$(ipvsadm -Ln)"
	assert_match "fw: mh (Maglev)" "TCP  $FWLB:80 mh" "$(ipvsadm -Ln)"
	assert_eq "IPVS conntrack on" 1 "$(cat /proc/sys/net/ipv4/vs/conntrack)"
	addrs=$(ip -o addr show dev kpx-ipvs0 | awk '{ print $4 }' | sort | paste -sd,)
	assert_match "kpx-ipvs0 holds the ClusterIP" "$CIP/32" "$addrs"
	assert_match "kpx-ipvs0 holds the IPv6 ClusterIP" "$CIP6/128" "$addrs"
	assert_match "kpx-ipvs0 holds the LB IP" "$SHOP_LB/32" "$addrs"
	assert_no_match "kpx-ipvs0 does not hold the node address" "$NODE_A/" "$addrs"
	assert_match "ipset KPX-IPVS-SVC lists the ClusterIP" "$CIP,tcp:80" "$(ipset list KPX-IPVS-SVC)"
	assert_match "hairpin entry" "$W0,tcp:8080,$W0" "$(ipset list KPX-IPVS-LOOP)"
	assert_match "eTP Local LB IP in EMPTY-DROP" "$LOCALLB,tcp:80" "$(ipset list KPX-IPVS-EMPTY-DROP)"

	# traffic
	expect_answers cli tcp $CIP:80 12 $WBOTH
	expect_answers cli udp $CIP:53 12 $W0:5353,$W1:5353
	expect_answers cli tcp "[$CIP6]:80" 12 "[$W06]:8080,[$W16]:8080"
	# node clients: the kernel picks the VIP as source; masqueraded as kube-proxy
	expect_answers node tcp $CIP:80 12 $WBOTH "$MASQ4"
	# eTP Cluster NodePort / LB IP from an external client: masqueraded
	expect_answers cli tcp $NODE_A:30280 12 $WBOTH "$MASQ4"
	expect_answers cli tcp $SHOP_LB:80 12 $WBOTH "$MASQ4"
	# hairpin: web0 through the ClusterIP; when it reaches itself, masqueraded
	client web0 -n 16 -t 2000 $CIP:80
	assert_eq "hairpin: answered" 16 "$(summary_field ok)"
	self=$(hairpin_peers web0 $W0:8080)
	other=$(hairpin_peers web0 $W1:8080)
	assert_eq "hairpin: web0 reaching itself sees the masquerade address" "$MASQ4" "$self"
	assert_eq "web0 reaching web1 keeps its own address" "$W0" "$other"
	# no endpoint: ICMP port unreachable from IPVS (ip_vs_leave)
	ipvs_refused cli tcp $EMPTY:80 3
	ipvs_refused cli udp $EMPTY:80 3
	ipvs_refused node tcp $EMPTY:80 2
	# eTP Local, no local endpoint: dropped
	ipvs_dropped cli $LOCALLB:80 2 1000
	ipvs_dropped node $LOCALLB:80 1 1000
	# source ranges: cli (10.0.1.2) allowed, the node (source = the VIP) dropped
	client cli -n 6 -t 2000 $FWLB:80
	assert_eq "fw from cli (allowed range): answered" 6 "$(summary_field ok)"
	assert_eq "fw: mh hashes one client to one backend" 1 "$(answer_field 2 | tr ',' '\n' | grep -c .)"
	ipvs_dropped node $FWLB:80 1 1000
	# affinity: one backend for every connection of a client
	client cli -n 10 -t 2000 $SHOP_STICKY:80
	assert_eq "shop/sticky: answered" 10 "$(summary_field ok)"
	assert_eq "shop/sticky: one backend" 1 "$(answer_field 2 | tr ',' '\n' | grep -c .)"
}

mode_refused() { :; }
mode_affinity() {
	assert_match "sticky: persistent 60 s" "TCP  10.96.0.81:80 rr persistent 60" "$(ipvsadm -Ln)"
}

mode_partial_before() { :; }
mode_partial_after() { wait_ipvs tcp 10.96.0.80:80 10.244.1.2:8080; }

# svc_conns PROTO VIP:PORT: IPVS's connection counter of the service
svc_conns() { ipvsadm -Ln --stats --exact "--${1}-service" "$2" | awk '$1 == "TCP" || $1 == "UDP" { print $3; exit }'; }
# svc_conns_at_least PROTO VIP:PORT MIN: svc_conns once it reaches MIN, or
# its value after 6 s (6.1's IPVS folds the per-CPU counters into what
# ipvsadm reads only in its estimator, every 2 s).
svc_conns_at_least() {
	local v i

	for ((i = 0; i < 30; i++)); do
		v=$(svc_conns "$1" "$2")
		[[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge "$3" ] && break
		sleep 0.2
	done
	echo "$v"
}
# svc_conns_settled PROTO VIP:PORT: svc_conns once two reads 2.2 s apart
# agree (the estimator has folded every earlier connection in).
svc_conns_settled() {
	local a b i

	b=$(svc_conns "$1" "$2")
	for ((i = 0; i < 5; i++)); do
		sleep 2.2
		a=$b b=$(svc_conns "$1" "$2")
		[ "$a" = "$b" ] && break
	done
	echo "$b"
}

# restart: adopt, do not rewrite; then an endpoint change is a
# destination change
mode_restart() {
	local conns0 before lines newlog loop i

	conns0=$(svc_conns_settled tcp $CIP:80)
	assert_ge "conns counted before the restart" 40 "$conns0"
	before=$(ipvsadm -Ln | md5sum)
	kpx_agent_stop
	lines=$(wc -l <"$TMPD/agent.log")
	kpx_agent_start "${AGENT_FLAGS[@]}" "${MODE_FLAGS[@]}"
	for ((i = 0; i < 150; i++)); do
		tail -n +"$((lines + 1))" "$TMPD/agent.log" | grep -q 'namespace config set' && break
		sleep 0.2
	done
	sleep 3
	newlog=$(tail -n +"$((lines + 1))" "$TMPD/agent.log")
	assert_match "restart: the new agent synced" "namespace config set" "$newlog"
	assert_eq "restart: no frontend rewritten" 0 "$(grep -cE 'sync.*\b(set|del) [0-9\[]' <<<"$newlog")"
	assert_eq "restart: IPVS table unchanged" "$before" "$(ipvsadm -Ln | md5sum)"
	assert_eq "restart: the service's conns counter kept (not re-created)" "$conns0" "$(svc_conns tcp $CIP:80)"
	expect_answers cli tcp $CIP:80 8 $WBOTH

	jq '.items[] | select(.kind == "EndpointSlice" and .metadata.name == "web-a") |
	    .endpoints |= .[:1] | .metadata.resourceVersion = "2"' \
		"$TMPD/ipvs-objects.json" >"$TMPD/one.json"
	assert_rc "apply web-a with web0 only" 0 kpx_apictl apply "$TMPD/one.json"
	wait_ipvs tcp $CIP:80 $W0:8080
	assert_ge "endpoint change: conns counter kept (destination deleted, service not re-created)" \
		"$((conns0 + 8))" "$(svc_conns_at_least tcp $CIP:80 $((conns0 + 8)))"
	expect_answers cli tcp $CIP:80 6 $W0:8080
	wait_ipvs udp $CIP:53 $W0:5353
	loop=$(ipset list KPX-IPVS-LOOP)
	assert_no_match "web1:5353/udp (no other user) hairpin entry removed" "$W1,udp:5353,$W1" "$loop"
	assert_match "web1:8080/tcp still a destination of fw: hairpin entry kept" "$W1,tcp:8080,$W1" "$loop"
	newlog=$(tail -n +"$((lines + 1))" "$TMPD/agent.log")
	assert_match "the change was logged as a set (the restart check can fail)" \
		"set $CIP:80/tcp" "$newlog"
}

# a foreign IPVS service, which --cleanup must leave alone
mode_before_cleanup() { ipvsadm -A -t 10.99.0.1:80 -s rr; }

mode_cleanup() {
	local left

	left=$(ipvsadm -Ln | grep -E '^(TCP|UDP|SCTP) ' | awk '{ print $2 }' | paste -sd,)
	assert_eq "cleanup: only the foreign IPVS service is left" "10.99.0.1:80" "$left"
	assert_eq "cleanup: no KPX-IPVS ipset" "" "$(ipset list -n | grep KPX-IPVS)"
	assert_eq "cleanup: no KPX-IPVS chain (IPv4)" "" "$(iptables-save | grep KPX-IPVS)"
	assert_eq "cleanup: no KPX-IPVS chain (IPv6)" "" "$(ip6tables-save | grep KPX-IPVS)"
	assert_rc "cleanup: kpx-ipvs0 gone" 1 ip link show kpx-ipvs0
	ipvsadm -C
}

mode_dump() {
	log "ipvsadm -Ln:"
	ipvsadm -Ln 2>&1 | head -n 80 | sed 's/^/#   /'
}
