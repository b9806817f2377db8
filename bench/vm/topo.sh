# SPDX-License-Identifier: GPL-2.0-only
# bench/vm/topo.sh: the benchmark topology (sourced after selftests/lib.sh,
# in the VM): lib.sh's node and cli netns, and three pod netns that own
# whole address ranges through a local route ("AnyIP"), so that 2 x 50,000
# endpoints need no 100,000 netns:
#   bpa 10.200.0.0/16 (A_i), bpb 10.201.0.0/16 (B_i), bpc 10.202.0.0/15
#   (C_i, D_i), each routed from the node over its veth and running
#   "kpx_load serve" on 0.0.0.0:8080, which answers the netns name.
# The node routes each range through a gateway address of its netns
# (169.254.10.1-3), as to pods behind another node: one neighbour entry
# per netns, not one per endpoint address (a device route would need 2N
# entries and overflows the neighbour table's gc_thresh3, 1,024, beyond
# N = 500: SYNs are then dropped).
# Needs LOAD (the kpx_load binary).

# bench_topology: build it; 1 on failure.
bench_topology() {
	node_setup && cli_setup || return 1
	pod_add bpa && pod_add bpb && pod_add bpc || return 1
	ip -n bpa route add local 10.200.0.0/16 dev lo
	ip -n bpb route add local 10.201.0.0/16 dev lo
	ip -n bpc route add local 10.202.0.0/15 dev lo
	ip -n bpa addr add 169.254.10.1/32 dev eth0
	ip -n bpb addr add 169.254.10.2/32 dev eth0
	ip -n bpc addr add 169.254.10.3/32 dev eth0
	ip route add 10.200.0.0/16 via 169.254.10.1 dev v-bpa onlink src $NODE4 || return 1
	ip route add 10.201.0.0/16 via 169.254.10.2 dev v-bpb onlink src $NODE4 || return 1
	ip route add 10.202.0.0/15 via 169.254.10.3 dev v-bpc onlink src $NODE4 || return 1
	local p
	for p in bpa bpb bpc; do
		PIDS+=("$(ip netns exec $p "$LOAD" serve -i $p)") || return 1
	done
}

