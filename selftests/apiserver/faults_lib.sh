#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# faults_lib.sh: the machinery shared by kpx-agent's fault tests, the host
# one (agent/tests/agent-faults.sh, --dry-run) and the VM one
# (selftests/kpx_agent_faults.sh, the real module).  Sourced; needs bash,
# curl, python3, sed, awk.  Loopback only: nothing here sends traffic to a
# Service, pod or node address.
#
#   fl_svc NAME IP PORT [EP...]     a Service t/NAME + slice, as a v1 List
#   fl_bad_service FILE             a Service whose clusterIP is "banana"
#   fl_big_services N FILE          N Services big/sN (10.100.x.y:80/tcp), Node node-a
#   fl_proxy_start DIR CERTS ALT UPSTREAM_PORT
#                                   faultproxy.py; sets FL_PROXY_PID, FL_PPORT
#   fl_fault CONTROL                POST /_fault/CONTROL to the proxy
#   fl_kubeconfig SRC TOKENFILE OUT the kubeconfig SRC pointed at the proxy,
#                                   with tokenFile: TOKENFILE (rotation)
#   fl_replay LOG                   the state a --dry-run agent's log leads to
#   fl_normalize                    sorts each "KEY FLAGS BACKEND..." line's
#                                   backends, then the lines
#
# A state is one line per frontend, "KEY FLAGS BACKEND...", KEY as the
# agent logs it (10.96.0.1:443/tcp, [fd00::1]:53/udp), FLAGS the decimal
# KPX_SVC_F_* bits, BACKEND addr:port@weight; sorted in the C locale.

FL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FL_PROXY_PID=
FL_PPORT=

# fl_svc NAME IP PORT [EP...]: a v1 List with Service t/NAME (clusterIP IP,
# PORT/TCP -> targetPort 8080) and its slice NAME-1 with the ready
# endpoints EP... (none: an empty slice), on stdout.
fl_svc() {
	local name=$1 ip=$2 port=$3 eps="" e

	shift 3
	for e; do eps+="${eps:+,}{\"addresses\": [\"$e\"], \"conditions\": {\"ready\": true}}"; done
	cat <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "$name", "namespace": "t"},
  "spec": {"clusterIP": "$ip", "clusterIPs": ["$ip"], "ports": [{"port": $port, "targetPort": 8080}]}},
 {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
  "metadata": {"name": "$name-1", "namespace": "t", "labels": {"kubernetes.io/service-name": "$name"}},
  "addressType": "IPv4", "ports": [{"port": 8080, "protocol": "TCP"}], "endpoints": [$eps]}]}
EOF
}

# fl_bad_service FILE: Service t/bad with clusterIP "banana" (the agent must
# log "skipping malformed object t/bad" and go on).
fl_bad_service() {
	cat >"$1" <<'EOF'
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bad", "namespace": "t"},
 "spec": {"clusterIP": "banana", "clusterIPs": ["banana"], "ports": [{"port": 80}]}}
EOF
}

# fl_big_services N FILE: a v1 List of N (<= 62500) Services big/s0.. with
# clusterIPs 10.100.(i/250).(i%250+1), port 80/TCP, no slice, and the
# agent's Node node-a (InternalIP 192.0.2.11), which it waits for at start.
fl_big_services() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
          "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.11"}]}}]
for i in range(int(sys.argv[1])):
    ip = "10.100.%d.%d" % (i // 250, i % 250 + 1)
    items.append({"apiVersion": "v1", "kind": "Service",
                  "metadata": {"name": "s%d" % i, "namespace": "big"},
                  "spec": {"clusterIP": ip, "clusterIPs": [ip],
                           "ports": [{"port": 80, "targetPort": 8080}]}})
with open(sys.argv[2], "w") as f:
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
EOF
}

# fl_proxy_start DIR CERTS ALT_CERTS UPSTREAM_PORT: faultproxy.py on
# 127.0.0.1 in front of https://127.0.0.1:UPSTREAM_PORT, serving CERTS (or
# ALT_CERTS, another CA, on /_fault/cert?alt=1); log DIR/proxy.log.  Sets
# FL_PROXY_PID and FL_PPORT; returns 1 if it has no port within 30 s.
fl_proxy_start() {
	mkdir -p "$1"
	python3 "$FL_DIR/faultproxy.py" --dir "$1" --certs "$2" --alt-certs "$3" \
		--upstream "https://127.0.0.1:$4" 2>"$1/proxy.log" &
	FL_PROXY_PID=$!
	for _ in $(seq 300); do
		[ -s "$1/port" ] && break
		sleep 0.1
	done
	[ -s "$1/port" ] || return 1
	FL_PPORT=$(<"$1/port")
}

# fl_fault CONTROL: POST /_fault/CONTROL (e.g. "stall?on=1") to the proxy;
# curl -k since the proxy may be serving the other CA's certificate.
fl_fault() {
	curl -sS -f -X POST -k "https://127.0.0.1:$FL_PPORT/_fault/$1" >/dev/null
}

# fl_kubeconfig SRC TOKENFILE OUT: SRC (a gen-certs/apiserver kubeconfig with
# "token:") rewritten to the proxy's port and "tokenFile: TOKENFILE".
fl_kubeconfig() {
	sed -e "s|server: https://127.0.0.1:[0-9]*|server: https://127.0.0.1:$FL_PPORT|" \
	    -e "s|token: .*|tokenFile: $2|" "$1" >"$3" &&
		grep -q "tokenFile: $2" "$3"
}

# fl_normalize: stdin "KEY FLAGS BACKEND..." lines; each line's backends
# sorted, then the lines (C locale), on stdout.
fl_normalize() {
	LC_ALL=C awk '{
		n = NF - 2
		for (i = 1; i <= n; i++) b[i] = $(i + 2)
		for (i = 2; i <= n; i++) {
			t = b[i]
			for (j = i - 1; j >= 1 && b[j] > t; j--) b[j + 1] = b[j]
			b[j + 1] = t
		}
		line = $1 " " $2
		for (i = 1; i <= n; i++) line = line " " b[i]
		print line
	}' | LC_ALL=C sort
}

# fl_replay LOG: the state the "dry run: set/del" lines of a kpx-agent
# --dry-run log lead to (sync.c's log_op: "set KEY flags=0xF backends=[B...]",
# "del KEY"), in the format above.
fl_replay() {
	sed -n 's/.*] "dry run: \(set\|del\) \([^ "]*\)\( flags=0x\([0-9a-f]*\)\)\{0,1\}\( backends=\[\([^]]*\)\]\)\{0,1\}".*/\1 \2 \4 \6/p' "$1" |
		LC_ALL=C awk '
		function hex(s,   i, v) {
			v = 0
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		$1 == "set" { rest = ""; for (i = 4; i <= NF; i++) rest = rest " " $i
			      s[$2] = hex($3) rest }
		$1 == "del" { delete s[$2] }
		END { for (k in s) print k, s[k] }' | fl_normalize
}
