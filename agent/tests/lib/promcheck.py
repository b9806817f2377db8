#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""promcheck.py TABLE MODE FAMILIES METRICS: read a /metrics scrape with
prometheus_client's text-format parser (Debian's python3-prometheus-client,
the reference implementation of the exposition format) and check it
against TABLE (upstream-metrics.json: kube-proxy's metric names, types,
label names and histogram buckets as upstream defines them).

MODE is the agent's proxy mode (which mode-specific metrics it must
have); FAMILIES the ip_family values expected ("IPv4", "IPv4,IPv6").

For each metric of the table registered in MODE: present with its TYPE;
every sample has exactly the table's label names (plus le on _bucket);
a histogram's series each have the table's buckets in order and +Inf,
cumulative, with _count equal to the +Inf bucket; a metric with ip_family
has one series set per expected family and no other family.  A metric of
another mode must be absent.  A metric with when_used may have no series
but must have its TYPE when it has some.  Prints one line per metric,
"PASS what" or "FAIL what: why" (the test turns them into TAP), and a
summary; exit status 0 when all pass.
"""
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

SUFFIXES = {"counter": ["_total"], "gauge": [""], "histogram": ["_bucket", "_sum", "_count"]}


def family_name(name, mtype):
    # the parser names a counter's family without its _total suffix
    if mtype == "counter" and name.endswith("_total"):
        return name[: -len("_total")]
    return name


def check(entry, fam, buckets, families):
    """Returns a list of problems with @fam against @entry."""
    errs = []
    if fam is None:
        return ["absent"]
    if fam.type != entry["type"]:
        errs.append("type %s, want %s" % (fam.type, entry["type"]))
    want = sorted(entry["labels"])
    series = {}
    for s in fam.samples:
        labels = dict(s.labels)
        le = labels.pop("le", None)
        if sorted(labels) != want:
            errs.append("%s has labels %s, want %s" % (s.name, sorted(labels), want))
            continue
        key = tuple(sorted(labels.items()))
        ser = series.setdefault(key, {"buckets": [], "sum": None, "count": None, "value": None})
        if s.name.endswith("_bucket"):
            if le is None:
                errs.append("%s without le" % s.name)
            else:
                ser["buckets"].append((float(le), s.value))
        elif entry["type"] == "histogram" and s.name.endswith("_sum"):
            ser["sum"] = s.value
        elif entry["type"] == "histogram" and s.name.endswith("_count"):
            ser["count"] = s.value
        else:
            if s.name != entry["name"]:
                errs.append("sample %s, want %s" % (s.name, entry["name"]))
            ser["value"] = s.value
    if not series and not entry.get("when_used"):
        errs.append("no series")
    if "ip_family" in want:
        got = sorted({dict(k)["ip_family"] for k in series})
        if series and got != sorted(families):
            errs.append("ip_family %s, want %s" % (got, sorted(families)))
    if entry["type"] == "histogram":
        bounds = buckets[entry["buckets"]] + [math.inf]
        for key, ser in series.items():
            les = [b for b, _ in ser["buckets"]]
            if les != bounds:
                errs.append("%s buckets %s, want %s" % (dict(key), les, bounds))
                continue
            counts = [c for _, c in ser["buckets"]]
            if any(a > b for a, b in zip(counts, counts[1:])):
                errs.append("%s buckets not cumulative" % dict(key))
            if ser["count"] != counts[-1] or ser["sum"] is None:
                errs.append("%s _count %s, +Inf %s, _sum %s" % (dict(key), ser["count"], counts[-1], ser["sum"]))
    return errs


def main(argv):
    table_path, mode, families, metrics_path = argv[1:5]
    families = families.split(",")
    with open(table_path) as f:
        table = json.load(f)
    with open(metrics_path) as f:
        text = f.read()
    fams = {}
    for fam in text_string_to_metric_families(text):
        if fam.name in fams:
            print("FAIL %s: two families of that name" % fam.name)
            return 1
        fams[fam.name] = fam
    n, bad = 0, 0
    for entry in table["metrics"]:
        fam = fams.get(family_name(entry["name"], entry["type"]))
        registered = mode in entry.get("modes", [mode])
        if registered:
            errs = check(entry, fam, table["buckets"], families)
            what = "%s %s{%s}" % (entry["name"], entry["type"], ",".join(entry["labels"]))
        else:
            errs = [] if fam is None else ["present in mode %s" % mode]
            what = "%s: absent in mode %s" % (entry["name"], mode)
        if errs:
            bad += 1
            print("FAIL %s: %s" % (what, "; ".join(errs[:3])))
        else:
            print("PASS %s" % what)
        n += 1
    print("# %d of %d upstream metrics as upstream defines them" % (n - bad, n))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
