#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_case_09: shared case 09-itp-local-no-local-endpoint-drop with the
# real agent.  shop/recommend (ClusterIP 10.96.80.60:8080,
# internalTrafficPolicy Local).  Step 1 (one pod 10.244.1.90 on node-a): as
# node-a a client pod reaches it with its own address kept; the agent is
# then restarted as node-b (no local endpoint): the ClusterIP silently
# drops (client times out, no refusal, drop counter grows, the pod gets
# nothing).  Step 2 (no endpoints at all): refused at once as node-b and,
# after a restart as node-a, as node-a too.
#
#   node (kpx.ko, kpx-agent as node-a / node-b, API server)
#     |-- veth -- rec  10.244.1.90 :8080
#     `-- veth -- cpod 10.244.1.7  (client pod)
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/case_lib.sh"

case_init 09
pod_add rec 10.244.1.90 && pod_add cpod 10.244.1.7 || skip "pod setup failed"
echo_start rec -t rec 10.244.1.90:8080
api_start
agent_start
log "agent's first sync after $(wait_agent_synced) s"
expect_backends tcp 10.96.80.60:8080 - 30

step 1
expect_backends tcp 10.96.80.60:8080 10.244.1.90:8080 5
expect_empty_action tcp 10.96.80.60:8080 reject
expect_answered cpod tcp 10.96.80.60:8080 5 10.244.1.90:8080 10.244.1.7

# --- step 1 seen from node-b ---------------------------------------------------
nsync=$(agent_syncs)
agent_stop
AGENT_NODE=node-b
agent_start
# until its first sync the node keeps the previous agent's state
log "restarted agent's first sync after $(wait_agent_synced $((nsync + 1))) s"
expect_backends tcp 10.96.80.60:8080 - 15
wait_empty_action tcp 10.96.80.60:8080 drop
stats_mark
expect_timeout cpod tcp 10.96.80.60:8080 2 1000
assert_gt "node-b step 1: module drop counter grew" 0 "$(stats_delta drops)"
expect_timeout node tcp 10.96.80.60:8080 1 1000

# --- step 2: no endpoints anywhere: reject ------------------------------------
step 2
wait_empty_action tcp 10.96.80.60:8080 reject
expect_backends tcp 10.96.80.60:8080 - 2
expect_refused cpod tcp 10.96.80.60:8080
expect_refused node tcp 10.96.80.60:8080 1
nsync=$(agent_syncs)
agent_stop
AGENT_NODE=node-a
agent_start
# until its first sync the node keeps the previous agent's state
log "restarted agent's first sync after $(wait_agent_synced $((nsync + 1))) s"
expect_backends tcp 10.96.80.60:8080 - 5
sleep 2
expect_empty_action tcp 10.96.80.60:8080 reject
expect_backends tcp 10.96.80.60:8080 - 2
expect_refused cpod tcp 10.96.80.60:8080

ksft_exit
