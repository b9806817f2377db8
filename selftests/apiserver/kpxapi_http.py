# SPDX-License-Identifier: GPL-2.0-only
"""HTTP handler of the kpx test API server: list, get, watch and /_test/ control."""

import bisect
import hmac
import json
import select
import socket
import ssl
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from kpxapi_select import (decode_continue, encode_continue, match_fields,
                           match_labels, parse_field_selector,
                           parse_label_selector)
from kpxapi_store import RESOURCES, StoreError, obj_key, split_objects


def status_body(code, reason, message, extra_md=None, causes=None):
    """A v1 Status object (the body of every error answer)."""
    st = {"kind": "Status", "apiVersion": "v1", "metadata": extra_md or {},
          "status": "Failure", "message": message, "reason": reason,
          "code": code}
    if causes:
        st["details"] = {"causes": causes, "retryAfterSeconds": 1}
    return st


def parse_events_path(path):
    """The namespace of /apis/events.k8s.io/v1/namespaces/NS/events, or None."""
    parts = [p for p in path.split("/") if p]
    if len(parts) == 6 and parts[:3] == ["apis", "events.k8s.io", "v1"] and \
            parts[3] == "namespaces" and parts[5] == "events":
        return parts[4]
    return None


def _strip(obj):
    """List items carry no kind/apiVersion, as from the real server."""
    o = dict(obj)
    o.pop("kind", None)
    o.pop("apiVersion", None)
    return o


def parse_path(path):
    """Map a URL path to (resource, namespace, name) or None.

    Accepted: /api/v1/{services,nodes}, /api/v1/namespaces/NS/services,
    /apis/discovery.k8s.io/v1/[namespaces/NS/]endpointslices, plus /NAME.
    """
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        rest, group = parts[2:], "v1"
    elif parts[:3] == ["apis", "discovery.k8s.io", "v1"]:
        rest, group = parts[3:], "discovery.k8s.io/v1"
    else:
        return None
    ns = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        ns, rest = rest[1], rest[2:]
    if not rest or len(rest) > 2 or rest[0] not in RESOURCES:
        return None
    kind, api_version, namespaced = RESOURCES[rest[0]]
    if api_version != group or (ns is not None and not namespaced):
        return None
    name = rest[1] if len(rest) == 2 else None
    if name is not None and namespaced and ns is None:
        return None
    return rest[0], ns, name


class Handler(BaseHTTPRequestHandler):
    """One connection; TLS is set up here so a slow handshake blocks no one."""

    protocol_version = "HTTP/1.1"
    server_version = "kpx-test-apiserver/1"

    def setup(self):
        self.tls_ok = False
        self.request.settimeout(10)
        try:
            self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.server.log("%s TLS handshake failed: %s" % (self.client_address[0], e))
            return
        self.tls_ok = True
        self.request.settimeout(None)
        super().setup()

    def finish(self):
        if self.tls_ok:
            super().finish()

    def handle(self):
        if not self.tls_ok:
            return
        try:
            super().handle()
        except (ssl.SSLError, ConnectionError, socket.timeout, OSError) as e:
            self.log_message("connection ended: %s", e)

    def log_message(self, fmt, *args):
        self.server.log("%s %s" % (self.client_address[0], fmt % args))

    # -- helpers -------------------------------------------------------------

    def send_json(self, code, body, close=False):
        data = (json.dumps(body) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def send_status(self, code, reason, message, extra_md=None, causes=None):
        self.send_json(code, status_body(code, reason, message, extra_md, causes))

    def authorized(self):
        """Bearer token or a client certificate signed by the CA."""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and self.server.token and \
                hmac.compare_digest(auth[7:].strip().encode(), self.server.token.encode()):
            return True
        try:
            return bool(self.request.getpeercert())
        except (ValueError, AttributeError):
            return False

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"null")
        except ValueError as e:
            raise StoreError(400, "BadRequest", "body is not JSON: %s" % e)

    # -- dispatch ------------------------------------------------------------

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        if url.path in ("/healthz", "/readyz", "/livez"):
            return self.send_text(200, "ok")
        if not self.authorized():
            # drain a body so the connection stays usable
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            return self.send_status(401, "Unauthorized", "Unauthorized")
        try:
            if url.path.startswith("/_test/"):
                return self.control(url.path[len("/_test/"):], q)
            ev_ns = parse_events_path(url.path)
            if ev_ns is not None and self.command == "POST":
                return self.do_post_event(ev_ns)
            if self.command != "GET":
                raise StoreError(405, "MethodNotAllowed", "only GET is served")
            if url.path == "/version":
                return self.send_json(200, {"major": "1", "minor": "31",
                                            "gitVersion": "v1.31.0-kpx-test"})
            target = parse_path(url.path)
            if target is None:
                raise StoreError(404, "NotFound", "the server could not find the requested resource")
            resource, ns, name = target
            if name is not None:
                return self.do_get_one(resource, ns, name)
            if q.get("watch") in ("true", "1"):
                return self.do_watch(resource, ns, q)
            return self.do_list(resource, ns, q)
        except StoreError as e:
            self.send_status(e.code, e.reason, e.message, causes=e.causes)

    def do_post_event(self, ns):
        """POST of an events.k8s.io/v1 Event: recorded (201), or 403."""
        body = self.read_body()
        if not isinstance(body, dict) or body.get("kind") != "Event" or \
                body.get("apiVersion") != "events.k8s.io/v1":
            raise StoreError(400, "BadRequest", "body must be an events.k8s.io/v1 Event")
        md = body.get("metadata") or {}
        if md.get("namespace") not in (None, "", ns):
            raise StoreError(400, "BadRequest", "the namespace of the object does "
                             "not match the namespace on the request")
        forbid = self.server.forbid_events
        ev = self.server.store.post_event(ns, body, forbidden=forbid)
        if ev is None:
            raise StoreError(403, "Forbidden",
                             'events.events.k8s.io is forbidden: User "kpx" cannot '
                             'create resource "events" in API group "events.k8s.io" '
                             'in the namespace "%s"' % ns)
        self.send_json(201, ev)

    def send_text(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # -- read API ------------------------------------------------------------

    def do_get_one(self, resource, ns, name):
        kind = RESOURCES[resource][0]
        self.server.store.count("get", resource)
        obj = self.server.store.get(kind, ns, name)
        if obj is None:
            raise StoreError(404, "NotFound", '%s "%s" not found' % (resource, name))
        self.send_json(200, obj)

    def _filters(self, ns, q):
        labels = parse_label_selector(q.get("labelSelector", ""))
        fields = parse_field_selector(q.get("fieldSelector", ""))

        def match(obj):
            if ns is not None and obj_key(obj)[1] != ns:
                return False
            return match_labels(labels, obj) and match_fields(fields, obj)
        return match

    def do_list(self, resource, ns, q):
        store = self.server.store
        kind, api_version, _ = RESOURCES[resource]
        store.count("list", resource)
        match = self._filters(ns, q)
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise StoreError(400, "BadRequest", "limit must be an integer")
        start = None
        cont = q.get("continue")
        if cont:
            store.log_list({"resource": resource, "resourceVersion": q.get("resourceVersion"),
                            "limit": q.get("limit"), "continue": True, "from": "store"})
            rv, start = decode_continue(cont)
            try:
                at, objs, keys = store.snapshot_keys(kind, rv)
            except StoreError as e:
                if e.code != 410:
                    raise
                new = encode_continue(store.snapshot(kind)[0], start)
                return self.send_status(
                    410, "Expired",
                    "The provided continue parameter is too old to display a "
                    "consistent list result. You can start a new list without "
                    "the continue parameter, or use the continue token in this "
                    "response to retrieve the remainder of the results. "
                    "Continuing with the provided token results in an "
                    "inconsistent list - objects that were created, modified, "
                    "or deleted between the time the first chunk was returned "
                    "and now may show up in the list.",
                    {"continue": new})
        else:
            want = None
            rvq = q.get("resourceVersion", "")
            exact = q.get("resourceVersionMatch") == "Exact"
            # kube-apiserver's watch cache serves resourceVersion=0 (limit
            # ignored) and a resourceVersion without a limit (waiting for
            # the cache to reach it); the rest is read from the store.
            cached = store.watch_cache and not exact and \
                (rvq == "0" or (rvq != "" and limit <= 0))
            store.log_list({"resource": resource, "resourceVersion": q.get("resourceVersion"),
                            "limit": q.get("limit"), "continue": False,
                            "from": "cache" if cached else "store"})
            if cached:
                want = store.cache_wait(self._rv(rvq) if rvq != "0" else 0)
                at, objs, keys = store.snapshot_keys(kind, want, cache=True)
                limit = 0
            else:
                if rvq not in ("", "0") and exact:
                    want = self._rv(rvq)
                at, objs, keys = store.snapshot_keys(kind, want)
        # the namespace's objects are one range of the sorted keys
        lo, hi = 0, len(objs)
        if ns is not None:
            lo = bisect.bisect_left(keys, (kind, ns, ""))
            hi = bisect.bisect_left(keys, (kind, ns + "\0", ""))
        first = lo if start is None else max(lo, bisect.bisect_right(keys, tuple(start)))
        objs = objs[:hi]
        md = {"resourceVersion": str(at)}
        if limit > 0 and not q.get("labelSelector") and not q.get("fieldSelector"):
            items = objs[first:first + limit]
            rest = len(objs) - first - len(items)
            if rest > 0:
                # as the API server: a count only when nothing is filtered
                md["continue"] = encode_continue(at, obj_key(items[-1]))
                md["remainingItemCount"] = rest
        elif limit > 0:
            items = []
            for i in range(first, len(objs)):
                if not match(objs[i]):
                    continue
                if len(items) == limit:
                    md["continue"] = encode_continue(at, obj_key(items[-1]))
                    break
                items.append(objs[i])
        else:
            items = [o for o in objs[first:] if match(o)]
        self.send_json(200, {"kind": kind + "List", "apiVersion": api_version,
                             "metadata": md, "items": [_strip(o) for o in items]})

    @staticmethod
    def _rv(s):
        try:
            v = int(s)
            if v < 0:
                raise ValueError
            return v
        except ValueError:
            raise StoreError(400, "BadRequest", "invalid resource version: %r" % s)

    # -- watch ---------------------------------------------------------------

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def write_event(self, etype, obj):
        self.write_chunk((json.dumps({"type": etype, "object": obj}) + "\n").encode())

    def client_gone(self):
        """True when the client closed its side (checked between events)."""
        try:
            r, _, _ = select.select([self.request], [], [], 0)
            if not r:
                return False
            self.request.setblocking(False)
            try:
                return self.request.recv(1) == b""
            finally:
                self.request.setblocking(True)
        except (ssl.SSLWantReadError, BlockingIOError):
            return False
        except (OSError, ValueError):
            return True

    def do_watch(self, resource, ns, q):
        store = self.server.store
        kind = RESOURCES[resource][0]
        match = self._filters(ns, q)
        rvq = q.get("resourceVersion", "")
        rv = None if rvq in ("", "0") else self._rv(rvq)
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        initial_end = q.get("sendInitialEvents") == "true"
        if initial_end:
            if not bookmarks or q.get("resourceVersionMatch") != "NotOlderThan":
                raise StoreError(422, "Invalid", "sendInitialEvents needs "
                                 "allowWatchBookmarks=true and "
                                 "resourceVersionMatch=NotOlderThan")
            rv = None
        timeout = q.get("timeoutSeconds")
        deadline = None
        if timeout:
            deadline = time.monotonic() + self._rv(timeout)
        interval = self.server.bookmark_interval

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        try:
            w, initial = store.open_watch(resource, rv)
        except StoreError as e:
            self.write_event("ERROR", status_body(e.code, e.reason, e.message))
            self.write_chunk(b"")
            return
        ending = "clean"
        try:
            for obj in initial:
                if match(obj):
                    self.write_event("ADDED", obj)
            if initial_end:
                self.write_event("BOOKMARK", {
                    "kind": kind, "apiVersion": RESOURCES[resource][1],
                    "metadata": {"resourceVersion": str(w.cursor), "annotations": {
                        "k8s.io/initial-events-end": "true"}}})
            next_bm = time.monotonic() + interval
            while True:
                now = time.monotonic()
                wait = min(1.0, next_bm - now if bookmarks else 1.0)
                if deadline is not None:
                    wait = min(wait, deadline - now)
                evs, cursor = store.wait_events(w, max(wait, 0))
                for ev in evs:
                    self.send_watch_event(kind, match, ev)
                if w.dropped:
                    ending = w.dropped
                    break
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    break
                if bookmarks and now >= next_bm:
                    self.write_event("BOOKMARK", {
                        "kind": kind, "apiVersion": RESOURCES[resource][1],
                        "metadata": {"resourceVersion": str(cursor)}})
                    next_bm = now + interval
                if not evs and self.client_gone():
                    ending = "gone"
                    break
        except (ConnectionError, ssl.SSLError, OSError):
            ending = "gone"
        finally:
            store.close_watch(w)
        self.log_message('watch %s ended: %s', resource, ending)
        if ending == "clean":
            self.write_chunk(b"")
        else:
            self.close_connection = True
            if ending == "abort":
                try:
                    self.request.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def send_watch_event(self, kind, match, ev):
        """Send one history event, turning selector transitions into ADDED/DELETED."""
        if ev.obj["kind"] != kind:
            return
        now_in = match(ev.obj)
        was_in = ev.prev is not None and match(ev.prev)
        if ev.type == "DELETED":
            if was_in:
                self.write_event("DELETED", ev.obj)
            return
        if ev.type == "ADDED" or not was_in:
            if now_in:
                self.write_event("ADDED", ev.obj)
            return
        self.write_event("MODIFIED" if now_in else "DELETED", ev.obj)

    # -- /_test/ control -----------------------------------------------------

    def control(self, what, q):
        store = self.server.store
        if what == "stats" and self.command == "GET":
            return self.send_json(200, store.stats())
        if what == "events" and self.command == "GET":
            with store.cond:
                return self.send_json(200, {"items": list(store.events),
                                            "posts": dict(store.event_posts)})
        if self.command != "POST":
            raise StoreError(405, "MethodNotAllowed", "use POST for /_test/%s" % what)
        if what == "apply":
            body = self.read_body()
            if not isinstance(body, dict):
                raise StoreError(400, "BadRequest", "body must be an object or a List")
            res = [store.apply(o) for o in split_objects(body)]
            return self.send_json(200, {"results": [{"type": t, "resourceVersion": str(r)}
                                                    for t, r in res]})
        if what == "delete":
            body = self.read_body() or {}
            t, r = store.delete(body.get("kind", ""), body.get("namespace", ""),
                                body.get("name", ""))
            return self.send_json(200, {"type": t, "resourceVersion": str(r)})
        if what == "step":
            n = self._rv(q["n"]) if q.get("n") else None
            n, res = store.apply_step(n)
            return self.send_json(200, {"step": n, "results": [
                {"type": t, "resourceVersion": str(r)} for t, r in res]})
        if what == "compact":
            rv = self._rv(q["rv"]) if q.get("rv") else None
            return self.send_json(200, {"compactedResourceVersion": str(store.compact(rv))})
        if what == "cache":
            mode = q.get("mode", "")
            if mode == "freeze":
                rv = self._rv(q["rv"]) if q.get("rv") else None
                return self.send_json(200, {"cacheResourceVersion": str(store.cache_freeze(rv))})
            if mode == "follow":
                return self.send_json(200, {"cacheResourceVersion": str(store.cache_follow())})
            raise StoreError(400, "BadRequest", "mode is freeze or follow")
        if what == "events":
            with store.cond:
                return self.send_json(200, {"items": list(store.events),
                                            "posts": dict(store.event_posts)})
        if what == "drop-watches":
            mode = q.get("mode", "abort")
            if mode not in ("abort", "clean"):
                raise StoreError(400, "BadRequest", "mode is abort or clean")
            return self.send_json(200, {"dropped": store.drop_watches(mode)})
        raise StoreError(404, "NotFound", "no control endpoint %r" % what)

