#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultproxy.py: a fault-injecting HTTPS proxy in front of the test API
server, for the agent's fault tests (faults the server cannot produce).

  faultproxy.py --dir STATE --certs CERTS --upstream https://127.0.0.1:PORT
                [--alt-certs OTHER_CERTS] [--bind 127.0.0.1]

Listens on loopback (port written to STATE/port last), serves TLS with
CERTS/server.{crt,key}, forwards GET requests to the upstream (verified with
CERTS/ca.crt) and streams responses back chunk by chunk (watches included).
Control, without auth, on the same port (POST, answers JSON):

  /_fault/http500?n=N     the next N API requests get HTTP 500 (a Status)
  /_fault/stall?on=1|0    stop (1) or resume (0) forwarding response bytes;
                          new requests also hang while on
  /_fault/token?file=F    require "Bearer <contents of F>" (re-read each
                          request, 401 otherwise) and send the upstream
                          CERTS/token instead; file= empty turns it off:
                          the client's own Authorization is forwarded
                          again, so a client still holding the rotated
                          token then gets the upstream's 401 (rotate it
                          back to CERTS/token first)
  /_fault/cert?alt=1|0    new TLS connections get the ALT certificate
                          (signed by another CA) or the right one
  /_fault/drop            responses under way (watches) are cut: their
                          connection is shut down before any further byte
                          is forwarded (also what a stall holds back)
  /_fault/stats  (GET)    {"requests", "http500", "unauthorized", "stalled"}

Standard library only; one thread per connection.
"""

import argparse
import http.client
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.http500 = 0
        self.stall = False
        self.token_file = None
        self.alt = False
        self.gen = 0            # bumped by /_fault/drop
        self.stats = {"requests": 0, "http500": 0, "unauthorized": 0,
                      "stalled": 0, "dropped": 0}


STATE = State()
ARGS = None


def status_body(code, reason, message):
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                       "status": "Failure", "message": message,
                       "reason": reason, "code": code}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("faultproxy: %s\n" % (fmt % args))

    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def control(self, path, q):
        with STATE.lock:
            if path == "/_fault/http500":
                STATE.http500 = int(q.get("n", ["1"])[0])
            elif path == "/_fault/stall":
                STATE.stall = q.get("on", ["1"])[0] == "1"
            elif path == "/_fault/token":
                f = q.get("file", [""])[0]
                STATE.token_file = f or None
            elif path == "/_fault/cert":
                STATE.alt = q.get("alt", ["1"])[0] == "1"
            elif path == "/_fault/drop":
                STATE.gen += 1
            elif path != "/_fault/stats":
                return self.reply(404, b'{"error": "unknown control"}')
            body = json.dumps(STATE.stats).encode()
        self.reply(200, body)

    def do_POST(self):
        u = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if u.path.startswith("/_fault/"):
            return self.control(u.path, urllib.parse.parse_qs(u.query))
        self.reply(405, status_body(405, "MethodNotAllowed", "GET only"))

    def wait_unstalled(self):
        counted = False
        while True:
            with STATE.lock:
                if not STATE.stall:
                    return
                if not counted:
                    STATE.stats["stalled"] += 1
                    counted = True
            time.sleep(0.05)

    def dropped(self, gen):
        """True (connection shut down) if /_fault/drop came after @gen."""
        with STATE.lock:
            if STATE.gen == gen:
                return False
            STATE.stats["dropped"] += 1
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return True

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_fault/stats":
            return self.control(u.path, {})
        with STATE.lock:
            STATE.stats["requests"] += 1
            gen = STATE.gen
            fail = STATE.http500 > 0
            if fail:
                STATE.http500 -= 1
                STATE.stats["http500"] += 1
            token_file = STATE.token_file
        if fail:
            return self.reply(500, status_body(500, "InternalError",
                                               "injected by faultproxy"))
        auth = self.headers.get("Authorization")
        if token_file:
            try:
                with open(token_file) as f:
                    want = f.read().strip()
            except OSError:
                want = None
            if auth != "Bearer %s" % want:
                with STATE.lock:
                    STATE.stats["unauthorized"] += 1
                return self.reply(401, status_body(401, "Unauthorized",
                                                   "Unauthorized"))
            with open(os.path.join(ARGS.certs, "token")) as f:
                auth = "Bearer " + f.read().strip()
        self.wait_unstalled()
        up = urllib.parse.urlsplit(ARGS.upstream)
        ctx = ssl.create_default_context(cafile=os.path.join(ARGS.certs, "ca.crt"))
        conn = http.client.HTTPSConnection(up.hostname, up.port, context=ctx,
                                           timeout=None)
        headers = {"Accept": self.headers.get("Accept", "application/json"),
                   "Accept-Encoding": "identity"}
        if auth:
            headers["Authorization"] = auth
        try:
            conn.request("GET", self.path, headers=headers)
            resp = conn.getresponse()
        except OSError as e:
            return self.reply(502, status_body(502, "BadGateway", str(e)))
        self.send_response(resp.status)
        self.send_header("Content-Type",
                         resp.getheader("Content-Type", "application/json"))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while True:
                data = resp.read1(65536)
                if not data:
                    break
                self.wait_unstalled()
                if self.dropped(gen):
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True
        finally:
            conn.close()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, handler, ctxs):
        self.ctxs = ctxs
        super().__init__(addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        with STATE.lock:
            ctx = self.ctxs[1 if STATE.alt else 0]
        try:
            return ctx.wrap_socket(sock, server_side=True), addr
        except (ssl.SSLError, OSError):
            sock.close()
            raise


def server_ctx(certs):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(certs, "server.crt"),
                        os.path.join(certs, "server.key"))
    return ctx


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--certs", required=True)
    p.add_argument("--alt-certs")
    p.add_argument("--upstream", required=True)
    p.add_argument("--bind", default="127.0.0.1", choices=["127.0.0.1", "::1"])
    ARGS = p.parse_args()
    ctxs = [server_ctx(ARGS.certs)]
    ctxs.append(server_ctx(ARGS.alt_certs) if ARGS.alt_certs else ctxs[0])
    if ARGS.bind == "::1":
        Server.address_family = socket.AF_INET6
    srv = Server((ARGS.bind, 0), Handler, ctxs)
    port = srv.server_address[1]
    tmp = os.path.join(ARGS.dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, os.path.join(ARGS.dir, "port"))
    sys.stderr.write("faultproxy: listening on %s:%d -> %s\n"
                     % (ARGS.bind, port, ARGS.upstream))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
