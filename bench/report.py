#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""report.py RAW.jsonl OUTDIR [--wall SECONDS] [--quick] [--commit REV]
       [--date "YYYY-MM-DD HH:MM UTC"] [--loadavg "A B C"] [--note TEXT]

(--date, --loadavg and --note: for a report remade later from a kept
raw.jsonl: the run's end, its load, and what happened to the run.)

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
mode's N=1 delta1 (the agent's own kernel objects) when N=1 was run.

Bulk: guest.sh runs VIP and pod-direct bulk transfers in interleaved pairs;
each pair gives a VIP/pod ratio, shown as median [min..max] so that the
host's noise can be told from the proxy's cost.  The 2 % target is judged
on a distribution-free 95 % confidence interval of the median pair ratio
(the sign test's order statistics; it needs at least 6 pairs): met when
the interval lies at or above 0.98, not met when it lies below, else
inconclusive.  Agent
time per change: the partial syncs that carried a change ("chg_agent_ms");
the periodic full resyncs of the same phase ("chg_agent_full_ms") are a
column of their own.  Full-sync step ("kind":"big", KPX_BENCH_BIG=1): the
target compares the agents' own sync durations (nftables/kpx; the API
server's list time, the same for both, left out), a lower bound when the
nftables mode hit the cap; evaluated only at 10,000 x 100."""
import datetime
import json
import math
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
    pairs = [ratio(v.get("mbit_s"), p.get("mbit_s"))
             for v, p in zip(r.get("bulk_rounds") or [], r.get("bulk_pod_rounds") or [])
             if v and p]
    pairs = [x for x in pairs if x is not None]
    if pairs:
        r["bulk_pairs"] = {"n": len(pairs), "median": median(pairs),
                           "min": min(pairs), "max": max(pairs), "ratios": pairs}


def load(path):
    meta, floor, modes, big = {}, {}, {}, {}
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
            elif r["kind"] == "big":
                big[r["mode"]] = r
    return meta, floor, modes, big


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


def not_run(why):
    """True for a point the run left out on purpose (KPX_BENCH_MAX_N, _SKIP_N)."""
    return why.startswith("skipped: KPX_BENCH_")


def vs_nft_at(k, f):
    """kpx at or below nftables at one N: True, False or None (noise).

    Decided by the rounds when they do not overlap (every kpx round's p50
    at or below every nftables round's, or above it), else by the median
    p50s unless either mode's rounds spread more than NOISE_PCT.
    """
    kr = [r["p50_us"] for r in (k.get("conn_rounds") or []) if r and r.get("conns")]
    fr = [r["p50_us"] for r in (f.get("conn_rounds") or []) if r and r.get("conns")]
    if kr and fr and max(kr) <= min(fr):
        return True
    if kr and fr and min(kr) > max(fr):
        return False
    if noisy_conn(k) or noisy_conn(f):
        return None
    return ratio(p50(k), p50(f)) <= 1.0


def nft_target(kpx, nft, ok_ns):
    """kpx at or below nftables at every N kpx was measured at.  An N where
    the nftables mode could not program the Services within the cap counts
    for kpx (said so); an N where it was not run leaves the target open."""
    name = "kpx at or below nftables at every N"
    rs, capped, missing, state = {}, [], [], {}
    for n in ok_ns:
        f = nft.get(n) or {}
        if p50(f) is not None:
            rs[n] = ratio(p50(kpx[n]), p50(f))
            state[n] = vs_nft_at(kpx[n], f)
        elif (f.get("capped") or "").startswith(("sync >", "skipped: a smaller N was capped")):
            capped.append(n)    # not an agent that failed to start: that is not measured
        else:
            missing.append(n)
    if not rs and not capped:
        return verdict(None, "%s: nftables mode not measured" % name)
    st = list(state.values())
    ok = False if False in st else None if None in st or missing else True
    noisy = [n for n in state if state[n] is None]
    text = "%s: kpx/nftables = %s" % (name, rs)
    if capped:
        text += "; nftables over the cap (did not program the Services) at N = %s" % capped
    if noisy:
        text += ("; inconclusive at N = %s: the rounds overlap and p50 differs by more than "
                 "%d%% between rounds" % (noisy, NOISE_PCT))
    if missing:
        text += "; nftables not measured at N = %s" % missing
    return verdict(ok, text)


def verdict(ok, text):
    return {"met": ok, "text": text}


PODS = ("bpa", "bpb", "bpc")    # bench/vm/topo.sh's pod netns
BIG_TARGET = (10000, 100)   # 10,000 Services x 100 endpoints


def big_ratio(big, meta):
    """nftables/kpx of the full-sync step's agent sync time.

    Returns (ratio, is_lower_bound, why): the ratio of the agents' own
    sync durations (sync done's duration_ms: the API server's list time,
    the same for every mode, left out); when the nftables mode was capped,
    a lower bound: its sync began about when kpx's did after agent start
    (list_s, the same API server and data) and had not ended at the cap.
    """
    k, n = big.get("kpx"), big.get("nftables")
    if not k or not n:
        return None, False, "not run (KPX_BENCH_BIG=0, or mode missing)"
    if k.get("capped"):
        return None, False, "kpx capped: %s" % k["capped"]
    kms = k.get("sync_agent_ms")
    if not kms:
        return None, False, "kpx sync time missing"
    if not n.get("capped"):
        return ratio(n.get("sync_agent_ms"), kms), False, ""
    if n.get("unfinished_after_s") is not None and n.get("list_s") is not None:
        # capped, or the agent died (the OOM killer) before its sync ended:
        # it had synced for this long after its own lists without finishing
        left = n["unfinished_after_s"] - n["list_s"]
        return (round(left * 1000.0 / kms, 1), True,
                "nftables unfinished after %.0f s of sync: %s" % (left, n["capped"]))
    cap = (meta.get("big") or {}).get("cap_s") or meta.get("cap_s")
    if not n["capped"].startswith("sync >") or not cap:
        return None, False, "nftables: %s" % n["capped"]
    left = cap - (k.get("list_s") or 0)
    return round(left * 1000.0 / kms, 1), True, "nftables capped at %s s" % cap


def big_target(big, meta):
    k = big.get("kpx") or {}
    size = (k.get("services"), k.get("endpoints"))
    r, lower, why = big_ratio(big, meta)
    name = "full sync of 10,000 Services x 100 endpoints >= 50x faster than nftables"
    if r is None:
        return verdict(None, "%s: %s" % (name, why))
    n = big.get("nftables") or {}
    wall = None if n.get("capped") else ratio(n.get("sync_wall_s"), k.get("sync_wall_s"))
    text = ("%s: nftables/kpx agent sync time = %s%sx (%s ms vs %s; wall from agent start, "
            "API lists included: %sx)%s" %
            (name, ">= " if lower else "", r, k.get("sync_agent_ms"),
             "unfinished" if lower else "%s ms" % n.get("sync_agent_ms"),
             wall if wall is not None else "-", "; " + why if why else ""))
    text = text.replace("included: -x", "included: nftables unfinished")
    if k.get("probe") not in PODS:
        return verdict(False, text + "; but kpx did not forward the probe to a pod (%s)" % k.get("probe"))
    if size != BIG_TARGET:
        return verdict(None, text + "; scaled down to %s x %s: not evaluated" % size)
    if lower:
        return verdict(True if r >= 50 else None, text)
    return verdict(r >= 50, text)


def change_target(kpx, ok_ns):
    """The agent's time of the partial syncs that carried a change: its CPU
    time (cpu_ms: the agent thread's user and system time, the kernel's
    handling of its netlink messages included) where the run logged it,
    else the sync's wall time (duration_ms, which also counts waiting for
    a CPU of the loaded TCG guest)."""
    name = "one endpoint change < 10 ms p99 of agent time"
    p99s, walls, old, cpu = {}, {}, False, True
    for n in ok_ns:
        c = kpx[n].get("chg_agent_ms") or {}
        u = kpx[n].get("chg_agent_cpu_ms")
        if "n" not in c:
            old = True      # an older guest.sh: every sync, full ones too
        if not u or u.get("p99") is None:
            cpu = False
        walls[n] = c.get("p99")
        p99s[n] = (u or {}).get("p99")
    if not cpu:
        p99s = walls
    vals = [v for v in p99s.values() if v is not None]
    full = {n: (kpx[n].get("chg_agent_full_ms") or {}).get("max") for n in ok_ns}
    text = ("%s: agent sync p99 ms by N = %s (%s; partial syncs that carried a change; the "
            "periodic full resyncs in the same phase, max wall ms by N = %s, are shown apart)" %
            (name, p99s, "CPU time, wall p99 ms by N = %s" % walls if cpu else "wall time",
             full))
    if old:
        text = ("%s: agent sync p99 ms by N = %s; raw data of an older harness: every sync "
                "of the change phase, periodic full resyncs included" % (name, p99s))
    return verdict((max(vals) < 10) if vals and not old else None, text)


def median_ci(xs, conf=0.95):
    """Distribution-free confidence interval of the median of xs.

    The sign test's interval [x(k), x(n+1-k)] (order statistics, 1-based)
    with the largest k whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at
    least conf.  Returns (lo, hi, coverage), or None when even [min, max]
    covers less than conf (n < 6 for 95 %).
    """
    v = sorted(xs)
    n = len(v)
    best, tail = None, 0.0
    for k in range(n // 2):
        tail += math.comb(n, k) / 2.0 ** n     # P(B <= k)
        if 1 - 2 * tail < conf:
            break
        best = (v[k], v[n - 1 - k], 1 - 2 * tail)   # [x(k+1), x(n-k)]
    return best


def bulk_target(kpx, ok_ns):
    """VIP/pod throughput per round pair: the 95 % interval of the median
    pair ratio at or above 0.98 at every N (met), below it at some N (not
    met), else within the noise or too few pairs (not evaluated)."""
    name = "established-flow throughput through kpx within 2% of straight to the pod"
    per, state = {}, []
    for n in ok_ns:
        bp = kpx[n].get("bulk_pairs")
        if not bp:
            continue
        ci = median_ci(bp.get("ratios") or [])
        per[n] = "N=%d: %s [%s..%s] (%d pairs; 95%% interval of the median %s)" % (
            n, fmt(bp["median"], 3), fmt(bp["min"], 3), fmt(bp["max"], 3), bp["n"],
            "%s..%s" % (fmt(ci[0], 3), fmt(ci[1], 3)) if ci else "needs >= 6 pairs")
        state.append(None if ci is None else True if ci[0] >= 0.98 else
                     False if ci[1] < 0.98 else None)
    if not per:
        return verdict(None, "%s: not measured" % name)
    ok = False if False in state else True if all(state) else None
    return verdict(ok, "%s: VIP/pod median [min..max over interleaved round pairs]: %s%s" %
                   (name, "; ".join(per[n] for n in sorted(per)), "" if ok is not None else
                    "; inconclusive: an interval holds 0.98 (host noise of the order of the "
                    "target) or has too few pairs"))


def targets(floor, modes, big, meta):
    kpx = modes.get("kpx", {})
    ok_ns = sorted(n for n, r in kpx.items() if p50(r) is not None)
    out = []
    if ok_ns:
        top = ok_ns[-1]
        r = ratio(p50(kpx[top]), p50(kpx.get(1)))
        note = "" if top == 50000 else " (largest N measured: %d, not 50000)" % top
        out.append(verdict((r <= 1.10) if top == 50000 and r is not None else None,
                           "kpx new-connection cost at 50,000 Services <= 1.10x kpx at 1: "
                           "%s%s" % ("%sx" % r if r is not None else
                                     "kpx at 1 not measured in this run", note)))
        r = ratio(p50(kpx[top]), p50(floor.get(top)))
        out.append(verdict((r <= 1.10) if top == 50000 and r is not None else None,
                           "kpx new-connection cost at 50,000 Services <= 1.10x the floor: "
                           "%sx%s" % (r, note)))
    out.append(nft_target(kpx, modes.get("nftables", {}), ok_ns))
    ipt = modes.get("iptables", {}).get(10000)
    if p50(ipt) is not None and p50(kpx.get(10000)) is not None:
        r = ratio(p50(ipt), p50(kpx[10000]))
        out.append(verdict(r >= 3.0, "kpx >= 3x cheaper than iptables at 10,000: iptables/kpx = %sx" % r))
    else:
        out.append(verdict(None, "kpx >= 3x cheaper than iptables at 10,000: iptables mode at 10,000 not measured"))
    out.append(big_target(big, meta))
    out.append(change_target(kpx, ok_ns))
    out.append(bulk_target(kpx, ok_ns))
    memn = [n for n in ok_ns if n > 1 and "mem" in kpx[n]]
    if memn:
        m = kpx[memn[-1]]["mem"]
        out.append(verdict(m["slab_per_backend_b"] <= 256 and m["slab_per_service_b"] <= 1024,
                           "kernel memory <= 256 B per backend, <= 1 KiB per Service: %s B, %s B "
                           "at N=%d (random scheduler: no Maglev table)" %
                           (m["slab_per_backend_b"], m["slab_per_service_b"], memn[-1])))
    return out


def bulk_desc(meta):
    """The bulk runs' description from the meta line."""
    if meta.get("bulk_per_run"):
        return "%s pairs of %s s runs" % (meta.get("bulk_rounds"), meta.get("bulk_secs"))
    return "%s s split over the rounds" % meta.get("bulk_secs")


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
         "(%s in flight), bulk %s, %s endpoint changes, step cap %s s. Wall time %s s." %
         (res["date"], res["machine"], meta.get("kernel"), meta.get("cpus"), meta.get("mem_mib"),
          meta.get("secs"), meta.get("conc"), bulk_desc(meta), meta.get("changes"),
          meta.get("cap_s"), res.get("wall_s")), "",
         "Host load at the end of the run (the VM's own vCPUs included): loadavg %s; "
         "source %s. Latencies are medians of %s interleaved rounds; the floor is one run "
         "per N before any mode." % (" ".join(res.get("loadavg") or []), res.get("commit"),
                                     meta.get("rounds", "-")), "",
         ] + (["Note: %s" % res["note"], ""] if res.get("note") else []) + [
         "## New-connection cost (TCP connect, µs; ratios of p50)", "",
         "Agent CPU: the agent's CPU time over the connection rounds' wall time, in % of one "
         "vCPU (of 2): an agent busy with its own syncs takes CPU from the data path, and the "
         "mode's VIP and pod rounds both pay for it.", "",
         "| mode | N | p50 | p99 | conn/s | errors | vs floor | vs nftables | "
         "pod p50 (same mode) | VIP/pod (same mode) | round p50 max/min | agent CPU % |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in d["ns"]:
        c = (floor.get(n) or {}).get("conn") or {}
        L.append("| floor | %d | %s | %s | %s | %s | 1 | - | - | - | - | - |" %
                 (n, fmt(c.get("p50_us")), fmt(c.get("p99_us")), fmt(c.get("cps"), 0),
                  fmt(c.get("errors"))))
    for mode in [m for m in MODES if m in modes] + [m for m in modes if m not in MODES]:
        for n in sorted(modes[mode]):
            r = modes[mode][n]
            if r.get("capped"):
                why = r["capped"]
                tag = ("unavailable" if why.startswith("agent exited") else
                       "not run" if not_run(why) else "> cap")
                L.append("| %s | %d | %s: %s | | | | | | | | | |" % (mode, n, tag, why))
                continue
            c = r.get("conn") or {}
            ac = r.get("agent_conn") or {}
            acpu = (100.0 * ac["cpu_s"] / ac["wall_s"]) if ac.get("wall_s") else None
            L.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" %
                     (mode, n, fmt(c.get("p50_us")), fmt(c.get("p99_us")), fmt(c.get("cps"), 0),
                      fmt(c.get("errors")), fmt(d["vs_floor"][mode].get(n), 3),
                      fmt(d["vs_nftables"][mode].get(n), 3),
                      fmt((r.get("conn_pod") or {}).get("p50_us")),
                      fmt(d["vs_pod_same_mode"][mode].get(n), 3),
                      fmt(spread(r.get("conn_rounds"), "p50_us"), 2), fmt(acpu, 0)))
    L += ["", "## Established flow, control plane, memory", "",
          "Bulk: medians of the runs through VIP 0 and straight to its pod A_0, run in "
          "interleaved pairs; VIP/pod per pair as median [min..max] so that noise can be told "
          "from cost. Agent sync per change: the partial syncs that carried a change during "
          "the change phase (count n), wall time and [the agent thread's CPU time: the "
          "kernel's handling of its netlink messages and libnftables included, but not the "
          "child processes of the iptables and ipvs modes (iptables-restore, ipset), whose "
          "wall time is the number to compare]; the periodic full resyncs (--sync-period, "
          "30 s) that fell in the same phase are their own column, max ms (count).", "",
          "| mode | N | bulk Mbit/s (VIP / pod) | bulk VIP/pod per pair | full sync wall s | "
          "sync agent ms | change p50 / p99 ms (API to kernel) | agent sync per change p50 / p99 "
          "ms (n) [CPU p50 / p99 ms] | periodic full sync ms (n) | slab B/Service | slab B/backend | "
          "agent peak RSS MiB |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for mode in [m for m in MODES if m in modes]:
        for n in sorted(modes[mode]):
            r = modes[mode][n]
            if r.get("capped"):
                L.append("| %s | %d | %s | | | | | | | | | |" %
                         (mode, n, "not run" if not_run(r["capped"])
                          else "> cap"))
                continue
            b = (r.get("bulk") or {}).get("mbit_s")
            fb = (r.get("bulk_pod") or {}).get("mbit_s")
            bp = r.get("bulk_pairs")
            ch = r.get("chg") or {}
            ca = r.get("chg_agent_ms") or {}
            cu = r.get("chg_agent_cpu_ms") or {}
            cf = r.get("chg_agent_full_ms")
            m = r.get("mem") or {}
            L.append("| %s | %d | %s / %s | %s | %s | %s | %s / %s | %s / %s%s | %s | %s | %s | %s |" %
                     (mode, n, fmt(b, 0), fmt(fb, 0),
                      "%s [%s..%s]" % (fmt(bp["median"], 3), fmt(bp["min"], 3), fmt(bp["max"], 3))
                      if bp else "-",
                      fmt(r.get("sync_wall_s"), 2),
                      fmt(r.get("sync_agent_ms")), fmt(ch.get("p50_ms")), fmt(ch.get("p99_ms")),
                      fmt(ca.get("p50")), fmt(ca.get("p99")),
                      (" (%s)" % ca["n"] if "n" in ca else " (all syncs)") +
                      (" [%s / %s]" % (fmt(cu.get("p50"), 3), fmt(cu.get("p99"), 3))
                       if cu.get("n") else ""),
                      "%s (%s)" % (fmt(cf.get("max")), cf.get("n")) if cf else "-",
                      fmt(m.get("slab_per_service_b"), 0) if n > 1 else "-",
                      fmt(m.get("slab_per_backend_b"), 0) if n > 1 else "-",
                      fmt(r.get("agent_rss_mib"))))
    big = res.get("big") or {}
    if big:
        k = big.get("kpx") or {}
        some = next(iter(big.values()))
        L += ["", "## Full sync from an empty node: %s Services x %s endpoints" %
              (some.get("services"), some.get("endpoints")), "",
              "Wall: agent start to the syncs that set every Service; API lists: agent start to "
              "its last list (the test API server's share, the same for every mode); agent sync: "
              "the syncs' own duration_ms (count). Probe: a connection to the last Service's VIP "
              "from the client netns, answered by a pod netns.", "",
              "| mode | wall s | API lists s | agent sync ms (syncs) | vs kpx (agent sync) | "
              "probe | slab delta MiB | agent peak RSS MiB |",
              "|---|---|---|---|---|---|---|---|"]
        for mode in [m for m in MODES if m in big] + [m for m in big if m not in MODES]:
            r = big[mode]
            if r.get("capped"):
                why = r["capped"]
                L.append("| %s | %s: %s | | | | | | |" %
                         (mode, "> cap" if why.startswith("sync >") else "failed", why))
                continue
            sl = r.get("slab") or []
            L.append("| %s | %s | %s | %s (%s) | %s | %s | %s | %s |" %
                     (mode, fmt(r.get("sync_wall_s"), 2), fmt(r.get("list_s"), 2),
                      fmt(r.get("sync_agent_ms")), fmt(r.get("syncs")),
                      fmt(ratio(r.get("sync_agent_ms"), k.get("sync_agent_ms")), 1),
                      r.get("probe"),
                      fmt((sl[1] - sl[0]) / 1048576.0, 1) if len(sl) == 2 else "-",
                      fmt(r.get("agent_rss_mib"))))
    L += ["", "## Targets", ""]
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
    meta, floor, modes, big = load(raw)
    memory(modes)
    res = {"date": arg("--date") or
           datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": machine(), "quick": "--quick" in sys.argv, "wall_s": wall,
           "meta": meta, "floor": floor, "modes": modes, "big": big,
           "loadavg": (arg("--loadavg") or open("/proc/loadavg").read()).split()[:3],
           "commit": arg("--commit"), "note": arg("--note")}
    res["derived"] = derive(floor, modes)
    res["targets"] = targets(floor, modes, big, meta)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "bench.md"), "w") as f:
        f.write(markdown(res))
    plot(res, out)
    print(markdown(res))


if __name__ == "__main__":
    main()
