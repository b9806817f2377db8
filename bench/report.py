#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""report.py RAW.jsonl OUTDIR [--wall SECONDS] [--quick]

Turns bench/vm/guest.sh's result lines into OUTDIR/bench.json (everything,
with the derived numbers), OUTDIR/bench.md (tables, ratios, the issue's
targets met or not) and OUTDIR/newconn.png (new-connection cost, p50
connect latency, against N: one line per mode and the floor; gnuplot).

New-connection cost = p50 TCP connect latency (SYN out to SYN-ACK in, from
the client netns, one connection in flight) in microseconds; ratios are of
those p50s at the same N.  Kernel memory: slab totals (without the
per-connection caches) and vmalloc, before the agent, after the first sync
(N Services, 2N backends) and after 2N more backends: per backend =
delta2 / 2N; per Service = (delta1 - 2N x per backend) / N, less the
mode's N=1 delta1 (the agent's own kernel objects) when N=1 was run."""
import datetime
import json
import os
import platform
import subprocess
import sys

MODES = ["kpx", "nftables", "iptables", "ipvs"]


def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def agg_conn(rounds):
    """Rounds of kpx_load conn: median p50/p99, total conns, mean conn/s."""
    rounds = [r for r in rounds if r]
    if not rounds:
        return None
    return {"rounds": len(rounds), "p50_us": median([r["p50_us"] for r in rounds if r["conns"]]),
            "p99_us": median([r["p99_us"] for r in rounds if r["conns"]]),
            "conns": sum(r["conns"] for r in rounds), "errors": sum(r["errors"] for r in rounds),
            "timeouts": sum(r["timeouts"] for r in rounds),
            "cps": sum(r["cps"] for r in rounds) / len(rounds)}


def agg_bulk(rounds):
    rounds = [r for r in rounds if r]
    return {"rounds": len(rounds), "mbit_s": median([r["mbit_s"] for r in rounds])} if rounds else None


def normalize(r):
    """Lists of rounds (guest.sh's interleaved runs) into aggregates."""
    for k, f in (("conn", agg_conn), ("conn_pod", agg_conn), ("bulk", agg_bulk), ("bulk_pod", agg_bulk)):
        if isinstance(r.get(k), list):
            r[k + "_rounds"] = r[k]
            r[k] = f(r[k])


def load(path):
    meta, floor, modes = {}, {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                print("report.py: bad line: %s" % line[:200], file=sys.stderr)
                continue
            if r["kind"] == "meta":
                meta = r
            elif r["kind"] == "floor":
                floor[r["n"]] = r
            elif r["kind"] == "mode":
                normalize(r)
                modes.setdefault(r["mode"], {})[r["n"]] = r
    return meta, floor, modes


def p50(r):
    c = (r or {}).get("conn") or {}
    return c.get("p50_us") if c.get("conns") else None


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def memory(modes):
    """Per-Service and per-backend slab bytes, vmalloc deltas."""
    for mode, byn in modes.items():
        base = None
        r1 = byn.get(1)
        if r1 and "slab" in r1:
            base = r1["slab"][1] - r1["slab"][0]
        for n, r in byn.items():
            if "slab" not in r:
                continue
            s0, s1, s2 = r["slab"]
            v0, v1, v2 = r["vmalloc"]
            be = (s2 - s1) / (2.0 * n)
            if base is not None and n > 1:
                svc = (s1 - s0 - base - 2 * (n - 1) * be) / (n - 1)
            else:
                svc = (s1 - s0 - 2 * n * be) / n
            if not str(r.get("resync4_s", "")).replace(".", "").isdigit():
                be = svc = None     # the 2N extra backends never arrived
            r["mem"] = {"slab_per_backend_b": None if be is None else round(be, 1),
                        "slab_per_service_b": None if svc is None else round(svc, 1),
                        "agent_base_b": base,
                        "vmalloc_delta_sync_kib": (v1 - v0) // 1024,
                        "vmalloc_delta_2n_backends_kib": (v2 - v1) // 1024}


def derive(floor, modes):
    ns = sorted(set(floor) | {n for byn in modes.values() for n in byn})
    d = {"ns": ns, "vs_floor": {}, "vs_nftables": {}, "vs_pod_same_mode": {}}
    for mode, byn in modes.items():
        for n, r in byn.items():
            d["vs_floor"].setdefault(mode, {})[n] = ratio(p50(r), p50(floor.get(n)))
            d["vs_pod_same_mode"].setdefault(mode, {})[n] = ratio(
                p50(r), (r.get("conn_pod") or {}).get("p50_us"))
            nft = modes.get("nftables", {}).get(n)
            d["vs_nftables"].setdefault(mode, {})[n] = ratio(p50(r), p50(nft))
    return d


def spread(rounds, key):
    """max/min of a field over rounds: > 1.1 means the host's noise exceeds 10%."""
    v = [r[key] for r in (rounds or []) if r and r.get(key)]
    return max(v) / min(v) if len(v) > 1 else None


NOISE_PCT = 20


def noisy_conn(r):
    """True if the rounds' p50s (VIP or pod) differ by more than NOISE_PCT."""
    for k in ("conn_rounds", "conn_pod_rounds"):
        sp = spread(r.get(k), "p50_us")
        if sp is None or sp > 1 + NOISE_PCT / 100.0:
            return True
    return False


def verdict(ok, text):
    return {"met": ok, "text": text}


def targets(floor, modes):
    kpx = modes.get("kpx", {})
    ok_ns = sorted(n for n, r in kpx.items() if p50(r) is not None)
    out = []
    if ok_ns:
        top = ok_ns[-1]
        r = ratio(p50(kpx[top]), p50(kpx.get(1)))
        note = "" if top == 50000 else " (largest N measured: %d, not 50000)" % top
        out.append(verdict((r is not None and r <= 1.10) if top == 50000 else None,
                           "kpx new-connection cost at 50,000 Services <= 1.10x kpx at 1: "
                           "%sx%s" % (r, note)))
        r = ratio(p50(kpx[top]), p50(floor.get(top)))
        out.append(verdict((r is not None and r <= 1.10) if top == 50000 else None,
                           "kpx new-connection cost at 50,000 Services <= 1.10x the floor: "
                           "%sx%s" % (r, note)))
    nft = modes.get("nftables", {})
    common = [n for n in ok_ns if p50(nft.get(n)) is not None]
    if common:
        rs = {n: ratio(p50(kpx[n]), p50(nft[n])) for n in common}
        noisy = [n for n in common if noisy_conn(kpx[n]) or noisy_conn(nft[n])]
        out.append(verdict(all(v <= 1.0 for v in rs.values()) if not noisy else None,
                           "kpx at or below nftables at every N: kpx/nftables = %s%s" %
                           (rs, "; inconclusive: p50 differs by more than %d%% between rounds at "
                            "N = %s" % (NOISE_PCT, noisy) if noisy else "")))
    else:
        out.append(verdict(None, "kpx at or below nftables at every N: nftables mode not measured"))
    ipt = modes.get("iptables", {}).get(10000)
    if p50(ipt) is not None and p50(kpx.get(10000)) is not None:
        r = ratio(p50(ipt), p50(kpx[10000]))
        out.append(verdict(r >= 3.0, "kpx >= 3x cheaper than iptables at 10,000: iptables/kpx = %sx" % r))
    else:
        out.append(verdict(None, "kpx >= 3x cheaper than iptables at 10,000: iptables mode at 10,000 not measured"))
    sync_n = [n for n in ok_ns if n in nft and nft[n].get("sync_agent_ms")]
    if sync_n:
        n = sync_n[-1]
        r = ratio(nft[n]["sync_wall_s"], kpx[n]["sync_wall_s"])
        out.append(verdict(None, "full sync 10,000 x 100 endpoints >= 50x faster than nftables: not run "
                           "(x2 endpoints only); at %d x 2: nftables/kpx wall = %sx" % (n, r)))
    else:
        out.append(verdict(None, "full sync 10,000 x 100 endpoints >= 50x faster than nftables: not measured"))
    p99s = {n: (kpx[n].get("chg_agent_ms") or {}).get("p99") for n in ok_ns}
    vals = [v for v in p99s.values() if v is not None]
    out.append(verdict((max(vals) < 10) if vals else None,
                       "one endpoint change < 10 ms p99 of agent time: agent sync p99 ms by N = %s" % p99s))
    bulk, noisy = {}, []
    for n in ok_ns:
        sp = spread(kpx[n].get("bulk_pod_rounds"), "mbit_s")
        if sp is None or sp > 1.1:
            noisy.append(n)
        a = (kpx[n].get("bulk") or {}).get("mbit_s")
        b = (kpx[n].get("bulk_pod") or {}).get("mbit_s")
        bulk[n] = ratio(a, b)
    vals = [v for v in bulk.values() if v is not None]
    out.append(verdict((min(vals) >= 0.98) if vals and not noisy else None,
                       "established-flow throughput through kpx within 2%% of straight to the pod: "
                       "VIP/pod (medians, same mode, interleaved) by N = %s%s" %
                       (bulk, "; inconclusive: the pod-direct rounds differ by more than 10%% at N = %s"
                        % noisy if noisy else "")))
    memn = [n for n in ok_ns if n > 1 and "mem" in kpx[n]]
    if memn:
        m = kpx[memn[-1]]["mem"]
        out.append(verdict(m["slab_per_backend_b"] <= 256 and m["slab_per_service_b"] <= 1024,
                           "kernel memory <= 256 B per backend, <= 1 KiB per Service: %s B, %s B "
                           "at N=%d (random scheduler: no Maglev table)" %
                           (m["slab_per_backend_b"], m["slab_per_service_b"], memn[-1])))
    return out


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return ("%%.%df" % nd) % v
    return str(v)


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores, host %s; guest under QEMU TCG" % (cpu, os.cpu_count(), platform.release())


def markdown(res):
    meta, floor, modes, d = res["meta"], res["floor"], res["modes"], res["derived"]
    L = ["# kpx side-by-side benchmark", "",
         "%s, %s. Guest: kernel %s, %s vCPUs, %s MiB; %s s of connections per point "
         "(%s in flight), bulk %s s, %s endpoint changes, step cap %s s. Wall time %s s." %
         (res["date"], res["machine"], meta.get("kernel"), meta.get("cpus"), meta.get("mem_mib"),
          meta.get("secs"), meta.get("conc"), meta.get("bulk_secs"), meta.get("changes"),
          meta.get("cap_s"), res.get("wall_s")), "",
         "Host load during the run (other VMs share the 2 cores): loadavg %s at the end; "
         "source %s. Latencies are medians of %s interleaved rounds; the floor is one run "
         "per N before any mode." % (" ".join(res.get("loadavg") or []), res.get("commit"),
                                     meta.get("rounds", "-")), "",
         "## New-connection cost (TCP connect, µs; ratios of p50)", "",
         "| mode | N | p50 | p99 | conn/s | errors | vs floor | vs nftables | "
         "pod p50 (same mode) | VIP/pod (same mode) | round p50 max/min |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in d["ns"]:
        c = (floor.get(n) or {}).get("conn") or {}
        L.append("| floor | %d | %s | %s | %s | %s | 1 | - | - | - | - |" %
                 (n, fmt(c.get("p50_us")), fmt(c.get("p99_us")), fmt(c.get("cps"), 0),
                  fmt(c.get("errors"))))
    for mode in [m for m in MODES if m in modes] + [m for m in modes if m not in MODES]:
        for n in sorted(modes[mode]):
            r = modes[mode][n]
            if r.get("capped"):
                why = r["capped"]
                tag = "unavailable" if why.startswith("agent exited") else "> cap"
                L.append("| %s | %d | %s: %s | | | | | | | | |" % (mode, n, tag, why))
                continue
            c = r.get("conn") or {}
            L.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" %
                     (mode, n, fmt(c.get("p50_us")), fmt(c.get("p99_us")), fmt(c.get("cps"), 0),
                      fmt(c.get("errors")), fmt(d["vs_floor"][mode].get(n), 3),
                      fmt(d["vs_nftables"][mode].get(n), 3),
                      fmt((r.get("conn_pod") or {}).get("p50_us")),
                      fmt(d["vs_pod_same_mode"][mode].get(n), 3),
                      fmt(spread(r.get("conn_rounds"), "p50_us"), 2)))
    L += ["", "## Established flow, control plane, memory", "",
          "| mode | N | bulk Mbit/s (VIP / pod) | full sync wall s | sync agent ms | "
          "change p50 / p99 ms (API to kernel) | agent sync per change p50 / p99 ms | "
          "slab B/Service | slab B/backend | agent peak RSS MiB |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for mode in [m for m in MODES if m in modes]:
        for n in sorted(modes[mode]):
            r = modes[mode][n]
            if r.get("capped"):
                L.append("| %s | %d | > cap | | | | | | | |" % (mode, n))
                continue
            b = (r.get("bulk") or {}).get("mbit_s")
            fb = (r.get("bulk_pod") or {}).get("mbit_s")
            ch = r.get("chg") or {}
            ca = r.get("chg_agent_ms") or {}
            m = r.get("mem") or {}
            L.append("| %s | %d | %s / %s | %s | %s | %s / %s | %s / %s | %s | %s | %s |" %
                     (mode, n, fmt(b, 0), fmt(fb, 0), fmt(r.get("sync_wall_s"), 2),
                      fmt(r.get("sync_agent_ms")), fmt(ch.get("p50_ms")), fmt(ch.get("p99_ms")),
                      fmt(ca.get("p50")), fmt(ca.get("p99")),
                      fmt(m.get("slab_per_service_b"), 0) if n > 1 else "-",
                      fmt(m.get("slab_per_backend_b"), 0) if n > 1 else "-",
                      fmt(r.get("agent_rss_mib"))))
    L += ["", "## Targets of issue 7", ""]
    for t in res["targets"]:
        mark = {True: "met", False: "NOT met", None: "not evaluated"}[t["met"]]
        L.append("- **%s**: %s" % (mark, t["text"]))
    L += ["", "![new-connection cost](newconn.png)", ""]
    return "\n".join(L)


def plot(res, out):
    floor, modes = res["floor"], res["modes"]
    series = [("floor (no proxy)", {n: p50(r) for n, r in floor.items()})]
    for mode in [m for m in MODES if m in modes]:
        series.append((mode, {n: p50(r) for n, r in modes[mode].items()}))
    cmds = ["set terminal png size 800,500", "set output '%s'" % os.path.join(out, "newconn.png"),
            "set logscale x", "set xlabel 'Services (2 endpoints each)'",
            "set ylabel 'TCP connect p50 (us)'", "set key left top", "set grid",
            "set title 'kpx: new-connection cost against N (QEMU TCG, %s)'" % res["date"][:10],
            "set yrange [0:*]"]
    plots, data = [], []
    for name, pts in series:
        pts = sorted((n, v) for n, v in pts.items() if v is not None)
        if not pts:
            continue
        plots.append("'-' using 1:2 with linespoints title '%s'" % name)
        data.append("\n".join("%d %s" % (max(n, 1), v) for n, v in pts) + "\ne")
    if not plots:
        return
    script = "\n".join(cmds) + "\nplot " + ", ".join(plots) + "\n" + "\n".join(data) + "\n"
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def arg(name):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main():
    raw, out = sys.argv[1], sys.argv[2]
    wall = arg("--wall")
    wall = int(wall) if wall else None
    meta, floor, modes = load(raw)
    memory(modes)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": machine(), "quick": "--quick" in sys.argv, "wall_s": wall,
           "meta": meta, "floor": floor, "modes": modes,
           "loadavg": (arg("--loadavg") or open("/proc/loadavg").read()).split()[:3],
           "commit": arg("--commit")}
    res["derived"] = derive(floor, modes)
    res["targets"] = targets(floor, modes)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "bench.md"), "w") as f:
        f.write(markdown(res))
    plot(res, out)
    print(markdown(res))


if __name__ == "__main__":
    main()
