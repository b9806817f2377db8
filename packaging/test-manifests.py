#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Validates packaging/kubernetes/: every YAML document parses, the kinds,
image, probes, RBAC verbs and capabilities are the intended ones, the
privileged node-setup init container runs kpx-agent --init-only with the
agent's flags, and the Containerfile installs the kpx-agent package on
Debian's slim base; and packaging/systemd/kpx-agent.service: --init-only
as a '+' ExecStartPre= with the agent's options, the agent sandboxed.  Then
checks that a few deliberate mistakes are caught.  TAP; exit 1 on failure.
Needs python3-yaml (Debian)."""
import copy
import glob
import os
import re
import sys

import yaml

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KDIR = os.path.join(TOP, "packaging", "kubernetes")
NS = "kube-system"
NAME = "kpx-agent"
NODE_WAIT_S = 30 + 300
HEALTHZ = ("/healthz", 10256)
LIVEZ = ("/livez", 10256)

# (apiGroup, resource) -> exact verbs.
RBAC = {
    ("", "services"): {"list", "watch"},
    ("discovery.k8s.io", "endpointslices"): {"list", "watch"},
    ("", "nodes"): {"get", "list", "watch"},
    ("", "events"): {"create", "patch"},
    ("events.k8s.io", "events"): {"create", "patch"},
}
KINDS = {
    "ServiceAccount": "v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "ConfigMap": "v1",
    "DaemonSet": "apps/v1",
}


def version():
    with open(os.path.join(TOP, "dkms.conf")) as f:
        m = re.search(r'^PACKAGE_VERSION="([^"]+)"', f.read(), re.M)
    return m.group(1)


def load():
    """Returns {kind: document} and a list of errors (parse, duplicates)."""
    docs, errs = {}, []
    files = sorted(glob.glob(os.path.join(KDIR, "*.yaml")))
    if not files:
        errs.append("no *.yaml in " + KDIR)
    for path in files:
        with open(path) as f:
            text = f.read()
        if "SPDX-License-Identifier: GPL-2.0-only" not in text.splitlines()[0]:
            errs.append("%s: no SPDX line first" % path)
        try:
            for d in yaml.safe_load_all(text):
                if d is None:
                    continue
                k = d.get("kind")
                if k in docs:
                    errs.append("%s: second %s" % (path, k))
                docs[k] = d
        except yaml.YAMLError as e:
            errs.append("%s: %s" % (path, e))
    return docs, errs


def check_kinds(docs):
    errs = []
    if set(docs) != set(KINDS):
        errs.append("kinds %s, want %s" % (sorted(docs), sorted(KINDS)))
    for k, d in docs.items():
        if KINDS.get(k) != d.get("apiVersion"):
            errs.append("%s: apiVersion %s" % (k, d.get("apiVersion")))
        md = d.get("metadata", {})
        # ObjectMeta fields a manifest may set; kubectl's strict field
        # validation rejects any other key.
        extra = set(md) - {"name", "namespace", "labels", "annotations"}
        if extra:
            errs.append("%s: unknown metadata fields %s" % (k, sorted(extra)))
        if md.get("name") != NAME:
            errs.append("%s: name %s" % (k, md.get("name")))
        namespaced = k in ("ServiceAccount", "ConfigMap", "DaemonSet")
        if namespaced and md.get("namespace") != NS:
            errs.append("%s: namespace %s" % (k, md.get("namespace")))
    return errs


def check_rbac(docs):
    errs = []
    got = {}
    for r in docs.get("ClusterRole", {}).get("rules", []):
        if set(r) - {"apiGroups", "resources", "verbs"}:
            errs.append("rule with %s" % sorted(set(r) - {"apiGroups", "resources", "verbs"}))
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                got.setdefault((g, res), set()).update(r.get("verbs", []))
    for key in sorted(set(got) | set(RBAC)):
        if got.get(key) != RBAC.get(key):
            errs.append("%s/%s: verbs %s, want %s" % (key[0] or "core", key[1],
                        sorted(got.get(key, [])), sorted(RBAC.get(key, []))))
    b = docs.get("ClusterRoleBinding", {})
    ref = b.get("roleRef", {})
    if (ref.get("kind"), ref.get("name"), ref.get("apiGroup")) != \
            ("ClusterRole", NAME, "rbac.authorization.k8s.io"):
        errs.append("roleRef %s" % ref)
    if b.get("subjects") != [{"kind": "ServiceAccount", "name": NAME, "namespace": NS}]:
        errs.append("subjects %s" % b.get("subjects"))
    return errs


def caps(c):
    sc = c.get("securityContext", {})
    cp = sc.get("capabilities", {})
    return sc, cp.get("add", []), cp.get("drop", [])


def check_daemonset(docs, ver):
    errs = []
    ds = docs.get("DaemonSet", {})
    spec = ds.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    want = {
        "hostNetwork": True,
        "priorityClassName": "system-node-critical",
        "serviceAccountName": NAME,
        "tolerations": [{"operator": "Exists"}],
    }
    for k, v in want.items():
        if pod.get(k) != v:
            errs.append("pod %s: %s, want %s" % (k, pod.get(k), v))
    us = spec.get("updateStrategy", {})
    if us != {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}:
        errs.append("updateStrategy %s" % us)
    sel = spec.get("selector", {}).get("matchLabels", {})
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        errs.append("selector %s does not match labels %s" % (sel, labels))

    inits = pod.get("initContainers", [])
    mains = pod.get("containers", [])
    if [c.get("name") for c in inits] != ["load-module", "node-setup"] or len(mains) != 1:
        return errs + ["want the init containers load-module, node-setup and 1 container"]
    init, setup, main = inits[0], inits[1], mains[0]
    image = "registry.example.org/kpx/kpx-agent:" + ver
    for c in (init, setup, main):
        if c.get("image") != image:
            errs.append("%s: image %s, want %s" % (c.get("name"), c.get("image"), image))
    errs += check_node_setup(setup, main, pod)
    for c in (init, main):
        sc, _, drop = caps(c)
        if drop != ["ALL"]:
            errs.append("%s: drop %s, want [ALL]" % (c.get("name"), drop))
        if sc.get("privileged") or sc.get("allowPrivilegeEscalation") is not False:
            errs.append("%s: privileged or privilege escalation allowed" % c.get("name"))
        if sc.get("readOnlyRootFilesystem") is not True:
            errs.append("%s: root filesystem writable" % c.get("name"))
    if caps(init)[1] != ["SYS_MODULE"]:
        errs.append("init: add %s, want [SYS_MODULE]" % caps(init)[1])
    if caps(main)[1] != ["NET_ADMIN"]:
        errs.append("agent: add %s, want [NET_ADMIN]" % caps(main)[1])
    if init.get("command") != ["/sbin/modprobe", "kpx"]:
        errs.append("init command %s" % init.get("command"))
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mods = [m for m in init.get("volumeMounts", []) if m.get("mountPath") == "/lib/modules"]
    if len(mods) != 1 or mods[0].get("readOnly") is not True or \
            vols.get(mods[0]["name"], {}).get("hostPath", {}).get("path") != "/lib/modules":
        errs.append("init: /lib/modules not a read-only hostPath mount")
    if any(m.get("mountPath") == "/lib/modules" for m in main.get("volumeMounts", [])):
        errs.append("agent mounts /lib/modules")
    for v in vols.values():
        if "hostPath" in v and v["hostPath"].get("path") != "/lib/modules":
            errs.append("unexpected hostPath %s" % v["hostPath"])
    for p, want in (("startupProbe", LIVEZ), ("livenessProbe", LIVEZ),
                    ("readinessProbe", HEALTHZ)):
        g = main.get(p, {}).get("httpGet", {})
        if (g.get("path"), g.get("port")) != want:
            errs.append("%s: %s, want %s" % (p, g, want))
    # The startup probe must outlast the agent's wait for its Node
    # (30 s for its addresses + 5 min for its podCIDRs, kube-proxy's).
    sp = main.get("startupProbe", {})
    if sp.get("periodSeconds", 10) * sp.get("failureThreshold", 3) < NODE_WAIT_S:
        errs.append("startupProbe: %d s, shorter than the Node wait (%d s)" %
                    (sp.get("periodSeconds", 10) * sp.get("failureThreshold", 3), NODE_WAIT_S))
    if main.get("command") != ["/usr/sbin/kpx-agent"]:
        errs.append("agent command %s" % main.get("command"))
    args = main.get("args", [])
    if "--hostname-override" not in args or \
            args[args.index("--hostname-override") + 1] != "$(NODE_NAME)":
        errs.append("agent: no --hostname-override $(NODE_NAME)")
    env = {e["name"]: e for e in main.get("env", [])}
    if env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") \
            != "spec.nodeName":
        errs.append("NODE_NAME not from spec.nodeName")
    cm = docs.get("ConfigMap", {}).get("data", {})
    for var, key in (("KUBERNETES_SERVICE_HOST", "apiServerHost"),
                     ("KUBERNETES_SERVICE_PORT", "apiServerPort")):
        ref = env.get(var, {}).get("valueFrom", {}).get("configMapKeyRef", {})
        if ref != {"name": NAME, "key": key} or key not in cm:
            errs.append("%s not from ConfigMap key %s" % (var, key))
    return errs


def without_hostname(args):
    """The agent's args without --hostname-override and its value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "--hostname-override":
            skip = True
        elif not a.startswith("--hostname-override="):
            out.append(a)
    return out


def check_node_setup(setup, main, pod):
    """The privileged init container that runs kpx-agent --init-only with
    the agent's flags (the conntrack and mode settings must be the same)."""
    errs = []
    if setup.get("command") != ["/usr/sbin/kpx-agent", "--init-only"]:
        errs.append("node-setup command %s" % setup.get("command"))
    if setup.get("args", []) != without_hostname(main.get("args", [])):
        errs.append("node-setup args %s, want the agent's %s" %
                    (setup.get("args"), without_hostname(main.get("args", []))))
    sc = setup.get("securityContext", {})
    if sc.get("privileged") is not True:
        errs.append("node-setup: not privileged (/proc/sys would be read-only)")
    if sc.get("readOnlyRootFilesystem") is not True or sc.get("runAsUser") != 0:
        errs.append("node-setup: root filesystem writable or not uid 0")
    if "allowPrivilegeEscalation" in sc or "capabilities" in sc:
        errs.append("node-setup: allowPrivilegeEscalation/capabilities with privileged")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mods = [m for m in setup.get("volumeMounts", []) if m.get("mountPath") == "/lib/modules"]
    if len(mods) != 1 or mods[0].get("readOnly") is not True or \
            vols.get(mods[0]["name"], {}).get("hostPath", {}).get("path") != "/lib/modules":
        errs.append("node-setup: /lib/modules not a read-only hostPath mount")
    return errs


UNIT = os.path.join(TOP, "packaging", "systemd", "kpx-agent.service")


def unit_directives(text):
    """[(section, key, value)] of a systemd unit file."""
    out, sect = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            sect = line.strip("[]")
            continue
        k, _, v = line.partition("=")
        out.append((sect, k.strip(), v.strip()))
    return out


def check_unit(text):
    """The unit runs --init-only with full rights ('+') before the agent,
    with the same options, and keeps the agent's sandbox."""
    errs = []
    d = unit_directives(text)
    svc = [(k, v) for s, k, v in d if s == "Service"]
    pre = [v for k, v in svc if k == "ExecStartPre"]
    start = [v for k, v in svc if k == "ExecStart"]
    if start != ["/usr/sbin/kpx-agent $KPX_AGENT_OPTS"]:
        errs.append("ExecStart %s" % start)
    if "+/usr/sbin/kpx-agent --init-only $KPX_AGENT_OPTS" not in pre:
        errs.append("no ExecStartPre=+/usr/sbin/kpx-agent --init-only $KPX_AGENT_OPTS (%s)" % pre)
    if "+/sbin/modprobe kpx" not in pre or pre.index("+/sbin/modprobe kpx") != 0:
        errs.append("ExecStartPre=+/sbin/modprobe kpx is not first (%s)" % pre)
    want = {"CapabilityBoundingSet": "CAP_NET_ADMIN", "NoNewPrivileges": "yes",
            "ProtectKernelTunables": "yes", "ProtectSystem": "strict", "User": "root"}
    got = dict(svc)
    for k, v in want.items():
        if got.get(k) != v:
            errs.append("%s=%s, want %s" % (k, got.get(k), v))
    if "ProcSubset" in got:
        errs.append("ProcSubset= hides /proc/sys from the agent")
    return errs


def check_configmap(docs, ds_args):
    errs = []
    data = docs.get("ConfigMap", {}).get("data", {})
    try:
        kpc = yaml.safe_load(data.get("config.conf", ""))
    except yaml.YAMLError as e:
        return ["config.conf: %s" % e]
    if not isinstance(kpc, dict):
        return ["config.conf: not a mapping"]
    if (kpc.get("apiVersion"), kpc.get("kind")) != \
            ("kubeproxy.config.k8s.io/v1alpha1", "KubeProxyConfiguration"):
        errs.append("config.conf: %s %s" % (kpc.get("apiVersion"), kpc.get("kind")))
    if not str(kpc.get("healthzBindAddress", "")).endswith(":%d" % HEALTHZ[1]):
        errs.append("healthzBindAddress %s" % kpc.get("healthzBindAddress"))
    for key, flag in (("syncPeriod", "--sync-period"), ("minSyncPeriod", "--min-sync-period")):
        val = ds_args[ds_args.index(flag) + 1] if flag in ds_args else None
        # v1alpha1 has the sync periods in the mode's section only
        got = (kpc.get("iptables") or {}).get(key)
        if key in kpc or got != val:
            errs.append("iptables.%s %s != DaemonSet %s %s" % (key, got, flag, val))
    return errs


def check_containerfile(ver):
    errs = []
    with open(os.path.join(KDIR, "Containerfile")) as f:
        text = f.read()
    lines = [l for l in text.splitlines() if l.strip() and not l.startswith("#")]
    if "SPDX-License-Identifier: GPL-2.0-only" not in text.splitlines()[0]:
        errs.append("Containerfile: no SPDX line first")
    froms = [l for l in lines if l.startswith("FROM ")]
    if froms != ["FROM debian:bookworm-slim"]:
        errs.append("Containerfile: %s" % froms)
    if "ARG KPX_DEB=kpx-agent_%s_amd64.deb" % ver not in lines:
        errs.append("Containerfile: KPX_DEB default is not version %s" % ver)
    if not re.search(r"apt-get install [^\n]*\\\n\s+/tmp/kpx-agent\.deb kmod", text):
        errs.append("Containerfile: does not apt-get install the .deb and kmod")
    if 'ENTRYPOINT ["/usr/sbin/kpx-agent"]' not in lines:
        errs.append("Containerfile: entrypoint")
    return errs


def run_all(docs, ver):
    ds = docs.get("DaemonSet", {})
    mains = ds.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [{}])
    return {
        "kinds and apiVersions": check_kinds(docs),
        "RBAC verbs exactly as specified": check_rbac(docs),
        "DaemonSet pod, images, probes, capabilities": check_daemonset(docs, ver),
        "ConfigMap KubeProxyConfiguration": check_configmap(docs, mains[0].get("args", [])),
    }


# Mutations that the checks must reject: (description, function on docs).
def _pod(d):
    return d["DaemonSet"]["spec"]["template"]["spec"]


MUTANTS = [
    ("extra verb get on services",
     lambda d: d["ClusterRole"]["rules"][0]["verbs"].append("get")),
    ("wildcard resource", lambda d: d["ClusterRole"]["rules"].append(
        {"apiGroups": [""], "resources": ["*"], "verbs": ["list"]})),
    ("NET_RAW added to the agent",
     lambda d: _pod(d)["containers"][0]["securityContext"]["capabilities"]["add"].append("NET_RAW")),
    ("SYS_MODULE in the agent",
     lambda d: _pod(d)["containers"][0]["securityContext"]["capabilities"]["add"].append("SYS_MODULE")),
    ("readiness probe on 10249",
     lambda d: _pod(d)["containers"][0]["readinessProbe"]["httpGet"].__setitem__("port", 10249)),
    ("no startup probe (the liveness probe would restart the Node wait)",
     lambda d: _pod(d)["containers"][0].pop("startupProbe")),
    ("startup probe shorter than the Node wait",
     lambda d: _pod(d)["containers"][0]["startupProbe"].__setitem__("failureThreshold", 3)),
    ("image :latest",
     lambda d: _pod(d)["initContainers"][0].__setitem__("image", "kpx-agent:latest")),
    ("hostNetwork off", lambda d: _pod(d).__setitem__("hostNetwork", False)),
    ("/lib/modules writable",
     lambda d: _pod(d)["initContainers"][0]["volumeMounts"][0].__setitem__("readOnly", False)),
    ("a missing kind", lambda d: d.pop("ServiceAccount")),
    ("no node-setup init container", lambda d: _pod(d)["initContainers"].pop(1)),
    ("node-setup without --init-only", lambda d: _pod(d)["initContainers"][1].__setitem__(
        "command", ["/usr/sbin/kpx-agent"])),
    ("node-setup not privileged", lambda d: _pod(d)["initContainers"][1][
        "securityContext"].__setitem__("privileged", False)),
    ("agent flag missing from node-setup", lambda d: _pod(d)["containers"][0]["args"].extend(
        ["--conntrack-min", "262144"])),
    ("agent privileged", lambda d: _pod(d)["containers"][0]["securityContext"].__setitem__(
        "privileged", True)),
    ("configmap syncPeriod differs", lambda d: d["ConfigMap"]["data"].__setitem__(
        "config.conf", d["ConfigMap"]["data"]["config.conf"].replace("syncPeriod: 30s", "syncPeriod: 1m"))),
]


# (description, text in the unit, replacement) that check_unit must reject.
UNIT_MUTANTS = [
    ("--init-only without '+'", "ExecStartPre=+/usr/sbin/kpx-agent --init-only",
     "ExecStartPre=/usr/sbin/kpx-agent --init-only"),
    ("no --init-only step", "ExecStartPre=+/usr/sbin/kpx-agent --init-only $KPX_AGENT_OPTS\n", ""),
    ("--init-only without the agent's options", "--init-only $KPX_AGENT_OPTS", "--init-only"),
    ("ProtectKernelTunables dropped", "ProtectKernelTunables=yes", "ProtectKernelTunables=no"),
    ("ProcSubset=pid back", "ProtectProc=invisible\n", "ProtectProc=invisible\nProcSubset=pid\n"),
]


def main():
    n = 0
    failed = 0

    def tap(good, desc, errs=()):
        nonlocal n, failed
        n += 1
        failed += not good
        print("%s %d - %s" % ("ok" if good else "not ok", n, desc))
        for e in errs:
            print("# " + e)

    ver = version()
    docs, errs = load()
    tap(not errs, "every document parses (%d documents)" % len(docs), errs)
    for desc, e in run_all(docs, ver).items():
        tap(not e, desc, e)
    e = check_containerfile(ver)
    tap(not e, "Containerfile: debian:bookworm-slim, installs kpx-agent .deb", e)
    with open(UNIT) as f:
        unit = f.read()
    e = check_unit(unit)
    tap(not e, "systemd unit: ExecStartPre=+kpx-agent --init-only, the agent sandboxed", e)
    for desc, old, new in UNIT_MUTANTS:
        tap(old in unit and check_unit(unit.replace(old, new)),
            "rejects a unit mutant: " + desc)
    for desc, mutate in MUTANTS:
        bad = copy.deepcopy(docs)
        mutate(bad)
        caught = any(run_all(bad, ver).values())
        tap(caught, "rejects a mutant: " + desc)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
