# SPDX-License-Identifier: GPL-2.0-only
"""Label and field selectors, and list continue tokens, for the test API server."""

import base64
import json
import re

from kpxapi_store import StoreError

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VAL = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"


def _bad(msg):
    return StoreError(400, "BadRequest", msg)


def _split_terms(sel):
    """Split on commas that are not inside parentheses."""
    terms, depth, cur = [], 0, ""
    for ch in sel:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    return [t.strip() for t in terms if t.strip()]


def parse_label_selector(sel):
    """Parse a label selector into a list of (op, key, values).

    ops: exists, notexists, eq, ne, in, notin. Raises StoreError 400.
    """
    out = []
    for t in _split_terms(sel or ""):
        m = re.fullmatch(r"!\s*(%s)" % _KEY, t)
        if m:
            out.append(("notexists", m.group(1), ()))
            continue
        m = re.fullmatch(r"(%s)\s+(in|notin)\s*\((.*)\)" % _KEY, t)
        if m:
            op_in = m.group(3)
            vals = tuple(v.strip() for v in m.group(4).split(","))
            if not all(re.fullmatch(_VAL, v) for v in vals):
                raise _bad("invalid label selector value in %r" % t)
            out.append((op_in, m.group(1), vals))
            continue
        m = re.fullmatch(r"(%s)\s*(==|=|!=)\s*(%s)" % (_KEY, _VAL), t)
        if m:
            op = "ne" if m.group(3) == "!=" else "eq"
            out.append((op, m.group(1), (m.group(4),)))
            continue
        m = re.fullmatch(_KEY, t)
        if m:
            out.append(("exists", t, ()))
            continue
        raise _bad("unable to parse requirement: %r" % t)
    return out


def match_labels(reqs, obj):
    """True when the object's labels satisfy every requirement."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for op, key, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "exists" and not has:
            return False
        if op == "notexists" and has:
            return False
        if op == "eq" and v != vals[0]:
            return False
        if op == "ne" and has and v == vals[0]:
            return False
        if op == "in" and (not has or v not in vals):
            return False
        if op == "notin" and has and v in vals:
            return False
    return True


_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


def parse_field_selector(sel):
    """Parse metadata.name / metadata.namespace field selectors (=, ==, !=)."""
    out = []
    for t in _split_terms(sel or ""):
        m = re.fullmatch(r"([a-zA-Z.]+)\s*(==|=|!=)\s*(.*)", t)
        if not m:
            raise _bad("invalid field selector: %r" % t)
        if m.group(1) not in _FIELDS:
            raise _bad('field label not supported: %s' % m.group(1))
        out.append((_FIELDS[m.group(1)], m.group(2) != "!=", m.group(3)))
    return out


def match_fields(reqs, obj):
    md = obj.get("metadata") or {}
    for field, equal, val in reqs:
        if (md.get(field, "") == val) != equal:
            return False
    return True


def encode_continue(rv, start_key):
    """Opaque continue token: list revision and the key to start after."""
    raw = json.dumps({"v": "kpx.test/v1", "rv": rv, "start": list(start_key)})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token):
    """Returns (rv, start key tuple); raises StoreError 400 when malformed."""
    try:
        pad = "=" * (-len(token) % 4)
        d = json.loads(base64.urlsafe_b64decode(token + pad))
        return int(d["rv"]), tuple(d["start"])
    except (ValueError, KeyError, TypeError) as e:
        raise _bad("continue key is not valid: %s" % e)
