#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""gen.py N OUTDIR: the objects of the VM benchmark with N Services.
gen.py big S E OUTDIR: the full-sync step's S Services x E endpoints.

Service i (0 <= i < N, N <= 65000): ClusterIP 10.96.0.1 + i, TCP port 80 ->
targetPort 8080, one EndpointSlice with 2 ready endpoints on node-a:
A_i = 10.200.0.1 + i (pod netns "bpa") and B_i = 10.201.0.1 + i ("bpb").
Writes OUTDIR/objects-N.json (Services + slices) and OUTDIR/slices4-N.json
(the same slices with 2 more endpoints each, C_i = 10.202.0.1 + i and
D_i = 10.203.0.1 + i, both in "bpc"), which the harness applies to measure
the kernel memory per backend.  Addresses: see addr() (also chglat.py).

The big step (S <= 65000, any E): OUTDIR/big-S-E-svc.json (the S Services
above) and OUTDIR/big-S-E-slices-K.json (K = 0, 1, ...: Lists of at most
BIG_CHUNK EndpointSlices), which guest.sh applies to the test API server in
turn, so that the server never holds a second copy of the whole set.
Service i gets ceil(E / 100) slices of at most 100 ready endpoints each
(the API's limit per slice); endpoint j of Service i is the address number
(i x E + j) mod 4 x 65535 of the four pod ranges A, B, C, D in turn, so
every address is owned by a pod netns of bench/vm/topo.sh (and shared by
at most ceil(S x E / 262140) Services).  Compact JSON, no nodeName (the
Services are Cluster-policy, where it does not matter)."""
import glob
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


# The agent's own Node (it runs as node-a and, as kube-proxy, waits for its
# Node before the first sync).
NODE_A = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
          "status": {"addresses": [{"type": "InternalIP", "address": "192.0.2.11"}]}}


def dump(path, items):
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f,
                  separators=(",", ":"))


BIG_CHUNK = 1000        # EndpointSlices per apply request of the big step
PER_RANGE = 65535       # addresses addr() gives per pod range


def big_addr(k):
    """Address number k of the pod ranges, A first (see the docstring)."""
    k %= 4 * PER_RANGE
    return addr("ABCD"[k // PER_RANGE], k % PER_RANGE)


def big_slices(i, e):
    """The EndpointSlices of Service i with e endpoints, up to 100 each."""
    out = []
    for s, j0 in enumerate(range(0, e, 100)):
        out.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": "b%d-%d" % (i, s + 1), "namespace": "bench",
                                 "labels": {"kubernetes.io/service-name": "b%d" % i}},
                    "addressType": "IPv4",
                    "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
                    "endpoints": [{"addresses": [big_addr(i * e + j)],
                                   "conditions": {"ready": True}}
                                  for j in range(j0, min(e, j0 + 100))]})
    return out


def big(s, e, out):
    if s > 65000 or e < 1:
        sys.exit("gen.py big: 1..65000 Services, at least 1 endpoint")
    os.makedirs(out, exist_ok=True)
    pre = os.path.join(out, "big-%d-%d-" % (s, e))
    for f in glob.glob(glob.escape(pre) + "slices-*.json"):
        os.remove(f)    # guest.sh reads slices-0, 1, ... up to the first gap
    dump(pre + "svc.json", [NODE_A] + [service(i) for i in range(s)])
    chunk, k = [], 0
    for i in range(s):
        chunk += big_slices(i, e)
        if len(chunk) >= BIG_CHUNK or i == s - 1:
            dump(pre + "slices-%d.json" % k, chunk)
            chunk, k = [], k + 1


def main():
    if sys.argv[1] == "big":
        return big(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    n, out = int(sys.argv[1]), sys.argv[2]
    if n > 65000:
        sys.exit("gen.py: at most 65000 Services (one /16 per pod range)")
    os.makedirs(out, exist_ok=True)
    dump(os.path.join(out, "objects-%d.json" % n),
         [NODE_A] + [service(i) for i in range(n)] + [eslice(i, "AB") for i in range(n)])
    dump(os.path.join(out, "slices4-%d.json" % n), [eslice(i, "ABCD") for i in range(n)])
    dump(os.path.join(out, "slices2-%d.json" % n), [eslice(i, "AB") for i in range(n)])


if __name__ == "__main__":
    main()
