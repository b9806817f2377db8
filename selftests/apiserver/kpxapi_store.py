# SPDX-License-Identifier: GPL-2.0-only
"""In-memory object store of the kpx test API server.

One global revision counter (like etcd's), an event history that can be
compacted, per-object resourceVersion, and per-watcher event queues so that
open watches never lose events to a compaction.

A watch cache in front of it, as kube-apiserver's: lists at
resourceVersion=0 (or at a resourceVersion without a limit) and every watch
are served from the cache's revision, which follows the store unless frozen
(a lagging cache: freeze() holds it at the current revision, follow()
catches it up).  Events (events.k8s.io/v1) posted by clients are recorded.
"""

import collections
import copy
import datetime
import threading
import time
import uuid

# resource name -> (kind, apiVersion, namespaced)
RESOURCES = {
    "services": ("Service", "v1", True),
    "endpointslices": ("EndpointSlice", "discovery.k8s.io/v1", True),
    "nodes": ("Node", "v1", False),
}
KIND_TO_RESOURCE = {v[0]: k for k, v in RESOURCES.items()}

STEP_ANNOTATION = "cases.kpr.test/step"
DELETE_ANNOTATION = "cases.kpr.test/delete"


class StoreError(Exception):
    """An error that maps onto a Kubernetes Status (code, reason)."""

    def __init__(self, code, reason, message, causes=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = causes


def obj_key(obj):
    """(kind, namespace, name) of an object; namespace '' when cluster scoped."""
    md = obj.get("metadata") or {}
    return (obj.get("kind", ""), md.get("namespace", "") or "", md.get("name", ""))


def split_objects(doc):
    """Objects of a decoded JSON document: a List/XList's items or the object."""
    kind = doc.get("kind", "")
    if kind.endswith("List") and isinstance(doc.get("items"), list):
        out = []
        item_kind = kind[:-4] if kind != "List" else None
        for it in doc["items"]:
            it = dict(it)
            if item_kind and "kind" not in it:
                it["kind"] = item_kind
                it["apiVersion"] = doc.get("apiVersion", "v1")
            out.append(it)
        return out
    return [doc]


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Event:
    """One change: rv, type (ADDED/MODIFIED/DELETED), new object, previous object."""

    __slots__ = ("rv", "type", "obj", "prev")

    def __init__(self, rv, etype, obj, prev):
        self.rv = rv
        self.type = etype
        self.obj = obj
        self.prev = prev


class Watcher:
    """Queue of events for one open watch connection."""

    def __init__(self, resource):
        self.resource = resource
        self.queue = []
        self.cursor = 0
        self.dropped = None   # None, "abort" or "clean"


class Store:
    """Thread-safe object store. All public methods take the lock."""

    def __init__(self, initial_rv=1000, max_history=200000):
        self.cond = threading.Condition()
        self.rv = initial_rv
        self.compacted = initial_rv   # events with rv <= compacted are gone
        self.objects = {}             # key -> object (with kind/apiVersion)
        self.history = []             # list of Event, increasing rv
        self.max_history = max_history
        self.watchers = set()
        self.steps = {}               # step number -> list of objects
        self.next_step = 1
        self.counts = {"list": {}, "watch": {}, "get": {}}
        self._sorted = {}             # kind -> (rv, keys, objects) at rv
        self.watch_cache = True       # False: --no-watch-cache
        self.cache_rv = None          # frozen cache's revision, None: follows
        self.list_log = collections.deque(maxlen=500)  # the list queries seen
        self.events = []              # posted events.k8s.io/v1 Events
        self.event_posts = {"created": 0, "forbidden": 0}

    # -- loading and changes -------------------------------------------------

    def load(self, objs):
        """Load objects: step-annotated ones are kept for later, others applied."""
        for obj in objs:
            ann = (obj.get("metadata") or {}).get("annotations") or {}
            step = ann.get(STEP_ANNOTATION)
            if step is not None:
                self.steps.setdefault(int(step), []).append(obj)
            else:
                self.apply(obj)

    def _check(self, obj):
        if not isinstance(obj, dict):
            raise StoreError(400, "BadRequest", "object must be a JSON object")
        kind, ns, name = obj_key(obj)
        if kind not in KIND_TO_RESOURCE:
            raise StoreError(400, "BadRequest", "unsupported kind %r" % kind)
        if not name:
            raise StoreError(400, "BadRequest", "metadata.name is required")
        namespaced = RESOURCES[KIND_TO_RESOURCE[kind]][2]
        if namespaced and not ns:
            raise StoreError(400, "BadRequest", "%s needs metadata.namespace" % kind)
        if not namespaced and ns:
            raise StoreError(400, "BadRequest", "%s is cluster scoped" % kind)

    def _push(self, etype, obj, prev):
        """Record one change under the lock and hand it to every watcher."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        ev = Event(self.rv, etype, obj, prev)
        self.history.append(ev)
        if len(self.history) > self.max_history:
            drop = self.history[: len(self.history) - self.max_history]
            self.compacted = drop[-1].rv
            del self.history[: len(drop)]
        for w in self.watchers:
            w.queue.append(ev)
        self.cond.notify_all()
        return ev

    def apply(self, obj):
        """Create or replace one object; returns (type, rv)."""
        self._check(obj)
        obj = copy.deepcopy(obj)
        obj.setdefault("apiVersion", RESOURCES[KIND_TO_RESOURCE[obj["kind"]]][1])
        md = obj["metadata"]
        ann = md.get("annotations") or {}
        if ann.get(DELETE_ANNOTATION) == "true":
            k = obj_key(obj)
            return self.delete(k[0], k[1], k[2])
        key = obj_key(obj)
        with self.cond:
            prev = self.objects.get(key)
            if prev is not None:
                md.setdefault("uid", prev["metadata"].get("uid"))
                md.setdefault("creationTimestamp",
                              prev["metadata"].get("creationTimestamp"))
            md.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL,
                                                "kpx/%s/%s/%s" % key)))
            md.setdefault("creationTimestamp", _now())
            self.objects[key] = obj
            ev = self._push("MODIFIED" if prev is not None else "ADDED", obj, prev)
            return ev.type, ev.rv

    def delete(self, kind, ns, name):
        """Delete one object; DELETED carries its last state with a new RV."""
        key = (kind, ns or "", name)
        with self.cond:
            prev = self.objects.pop(key, None)
            if prev is None:
                raise StoreError(404, "NotFound", "%s %s/%s not found" % key)
            obj = copy.deepcopy(prev)
            ev = self._push("DELETED", obj, prev)
            return ev.type, ev.rv

    def apply_step(self, n=None):
        """Apply every object of step n (default: the next step); returns results."""
        with self.cond:
            if n is None:
                n = self.next_step
            objs = self.steps.get(n)
            if objs is None:
                raise StoreError(404, "NotFound", "no step %d" % n)
            self.next_step = n + 1
            return n, [self.apply(o) for o in objs]

    def compact(self, rv=None):
        """Drop history up to rv (default: everything)."""
        with self.cond:
            rv = self.rv if rv is None else min(int(rv), self.rv)
            keep = rv if self.cache_rv is None else min(rv, self.cache_rv)
            self.history = [e for e in self.history if e.rv > keep]
            self.compacted = max(self.compacted, rv)
            return self.compacted

    def drop_watches(self, mode="abort"):
        """Ask every open watch to end; returns how many."""
        with self.cond:
            for w in self.watchers:
                w.dropped = mode
            self.cond.notify_all()
            return len(self.watchers)

    # -- reading -------------------------------------------------------------

    def snapshot(self, kind, rv=None):
        """Objects of one kind at revision rv (default: now), sorted by key.

        Returns (rv, [objects]); raises StoreError 410 when rv is compacted.
        """
        return self.snapshot_keys(kind, rv)[0::2]

    # -- the watch cache ---------------------------------------------------

    def cache_view(self):
        """The revision the watch cache has reached (under the lock)."""
        return self.rv if self.cache_rv is None else self.cache_rv

    def cache_freeze(self, rv=None):
        """Hold the cache at rv (default: now), an earlier revision as an
        HA peer's lagging cache; raises 410 when rv is compacted."""
        with self.cond:
            rv = self.rv if rv is None else min(rv, self.rv)
            if rv < self.compacted:
                raise StoreError(410, "Expired", "too old resource version: %d (%d)"
                                 % (rv, self.compacted))
            self.cache_rv = rv
            return rv

    def cache_follow(self):
        with self.cond:
            self.cache_rv = None
            self.cond.notify_all()
            return self.rv

    def cache_wait(self, rv, timeout=3.0):
        """The cache's revision once it reaches rv, waiting up to timeout s.

        Raises the Status kube-apiserver's watch cache answers when it does
        not catch up in time: 504 Timeout, cause ResourceVersionTooLarge.
        """
        end = time.monotonic() + timeout
        with self.cond:
            while self.cache_view() < rv:
                left = end - time.monotonic()
                if left <= 0:
                    raise StoreError(504, "Timeout",
                                     "Too large resource version: %d, current: %d"
                                     % (rv, self.cache_view()),
                                     causes=[{"reason": "ResourceVersionTooLarge",
                                              "message": "Too large resource version"}])
                self.cond.wait(left)
            return self.cache_view()

    def log_list(self, entry):
        with self.cond:
            self.list_log.append(entry)

    def post_event(self, ns, ev, forbidden=False):
        """Record one posted Event; returns it as stored (or None: 403)."""
        with self.cond:
            if forbidden:
                self.event_posts["forbidden"] += 1
                return None
            ev = copy.deepcopy(ev)
            md = ev.setdefault("metadata", {})
            md["namespace"] = ns
            if not md.get("name"):
                md["name"] = "%s%x" % (md.get("generateName", "event."), self.rv)
            self.rv += 1
            md["resourceVersion"] = str(self.rv)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = _now()
            self.events.append(ev)
            self.event_posts["created"] += 1
            return ev

    def snapshot_keys(self, kind, rv=None, cache=False):
        """As snapshot(), plus the objects' sorted keys: (rv, [objects], [keys]).

        The current revision's is cached until the next change, so that the
        pages of a long paginated list (each resumes at its continue key by
        bisection) do not each sort the whole store again.
        """
        with self.cond:
            if rv is None or rv >= self.rv:
                hit = self._sorted.get(kind)
                if hit is not None and hit[0] == self.rv:
                    return hit[0], hit[2], hit[1]
                keys = sorted(k for k in self.objects if k[0] == kind)
                objs = [self.objects[k] for k in keys]
                self._sorted[kind] = (self.rv, keys, objs)
                return self.rv, objs, keys
            if rv < self.compacted and not cache:
                raise StoreError(410, "Expired",
                                 "too old resource version: %d (%d)"
                                 % (rv, self.compacted))
            cur = {k: o for k, o in self.objects.items() if k[0] == kind}
            for ev in reversed(self.history):
                if ev.rv <= rv:
                    break
                if ev.obj["kind"] != kind:
                    continue
                key = obj_key(ev.obj)
                if ev.prev is None:
                    cur.pop(key, None)
                else:
                    cur[key] = ev.prev
            keys = sorted(cur)
            return rv, [cur[k] for k in keys], keys

    def get(self, kind, ns, name):
        with self.cond:
            return self.objects.get((kind, ns or "", name))

    def open_watch(self, resource, rv):
        """Register a watcher for events after rv.

        rv None means "start at the current state": the current objects are
        returned as initial objects; otherwise the retained events after rv are
        queued. Returns (watcher, initial objects); raises StoreError 410 when
        rv is older than the history.
        """
        kind = RESOURCES[resource][0]
        w = Watcher(resource)
        with self.cond:
            initial = []
            if rv is None:
                initial = [o for k, o in sorted(self.objects.items()) if k[0] == kind]
            elif rv < self.compacted:
                raise StoreError(410, "Expired", "too old resource version: %d (%d)"
                                 % (rv, self.compacted))
            else:
                w.queue = [e for e in self.history if e.rv > rv]
            w.cursor = self.cache_view() if rv is None else rv
            self.watchers.add(w)
            self.counts["watch"][resource] = self.counts["watch"].get(resource, 0) + 1
            return w, initial

    def close_watch(self, w):
        with self.cond:
            self.watchers.discard(w)

    def wait_events(self, w, timeout):
        """Wait up to timeout seconds for events; returns (events, cursor)."""
        with self.cond:
            lim = self.cache_view()
            if (not w.queue or w.queue[0].rv > lim) and w.dropped is None:
                self.cond.wait(timeout)
                lim = self.cache_view()
            # only what the (possibly lagging) watch cache has reached
            n = 0
            while n < len(w.queue) and w.queue[n].rv <= lim:
                n += 1
            evs, w.queue = w.queue[:n], w.queue[n:]
            if evs:
                w.cursor = max(w.cursor, evs[-1].rv)
            if not w.queue:
                w.cursor = max(w.cursor, lim)
            return evs, w.cursor

    def count(self, what, resource):
        with self.cond:
            self.counts[what][resource] = self.counts[what].get(resource, 0) + 1

    def stats(self):
        with self.cond:
            open_w = {}
            for w in self.watchers:
                open_w[w.resource] = open_w.get(w.resource, 0) + 1
            objs = {}
            for k in self.objects:
                r = KIND_TO_RESOURCE.get(k[0], k[0])
                objs[r] = objs.get(r, 0) + 1
            return {
                "resourceVersion": str(self.rv),
                "compactedResourceVersion": str(self.compacted),
                "historyEvents": len(self.history),
                "lists": dict(self.counts["list"]),
                "watches": dict(self.counts["watch"]),
                "gets": dict(self.counts["get"]),
                "openWatches": open_w,
                "openWatchesTotal": len(self.watchers),
                "objects": objs,
                "steps": sorted(self.steps),
                "watchCache": self.watch_cache,
                "cacheResourceVersion": str(self.cache_view()),
                "cacheFrozen": self.cache_rv is not None,
                "listQueries": list(self.list_log),
                "eventPosts": dict(self.event_posts),
                "nextStep": self.next_step,
            }
