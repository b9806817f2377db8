#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""sandbox_spec.py daemonset|unit FILE [NAME=VALUE...]

Prints, as bash assignments for kpx_agent_sandbox.sh, how the shipped
packaging runs the agent, so that the VM test runs it exactly so and cannot
drift from the files:

daemonset FILE (packaging/kubernetes/daemonset.yaml): for the init container
node-setup (SETUP_*) and the agent's container (AGENT_*): ARGV (command and
args, $(VAR) expanded from the container's env), PRIV (privileged),
RO_ROOT (readOnlyRootFilesystem), UID (runAsUser), NNP
(allowPrivilegeEscalation false), CAPS (the capabilities added after
drop ALL, lower case, comma-separated), ENV (NAME=VALUE), MOUNTS
(mountPath:ro|rw) and HOSTNET.  NAME=VALUE gives fieldRef and
configMapKeyRef values (spec.nodeName=..., apiServerHost=...).

unit FILE (packaging/systemd/kpx-agent.service): PRE (ExecStartPre= lines),
START (ExecStart=), ENVFILE (EnvironmentFile=) and U_<Directive> for each
[Service] directive the test emulates; NOT_EMULATED lists the others it
knows (seccomp, namespaces and the like, which need systemd itself).  An
unknown directive is an error (exit 2): the test must learn it first."""
import shlex
import sys

import yaml

# [Service] directives kpx_agent_sandbox.sh applies (see its run_unit).
EMULATED = {
    "User", "CapabilityBoundingSet", "AmbientCapabilities", "NoNewPrivileges",
    "SecureBits", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
    "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
    "ProtectControlGroups", "ProtectProc", "ProcSubset", "UMask",
}
# Known, but only systemd can apply them (seccomp, namespaces, keyrings),
# or they do not change what the agent may do.
NOT_EMULATED = {
    "Type", "KillSignal", "Restart", "RestartSec", "ProtectClock", "ProtectHostname",
    "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime",
    "RestrictSUIDSGID", "LockPersonality", "MemoryDenyWriteExecute", "RemoveIPC",
    "SystemCallArchitectures", "SystemCallFilter", "SystemCallErrorNumber",
}
SPECIAL = {"ExecStartPre", "ExecStart", "EnvironmentFile"}


def out(name, value):
    if isinstance(value, list):
        print("%s=(%s)" % (name, " ".join(shlex.quote(str(v)) for v in value)))
    else:
        print("%s=%s" % (name, shlex.quote(str(value))))


def container_env(c, given):
    env = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = str(e["value"])
            continue
        vf = e.get("valueFrom", {})
        key = vf.get("fieldRef", {}).get("fieldPath") or \
            vf.get("configMapKeyRef", {}).get("key")
        if key not in given:
            sys.exit("sandbox_spec: no value given for %s (%s=...)" % (e["name"], key))
        env[e["name"]] = given[key]
    return env


def expand(s, env):
    for k, v in env.items():
        s = s.replace("$(%s)" % k, v)
    return s


def container(prefix, c, given):
    env = container_env(c, given)
    sc = c.get("securityContext", {})
    cp = sc.get("capabilities", {})
    if cp.get("drop", ["ALL"]) != ["ALL"] and not sc.get("privileged"):
        sys.exit("sandbox_spec: %s: drop is not [ALL]" % c["name"])
    out(prefix + "ARGV", [expand(a, env) for a in c.get("command", []) + c.get("args", [])])
    out(prefix + "PRIV", int(bool(sc.get("privileged"))))
    out(prefix + "RO_ROOT", int(bool(sc.get("readOnlyRootFilesystem"))))
    out(prefix + "UID", sc.get("runAsUser", 0))
    out(prefix + "NNP", int(sc.get("allowPrivilegeEscalation") is False))
    out(prefix + "CAPS", ",".join(a.lower() for a in cp.get("add", [])))
    out(prefix + "ENV", ["%s=%s" % kv for kv in env.items()])
    out(prefix + "MOUNTS", ["%s:%s" % (m["mountPath"], "ro" if m.get("readOnly") else "rw")
                            for m in c.get("volumeMounts", [])])


def daemonset(path, given):
    with open(path) as f:
        ds = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet"][0]
    pod = ds["spec"]["template"]["spec"]
    inits = {c["name"]: c for c in pod.get("initContainers", [])}
    if "node-setup" not in inits or len(pod.get("containers", [])) != 1:
        sys.exit("sandbox_spec: no node-setup init container, or not one container")
    container("SETUP_", inits["node-setup"], given)
    container("AGENT_", pod["containers"][0], given)
    out("HOSTNET", int(bool(pod.get("hostNetwork"))))


def unit(path):
    pre, start, envfile, seen = [], [], [], set()
    sect = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                sect = line.strip("[]")
                continue
            k, _, v = line.partition("=")
            k, v = k.strip(), v.strip()
            if sect != "Service":
                continue
            if k == "ExecStartPre":
                pre.append(v)
            elif k == "ExecStart":
                start.append(v)
            elif k == "EnvironmentFile":
                envfile.append(v)
            elif k in EMULATED:
                if k in seen:
                    sys.exit("sandbox_spec: %s given twice" % k)
                seen.add(k)
                out("U_" + k, v)
            elif k in NOT_EMULATED:
                seen.add(k)
            else:
                print("sandbox_spec: unknown [Service] directive %s" % k, file=sys.stderr)
                sys.exit(2)
    if len(start) != 1:
        sys.exit("sandbox_spec: want one ExecStart=")
    out("PRE", pre)
    out("START", start[0])
    out("ENVFILE", envfile)
    out("NOT_EMULATED", sorted(seen & NOT_EMULATED))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("daemonset", "unit"):
        sys.exit(__doc__)
    given = dict(a.split("=", 1) for a in sys.argv[3:])
    if sys.argv[1] == "daemonset":
        daemonset(sys.argv[2], given)
    else:
        unit(sys.argv[2])


if __name__ == "__main__":
    main()
