# SPDX-License-Identifier: GPL-2.0-only
#
# fallback_fixture.sh: the topology and API objects of modes/basic.sh (the
# test of each fallback proxy mode; sourced after lib.sh and agent_lib.sh; uses
# NODE_A and LB).
#
#   cli 10.0.1.2 fd00:10:1::2 --veth-- node (kpx-agent as node-a NODE_A;
#     198.51.100.0/24 routed towards the cli) --veth-- pod1 10.244.1.2
#     fd00:10:244:1::2 :8080, pod2 10.244.2.2 fd00:10:244:2::2 :8080
#
# Objects: node-a; web (NodePort 30080, dual-stack ClusterIP 10.96.0.80 /
# fd00:10:96::80, both pods), sticky (ClientIP affinity 60 s, 10.96.0.81),
# empty (10.96.0.90, TCP 80 and UDP 53, no endpoints), lb (LoadBalancer LB,
# loadBalancerSourceRanges 10.0.1.0/24, NodePort 30082).

# fallback_topology: the netns topology above with an echo server per pod.
fallback_topology() {
	local i

	node_setup && cli_setup && pods_setup 2 || return 1
	ip addr add $NODE_A/32 dev kpx-node
	ip route add 198.51.100.0/24 dev kpx-node src $NODE4
	for i in 1 2; do
		echo_start "pod$i" "pod$i" "10.244.$i.2:8080" "[fd00:10:244:$i::2]:8080"
	done
}

# slice NAME SERVICE FAMILY ADDR... : an EndpointSlice, port 8080/TCP.
slice() {
	local name=$1 svc=$2 fam=$3 eps="" a

	shift 3
	for a; do
		eps+="${eps:+,}{\"addresses\": [\"$a\"], \"conditions\": {\"ready\": true}}"
	done
	cat <<EOF
{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
 "metadata": {"name": "$name", "namespace": "default", "labels": {"kubernetes.io/service-name": "$svc"}},
 "addressType": "$fam", "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
 "endpoints": [$eps]}
EOF
}

# fallback_objects OBJ: writes the objects above (a List) to OBJ; 0 if valid JSON.
fallback_objects() {
	local OBJ=$1

	cat >"$OBJ" <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
  "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]},
  "status": {"addresses": [{"type": "InternalIP", "address": "$NODE_A"}]}},
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
  "spec": {"type": "NodePort", "clusterIP": "10.96.0.80", "clusterIPs": ["10.96.0.80", "fd00:10:96::80"],
           "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "RequireDualStack",
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 30080}]}},
 $(slice web-v4 web IPv4 10.244.1.2 10.244.2.2),
 $(slice web-v6 web IPv6 fd00:10:244:1::2 fd00:10:244:2::2),
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sticky", "namespace": "default"},
  "spec": {"clusterIP": "10.96.0.81", "clusterIPs": ["10.96.0.81"], "ipFamilies": ["IPv4"],
           "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}},
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}]}},
 $(slice sticky-v4 sticky IPv4 10.244.1.2 10.244.2.2),
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "empty", "namespace": "default"},
  "spec": {"clusterIP": "10.96.0.90", "clusterIPs": ["10.96.0.90"], "ipFamilies": ["IPv4"],
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                     {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53}]}},
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb", "namespace": "default"},
  "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.82", "clusterIPs": ["10.96.0.82"],
           "ipFamilies": ["IPv4"], "loadBalancerSourceRanges": ["10.0.1.0/24"],
           "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 30082}]},
  "status": {"loadBalancer": {"ingress": [{"ip": "$LB", "ipMode": "VIP"}]}}},
 $(slice lb-v4 lb IPv4 10.244.1.2 10.244.2.2)
]}
EOF
	jq -e . "$OBJ" >/dev/null
}
