#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""gen.py N OUTDIR: the objects of the VM benchmark with N Services.

Service i (0 <= i < N, N <= 65000): ClusterIP 10.96.0.1 + i, TCP port 80 ->
targetPort 8080, one EndpointSlice with 2 ready endpoints on node-a:
A_i = 10.200.0.1 + i (pod netns "bpa") and B_i = 10.201.0.1 + i ("bpb").
Writes OUTDIR/objects-N.json (Services + slices) and OUTDIR/slices4-N.json
(the same slices with 2 more endpoints each, C_i = 10.202.0.1 + i and
D_i = 10.203.0.1 + i, both in "bpc"), which the harness applies to measure
the kernel memory per backend.  Addresses: see addr() (also chglat.py)."""
import json
import os
import sys

NET = {"vip": 96, "A": 200, "B": 201, "C": 202, "D": 203}


def addr(kind, i):
    """Address i of a range: 10.X.0.1 + i."""
    n = i + 1
    second = NET[kind] + n // 65536
    return "10.%d.%d.%d" % (second, (n // 256) % 256, n % 256)


def service(i):
    ip = addr("vip", i)
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "b%d" % i, "namespace": "bench"},
            "spec": {"clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"],
                     "type": "ClusterIP",
                     "ports": [{"name": "http", "port": 80, "protocol": "TCP",
                                "targetPort": 8080}]}}


def eslice(i, kinds):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "b%d-1" % i, "namespace": "bench",
                         "labels": {"kubernetes.io/service-name": "b%d" % i}},
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            "endpoints": [{"addresses": [addr(k, i)], "conditions": {"ready": True},
                           "nodeName": "node-a"} for k in kinds]}


def dump(path, items):
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    if n > 65000:
        sys.exit("gen.py: at most 65000 Services (one /16 per pod range)")
    os.makedirs(out, exist_ok=True)
    dump(os.path.join(out, "objects-%d.json" % n),
         [service(i) for i in range(n)] + [eslice(i, "AB") for i in range(n)])
    dump(os.path.join(out, "slices4-%d.json" % n), [eslice(i, "ABCD") for i in range(n)])
    dump(os.path.join(out, "slices2-%d.json" % n), [eslice(i, "AB") for i in range(n)])


if __name__ == "__main__":
    main()
