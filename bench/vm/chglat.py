#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""chglat.py: EndpointSlice changes in the test API server, timed until the
kernel forwards accordingly (run in the VM by guest.sh; refuses elsewhere).

  chglat.py apply CERTS PORT FILE
      POST FILE (a List) to /_test/apply; prints the seconds it took.
  chglat.py changes CERTS PORT N K CAP
      K changes, one at a time, among Services 0..N-1 (gen.py's addresses):
      a Service's slice goes from {A_i, B_i} to {C_i} and back.  Each is
      timed from just before the request (TLS already set up) until a
      probe connection to the VIP is answered by the new backend set
      ("bpc" resp. "bpa"/"bpb", kpx_load serve's identities); a change not
      seen within CAP seconds counts as timed out.  150 ms pause between
      changes (the agent's --min-sync-period is 100 ms).  Prints JSON:
      p50/p99/max in ms, the samples, timeouts.
  chglat.py probe I CAP
      Connects to Service I's VIP (gen.py's addresses) until a pod netns
      answers or CAP seconds pass; prints the answer ("bpa", "bpb",
      "bpc") or "none"."""
import http.client
import json
import os
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen import addr, eslice  # noqa: E402


def post(certs, port, body):
    ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.crt"))
    with open(os.path.join(certs, "token")) as f:
        token = f.read().strip()
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=600)
    conn.connect()
    data = json.dumps(body).encode()
    t0 = time.monotonic()
    conn.request("POST", "/_test/apply", body=data,
                 headers={"Authorization": "Bearer " + token,
                          "Content-Type": "application/json"})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    if resp.status != 200:
        sys.exit("chglat.py: apply: HTTP %d" % resp.status)
    return t0


def probe(vip, want, deadline, pause=0.001):
    """Connect until an answer in want: (its time, the answer) or None."""
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((vip, 80), timeout=0.5) as s:
                ident = s.makefile().readline().strip()
        except OSError:
            ident = None
        if ident in want:
            return time.monotonic(), ident
        time.sleep(pause)
    return None


def pct(v, p):
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))] if v else None


def changes(certs, port, n, k, cap):
    moved = set()
    samples, timeouts = [], 0
    for j in range(k):
        i = (j * 7919) % n
        if i in moved:
            body, want = eslice(i, "AB"), {"bpa", "bpb"}
            moved.discard(i)
        else:
            body, want = eslice(i, "C"), {"bpc"}
            moved.add(i)
        t0 = post(certs, port, body)
        got = probe(addr("vip", i), want, t0 + cap)
        t1 = got[0] if got else None
        if t1 is None:
            timeouts += 1
        else:
            samples.append((t1 - t0) * 1000)
        time.sleep(0.15)
    s = sorted(samples)
    print(json.dumps({"changes": k, "timeouts": timeouts,
                      "p50_ms": pct(s, 0.5), "p99_ms": pct(s, 0.99),
                      "max_ms": s[-1] if s else None,
                      "samples_ms": [round(x, 2) for x in samples]}))


def main():
    if not os.path.exists("/etc/kpx-guest"):
        sys.exit("chglat.py: refusing to run outside the kpx test VM (/etc/kpx-guest)")
    if sys.argv[1] == "probe":
        i, cap = int(sys.argv[2]), float(sys.argv[3])
        got = probe(addr("vip", i), {"bpa", "bpb", "bpc"}, time.monotonic() + cap, 0.01)
        print(got[1] if got else "none")
        return
    cmd, certs, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if cmd == "apply":
        with open(sys.argv[4]) as f:
            body = json.load(f)
        t0 = post(certs, port, body)
        print("%.3f" % (time.monotonic() - t0))
    elif cmd == "changes":
        changes(certs, port, int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
