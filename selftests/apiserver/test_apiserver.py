#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host-side test of kpx-test-apiserver.py: drives it with curl, prints TAP.

Runs the server on 127.0.0.1 with fresh certificates in a temporary directory.
Exit status is non-zero when any check fails.
"""

import base64
import datetime
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
NS = "shop"


def svc(name, ns=NS, labels=None, ip="10.96.0.1", step=None):
    md = {"name": name, "namespace": ns, "labels": labels or {"app": name}}
    if step:
        md["annotations"] = {"cases.kpr.test/step": str(step)}
    return {"apiVersion": "v1", "kind": "Service", "metadata": md,
            "spec": {"clusterIP": ip, "ports": [{"port": 80, "protocol": "TCP"}]}}


def slice_(name, svcname, addrs, step=None):
    md = {"name": name, "namespace": NS,
          "labels": {"kubernetes.io/service-name": svcname}}
    if step:
        md["annotations"] = {"cases.kpr.test/step": str(step)}
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": md, "addressType": "IPv4",
            "ports": [{"port": 8080, "protocol": "TCP"}],
            "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addrs]}


def node(name):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def fixture():
    items = [svc("svc-%d" % i, ip="10.96.0.%d" % (10 + i)) for i in range(7)]
    items += [svc("other-svc", ns="other"),
              svc("headless", labels={"service.kubernetes.io/headless": ""}),
              svc("proxied", labels={"service.kubernetes.io/service-proxy-name": "x"}),
              slice_("svc-0-abcde", "svc-0", ["10.244.1.2"]),
              node("node-a"), node("node-b"),
              slice_("stepped-1", "svc-1", ["10.244.1.3"], step=1),
              slice_("stepped-1", "svc-1", ["10.244.1.3", "10.244.2.3"], step=2)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
            "items": items}


class Env:
    """Temporary certs, state dir and a running server."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="kpx-apiserver-test.")
        self.certs = os.path.join(self.tmp, "certs")
        self.state = os.path.join(self.tmp, "state")
        os.mkdir(self.state)
        subprocess.run([os.path.join(HERE, "gen-certs.sh"), self.certs],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(self.certs, "token")) as f:
            self.token = f.read().strip()
        objs = os.path.join(self.tmp, "objects.json")
        with open(objs, "w") as f:
            json.dump(fixture(), f)
        self.log = open(os.path.join(self.tmp, "server.log"), "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "kpx-test-apiserver.py"), "--dir", self.state,
             "--port", "0", "--certs", self.certs, "--bookmark-interval", "1",
             "--objects", objs], stderr=self.log)
        portf = os.path.join(self.state, "port")
        for _ in range(100):
            if os.path.exists(portf):
                break
            time.sleep(0.05)
        with open(portf) as f:
            self.port = int(f.read())
        self.base = "https://127.0.0.1:%d" % self.port
        self.kubeconfig = os.path.join(self.state, "kubeconfig")
        self.kubeconfig_cert = os.path.join(self.state, "kubeconfig-cert")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        self.log.close()
        if os.environ.get("KEEP"):
            sys.stderr.write("# kept %s\n" % self.tmp)
        else:
            shutil.rmtree(self.tmp)

    def curl_args(self, auth):
        a = ["curl", "-sS", "--cacert", os.path.join(self.certs, "ca.crt")]
        if auth == "token":
            a += ["-H", "Authorization: Bearer " + self.token]
        elif auth == "cert":
            a += ["--cert", os.path.join(self.tmp, "client.crt"),
                  "--key", os.path.join(self.tmp, "client.key")]
        elif auth:
            a += ["-H", "Authorization: Bearer " + auth]
        return a

    def curl(self, path, auth="token", data=None):
        """Returns (http code, decoded JSON body)."""
        a = self.curl_args(auth) + ["-w", "\n%{http_code}"]
        if data is not None:
            a += ["-X", "POST", "-H", "Content-Type: application/json",
                  "--data-binary", json.dumps(data)]
        out = subprocess.run(a + [self.base + path], capture_output=True, text=True,
                             timeout=10).stdout
        body, _, code = out.rpartition("\n")
        return int(code), json.loads(body) if body.strip() else None

    def ctl(self, *args, kubeconfig=None):
        r = subprocess.run([os.path.join(HERE, "kpx-test-apictl"), "--kubeconfig",
                            kubeconfig or self.kubeconfig] + list(args),
                           capture_output=True, text=True, timeout=10)
        return r.returncode, json.loads(r.stdout) if r.stdout.strip() else None

    def watch(self, path, auth="token"):
        return Watch(self.curl_args(auth) + ["-N", self.base + path])


class Watch:
    """A curl -N watch whose output lines are parsed as JSON events."""

    def __init__(self, args):
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def events(self, n, timeout=3.0):
        """The next n events (fewer if the stream ends or times out)."""
        out, end = [], time.monotonic() + timeout
        while len(out) < n:
            try:
                ev = self.q.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            if ev is None:
                self.q.put(None)
                break
            out.append(ev)
        return out

    def ended(self, timeout=3.0):
        """curl's exit status once the stream ends, or None."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def eq(got, want, what):
    if got != want:
        raise Failed("%s: got %r, want %r" % (what, got, want))


def names(lst):
    return [i["metadata"]["name"] for i in lst["items"]]


# -- tests -------------------------------------------------------------------

def t_unauthorized(env):
    code, body = env.curl("/api/v1/services", auth=None)
    eq(code, 401, "no token")
    eq((body["kind"], body["apiVersion"], body["status"], body["reason"], body["code"]),
       ("Status", "v1", "Failure", "Unauthorized", 401), "401 Status body")
    code, _ = env.curl("/api/v1/services", auth="wrong-token")
    eq(code, 401, "wrong token")
    code, _ = env.curl("/_test/stats", auth=None)
    eq(code, 401, "control API without token")


def t_cert_auth(env):
    kc = open(env.kubeconfig_cert).read()
    for field, fname in (("client-certificate-data", "client.crt"),
                         ("client-key-data", "client.key")):
        line = [ln for ln in kc.splitlines() if field in ln][0]
        with open(os.path.join(env.tmp, fname), "wb") as f:
            f.write(base64.b64decode(line.split(":", 1)[1].strip()))
    check("token:" not in kc, "kubeconfig-cert has no token")
    code, body = env.curl("/api/v1/nodes", auth="cert")
    eq(code, 200, "list with client cert")
    eq(names(body), ["node-a", "node-b"], "nodes")
    rc, st = env.ctl("stats", kubeconfig=env.kubeconfig_cert)
    eq(rc, 0, "apictl with kubeconfig-cert")
    check("resourceVersion" in st, "stats body")


def t_list_shape(env):
    code, body = env.curl("/api/v1/services")
    eq(code, 200, "list code")
    eq((body["kind"], body["apiVersion"]), ("ServiceList", "v1"), "ServiceList")
    int(body["metadata"]["resourceVersion"])
    eq(len(body["items"]), 10, "all services")
    it = body["items"][0]
    check("kind" not in it and "apiVersion" not in it, "items carry no kind")
    check(it["metadata"]["uid"] and it["metadata"]["creationTimestamp"], "uid/creationTimestamp")
    rvs = [int(i["metadata"]["resourceVersion"]) for i in body["items"]]
    check(max(rvs) <= int(body["metadata"]["resourceVersion"]), "item RV <= list RV")
    eq(len(set(rvs)), len(rvs), "distinct item RVs")
    code, body = env.curl("/api/v1/namespaces/other/services")
    eq(names(body), ["other-svc"], "namespaced list")
    code, body = env.curl("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices")
    eq((body["kind"], body["apiVersion"]), ("EndpointSliceList", "discovery.k8s.io/v1"),
       "EndpointSliceList")
    eq(names(body), ["svc-0-abcde"], "step objects are not loaded at start")
    code, body = env.curl("/api/v1/nodes/node-b")
    eq((code, body["kind"], body["metadata"]["name"]), (200, "Node", "node-b"), "get node")
    code, body = env.curl("/api/v1/nodes/node-z")
    eq((code, body["reason"]), (404, "NotFound"), "missing node")
    code, body = env.curl("/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a")
    eq(names(body), ["node-a"], "node fieldSelector")
    code, body = env.curl("/api/v1/pods")
    eq(code, 404, "unknown resource")


def t_label_selectors(env):
    sel = "!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless"
    _, body = env.curl("/api/v1/services?labelSelector=" + sel)
    eq(sorted(names(body)), sorted(["svc-%d" % i for i in range(7)] + ["other-svc"]),
       "kube-proxy selector")
    _, body = env.curl("/api/v1/services?labelSelector=app%3Dsvc-3")
    eq(names(body), ["svc-3"], "key=value")
    _, body = env.curl("/api/v1/services?labelSelector=app!%3Dsvc-3")
    eq(len(body["items"]), 9, "key!=value (includes objects without the key)")
    _, body = env.curl("/api/v1/services?labelSelector=service.kubernetes.io/headless")
    eq(names(body), ["headless"], "key exists")
    code, body = env.curl("/api/v1/services?labelSelector=a%3D%3D%3Db")
    eq((code, body["reason"]), (400, "BadRequest"), "bad selector")


def t_pagination(env):
    _, full = env.curl("/api/v1/namespaces/shop/services")
    code, p1 = env.curl("/api/v1/namespaces/shop/services?limit=4")
    eq(code, 200, "page 1")
    eq(len(p1["items"]), 4, "page 1 size")
    eq(p1["metadata"]["remainingItemCount"], len(full["items"]) - 4, "remainingItemCount")
    rv = p1["metadata"]["resourceVersion"]
    # change the world between pages
    env.ctl("delete", "Service", NS, "svc-5")
    env.ctl("apply", write_json(env, "mod.json", svc("svc-6", ip="10.96.9.9")))
    env.ctl("apply", write_json(env, "new.json", svc("svc-99")))
    items = p1["items"]
    cont = p1["metadata"]["continue"]
    while cont:
        _, p = env.curl("/api/v1/namespaces/shop/services?limit=4&continue=" + cont)
        eq(p["metadata"]["resourceVersion"], rv, "page RV equals list RV")
        items += p["items"]
        cont = p["metadata"].get("continue")
    eq(items, full["items"], "pages form the snapshot at the first page's RV")
    _, now = env.curl("/api/v1/namespaces/shop/services")
    check("svc-5" not in names(now) and "svc-99" in names(now), "current list changed")
    eq([i for i in now["items"] if i["metadata"]["name"] == "svc-6"][0]["spec"]["clusterIP"],
       "10.96.9.9", "modified service")
    _, exact = env.curl("/api/v1/namespaces/shop/services?resourceVersion=%s"
                        "&resourceVersionMatch=Exact" % rv)
    eq(exact["items"], full["items"], "resourceVersionMatch=Exact")
    # compacted continue -> 410 Expired
    _, p1 = env.curl("/api/v1/namespaces/shop/services?limit=2")
    env.ctl("apply", write_json(env, "mod2.json", svc("svc-6", ip="10.96.9.10")))
    rc, _ = env.ctl("compact")
    eq(rc, 0, "compact")
    code, body = env.curl("/api/v1/namespaces/shop/services?limit=2&continue="
                          + p1["metadata"]["continue"])
    eq((code, body["reason"], body["code"]), (410, "Expired", 410), "compacted continue")
    code, body = env.curl("/api/v1/namespaces/shop/services?limit=2&continue=bogus!")
    eq(code, 400, "malformed continue")


def write_json(env, name, obj):
    p = os.path.join(env.tmp, name)
    with open(p, "w") as f:
        json.dump(obj, f)
    return p


def t_watch_events(env):
    _, lst = env.curl("/api/v1/services")
    rv = lst["metadata"]["resourceVersion"]
    w = env.watch("/api/v1/namespaces/shop/services?watch=true&resourceVersion=" + rv)
    try:
        time.sleep(0.3)
        env.ctl("apply", write_json(env, "w1.json", svc("watched", ip="10.96.1.1")))
        env.ctl("apply", write_json(env, "w2.json", svc("watched", ip="10.96.1.2")))
        env.ctl("apply", write_json(env, "w3.json", svc("elsewhere", ns="other")))
        env.ctl("delete", "Service", NS, "watched")
        evs = w.events(3)
        eq([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"], "event types")
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in evs]
        check(int(rv) < rvs[0] < rvs[1] < rvs[2], "increasing RVs after list RV %s: %s"
              % (rv, rvs))
        for e in evs:
            eq((e["object"]["kind"], e["object"]["apiVersion"]), ("Service", "v1"),
               "watch objects carry kind")
        eq(evs[2]["object"]["spec"]["clusterIP"], "10.96.1.2", "DELETED carries last state")
        eq(evs[0]["object"]["metadata"]["uid"], evs[2]["object"]["metadata"]["uid"], "uid kept")
        eq(w.events(1, timeout=0.5), [], "no event from another namespace")
    finally:
        w.close()
    # replay: a new watch from the same RV sees the same history
    w = env.watch("/api/v1/namespaces/shop/services?watch=true&timeoutSeconds=1"
                  "&resourceVersion=" + rv)
    try:
        eq([e["type"] for e in w.events(3)], ["ADDED", "MODIFIED", "DELETED"], "replay")
        eq(w.ended(), 0, "timeoutSeconds ends the stream cleanly")
    finally:
        w.close()
    # no resourceVersion: current state as ADDED
    w = env.watch("/api/v1/nodes?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dnode-b")
    try:
        evs = w.events(5)
        eq([(e["type"], e["object"]["metadata"]["name"]) for e in evs], [("ADDED", "node-b")],
           "initial ADDED with fieldSelector")
    finally:
        w.close()


def t_churn(env):
    """apictl churn: the files applied in turn at the rate, the last one last."""
    _, lst = env.curl("/api/v1/services")
    rv = lst["metadata"]["resourceVersion"]
    a = write_json(env, "c1.json", svc("churned", ip="10.96.2.1"))
    b = write_json(env, "c2.json", svc("churned", ip="10.96.2.2"))
    w = env.watch("/api/v1/namespaces/shop/services?watch=true&resourceVersion=" + rv)
    try:
        time.sleep(0.3)
        rc, out = env.ctl("churn", "50", "0.4", a, b)
        eq(rc, 0, "churn")
        eq(out["applied"], 20, "applies: 50/s for 0.4 s")
        check(0.37 <= out["seconds"] < 5, "paced over about 0.4 s: %r" % out["seconds"])
        evs = w.events(20)
        eq([e["type"] for e in evs], ["ADDED"] + ["MODIFIED"] * 19, "one event per apply")
        eq([e["object"]["spec"]["clusterIP"] for e in evs[-2:]], ["10.96.2.1", "10.96.2.2"],
           "the files in turn, the last one last")
    finally:
        w.close()
    env.ctl("delete", "Service", NS, "churned")
    # --stamp: each apply of a slice carries its own trigger time
    a = write_json(env, "s1.json", slice_("churned-s", "churned", ["10.244.9.1"]))
    b = write_json(env, "s2.json", slice_("churned-s", "churned", ["10.244.9.2"]))
    t0 = time.time()
    rc, out = env.ctl("churn", "--stamp", "20", "0.2", a, b)
    eq((rc, out["applied"]), (0, 4), "stamped churn")
    code, body = env.curl("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices/churned-s")
    eq(code, 200, "churned slice")
    ts = body["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"]
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    check(t0 + 0.1 <= t <= time.time(), "trigger time %s is the last apply's" % ts)
    eq(body["endpoints"][0]["addresses"], ["10.244.9.2"], "the last file applied last")
    env.ctl("delete", "EndpointSlice", NS, "churned-s")
    rc, _ = env.ctl("churn", "50", "0.1", os.path.join(env.tmp, "missing.json"))
    eq(rc, 1, "churn of a missing file")


def t_watch_selector_transition(env):
    _, lst = env.curl("/api/v1/services")
    rv = lst["metadata"]["resourceVersion"]
    w = env.watch("/api/v1/services?watch=true&labelSelector=!service.kubernetes.io/headless"
                  "&resourceVersion=" + rv)
    try:
        env.ctl("apply", write_json(env, "h1.json", svc(
            "svc-2", labels={"service.kubernetes.io/headless": ""})))
        env.ctl("apply", write_json(env, "h2.json", svc("svc-2")))
        evs = w.events(2)
        eq([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
           [("DELETED", "svc-2"), ("ADDED", "svc-2")], "leaving/entering the selector")
    finally:
        w.close()


def t_watch_expired(env):
    _, lst = env.curl("/api/v1/services")
    old = lst["metadata"]["resourceVersion"]
    env.ctl("apply", write_json(env, "e1.json", svc("svc-4", ip="10.96.4.4")))
    rc, body = env.ctl("compact")
    eq(rc, 0, "compact")
    check(int(body["compactedResourceVersion"]) > int(old), "compacted past the old RV")
    w = env.watch("/api/v1/services?watch=true&resourceVersion=" + old)
    try:
        evs = w.events(2)
        eq(len(evs), 1, "exactly one event")
        eq(evs[0]["type"], "ERROR", "ERROR event")
        o = evs[0]["object"]
        eq((o["kind"], o["code"], o["reason"]), ("Status", 410, "Expired"), "410 Status")
        eq(w.ended(), 0, "stream ends after the ERROR")
    finally:
        w.close()


def t_bookmarks(env):
    w = env.watch("/apis/discovery.k8s.io/v1/endpointslices?watch=true&resourceVersion=%s"
                  "&allowWatchBookmarks=true&timeoutSeconds=3"
                  % env.curl("/apis/discovery.k8s.io/v1/endpointslices")[1]["metadata"]["resourceVersion"])
    try:
        evs = w.events(1, timeout=2.5)
        eq([e["type"] for e in evs], ["BOOKMARK"], "bookmark")
        o = evs[0]["object"]
        eq(sorted(o), ["apiVersion", "kind", "metadata"], "bookmark object keys")
        eq(list(o["metadata"]), ["resourceVersion"], "bookmark metadata")
        eq((o["kind"], o["apiVersion"]), ("EndpointSlice", "discovery.k8s.io/v1"),
           "bookmark kind")
        _, st = env.ctl("stats")
        eq(o["metadata"]["resourceVersion"], st["resourceVersion"], "bookmark RV is current")
    finally:
        w.close()


def t_steps(env):
    _, lst = env.curl("/apis/discovery.k8s.io/v1/endpointslices")
    rv = lst["metadata"]["resourceVersion"]
    w = env.watch("/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?watch=true"
                  "&resourceVersion=" + rv)
    try:
        rc, r1 = env.ctl("step", "1")
        eq((rc, r1["step"], [x["type"] for x in r1["results"]]), (0, 1, ["ADDED"]), "step 1")
        rc, r2 = env.ctl("step")
        eq((rc, r2["step"], [x["type"] for x in r2["results"]]), (0, 2, ["MODIFIED"]),
           "next step is 2")
        evs = w.events(2)
        eq([(e["type"], e["object"]["metadata"]["name"], len(e["object"]["endpoints"]))
            for e in evs], [("ADDED", "stepped-1", 1), ("MODIFIED", "stepped-1", 2)],
           "step events")
        rc, _ = env.ctl("step", "3")
        eq(rc, 1, "missing step fails")
    finally:
        w.close()


def wait_no_watches(env, timeout=3.0):
    """True once the server has noticed that every watch client is gone."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if env.ctl("stats")[1]["openWatchesTotal"] == 0:
            return True
        time.sleep(0.1)
    return False


def t_drop_watches(env):
    check(wait_no_watches(env), "earlier watches closed")
    st0 = env.ctl("stats")[1]
    env.curl("/api/v1/nodes")
    ws = [env.watch("/api/v1/services?watch=true"),
          env.watch("/api/v1/nodes?watch=true&resourceVersion=" + st0["resourceVersion"])]
    try:
        ws[0].events(20, timeout=0.5)
        _, st = env.ctl("stats")
        eq(st["openWatchesTotal"], 2, "two open watches")
        rc, r = env.ctl("drop-watches")
        eq((rc, r["dropped"]), (0, 2), "dropped")
        for w in ws:
            rc = w.ended()
            check(rc not in (None, 0), "curl sees an aborted stream (rc %r)" % rc)
        time.sleep(0.2)
        _, st = env.ctl("stats")
        eq(st["openWatchesTotal"], 0, "no open watch left")
        eq((st["lists"]["nodes"] - st0["lists"]["nodes"],
            st["watches"]["services"] - st0["watches"]["services"],
            st["watches"]["nodes"] - st0["watches"]["nodes"]), (1, 1, 1),
           "list/watch counters")
    finally:
        for w in ws:
            w.close()


def t_client_gone(env):
    w = env.watch("/api/v1/services?watch=true&resourceVersion=1000000")
    time.sleep(0.3)
    check(env.ctl("stats")[1]["openWatchesTotal"] == 1, "watch open")
    w.close()
    check(wait_no_watches(env), "watch of a closed client still open")


def t_initial_events(env):
    w = env.watch("/api/v1/nodes?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
                  "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
    try:
        evs = w.events(3)
        eq([e["type"] for e in evs], ["ADDED", "ADDED", "BOOKMARK"], "initial events")
        eq(evs[2]["object"]["metadata"]["annotations"], {"k8s.io/initial-events-end": "true"},
           "initial-events-end bookmark")
    finally:
        w.close()
    code, body = env.curl("/api/v1/nodes?watch=true&sendInitialEvents=true")
    eq((code, body["reason"]), (422, "Invalid"), "sendInitialEvents without bookmarks")


def t_ipv6_and_bind(env):
    state6 = os.path.join(env.tmp, "state6")
    os.mkdir(state6)
    r = subprocess.run([sys.executable, os.path.join(HERE, "kpx-test-apiserver.py"), "--dir",
                        state6, "--certs", env.certs, "--bind", "0.0.0.0"],
                       capture_output=True, timeout=10)
    eq(r.returncode, 2, "non-loopback --bind refused")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "kpx-test-apiserver.py"),
                          "--dir", state6, "--certs", env.certs, "--bind", "::1"],
                         stderr=subprocess.DEVNULL)
    try:
        portf = os.path.join(state6, "port")
        for _ in range(100):
            if os.path.exists(portf):
                break
            time.sleep(0.05)
        port = int(open(portf).read())
        check("server: https://[::1]:%d" % port in open(os.path.join(state6, "kubeconfig")).read(),
              "kubeconfig names [::1]")
        out = subprocess.run(env.curl_args("token") + ["https://[::1]:%d/api/v1/nodes" % port],
                             capture_output=True, text=True, timeout=10).stdout
        eq(json.loads(out)["items"], [], "empty NodeList over IPv6")
        eq(sorted(os.listdir(state6)), ["kubeconfig", "kubeconfig-cert", "pid", "port"],
           "files written to --dir")
    finally:
        p.terminate()
        p.wait(5)


TESTS = [t_unauthorized, t_cert_auth, t_list_shape, t_label_selectors, t_pagination,
         t_watch_events, t_churn, t_watch_selector_transition, t_watch_expired, t_bookmarks,
         t_steps, t_drop_watches, t_client_gone, t_initial_events, t_ipv6_and_bind]


def main():
    start = time.monotonic()
    print("TAP version 13")
    print("1..%d" % len(TESTS))
    env = Env()
    failed = 0
    try:
        for i, t in enumerate(TESTS, 1):
            name = t.__name__[2:]
            try:
                t(env)
                print("ok %d - %s" % (i, name))
            except Exception as e:  # noqa: BLE001 - report any failure as TAP
                failed += 1
                print("not ok %d - %s" % (i, name))
                detail = str(e) if isinstance(e, Failed) else traceback.format_exc()
                for ln in detail.splitlines():
                    print("# " + ln)
            sys.stdout.flush()
    finally:
        env.stop()
    print("# %d failed, %.1f s" % (failed, time.monotonic() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
