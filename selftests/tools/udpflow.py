#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""udpflow.py DURATION_S INTERVAL_MS ADDR:PORT...: one long-lived connected
UDP socket per target (fixed source port, as a stub resolver); every
INTERVAL_MS it sends a datagram on each and prints, per target and round,
"EPOCH_MS TARGET RESULT" where RESULT is the answering kpx_echo ID,
"refused" (ICMP port unreachable) or "timeout".  Runs only in the kpx VM."""
import errno, os, select, socket, sys, time

if not os.path.exists("/etc/kpx-guest"):
    sys.exit("udpflow: refusing to run outside the kpx test VM")
dur, ivl = float(sys.argv[1]), int(sys.argv[2]) / 1000.0
socks = []
for t in sys.argv[3:]:
    host, port = t.rsplit(":", 1)
    host = host.strip("[]")
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((host, int(port)))
    s.setblocking(False)
    socks.append((t, s))
end = time.time() + dur
def drain(s):
    """Drops what a round that timed out left queued: a late reply read by
    a later round would be taken for that round's answer, and under a
    stalled guest the lag grows by one with each such round."""
    for _ in range(256):
        try:
            s.recv(512)
        except BlockingIOError:
            return
        except OSError:
            pass    # a late ICMP error of an earlier round


while time.time() < end:
    t0 = time.time()
    res = {}
    for t, s in socks:
        drain(s)
        try:
            s.send(b"q\n")
        except OSError as e:
            res[t] = "refused" if e.errno == errno.ECONNREFUSED else "err%d" % e.errno
    pending = {s.fileno(): (t, s) for t, s in socks if t not in res}
    while pending and time.time() < t0 + ivl:
        r, _, _ = select.select(list(pending), [], [], max(0, t0 + ivl - time.time()))
        for fd in r:
            t, s = pending.pop(fd)
            try:
                res[t] = s.recv(512).decode().split()[0]
            except OSError as e:
                res[t] = "refused" if e.errno == errno.ECONNREFUSED else "err%d" % e.errno
    for t, s in socks:
        print("%d %s %s" % (t0 * 1000, t, res.get(t, "timeout")))
    sys.stdout.flush()
    time.sleep(max(0, t0 + ivl - time.time()))
