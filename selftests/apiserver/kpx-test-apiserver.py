#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""kpx test Kubernetes API server (loopback only, HTTPS, list/watch semantics).

Usage: kpx-test-apiserver.py --dir STATE --port N --certs DIR
                             [--bind 127.0.0.1|::1] [--bookmark-interval S]
                             [--objects FILE.json ...] [--no-watch-cache]
                             [--forbid-events]
Writes only into STATE: pid, port, kubeconfig, kubeconfig-cert.
"""

import argparse
import ipaddress
import json
import os
import signal
import socket
import ssl
import sys
import threading
import time
from http.server import ThreadingHTTPServer

sys.dont_write_bytecode = True  # the tree may be read-only
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kpxapi_http import Handler  # noqa: E402
from kpxapi_kubeconfig import kubeconfig_text  # noqa: E402
from kpxapi_store import Store, StoreError, split_objects  # noqa: E402


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, family, store, tls, token, bookmark_interval,
                 forbid_events=False):
        self.address_family = family
        self.forbid_events = forbid_events
        self.store = store
        self.tls = tls
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.log_lock = threading.Lock()
        super().__init__(addr, Handler)

    def log(self, line):
        with self.log_lock:
            sys.stderr.write("%s kpx-test-apiserver: %s\n"
                             % (time.strftime("%H:%M:%S"), line))
            sys.stderr.flush()


def write_file(state, name, text, mode=0o644):
    """Atomically write STATE/name."""
    path = os.path.join(state, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def tls_context(certs):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(certs, "server.crt"), os.path.join(certs, "server.key"))
    ctx.load_verify_locations(os.path.join(certs, "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def load_objects(store, files):
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc, dict):
            raise StoreError(400, "BadRequest", "%s: not a JSON object" % path)
        store.load(split_objects(doc))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="state directory (the only place written)")
    ap.add_argument("--port", type=int, default=0, help="TCP port, 0 = any (written to DIR/port)")
    ap.add_argument("--bind", default="127.0.0.1", help="loopback address to bind")
    ap.add_argument("--certs", required=True, help="directory made by gen-certs.sh")
    ap.add_argument("--objects", nargs="*", default=[], help="JSON files to load")
    ap.add_argument("--bookmark-interval", type=float, default=3.0, help="seconds")
    ap.add_argument("--initial-rv", type=int, default=1000)
    ap.add_argument("--no-watch-cache", action="store_true",
                    help="serve every list from the store (lists at resourceVersion=0 "
                    "are paged), as kube-apiserver --watch-cache=false")
    ap.add_argument("--forbid-events", action="store_true",
                    help="answer Event posts 403 Forbidden (RBAC without events)")
    args = ap.parse_args()

    addr = ipaddress.ip_address(args.bind)
    if not addr.is_loopback:
        ap.error("--bind must be a loopback address")
    family = socket.AF_INET6 if addr.version == 6 else socket.AF_INET

    store = Store(initial_rv=args.initial_rv)
    store.watch_cache = not args.no_watch_cache
    try:
        load_objects(store, args.objects)
    except (OSError, ValueError, StoreError) as e:
        sys.exit("kpx-test-apiserver: loading objects: %s" % e)

    with open(os.path.join(args.certs, "token")) as f:
        token = f.read().strip()
    srv = Server((args.bind, args.port), family, store, tls_context(args.certs),
                 token, args.bookmark_interval, args.forbid_events)
    port = srv.server_address[1]
    write_file(args.dir, "pid", "%d\n" % os.getpid())
    for name, mode in (("kubeconfig", "token"), ("kubeconfig-cert", "cert")):
        write_file(args.dir, name, kubeconfig_text(args.certs, args.bind, port, mode), 0o600)
    write_file(args.dir, "port", "%d\n" % port)
    srv.log("listening on https://%s:%d (%d objects, steps %s)"
            % (args.bind if family == socket.AF_INET else "[%s]" % args.bind,
               port, len(store.objects), sorted(store.steps)))

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv.serve_forever(poll_interval=0.2)
    store.drop_watches("abort")
    srv.server_close()
    srv.log("stopped")


if __name__ == "__main__":
    main()
