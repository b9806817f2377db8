#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kpx_agent_drift: the agent's periodic re-check of the module.
# The module's frontend table generation (KPX_STATS_A_GENERATION) tells the
# agent whether anyone else changed the table since its last sync, so:
#  - while only the agent writes, its periodic re-checks (--sync-period 3s)
#    dump nothing: every "sync done" after the first is full=false;
#  - another writer's change (kpxctl del, kpxctl set with other backends,
#    kpxctl set of a frontend no Service wants) is found at the next sync,
#    logged, and repaired by a full sync: the module equals the API again
#    and the VIP answers from both pods.
#
# Topology (lib.sh): cli 10.0.1.2 --veth-- node (VM root netns, kpx) --veth--
# pod1 10.244.1.2:8080, pod2 10.244.2.2:8080; VIP 10.96.0.61:80/tcp -> both.
. "$(dirname "$0")/lib.sh"
. "$SELFTESTS/agent_lib.sh"

agent_require
mode_is kpx || skip "the generation is the kpx module's (proxy mode $KPX_PROXY_MODE)"
setup_trap agent_lib_stop

web_pods 2 || skip "topology setup failed"

VIP=10.96.0.61 BOTH=10.244.1.2:8080,10.244.2.2:8080
web_objects $VIP "$TMPD/objects.json"
kpx_api_start --objects "$TMPD/objects.json"
kpx_agent_start --hostname-override node-a --sync-period 3s --min-sync-period 100ms
t=$(wait_proc_backends tcp $VIP:80 $BOTH 60)
assert_ne "agent programs $VIP:80" timeout "$t"

# syncs_since LINE: the "sync done" lines of the agent log after line LINE.
syncs_since() { tail -n +"$(($1 + 1))" "$TMPD/agent.log" | grep '] "sync done"'; }

# --- quiet: periodic re-checks by generation, no dump ----------------------------
from=$(wc -l <"$TMPD/agent.log")
sleep 10
quiet=$(syncs_since "$from")
assert_ge "periodic re-checks in 10 s at --sync-period 3s" 2 "$(grep -c . <<<"$quiet")"
assert_eq "none of them dumped the module (full=true)" 0 "$(grep -c 'full=true' <<<"$quiet")"
assert_eq "none of them sent a change" 0 "$(grep -vc 'sets=0 dels=0 errors=0' <<<"$quiet")"

# repaired LABEL: the next sync notices another writer and restores the state.
repaired() {
	local t

	t=$(wait_proc_backends tcp $VIP:80 $BOTH 15)
	assert_ne "$1: $VIP:80 back to both pods" timeout "$t"
	assert_match "$1: logged as another writer's change" 'changed by another writer' \
		"$(tail -n +"$(($2 + 1))" "$TMPD/agent.log")"
	assert_match "$1: repaired by a full sync" 'full=true' "$(syncs_since "$2")"
}

from=$(wc -l <"$TMPD/agent.log")
assert_rc "kpxctl del tcp $VIP:80 (another writer)" 0 "$KPXCTL" del tcp $VIP:80
repaired "deleted frontend" "$from"

from=$(wc -l <"$TMPD/agent.log")
assert_rc "kpxctl set tcp $VIP:80 with another backend" 0 "$KPXCTL" set tcp $VIP:80 10.244.9.9:8080
repaired "replaced backends" "$from"

from=$(wc -l <"$TMPD/agent.log")
assert_rc "kpxctl set tcp 10.96.0.62:80 (no Service wants it)" 0 \
	"$KPXCTL" set tcp 10.96.0.62:80 10.244.1.2:8080
t=$(wait_proc_backends tcp 10.96.0.62:80 absent 15)
assert_ne "the stray frontend is deleted at the next sync" timeout "$t"
assert_match "stray frontend: logged as another writer's change" 'changed by another writer' \
	"$(tail -n +"$((from + 1))" "$TMPD/agent.log")"
assert_eq "the module holds the one frontend the API wants" 1 \
	"$(kpx_json | jq '.services | length')"

client cli -n 20 -t 2000 $VIP:80
assert_eq "after the repairs: 20 connections answered" 20 "$(summary_field ok)"
assert_eq "after the repairs: answering backends" "pod1 pod2" "$(ident_names)"
client_show_if_failed
ksft_exit
