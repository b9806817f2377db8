# SPDX-License-Identifier: GPL-2.0-only
"""Write and read the small kubeconfig files used by the kpx tests.

The writer emits plain block YAML; the reader understands only that shape
(the standard library has no YAML parser), which is enough for apictl.
"""

import base64
import os
import re


def _b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def kubeconfig_text(certs, host, port, mode="token"):
    """kubeconfig YAML for server https://HOST:PORT; mode 'token' or 'cert'."""
    if ":" in host:
        host = "[%s]" % host
    if mode == "token":
        with open(os.path.join(certs, "token")) as f:
            user = "    token: %s\n" % f.read().strip()
    else:
        user = ("    client-certificate-data: %s\n    client-key-data: %s\n"
                % (_b64file(os.path.join(certs, "client.crt")),
                   _b64file(os.path.join(certs, "client.key"))))
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        "- name: kpx-test\n"
        "  cluster:\n"
        "    certificate-authority-data: %s\n"
        "    server: https://%s:%d\n"
        "users:\n"
        "- name: kpx-agent\n"
        "  user:\n"
        "%s"
        "contexts:\n"
        "- name: kpx-test\n"
        "  context:\n"
        "    cluster: kpx-test\n"
        "    user: kpx-agent\n"
        "current-context: kpx-test\n"
        % (_b64file(os.path.join(certs, "ca.crt")), host, port, user))


def read_kubeconfig(path):
    """Return a dict of server, ca (PEM bytes), token, cert, key (PEM bytes or None)."""
    with open(path) as f:
        text = f.read()

    def field(name):
        m = re.search(r"^\s*%s:\s*\"?([^\s\"]+)\"?\s*$" % re.escape(name), text, re.M)
        return m.group(1) if m else None

    def b64(name):
        v = field(name)
        return base64.b64decode(v) if v else None
    return {"server": field("server"), "ca": b64("certificate-authority-data"),
            "token": field("token"), "cert": b64("client-certificate-data"),
            "key": b64("client-key-data")}
