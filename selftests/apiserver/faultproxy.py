#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""faultproxy.py: a fault-injecting HTTPS proxy in front of the test API
server, for the agent's fault tests (faults the server cannot produce).

  faultproxy.py --dir STATE --certs CERTS --upstream https://127.0.0.1:PORT
                [--alt-certs OTHER_CERTS] [--bind 127.0.0.1]

Listens on loopback (port written to STATE/port last), serves TLS with
CERTS/server.{crt,key}, forwards GET requests to the upstream (verified with
CERTS/ca.crt) and streams responses back chunk by chunk (watches included);
POSTs (Events) are forwarded whole, under the token and stall faults only.
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
  /_fault/limit?n=N       list requests are forwarded with limit=N instead
                          of the client's or none (small pages from few
                          objects; a limit also keeps a list at a
                          resourceVersion off the watch cache);
                          n=0 forwards the client's limit again
  /_fault/badlist?mode=M  list requests (not watches) are answered 200 with
                          a body that is not a list: M=empty "{}" (an auth
                          proxy's), M=norv a list with items but no
                          metadata.resourceVersion, M=status a 200 Status
                          object; M=off forwards again
  /_fault/continue?mode=M[&path=P]
                          list requests with a continue token (whose path
                          holds P): M=500 each gets HTTP 500 (until
                          changed), M=410 the next one gets 410 Expired as
                          for a compacted token (then off), M=off forwards
  /_fault/corrupt?n=N&path=P&how=H
                          the next N ADDED/MODIFIED/DELETED events of
                          watches whose path holds P are corrupted: H=json
                          (default) a byte that does not parse, H=type the
                          event without its "type"
  /_fault/toolarge?path=P every watch whose path holds P is answered with
                          one ERROR event, the Status a real API server
                          sends for a resourceVersion newer than it has
                          (504 Timeout, cause ResourceVersionTooLarge),
                          until a list request of that path comes; path=
                          empty turns it off
  /_fault/stats  (GET)    {"requests", "http500", "unauthorized", "stalled",
                          "dropped", "badlist", "continue", "corrupted",
                          "toolarge"}

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
        self.limit = 0
        self.badlist = None
        self.cont = None
        self.cont_path = ""
        self.corrupt = 0
        self.corrupt_path = ""
        self.corrupt_how = "json"
        self.watches = {}       # path -> number of its latest watch request
        self.toolarge = ""
        self.stats = {"requests": 0, "http500": 0, "unauthorized": 0,
                      "stalled": 0, "dropped": 0, "badlist": 0,
                      "continue": 0, "corrupted": 0, "toolarge": 0}


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
            elif path == "/_fault/limit":
                STATE.limit = int(q.get("n", ["0"])[0])
            elif path == "/_fault/badlist":
                m = q.get("mode", ["off"])[0]
                if m not in ("empty", "norv", "status", "off"):
                    return self.reply(400, b'{"error": "mode"}')
                STATE.badlist = None if m == "off" else m
            elif path == "/_fault/continue":
                m = q.get("mode", ["off"])[0]
                if m not in ("500", "410", "off"):
                    return self.reply(400, b'{"error": "mode"}')
                STATE.cont = None if m == "off" else m
                STATE.cont_path = q.get("path", [""])[0]
            elif path == "/_fault/corrupt":
                STATE.corrupt = int(q.get("n", ["1"])[0])
                STATE.corrupt_path = q.get("path", [""])[0]
                STATE.corrupt_how = q.get("how", ["json"])[0]
            elif path == "/_fault/toolarge":
                STATE.toolarge = q.get("path", [""])[0]
            elif path != "/_fault/stats":
                return self.reply(404, b'{"error": "unknown control"}')
            body = json.dumps(STATE.stats).encode()
        self.reply(200, body)

    def do_POST(self):
        """Control, or a create (an Event) forwarded as it is, whole."""
        u = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if u.path.startswith("/_fault/"):
            return self.control(u.path, urllib.parse.parse_qs(u.query))
        with STATE.lock:
            STATE.stats["requests"] += 1
            STATE.stats["posts"] = STATE.stats.get("posts", 0) + 1
        auth = self.upstream_auth()
        if auth is False:
            return
        self.wait_unstalled()
        up = urllib.parse.urlsplit(ARGS.upstream)
        ctx = ssl.create_default_context(cafile=os.path.join(ARGS.certs, "ca.crt"))
        conn = http.client.HTTPSConnection(up.hostname, up.port, context=ctx, timeout=30)
        headers = {"Accept": self.headers.get("Accept", "application/json"),
                   "Content-Type": self.headers.get("Content-Type", "application/json")}
        if auth:
            headers["Authorization"] = auth
        try:
            conn.request("POST", self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except OSError as e:
            return self.reply(502, status_body(502, "BadGateway", str(e)))
        finally:
            conn.close()
        self.reply(resp.status, data, resp.getheader("Content-Type", "application/json"))

    def upstream_auth(self):
        """The Authorization to send upstream (None: none), or False after
        answering 401 (the token fault)."""
        with STATE.lock:
            token_file = STATE.token_file
        auth = self.headers.get("Authorization")
        if not token_file:
            return auth
        try:
            with open(token_file) as f:
                want = f.read().strip()
        except OSError:
            want = None
        if auth != "Bearer %s" % want:
            with STATE.lock:
                STATE.stats["unauthorized"] += 1
            self.reply(401, status_body(401, "Unauthorized", "Unauthorized"))
            return False
        with open(os.path.join(ARGS.certs, "token")) as f:
            return "Bearer " + f.read().strip()

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

    def list_fault(self, u, q):
        """Answers a list request with an injected fault; True if it did."""
        with STATE.lock:
            if STATE.toolarge and STATE.toolarge in u.path:
                STATE.toolarge = ""     # the client relists: over
            bad = STATE.badlist
            cont = (STATE.cont if "continue" in q and STATE.cont_path in u.path
                    else None)
            if bad:
                STATE.stats["badlist"] += 1
            elif cont:
                STATE.stats["continue"] += 1
                if cont == "410":
                    STATE.cont = None
        if bad == "empty":
            self.reply(200, b"{}")
        elif bad == "norv":
            self.reply(200, json.dumps({"kind": "List", "apiVersion": "v1",
                                        "metadata": {}, "items": []}).encode())
        elif bad == "status":
            self.reply(200, status_body(403, "Forbidden",
                                        "injected: a Status with 200"))
        elif cont == "500":
            self.reply(500, status_body(500, "InternalError",
                                        "injected by faultproxy (continue)"))
        elif cont == "410":
            self.reply(410, status_body(
                410, "Expired", "The provided continue parameter is too old "
                "to display a consistent list result (injected)"))
        else:
            return False
        return True

    def watch_fault(self, u):
        """Answers a watch with a too-large-RV ERROR event; True if it did."""
        with STATE.lock:
            if not STATE.toolarge or STATE.toolarge not in u.path:
                return False
            STATE.stats["toolarge"] += 1
        rv = urllib.parse.parse_qs(u.query).get("resourceVersion", ["?"])[0]
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {},
              "status": "Failure",
              "message": "Too large resource version: %s, current: 1" % rv,
              "reason": "Timeout",
              "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                                      "message": "Too large resource version"}],
                          "retryAfterSeconds": 1},
              "code": 504}
        body = (json.dumps({"type": "ERROR", "object": st}) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        self.wfile.flush()
        return True

    def corrupted(self, u, data):
        """@data, corrupted if it is an event the corrupt fault wants."""
        with STATE.lock:
            if not STATE.corrupt or STATE.corrupt_path not in u.path:
                return data
            # only the client's latest watch of the path: a watch it has
            # given up on may still stream here until upstream notices
            if STATE.watches.get(u.path) != self.watch_no:
                return data
            how = STATE.corrupt_how
        try:
            ev = json.loads(data)
        except ValueError:
            return data         # not one whole event
        if not isinstance(ev, dict) or ev.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            return data
        with STATE.lock:
            if not STATE.corrupt:
                return data
            STATE.corrupt -= 1
            STATE.stats["corrupted"] += 1
        sys.stderr.write("faultproxy: corrupting %s %s\n" % (ev["type"], u.path))
        if how == "type":
            del ev["type"]
            return (json.dumps(ev) + "\n").encode()
        return b"]" + data

    def forward_path(self, u, q):
        """The request path to send upstream (limit rewritten)."""
        with STATE.lock:
            limit = STATE.limit
        if not limit or "watch" in q:
            return self.path
        q = dict(q)
        q["limit"] = [str(limit)]
        return u.path + "?" + urllib.parse.urlencode(q, doseq=True)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_fault/stats":
            return self.control(u.path, {})
        q = urllib.parse.parse_qs(u.query)
        is_watch = q.get("watch", [""])[0] in ("true", "1")
        if is_watch:
            with STATE.lock:
                self.watch_no = STATE.watches.get(u.path, 0) + 1
                STATE.watches[u.path] = self.watch_no
        with STATE.lock:
            STATE.stats["requests"] += 1
            gen = STATE.gen
            fail = STATE.http500 > 0
            if fail:
                STATE.http500 -= 1
                STATE.stats["http500"] += 1
        if fail:
            return self.reply(500, status_body(500, "InternalError",
                                               "injected by faultproxy"))
        if u.path.startswith("/api") and not is_watch and self.list_fault(u, q):
            return
        if u.path.startswith("/api") and is_watch and self.watch_fault(u):
            return
        auth = self.upstream_auth()
        if auth is False:
            return None
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
            conn.request("GET", self.forward_path(u, q), headers=headers)
            resp = conn.getresponse()
        except OSError as e:
            return self.reply(502, status_body(502, "BadGateway", str(e)))
        self.send_response(resp.status)
        self.send_header("Content-Type",
                         resp.getheader("Content-Type", "application/json"))
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        partial = b""   # a watch event not yet ended by its newline
        try:
            while True:
                data = resp.read1(65536)
                if not data:
                    break
                self.wait_unstalled()
                if self.dropped(gen):
                    return
                if is_watch:
                    # one event per line: a read may end inside one or
                    # hold several, and the corrupt fault wants whole ones
                    lines = (partial + data).split(b"\n")
                    partial = lines.pop()
                    data = b"".join(self.corrupted(u, ln + b"\n") for ln in lines)
                    if not data:
                        continue
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            if partial:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(partial), partial))
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
