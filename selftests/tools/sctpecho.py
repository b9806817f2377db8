#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""sctpecho.py ID ADDR PORT: one-to-one SCTP server answering "ID peer=..."
to every association, in the kpx VM only.  Forks; prints its PID."""
import os, socket, sys
if not os.path.exists("/etc/kpx-guest"):
    sys.exit("refusing to run outside the kpx test VM")
ident, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM, socket.IPPROTO_SCTP)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(64)
pid = os.fork()
if pid:
    print(pid)
    sys.stdout.flush()
    sys.exit(0)
os.setsid()
fd = os.open("/dev/null", os.O_RDWR)
for i in (0, 1, 2):
    os.dup2(fd, i)
while True:
    c, peer = s.accept()
    try:
        c.sendall(("%s peer=%s\n" % (ident, peer[0])).encode())
    except OSError:
        pass
    c.close()
