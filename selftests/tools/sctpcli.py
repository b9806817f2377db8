#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""sctpcli.py N TIMEOUT_S ADDR PORT: N sequential SCTP associations, each a
new socket; prints "i ok|ERR ms answer" and a summary.  kpx VM only."""
import os, socket, sys, time
if not os.path.exists("/etc/kpx-guest"):
    sys.exit("refusing to run outside the kpx test VM")
n, tmo, addr, port = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
bad = 0
for i in range(n):
    t0 = time.time()
    s = socket.socket(fam, socket.SOCK_STREAM, socket.IPPROTO_SCTP)
    s.settimeout(tmo)
    try:
        s.connect((addr, port))
        a = s.recv(200).decode().strip()
        r = "ok"
    except OSError as e:
        a, r = str(e), "ERR"
        bad += 1
    print("%d %s %.0f %s local=%s" % (i, r, (time.time() - t0) * 1000, a, s.getsockname()[1] if r == "ok" or True else ""))
    s.close()
print("summary n=%d failed=%d" % (n, bad))
