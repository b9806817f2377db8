#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""gen.py SERVICES ENDPOINTS_PER_SERVICE OUT.json [CHANGES CHANGES.json]

Writes a v1 List of SERVICES ClusterIP Services (one TCP port each) and one
EndpointSlice per Service with ENDPOINTS_PER_SERVICE ready endpoints, for
the test API server; optionally a second List that changes the endpoints of
CHANGES slices (each loses its first endpoint and gains a new one)."""
import json
import sys


def service(i):
    ip = "10.%d.%d.%d" % (96 + i // 65536, (i // 256) % 256, i % 256)
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "s%d" % i, "namespace": "bench"},
            "spec": {"clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"],
                     "ports": [{"name": "http", "port": 80, "protocol": "TCP",
                                "targetPort": 8080}]}}


def pod_ip(n):
    return "10.%d.%d.%d" % (128 + n // 65536, (n // 256) % 256, n % 256)


def slice_(i, eps, first=0, extra=None):
    ips = [pod_ip(i * eps + k) for k in range(first, eps)]
    if extra:
        ips.append(extra)
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "s%d-1" % i, "namespace": "bench",
                         "labels": {"kubernetes.io/service-name": "s%d" % i}},
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            "endpoints": [{"addresses": [a], "conditions": {"ready": True},
                           "nodeName": "node-%d" % (k % 50)}
                          for k, a in enumerate(ips)]}


def main():
    nsvc, eps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    # the agent's own Node first: it waits for it before the first sync
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
            "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.11"}]}}
    items = [node] + [service(i) for i in range(nsvc)] + [slice_(i, eps) for i in range(nsvc)]
    with open(out, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    if len(sys.argv) > 5:
        nchg = int(sys.argv[4])
        base = nsvc * eps
        chg = [slice_(i, eps, 1, pod_ip(base + i)) for i in range(nchg)]
        with open(sys.argv[5], "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": chg}, f)


if __name__ == "__main__":
    main()
