#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_06: shared case 06-hairpin-own-clusterip with the real agent.
# shop/inventory (NodePort: ClusterIP 10.96.50.30:6000, NodePort 30600)
# backed by 10.244.1.60 (step 1) then also 10.244.1.61 (step 2), both on
# node-a: the backend pod reaching its own Service (ClusterIP and node-a's
# NodePort) always succeeds, and the connections that land on itself are
# source-NATed (the pod sees the node's gateway address, not its own);
# connections from it to the other pod, and from another client pod, keep
# the client pod's address.
#
#   node (kpx.ko, kpx-agent as node-a, API server; kpx-node 192.0.2.11)
#     |-- veth -- inv0 10.244.1.60 :6000   (client and backend)
#     |-- veth -- inv1 10.244.1.61 :6000   (step 2)
#     `-- veth -- cpod 10.244.2.7          (another client pod)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

case_init 06
pod_add inv0 10.244.1.60 && pod_add inv1 10.244.1.61 && pod_add cpod 10.244.2.7 ||
	skip "pod setup failed"
echo_start inv0 -t inv0 10.244.1.60:6000
echo_start inv1 -t inv1 10.244.1.61:6000
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"
expect_backends tcp 10.96.50.30:6000 - 30
expect_backends tcp $NODE_A:30600 - 5

# hairpin_check DST N WANT_BACKENDS: N connections from inv0 to DST all
# answered by WANT_BACKENDS; those answered by inv0 itself came from the
# masquerade address, those answered by inv1 from inv0's own address.
hairpin_check() {
	local dst=$1 n=$2 want=$3 line w self_bad=0 other_bad=0 self=0 other=0

	client inv0 -n "$n" -t 2000 "$dst"
	assert_eq "hairpin $dst: answered" "$n" "$(summary_field ok)"
	assert_eq "hairpin $dst: backends answering" "$want" "$(answer_field 2)"
	for line in "${CL_ANS[@]}"; do
		read -r -a w <<<"$line"
		if [ "${w[0]}" = inv0 ]; then
			self=$((self + 1))
			[[ "${w[2]}" == peer=$MASQ4:* ]] || self_bad=$((self_bad + 1))
		else
			other=$((other + 1))
			[[ "${w[2]}" == peer=10.244.1.60:* ]] || other_bad=$((other_bad + 1))
		fi
	done
	log "hairpin $dst: $self to itself, $other to the other pod"
	assert_eq "hairpin $dst: connections to itself not from $MASQ4" 0 "$self_bad"
	[ "$other" = 0 ] ||
		assert_eq "hairpin $dst: connections to the other pod not from 10.244.1.60" 0 "$other_bad"
	client_show_if_failed
}

step 1
expect_backends tcp 10.96.50.30:6000 10.244.1.60:6000 5
expect_backends tcp $NODE_A:30600 10.244.1.60:6000 5
hairpin_check 10.96.50.30:6000 50 10.244.1.60:6000
hairpin_check $NODE_A:30600 50 10.244.1.60:6000
expect_answered cpod tcp 10.96.50.30:6000 5 10.244.1.60:6000 10.244.2.7

step 2
expect_backends tcp 10.96.50.30:6000 10.244.1.60:6000,10.244.1.61:6000 5
expect_backends tcp $NODE_A:30600 10.244.1.60:6000,10.244.1.61:6000 5
hairpin_check 10.96.50.30:6000 50 10.244.1.60:6000,10.244.1.61:6000
hairpin_check $NODE_A:30600 50 10.244.1.60:6000,10.244.1.61:6000
expect_answered cpod tcp 10.96.50.30:6000 12 10.244.1.60:6000,10.244.1.61:6000 10.244.2.7

ksft_exit
