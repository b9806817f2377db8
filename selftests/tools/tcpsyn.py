#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""tcpsyn.py COUNT ADDR:PORT SRC...: opens COUNT TCP connections to
ADDR:PORT without waiting for them: each from its own (SRC, port) pair,
source ports 1024 up, round robin over the SRC addresses, so every SYN is a
new flow (a new conntrack entry: one scheduling decision of the proxy).
Sockets are closed in batches of 500 (a SYN_SENT socket closes silently),
with a pause of PAUSE_MS (default 20) after each so that the veth's receive
backlog (net.core.netdev_max_backlog) does not overflow and drop SYNs.
Prints "sent N" and exits 0 when every SYN left.  Runs only in the kpx VM."""
import errno, os, socket, sys, time

if not os.path.exists("/etc/kpx-guest"):
    sys.exit("tcpsyn: refusing to run outside the kpx test VM")
count = int(sys.argv[1])
host, port = sys.argv[2].rsplit(":", 1)
srcs = sys.argv[3:]
if count < 1 or not srcs or count > len(srcs) * (65536 - 1024):
    sys.exit("usage: tcpsyn.py COUNT ADDR:PORT SRC... (COUNT <= 64512 per SRC)")
sent, batch = 0, []
for i in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setblocking(False)
    s.bind((srcs[i % len(srcs)], 1024 + i // len(srcs)))
    r = s.connect_ex((host, int(port)))
    if r in (0, errno.EINPROGRESS):
        sent += 1
    batch.append(s)
    if len(batch) == 500:
        for b in batch:
            b.close()
        batch = []
        time.sleep(float(os.environ.get("PAUSE_MS", "20")) / 1000)
for b in batch:
    b.close()
print("sent %d" % sent)
sys.exit(0 if sent == count else 1)
