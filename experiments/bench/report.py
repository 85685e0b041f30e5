#!/usr/bin/env python3
"""report.py -- every benchmark table, computed from the files of results/bench/.

Each table is a function of the committed CSV files, printed as Markdown.
A cell that summarises repetitions is their median with its 95%
distribution-free interval in brackets (order statistics; with fewer than 6
runs [min, max], its coverage printed beside it), beside the number of runs
behind it (analysis/stats.py, the same for the campaign figures); hang
rates carry their Clopper-Pearson interval.  Table `provenance` lists every result file with
what its sidecar NAME.meta says made it (scripts/provenance: revision and
dirty flag, MPI and patches, date, host shape, load, command), which
`make report` writes into results/bench/README.md.  The benchmark scripts print their tables with it, and the
documents carry them in marked regions that it rewrites, so no number in a
table is ever typed:

    <!-- report: TABLE [TABLE...] -->
    ... written by report.py ...
    <!-- end report -->

  report.py print [TABLE ...] [--dir DIR] [--file CSV]   tables to stdout (default: all)
  report.py files                                        the documents with a marked region
  report.py update [FILE ...]                            rewrite the marked regions of FILE
  report.py check [FILE ...]                             exit 1 if a region is out of date

Without FILE: every Markdown file of README.md, docs/ and results/ that
holds a marked region.  `make report` updates them all;
tests/scripts/test_report.sh checks that they match the committed
results.  Table `loc`
counts lines of the recovery code in kvstore/ instead of a result file:
`check` leaves it out (an edit of recovery code is not a stale result).
"""
import argparse
import collections
import fnmatch
import csv
import importlib.util
import math
import os
import re
import shlex
import statistics
import subprocess
import sys

import report_taskapp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def analysis_module(name):
    """analysis/NAME.py, loaded by its path (one definition of the
    statistics for tables and figures; no sys.path edits)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "analysis", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


analysis_module("pyfind").ensure(("numpy", "scipy"))  # a python3 with Debian's numpy and scipy
stats = analysis_module("stats")
benchfiles = analysis_module("benchfiles")
VARIANTS = ("recreate-copy", "recreate-inplace", "recreate-free", "spare")
FT_VARIANTS = ("proposed", "online")  # on the patched fault-tolerant RMA
HISTORY_OUTCOMES = ("pass", "lost", "nonlinearizable", "divergent", "failed", "crashed", "hung",
                    "aborted")
BENCH = os.path.join(ROOT, "results", "bench")  # --dir replaces it
OVERRIDE = {}  # file name -> the path --file gave for it


def bench_path(name):
    """Where result file name is: the path --file gave for it, or BENCH/name."""
    return OVERRIDE.get(name) or os.path.join(BENCH, name)


def meta_path(csv_name):
    """NAME.meta beside NAME.csv (bench_path)."""
    return bench_path(csv_name)[:-len(".csv")] + ".meta"


def rows(name):
    path = bench_path(name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def nums(values):
    return [float(v) for v in values if v not in ("", "NA", None)]


def med(values):
    vals = nums(values)
    return statistics.median(vals) if vals else float("nan")


def ci(values, fmt="{:.1f}", scale=1.0):
    """'median [lo, hi]' of the values (NA without any)."""
    return stats.text(stats.summary(nums(values)), fmt, scale)


def kilo(values):
    """A throughput cell in thousands: '1488k [1450k, 1510k]', '3.5k [3.1k, 3.9k]'."""
    return ci(values, "{:.1f}k" if med(values) < 1e5 else "{:.0f}k", 1e-3)


def hang_rate(hung, runs):
    r, lo, hi = stats.rate(hung, runs)
    return "NA" if r is None else f"{100 * r:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"


def paired(a, b):
    """a[k] / b[k] for every repetition k both have, with numbers on both sides."""
    return [float(a[k]) / float(b[k]) for k in a if k in b and len(nums([a[k], b[k]])) == 2 and float(b[k]) > 0]


def table(head, body):
    """Markdown table lines from a header list and rows of cells."""
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return out + [""]


def load_of(x):
    """A row's 1-minute load right before its run: load_before (cells.sh),
    in older files load_1min."""
    return x.get("load_before") or x.get("load_1min", "NA")


def load_line(r, name):
    """How busy the machine was right before the runs of r (their
    busy_before and load_before columns, cells.sh), against its cores."""
    lb = nums([x.get("load_before") for x in r])
    if not lb:
        return f"The load of each run was not recorded ({name} predates the load columns; its record has the load at its start)."
    host = sidecar(name).get("host", "")
    cores = int(host.split()[0]) if host[:1].isdigit() else 0
    busy = nums([x.get("busy_before") for x in r])
    if busy:  # cells.sh waits for idle cores: the 1-minute load still counts the runs before
        over = f"; {sum(v > cores / 4 for v in busy)} of {len(busy)} started with more than a quarter of the {cores} cores busy" if cores else ""
        return (f"Cores busy in the second before each run: median {statistics.median(busy):.2f}, highest {max(busy):.2f}{over} "
                f"(1-minute load before: median {statistics.median(lb):.2f}).")
    over = f"; {sum(v > cores for v in lb)} of {len(lb)} runs started above the {cores} cores" if cores else ""
    return f"Load before each run: median {statistics.median(lb):.2f}, highest {max(lb):.2f}{over}."


def store_vs_raw():
    """store-vs-raw.csv: a store call against the raw RMA it needs, per
    launch (a repetition: the median of its rounds); the ratio is taken per
    launch (store and raw timed in the same one).  Older files have one
    launch and no variant (recreate-copy ran)."""
    r = rows("store-vs-raw.csv")
    if not r:
        return []
    g = collections.defaultdict(list)
    for x in r:
        g[(x["operation"], x["backend"], x.get("variant") or "recreate-copy", x["ranks"])].append(x)
    t = targets("store-vs-raw.csv").get("ratio")
    body = [[op, b, v, n, len(xs), ci([x["store_us"] for x in xs], "{:.3f}"), ci([x["raw_us"] for x in xs], "{:.3f}"),
             ci([x["ratio"] for x in xs], "{:.2f}"),
             verdict(stats.summary([x["ratio"] for x in xs]), t)] for (op, b, v, n), xs in g.items()]
    return table(["operation", "backend", "variant", "ranks", "launches", "store (us)", "raw RMA (us)", "ratio",
                  "target"], body) + [target_line(t, [row[-1] for row in body]) + " " + load_line(r, "store-vs-raw.csv"), ""]


def hotpath():
    """hotpath.csv: the local steps of a read, ns per call, per launch (a
    repetition: the median of its rounds).  Older files have one launch."""
    r = rows("hotpath.csv")
    if not r:
        return []
    g = collections.defaultdict(list)
    for x in r:
        g[(x["step"], x["ranks"], x["replicas"])].append(x)
    return table(["step", "ranks", "replicas", "ns per call", "launches", "rounds each"],
                 [[st, n, rp, ci([x["ns_per_call"] for x in xs], "{:.2f}"), len(xs), xs[0]["rounds"]]
                  for (st, n, rp), xs in g.items()]) + [load_line(r, "hotpath.csv"), ""]


def readpath_gap():
    """hotpath.csv beside store-vs-raw.csv: the local steps of a get (hash,
    placement of 2 replicas on 2 ranks, decode), each less the empty loop,
    summed, against what a get of recreate-copy on allocate (osc/sm) costs
    above its raw get; medians over launches."""
    hp = rows("hotpath.csv")
    gets = [x for x in rows("store-vs-raw.csv") if x["operation"] == "get" and x["backend"] == "allocate"
            and (x.get("variant") or "recreate-copy") == "recreate-copy" and x["ranks"] == "2"]
    step = lambda st, n="", rp="": med([x["ns_per_call"] for x in hp  # noqa: E731
                                        if x["step"] == st and x["ranks"] == n and x["replicas"] == rp])
    if not hp or not gets:
        return []
    why = left_out("The sum of the read path's steps against the store's get", "hotpath.csv", "store-vs-raw.csv")
    if why:
        return [why, ""]
    parts = sum(step(*s) - step("baseline") for s in (("hash",), ("place", "2", "2"), ("decode",)))
    gap = med([(float(x["store_us"]) - float(x["raw_us"])) * 1e3 for x in gets])
    if parts != parts or gap != gap:
        return []
    than = "more than" if parts > gap else "less than" if parts < gap else "as much as"
    return [f"Each timed alone and less the empty loop, the hash, the placement (2 ranks, 2 replicas) and the "
            f"decoding add up to {parts:.0f} ns, {than} the {gap:.0f} ns by which a get of `recreate-copy` on "
            f"`allocate` exceeds its raw get (medians over launches).", ""]


def recovery(name="recovery.csv"):
    r = rows(name)
    if not r:
        return []
    groups = {}
    for x in r:
        groups.setdefault((x["variant"], int(x["ranks"]), int(x["pairs"])), []).append(x)
    body, hung_all, lost_all = [], 0, 0
    for (v, n, p), g in sorted(groups.items()):
        ok = [x for x in g if x["hang"] == "no"]
        ms = lambda col: ci([x[col] for x in ok], scale=1e-3)  # noqa: E731
        lost = sum(int(x["lost"]) for x in ok if x["lost"] not in ("", "NA"))
        hung_all += len(g) - len(ok)
        lost_all += lost
        body.append([v, n, p, len(g), len(g) - len(ok), ms("detect_us"), ms("windows_us"),
                     ms("rereplicate_us"), ms("total_us"), lost])
    out = table(["variant", "ranks", "pairs", "runs", "hung", "detect (ms)", "windows (ms)",
                 "re-replicate (ms)", "total excl. detect (ms)", "lost in sample"], body)
    out += [f"{len(r)} runs: {hung_all} hung, {lost_all} pairs of the samples lost. Each time is the "
            f"median of the runs that did not hang, its {stats.INTERVAL} in brackets. " + load_line(r, name), ""]
    ts, most = targets(name), max(p for _, _, p in groups)
    for q, scope in (("total_us", lambda p: p == most), ("detect_us", lambda p: True)):
        if q in ts:
            out += [target_line(ts[q], [verdict(stats.summary(nums([x[q] for x in g if x["hang"] == "no"])), ts[q])
                                        for (v, n, p), g in sorted(groups.items()) if scope(p)]), ""]
    if not ts:
        out += [target_line(None, []), ""]
    return out


def recovery_profile():
    """recovery-profile.csv (BENCH=recovery-profile make bench): re-replication's
    processor time per survivor by part, median over the runs; the runs ran
    under perf, which slows them (the wall times are the runs' own)."""
    r = rows("recovery-profile.csv")
    if not r:
        return []
    parts, window, wall = collections.defaultdict(list), [], {}
    for x in r:
        if x["part"] == "window (wall)":
            window.append(float(x["cpu_ms"]))
        else:
            parts[x["part"]].append(x)
        wall[x["repetition"]] = float(x["rereplicate_us"]) / 1e3
    body = [[p, ci([x["cpu_ms_per_survivor"] for x in g]), f"{med([x['share'] for x in g]):.3f}"]
            for p, g in sorted(parts.items(), key=lambda kv: -med([x["cpu_ms_per_survivor"] for x in kv[1]]))]
    v = r[0]
    out = table(["part", "processor ms per survivor", "share of the window's samples"], body)
    return out + [f"{v['variant']}, {v['ranks']} ranks x {v['pairs']} pairs, {len(wall)} runs under perf: the "
                  f"window (first to last sample under kvr_rereplicate) {ci(window)} ms of wall time on "
                  f"{(sidecar('recovery-profile.csv') or {}).get('host', '?').split(',')[0]}, re-replication {ci(list(wall.values()))} ms (bench_recovery's "
                  f"maximum over the survivors). Medians, each with its {stats.INTERVAL} in brackets.", ""]


FLOOR_PHASES = ("windows", "rereplicate", "total")


def recovery_floor():
    """recovery-floor.csv: each recovery phase beside what it cannot avoid,
    measured on the same survivors in the same run (bench_recovery.c)."""
    r = rows("recovery-floor.csv")
    if not r:
        return []
    groups = collections.defaultdict(list)
    for x in r:
        groups[(x["variant"], int(x["ranks"]), int(x["pairs"]), x["phase"])].append(x)
    key = lambda kv: (kv[0][0], kv[0][1], kv[0][2], FLOOR_PHASES.index(kv[0][3]))  # noqa: E731
    body = []
    for (v, n, p, ph), g in sorted(groups.items(), key=key):
        ms = lambda col: ci([x[col] for x in g], scale=1e-3)  # noqa: E731
        first = ms("memcpy_first_us") if ph == "windows" and "memcpy_first_us" in g[0] else "-"
        parts = "-"
        if ph == "rereplicate" and "scan_us" in g[0]:
            med = lambda col: "{:.1f}".format(statistics.median(float(x[col]) for x in g) / 1e3)  # noqa: E731
            parts = " / ".join(med(c) for c in ("scan_us", "exchange_us", "insert_us"))
        body.append([v, n, p, ph, len(g), ms("recovery_us"), ms("floor_us"),
                     ci([x["ratio"] for x in g], "{:.2f}"), first, parts])
    out = table(["variant", "ranks", "pairs", "phase", "runs", "recovery (ms)", "floor (ms)",
                 "recovery / floor", "first copy (ms)", "scan / exchange / insert (ms)"], body)
    return out + ["Floors: windows = allocating a window of the table's size + a memcpy of the table "
                  "into it, pages already written; rereplicate = one MPI_Alltoallv of the bytes "
                  "re-replication sent; total = all three (detection excluded). First copy: the same "
                  "memcpy into the fresh window, page faults included. Scan / exchange / insert: the medians of "
                  "re-replication's parts (the scan of the local table with the lock clearing and the "
                  "packing, less the sending and inserting done during it; the exchange: sending, "
                  "waiting for room and for arrivals, whose last ones wait for the slowest scan, and "
                  "the sharing of the affected homes; the inserts). Medians of the runs, each with its "
                  f"{stats.INTERVAL} in brackets; the ratio is taken per run. "
                  + load_line(r, "recovery-floor.csv"), ""] + floor_target(groups, "recovery-floor.csv")


class Target:
    """A target a result file's record states (cells.sh's cells_target):
    QUANTITY at most|at least NUMBER, then its scope and rule, in words."""
    def __init__(self, line):
        q, op1, op2, n, _ = (line + " ").split(" ", 4)
        self.quantity, self.at_least, self.number, self.text = q, (op1, op2) == ("at", "least"), float(n), line


def targets(name):
    """{quantity: Target} of the target lines of result file name's record
    (none in files made before targets were written there)."""
    return {t.quantity: t for t in map(Target, benchfiles.values(record_path(name), "target"))}


def verdict(s, t):
    """A cell against Target t, from its Summary: met when the interval
    lies on the target's side (at or under a most, at or over a least),
    missed when beyond, unsure when it straddles it; a single run is
    judged by its value; "no target" when the record states none."""
    if t is None:
        return "no target"
    if s.median is None:
        return "NA"
    lo, hi = (s.median, s.median) if s.lo is None else (s.lo, s.hi)
    if t.at_least:
        lo, hi = -hi, -lo
    n = -t.number if t.at_least else t.number
    return "met" if hi <= n else "missed" if lo > n else "unsure"


def target_line(t, verdicts):
    """The sentence under a table judged by Target t: the target as the
    record states it and how many cells met it."""
    if t is None:
        return "No target in this file's record (it was made before the benchmarks wrote their targets there)."
    c, n = collections.Counter(verdicts), len(verdicts)
    return (f"Target, stated in the file's record before its first run: {t.text}. "
            f"Met in {c['met']} of {n} cells" + (f", unsure in {c['unsure']}" if c["unsure"] else "") + "."
            + (f" The {n} verdicts are {n} comparisons, each by its own interval, not adjusted for their number: "
               "where an interval's coverage is 95%, one in twenty misses its true median by chance alone."
               if n > 1 else ""))


def floor_target(groups, name):
    """The target's verdict in every cell (variant x ranks at the most pairs)."""
    cells = [k for k in groups if k[3] == "total"]
    if not cells:
        return []
    t = targets(name).get("ratio")
    pairs = max(k[2] for k in cells)
    body = []
    for k in sorted(c for c in cells if c[2] == pairs):
        s = stats.summary([x["ratio"] for x in groups[k]])
        body.append([k[0], k[1], stats.text(s, "{:.2f}"), verdict(s, t)])
    return [f"At the most pairs measured ({pairs}): " + target_line(t, [b[-1] for b in body]), ""] + \
        table(["variant", "ranks", "recovery / floor", "target"], body) + [""]


def recovery_slope():
    """recovery-floor.csv: how recovery (total, detection excluded) grows
    with the pairs and the ranks: per variant and rank count, the exponent
    b of time ~ pairs^b (least squares on the logs of the medians; 1 is
    linear) for recovery and for its floor, and the cost per 100,000
    pairs between the smallest and largest size; per variant, the median
    at the largest size at the fewest and the most ranks."""
    cells = collections.defaultdict(lambda: collections.defaultdict(lambda: ([], [])))
    for x in rows("recovery-floor.csv"):
        if x["phase"] == "total":
            c = cells[(x["variant"], int(x["ranks"]))][int(x["pairs"])]
            c[0].append(float(x["recovery_us"]) / 1e3)
            c[1].append(float(x["floor_us"]) / 1e3)

    def exponent(ps, ms):
        lx, ly = [math.log(p) for p in ps], [math.log(m) for m in ms]
        mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
        return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)

    body, at_largest = [], collections.defaultdict(dict)
    for (v, n), by in sorted(cells.items()):
        ps = sorted(by)
        if len(ps) < 2:
            continue
        rec = [statistics.median(by[p][0]) for p in ps]
        flo = [statistics.median(by[p][1]) for p in ps]
        body.append([v, n, f"{ps[0]}-{ps[-1]}", sum(len(by[p][0]) for p in ps), f"{exponent(ps, rec):.2f}",
                     f"{exponent(ps, flo):.2f}", f"{(rec[-1] - rec[0]) / (ps[-1] - ps[0]) * 1e5:.1f}"])
        at_largest[v][n] = (ps[-1], rec[-1])
    if not body:
        return []
    out = table(["variant", "ranks", "pairs", "runs", "recovery ~ pairs^b", "floor ~ pairs^b",
                 "recovery per 100k pairs (ms)"], body)
    growth = []
    for v, by_n in sorted(at_largest.items()):
        (n0, (p0, m0)), (n1, (p1, m1)) = min(by_n.items()), max(by_n.items())
        if n0 != n1 and p0 == p1:
            growth.append(f"{v} {m0:.0f} ms at {n0} ranks, {m1:.0f} ms at {n1} ({m1 / m0:.2f}x)")
    if growth:
        out += [f"With the ranks, at {p0} pairs: " + "; ".join(growth) + ".", ""]
    return out


def ycsb():
    r = rows("ycsb.csv")
    if not r:
        return []
    # t[(workload, ranks)][column][repetition] = throughput; the columns are
    # the variants, and none once per number of copies (older files have
    # no replicas column: their none kept one copy, the variants two).
    t = {}
    for x in r:
        col = x["variant"]
        if col == "none":
            col = f"none r={x.get('replicas') or 1}"
        runs = t.setdefault((x["workload"], int(x["ranks"])), {}).setdefault(col, {})
        runs[x.get("repetition") or str(len(runs))] = x["throughput_ops_per_s"]
    cols = [c for c in ("none r=1", "none r=2", *VARIANTS) if any(c in v for v in t.values())]
    out = table(["workload", "ranks", *cols, "runs per cell"],
                [[w.upper(), n] + [kilo(list(c.get(v, {}).values())) for v in cols]
                 + [min(len(nums(c.get(v, {}).values())) for v in cols)] for (w, n), c in sorted(t.items())])

    def cost(c, base, v):  # the median of base / v - 1 over the repetitions both have, with its CI
        return stats.text(stats.summary([q - 1 for q in paired(c.get(base, {}), c.get(v, {}))]), "{:+.0f}%", 100)
    base = "none r=2" if "none r=2" in cols else "none r=1"
    out += [f"Failure-free cost on YCSB B, paired by repetition (the median of `{base}`'s throughput / "
            f"the variant's - 1, {stats.INTERVAL})"
            + (", and the second copy's own cost (`none r=1` / `none r=2` - 1):" if base == "none r=2" else ":"), ""]
    for (w, n), c in sorted(t.items()):
        if w == "b" and base in c:
            parts = [f"{v} {cost(c, base, v)}" for v in VARIANTS if v in c]
            if base == "none r=2" and "none r=1" in c:
                parts.append(f"second copy {cost(c, 'none r=1', 'none r=2')}")
            out.append(f"- {n} ranks: " + ", ".join(parts))
    return out + ["", load_line(r, "ycsb.csv"), ""]


def firsttouch():
    """bench_firsttouch: each round's time over the launches (older files:
    one launch, a row per round)."""
    r = rows("firsttouch.csv")
    g = {}
    for x in r:
        g.setdefault((int(x["round"]), x["megabytes"]), []).append(x)
    body = [[rd, mb, ci([x["ms"] for x in xs]), ci([x["gb_per_s"] for x in xs], "{:.2f}"), len(xs)]
            for (rd, mb), xs in sorted(g.items())]
    return table(["round", "MB", "ms", "GB/s", "launches"], body) + [load_line(r, "firsttouch.csv"), ""] if r else []


def ftcost():
    """bench_ftcost: each variant against none in the same run, turn by turn."""
    r = rows("ftcost.csv")
    if not r:
        return []
    g = {}
    for x in r:
        g.setdefault((x["workload"], int(x["ranks"]), x["variant"]), []).append(x)
    t = targets("ftcost.csv").get("cost")
    body = [[w.upper(), n, v, kilo([x["none_ops_per_s"] for x in xs]), kilo([x["variant_ops_per_s"] for x in xs]),
             stats.text(stats.summary(nums([x["cost"] for x in xs])), "{:+.1f}%", 100), len(xs),
             verdict(stats.summary(nums([x["cost"] for x in xs])), t)]
            for (w, n, v), xs in sorted(g.items())]
    return table(["workload", "ranks", "variant", "none (ops/s)", "variant (ops/s)",
                  "cost (none / variant - 1)", "turn pairs", "target"], body) + [
        target_line(t, [b[-1] for b in body]) + " " + load_line(r, "ftcost.csv"), ""]


def killed_rank0(victims):
    return any(v.split("@")[0] == "0" for v in victims.split(";") if v)


def soak_history(groups):
    body, total = [], collections.Counter()
    for (v, b), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out = collections.Counter(x["outcome"] for x in g)
        total.update(out)
        total["runs"] += len(g)
        sc = collections.Counter(x["scenario"] for x in g)
        body.append([v, b, len(g), *(out[o] for o in HISTORY_OUTCOMES), hang_rate(out["hung"], len(g)),
                     sum(int(x["orphans"] or 0) for x in g),
                     sum(killed_rank0(x["victims"]) for x in g), sum(int(x["ops"] or 0) for x in g),
                     ", ".join(f"{k} {n}" for k, n in sc.items())])
    out = table(["variant", "backend", "runs", *HISTORY_OUTCOMES, "hang rate [95% CI]", "orphans", "rank 0 killed",
                 "operations", "scenarios (runs)"], body)
    return out + [f"{total['runs']} runs: " + ", ".join(f"{total[o]} {o}" for o in HISTORY_OUTCOMES), ""]


def soak(name="soak.csv"):
    """soak.csv (make soak); hangs-rdma: every hangs-rdma*.csv (SET=hangs-rdma
    make soak writes hangs-rdma.csv; sets run apart keep their own suffix)."""
    if name == "hangs-rdma.csv" and os.path.isdir(BENCH) and name not in OVERRIDE:
        r = [x for n in sorted(os.listdir(BENCH)) if n.startswith("hangs-rdma") and n.endswith(".csv")
             for x in rows(n)]
    else:
        r = rows(name)
    if not r:
        return []
    groups = {}
    for x in r:
        groups.setdefault((x["variant"], x["backend"]), []).append(x)
    if "victims" in r[0]:  # the history soak
        return soak_history(groups)
    body = []
    for (v, b), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out = [x["outcome"] for x in g]
        sc = collections.Counter(x.get("scenario", "single") for x in g)  # old files: single only
        body.append([v, b, len(g), out.count("pass"), out.count("fail"), out.count("hang"),
                     hang_rate(out.count("hang"), len(g)), ", ".join(f"{k} {n}" for k, n in sc.items())])
    return table(["variant", "backend", "runs", "passed", "failed", "hung", "hang rate [95% CI]",
                  "scenarios (runs)"], body)


def checkpoint_cost(r):
    cost = {}
    for x in r:
        if x["mode"] == "cost":
            cost.setdefault((int(x["ranks"]), int(x["pairs_per_rank"])), []).append(x)
    return table(["ranks", "pairs per rank", "MB per rank", "checkpoint (s)", "checkpoint MB/s, all ranks",
                  "plain write+fsync MB/s, all ranks", "runs"],
                 [[n, p, f"{med([x['bytes'] for x in g]) / n / 1e6:.1f}", ci([x["ckpt_s"] for x in g], "{:.3f}"),
                   ci([x["ckpt_mb_s"] for x in g], "{:.0f}"), ci([x["disk_mb_s"] for x in g], "{:.0f}"), len(g)]
                  for (n, p), g in sorted(cost.items())]) if cost else []


def checkpoint_overhead(r):
    ov = [x for x in r if x["mode"] == "overhead"]
    base = med([x["ops_per_s"] for x in ov if float(x["interval_s"]) == 0])
    if not ov or base != base:
        return []
    body = []
    for iv in sorted({float(x["interval_s"]) for x in ov}, reverse=True):
        g = [x["ops_per_s"] for x in ov if float(x["interval_s"]) == iv]
        t = med(g)
        body.append(["none" if iv == 0 else f"{iv:g}", ci(g, "{:.0f}"), f"{(base / t - 1) * 100:+.1f}%", len(g)])
    return table(["checkpoint interval (s)", "throughput (ops/s)", "overhead (of the medians)", "runs"], body)


def checkpoint_against_recovery(rs, rec):
    """After a kill, 4 ranks: how long until serving again, both ways."""
    cells = []
    for per_rank in (25000, 250000):
        g = [x for x in rs if int(x["pairs_per_rank"]) == per_rank]
        cells.append(med([float(x["job_start_s"]) + float(x["reload_s"]) + float(x["resume_s"]) for x in g]))
    body = [["checkpoint/restart (kill 0.5 s after a checkpoint)", f"{cells[0]:.2f}", f"{cells[1]:.2f}",
             f"{med([x['lost_writes'] for x in rs]):.0f} (median)"]]  # medians: the intervals are in the tables around
    for v in VARIANTS:
        cells = []
        for pairs in (100000, 1000000):
            g = [x for x in rec if x["variant"] == v and x["ranks"] == "4" and int(x["pairs"]) == pairs
                 and x["hang"] == "no"]
            cells.append(med([(float(x["detect_us"]) + float(x["total_us"])) / 1e6 for x in g]))
        body.append([f"{v} (detection + recovery)", f"{cells[0]:.2f}", f"{cells[1]:.2f}", 0])
    return table(["after a kill, 4 ranks", "100k pairs (s)", "1M pairs (s)", "acknowledged writes lost"], body)


def checkpoint():
    r = rows("checkpoint.csv")
    if not r:
        return []
    out = checkpoint_cost(r) + checkpoint_overhead(r)
    rs = [x for x in r if x["mode"] == "restart"]
    rec = rows("recovery.csv")
    why = left_out("The comparison of the time after a kill with the recovery variants'", "checkpoint.csv", "recovery.csv")
    if rs and rec:
        out += [why, ""] if why else checkpoint_against_recovery(rs, rec)
    if rs:
        out += table(["pairs per rank (4 ranks)", "job start (s)", "reload (s)", "resume (s)", "writes lost", "runs"],
                     [[p, ci([x["job_start_s"] for x in g], "{:.2f}"), ci([x["reload_s"] for x in g], "{:.3f}"),
                       ci([x["resume_s"] for x in g], "{:.4f}"), ci([x["lost_writes"] for x in g], "{:.0f}"), len(g)]
                      for p in sorted({int(x["pairs_per_rank"]) for x in rs})
                      for g in [[x for x in rs if int(x["pairs_per_rank"]) == p]]])
    return out


def proposed():
    """Variant proposed against the workarounds, measured side by side."""
    out, rec = [], rows("proposed.csv")
    if rec:
        out += recovery("proposed.csv")
        cells = sorted({(int(x["ranks"]), int(x["pairs"])) for x in rec}, key=lambda c: (c[1], c[0]))
        others = sorted({x["variant"] for x in rec} - {"proposed"})
        t = lambda v, n, p: med([x["total_us"] for x in rec if x["variant"] == v and int(x["ranks"]) == n  # noqa: E731
                                 and int(x["pairs"]) == p and x["hang"] == "no"])
        out += table(["ranks", "pairs"] + [f"{v} / proposed, median recovery" for v in others],
                     [[n, p] + [f"{t(v, n, p) / t('proposed', n, p):.2f}" for v in others] for n, p in cells])
    ov = rows("proposed-overhead.csv")
    if ov:
        body, t = [], targets("proposed-overhead.csv").get("proposed/recreate-copy")
        for wl, n in sorted({(x["workload"], int(x["ranks"])) for x in ov}):
            g = lambda v: [x["throughput_ops_per_s"] for x in ov  # noqa: E731
                           if x["variant"] == v and x["workload"] == wl and int(x["ranks"]) == n]
            none, copy, prop = med(g("none")), med(g("recreate-copy")), med(g("proposed"))
            # paired: each repetition's proposed run against the recreate-copy run beside it
            by_rep = lambda v: {x.get("repetition") or str(i): x["throughput_ops_per_s"]  # noqa: E731
                                for i, x in enumerate(y for y in ov if y["variant"] == v and y["workload"] == wl
                                                      and int(y["ranks"]) == n)}
            ratios = paired(by_rep("proposed"), by_rep("recreate-copy"))
            body.append([f"YCSB {wl.upper()}", n, kilo(g("none")),
                         f"{kilo(g('recreate-copy'))} ({(copy / none - 1) * 100:+.1f}%)",
                         f"{kilo(g('proposed'))} ({(prop / none - 1) * 100:+.1f}%)",
                         stats.text(stats.summary(ratios), "{:.3f}"), len(g("proposed")),
                         verdict(stats.summary(ratios), t)])
        copies = "/".join(sorted({x.get("replicas") or "1" for x in ov if x["variant"] == "none"}))
        out += table(["workload", "ranks", f"none, r = {copies} (ops/s)", "recreate-copy", "proposed",
                      "proposed / recreate-copy, paired by repetition", "runs each", "target"], body)
        out += [target_line(t, [b[-1] for b in body]) + " " + load_line(ov, "proposed-overhead.csv"), ""]
    return out


# What each transport compares (redis.csv's transport column; older files
# have none: their store ran on shared memory and their Redis over TCP).
TRANSPORTS = {"shm": "shared memory: the store's osc/sm windows, Redis's Unix socket",
              "tcp": "TCP: the store's osc/rdma windows over btl/tcp, Redis's loopback port",
              "mixed": "older file: the store on shared memory against Redis over TCP"}


def redis():
    """The store against Redis: failure-free side by side over the same
    transport, with redis-benchmark's ceilings from the same runs, and the
    failovers."""
    r = rows("redis.csv")
    if not r:
        return []
    ff = {}
    for x in r:  # older files have no ceiling, load or transport columns: NA, and "mixed"
        if x["kind"] == "failure-free":
            t = x.get("transport") or "mixed"
            ff.setdefault((t, x["workload"], int(x["ranks"])), {}).setdefault(x["system"], []).append(x)
    col = lambda g, c: [x.get(c, "NA") for x in g]  # noqa: E731
    ratio = lambda a, b: "NA" if not nums(a) or not nums(b) else f"{med(a) / med(b):.2f}"  # noqa: E731
    body = []
    for (t, w, n), c in sorted(ff.items()):
        st, rd = c.get("store", []), c.get("redis", [])
        loads = nums([load_of(x) for x in st + rd])
        body.append([t, w.upper(), n, kilo(col(st, "throughput_ops_per_s")), kilo(col(rd, "throughput_ops_per_s")),
                     kilo(col(rd, "ceiling_ops_per_s")), kilo(col(rd, "pipelined_ops_per_s")),
                     ratio(col(rd, "throughput_ops_per_s"), col(rd, "ceiling_ops_per_s")),
                     ratio(col(st, "throughput_ops_per_s"), col(rd, "throughput_ops_per_s")) if t != "mixed"
                     else "NA (not one transport)",
                     f"{med(col(st, 'p50_us')):.2f} / {med(col(st, 'p99_us')):.0f}" if st else "NA",
                     f"{med(col(rd, 'p50_us')):.1f} / {med(col(rd, 'p99_us')):.0f}" if rd else "NA",
                     f"{len(st)} / {len(rd)}", f"{max(loads):.2f}" if loads else "NA"])
    out = table(["transport", "workload", "ranks", "store (ops/s)", "Redis (ops/s)", "ceiling, one request at a time",
                 "ceiling, pipelined 16", "Redis / ceiling", "store / Redis", "store p50 / p99 (us)",
                 "Redis p50 / p99 (us)", "runs (store / Redis)", "highest load"], body)
    out += ["Transports: " + "; ".join(f"{k}, {v}" for k, v in TRANSPORTS.items() if any(t == k for t, _, _ in ff))
            + ". The store / Redis ratio answers what the store gives a program against Redis over the same "
            "transport; the ceilings say what the server gives a client like the driver's (one request at a "
            "time) and what it gives at all (pipelined), so a Redis column near its first ceiling is the "
            "server's limit, not the client's.",
            f"Throughputs are medians of the runs with their {stats.INTERVAL}; the ratios are of the "
            "medians, the latencies medians of the runs' percentiles. The ceilings are redis-benchmark against "
            "the same servers over the same transport in the same run, one client per rank in as many threads, "
            "its GET and SET rates mixed in the workload's shares (writes without WAIT; older files: one "
            "thread, no pipelined column). Load: the highest 1-minute load average before a run of the cell "
            "(NA: not recorded).", ""]
    fo = [x for x in r if x["kind"] == "failover"]
    if fo:
        out += table(["failover run", "ranks", "kill to first write, first rank (ms)",
                      "kill to first write, last rank (ms)", "acknowledged writes lost", "degraded writes", "status"],
                     [[x["repetition"], x["ranks"], x["failover_first_ms"], x["failover_last_ms"], x["acked_lost"],
                       x["degraded_writes"], x["status"]] for x in fo])
        first = [float(x["failover_first_ms"]) for x in fo if x["failover_first_ms"] not in ("", "NA")]
        if first:
            out += [f"{len(fo)} failover{'s' if len(fo) > 1 else ''}: kill to the first acknowledged write on the first rank to write again "
                    f"{ci(first, '{:.0f}')} ms (median [95% CI]), range {min(first):.0f}-{max(first):.0f} ms.", ""]
    return out


def taskapp():
    """A task-parallel application through failures (report_taskapp.py)."""
    return report_taskapp.taskapp_table(rows("taskapp.csv"), table, stats)


def soak_taskapp():
    """The task runtime under kills at random instants (report_taskapp.py)."""
    return report_taskapp.soak_table(rows("soak-taskapp.csv"), table)


MPI_CALL = re.compile(r"\bMPIX?_[A-Z][a-z_]*\s*\(")
# Calls every member must make together: a failure in one stops them all.
COLLECTIVES = {"MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Bcast",
               "MPI_Barrier", "MPI_Ibarrier", "MPI_Comm_dup", "MPI_Comm_split", "MPIX_Comm_shrink",
               "MPIX_Comm_agree", "MPIX_Comm_iagree", "MPI_Win_allocate", "MPI_Win_allocate_shared",
               "MPI_Win_create", "MPI_Win_free"}
# A branch on a status: where the code handles an error.
STATUS_BRANCH = re.compile(r"\b(if|while)\s*\(.*(\brc\b|\bret\b|MPI_SUCCESS|\bKV_OK\b|\bKV_ERR_\w+)")


def c_code(lines):
    """The lines of C source that are not inside or at the start of a
    comment, each as (line, stripped)."""
    in_comment = False
    for line in lines:
        t = line.strip()
        if in_comment:
            in_comment = "*/" not in t
            continue
        if t.startswith("/*"):
            in_comment = "*/" not in t
            continue
        yield line, t


def code_stats(path, only=None, skip=()):
    """Of the C code in path (lines not blank, not comment, none containing a
    word of skip; with only, just those inside the named functions): a
    Counter of its lines, MPI calls, collective MPI calls and branches on a
    status."""
    c, fn = collections.Counter(), None
    for line, t in c_code(open(path)):
        if line[:1].isalpha() and "(" in line and line.rstrip().endswith("{"):
            fn = line.split("(")[0].split()[-1].lstrip("*")
        if not t or t.startswith("//") or any(w in t for w in skip):
            continue
        if only is None or fn in only:
            calls = [m.group(0).rstrip("( ") for m in MPI_CALL.finditer(t)]
            c["lines"] += 1
            c["mpi"] += len(calls)
            c["collective"] += sum(x in COLLECTIVES for x in calls)
            c["errors"] += bool(STATUS_BRANCH.search(t))
        if line.startswith("}"):
            fn = None
    return c


def patch_lines(names):
    """Lines the named Open MPI patches add, comments and blank lines left out."""
    n = 0
    for name in names:
        with open(os.path.join(ROOT, "patches", "openmpi", name)) as f:
            added = (line[1:] for line in f if line.startswith("+") and not line.startswith("+++"))
            n += sum(1 for _, t in c_code(added) if t and not t.startswith(("*", "//")))
    return n


def loc_stats():
    """Recovery code per variant, counted in the source (not a result file):
    the variant's own file, the failure detection only it needs, and the
    recovery every variant shares.  Detection for the workarounds and
    online is the watchdog (detect.c: start, stop, test, alarm, without the
    two hooks variant proposed adds); proposed detects through the window,
    in its own file.  All use detect.c's error classification (kvw_status),
    counted with the shared part.  Online's own code is its file and the
    copy under a write's locks in ops.c (kvo_copy, kvo_push).  Beside the
    lines: the MPI calls in that code, the collective ones, the branches on
    a status, and for the variants on the patched RMA the lines of the Open
    MPI patches behind the features they use (0001-0004: the switch and
    failure state, the window calls, osc/sm, osc/rdma).  {variant: (own,
    watchdog, shared, total Counter, patch lines)}."""
    kv = os.path.join(ROOT, "kvstore")
    det = os.path.join(kv, "detect.c")
    hooks = ("window_failed", "revoke_window")
    watchdog = code_stats(det, only=("kvw_start", "kvw_stop", "kvw_test", "kvw_alarm"), skip=hooks)
    shared = (sum((code_stats(os.path.join(kv, f)) for f in ("recover.c", "rereplicate.c", "stream.c")),
                  collections.Counter())
              + code_stats(det, only=("kvw_is_ft_error", "kvw_failure_known", "kvw_status")))
    features = sorted(f for f in os.listdir(os.path.join(ROOT, "patches", "openmpi"))
                      if f.endswith(".patch") and f[:4] in ("0001", "0002", "0003", "0004"))
    out = {}
    for v in (*VARIANTS, *FT_VARIANTS):
        own = code_stats(os.path.join(kv, "variant_" + v.replace("-", "_") + ".c"))
        if v == "online":
            own += code_stats(os.path.join(kv, "ops.c"), only=("kvo_copy", "kvo_push"))
        w = collections.Counter() if v == "proposed" else watchdog
        out[v] = (own, w, shared, own + w + shared, patch_lines(features) if v in FT_VARIANTS else 0)
    return out


def loc():
    """Recovery code per variant (loc_stats)."""
    body = [[v, own["lines"], w["lines"], sh["lines"], tot["lines"], tot["mpi"], tot["collective"],
             tot["errors"], patch] for v, (own, w, sh, tot, patch) in loc_stats().items()]
    return table(["variant", "its own file", "failure detection (watchdog)", "shared recovery", "total lines",
                  "MPI calls", "collective MPI calls", "branches on a status", "Open MPI patch lines"], body)


def same_code(revisions):
    """Whether kvstore/ and patches/ are the same at every one of the
    revisions (scripts/provenance's, a "-dirty" suffix dropped), by git;
    None when git cannot tell."""
    revs = sorted({r.split("-")[0] for r in revisions if r and r != "NA"})
    for a, b in zip(revs, revs[1:]):
        rc = code_changed(a, b, ("kvstore", "patches"))
        if rc not in (0, 1):
            return None
        if rc == 1:
            return False
    return True


def variants():
    """The recovery variants side by side (README): how often a kill at a
    random instant hung a run (the history soak's kill runs, both backends,
    from the soak file measured last that has the variant: soak.csv or a
    soak-*.csv of its own), the
    worst 10 ms of throughput through a kill against the failure-free rate
    and the time until every pair had its copies again (timeline.csv,
    median [min, max] of its runs), and what the recovery takes to write
    (loc_stats).  The files behind it are named under it with their
    revisions, and whether the store's code and the patches were the same
    at all of them."""
    tl, code = rows("timeline.csv"), loc_stats()
    soak_files = ["soak.csv"] + [n for n in os.listdir(BENCH) if n.startswith("soak-") and n.endswith(".csv")
                                 and n not in ("soak-paced.csv", "soak-taskapp.csv") and not kept(n)]
    last = lambda n: max(benchfiles.values(meta_path(n), "date"), default="")  # noqa: E731
    soak_files.sort(key=last, reverse=True)  # the newest first
    runs = collections.defaultdict(list)
    used, source = set(), {}  # a variant's runs come from the first file that has it
    for n in soak_files:
        for x in rows(n):
            if x.get("scenario") in STRAGGLERS:  # a stop, not a kill
                continue
            if x["variant"] in code and source.setdefault(x["variant"], n) == n:
                runs[x["variant"]].append(x["outcome"])
                used.add(n)
    if not tl:
        return []
    by = collections.defaultdict(list)
    for x in tl:
        if x["outcome"] == "pass":
            by[x["variant"]].append(x)
    body = []
    for v in code:
        g, out = by.get(v, []), runs.get(v, [])
        tot, patch = code[v][3], code[v][4]
        body.append([v, f"{len(out)}", hang_rate(out.count("hung"), len(out)) if out else "NA",
                     ci([x["worst_ratio"] for x in g], "{:.2f}"), ci([x["redundant_ms"] for x in g]),
                     tot["lines"], tot["mpi"], patch])
    files = ["timeline.csv"] + sorted(used)
    revs = {n: benchfiles.revisions(meta_path(n))
            or ["NA"] for n in files}
    same = same_code([r for rs in revs.values() for r in rs])
    said = {True: "kvstore/ and patches/ are the same at these revisions",
            False: "kvstore/ or patches/ changed between these revisions: the columns are of different code",
            None: "git could not compare the revisions"}[same]
    return table(["variant", "soak runs", "hung [95% CI]", "worst 10 ms bin / failure-free",
                  "kill to full redundancy (ms)", "recovery: lines", "MPI calls", "Open MPI patch lines"],
                 body) + ["From " + ", ".join(f"{n} ({', '.join(revs[n])})" for n in files)
                          + f" and the source at hand; {said}."] + [x for x in [machines_note(files)] if x]


# What each history scenario does to the run (tests/history/run.sh), as
# the faults table names it.
FAULTS = {"single": "kill: one rank", "rank0": "kill: rank 0", "double": "kill: two ranks at once",
          "staggered": "kill: two ranks, 0-400 ms apart", "seq": "kill: two ranks, 0.8 s apart",
          "rerep": "kill: one rank, then one inside its recovery", "node": "node loss",
          "stop": "straggler: a rank stopped 0.2-0.8 s", "node-stop": "straggler: a node stopped 0.2-0.8 s",
          "partition": "partition: a node cut off 0.2-0.8 s", "cut": "partition: a node cut off 8 s (lost)",
          "vanish": "vanish: a node stopped and cut off (lost)",
          "daemon": "lost daemon: a node's daemon killed, its ranks spared",
          "slow": "slow link: a node's at 10 mbit/s, 10% loss, 0.5-1.5 s",
          "node2": "node loss: two nodes at once (3 copies)",
          "cascade": "node loss: a second node 20-80 ms into the recovery (3 copies)"}
STRAGGLERS = ("stop", "node-stop", "partition", "slow")  # the scenarios that kill nobody


def faults():
    """Every fault kind the soaks inject, by variant, backend and hosts:
    the history soak on one host (soak.csv) and the soaks across the test
    cluster's hosts (multihost*.csv, their soak rows), those only whose
    kvstore/ and patches/ are the code of soak.csv (the others are named
    under the table); detection, from the fault to the last survivor's
    notice, where the runs measured it."""
    meta = lambda n: benchfiles.revisions(meta_path(n)) or ["NA"]  # noqa: E731
    g = collections.defaultdict(list)
    used, left, history = [], [], []
    soaks = lambda n: [x for x in rows(n) if x.get("kind") == "soak"]  # noqa: E731
    names = sorted(n for n in os.listdir(BENCH) if n.startswith("multihost") and n.endswith(".csv"))
    base = rows("soak.csv")
    for x in base:
        g[(x["scenario"], 1, x["variant"], x["backend"], machine("soak.csv"))].append(
            (x["outcome"], x.get("detect_ms", "NA")))
    if base:
        used.append("soak.csv")
        ref = meta("soak.csv")
    else:  # no soak on one host yet: the code of the newest soak across hosts
        newest = max((n for n in names if soaks(n)), default=None,
                     key=lambda n: max(benchfiles.values(meta_path(n), "date"), default=""))
        if newest is None:
            return []
        ref = meta(newest)
    for n in names:
        r = soaks(n)
        if not r:
            continue
        if kept(n):
            history.append(n)
            continue
        if same_code(ref + meta(n)) is not True:
            left.append(f"{n} ({', '.join(meta(n))})")
            continue
        used.append(n)
        for x in r:
            det = nums([x["detect_us"]])
            g[(x["operation"], int(x["hosts"]), x["variant"], x["backend"], machine(n))].append(
                (x["outcome"], det[0] / 1e3 if det else "NA"))
    order = list(FAULTS)
    body = []
    for (sc, h, v, b, m), out in sorted(g.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order
                                                                    else len(order), kv[0][1:])):
        c = collections.Counter(o for o, _ in out)
        body.append([FAULTS.get(sc, sc), h, v, b, m, len(out), *(c[o] for o in HISTORY_OUTCOMES),
                     hang_rate(c["hung"], len(out)), ci([d for _, d in out], "{:.0f}")])
    notes = ["From " + ", ".join(f"{n} ({', '.join(meta(n))})" for n in used) + "."]
    vanished = [d for (sc, *_), out in g.items() if sc == "vanish" for _, d in out]
    if vanished:
        bound = silent_bound()
        seen = [float(d) for d in vanished if d != "NA"]
        notes.append(f"A vanished node: noticed within the bound of `scripts/kvrun --silent-bound` ({bound} ms) "
                     f"in {sum(d <= float(bound) for d in seen)} of {len(vanished)} runs"
                     + (f", the latest after {max(seen):.0f} ms." if seen else "."))
    if left:
        notes.append("Left out, measured on other code (kvstore/ or patches/ differ): " + ", ".join(left) + ".")
    if history:
        notes.append(f"Kept as history, not in the table (`make stale` says why): {len(history)} files.")
    return table(["fault", "hosts", "variant", "backend", "machine", "runs", *HISTORY_OUTCOMES,
                  "hang rate [95% CI]", "detection (ms)"], body) + [""] + notes


def silent_bound():
    """The detection bound of a vanished node that kvrun's settings give (ms)."""
    return subprocess.run([os.path.join(ROOT, "scripts", "kvrun"), "--silent-bound"], capture_output=True,
                          text=True).stdout.strip() or "NA"


def conformance():
    """conformance.csv (BENCH=conformance make bench): each rule's case
    with the switch on (the patched Open MPI) and off (as released), on
    this host and across the test cluster's (a file without the hosts
    column: this host)."""
    r = rows("conformance.csv")
    if not r:
        return []
    hosts = lambda x: int(x.get("hosts", 1))  # noqa: E731
    by = collections.defaultdict(dict)
    for x in r:
        by[(hosts(x), x["backend"], x["case"])][x["switch"]] = x
    body = []
    for (h, b, case), sw in sorted(by.items()):
        cell = lambda k: (sw[k]["outcome"] + (f": {sw[k]['signature']}" if sw[k]["signature"] else "")  # noqa: E731
                          if k in sw else "NA")
        body.append([f"`{case}`", h, b, cell("on"), cell("off")])
    tot = collections.Counter((hosts(x), x["switch"]) for x in r)
    ok = collections.Counter((hosts(x), x["switch"]) for x in r if x["outcome"] == "pass")
    counts = [f"{h} host{'s' if h > 1 else ''}: switch on {ok[h, 'on']} of {tot[h, 'on']} pass, "
              f"off {ok[h, 'off']} of {tot[h, 'off']}" for h in sorted({k[0] for k in by})]
    return table(["case", "hosts", "backend", "switch on (patched)", "switch off (as released)"], body) + [
        "", "; ".join(counts) + "."]


def sidecar(csv_name):
    """NAME.meta beside NAME.csv (the file --file gave, if it did), as
    analysis/benchfiles.sidecar reads it, or {}."""
    return benchfiles.sidecar(meta_path(csv_name))


def provenance():
    """Every result file and what made it, from its sidecar."""
    if not os.path.isdir(BENCH):
        return []
    body = []
    for name in sorted(n for n in os.listdir(BENCH) if n.endswith(".csv")):
        m = sidecar(name)
        nrows = len(rows(name))
        if not m:
            body.append([f"`{name}`", nrows, "no record (measured before provenance records were kept)",
                         "", "", "", ""])
            continue
        mpi = m.get("mpi", "") + (f", patches: {m['mpi patches']}" if m.get("mpi patches", "none") != "none" else "")
        parts = len(benchfiles.values(meta_path(name), "date"))
        mixed = "; ".join(mixes(name)) or "no"
        body.append([f"`{name}`", nrows, m.get("revision", "?"), m.get("date", "?"), mpi.replace("|", "/"),
                     f"{m.get('host', '?')}; load {m.get('load', '?')}", f"`{m.get('command', '?')}`",
                     parts, mixed])
    return table(["file", "rows", "revision", "date", "MPI", "host", "command", "runs of it", "mixes"], body)


# What a result measures: the code that made its numbers, as git pathspecs
# (scripts/measured-paths, which scripts/provenance reads too), and its
# "only GLOB...: PATH..." lines, which narrow some folders of it for the
# result files they name.
_LINES = [line.strip() for line in open(os.path.join(ROOT, "scripts", "measured-paths"))
          if line.strip() and not line.startswith("#")]
MEASURED = tuple(x for x in _LINES if not x.startswith(("only ", "set ", "narrow:")))
NARROWED = tuple(w for x in _LINES if x.startswith("narrow:") for w in x[len("narrow:"):].split())
_SETS = {}   # "set NAME: PATH...": @NAME in a later line stands for the paths


def _paths(words):
    return [p for w in words.split() for p in (_SETS[w[1:]] if w.startswith("@") else [w])]


for _x in _LINES:
    if _x.startswith("set "):
        _name, _, _words = _x[len("set "):].partition(":")
        _SETS[_name.strip()] = _paths(_words)
ONLY = [(g.split(), _paths(p)) for g, _, p in (x[len("only "):].partition(":") for x in _LINES if x.startswith("only "))]


def measured_for(name):
    """The measured code of result file name (its bins: its own file's):
    MEASURED, with the folders NARROWED to the paths of the first
    only-line whose globs match the name."""
    base = name[:-len("-bins.csv")] + ".csv" if name.endswith("-bins.csv") else name
    for globs, paths in ONLY:
        if any(fnmatch.fnmatch(base, g) for g in globs):
            return tuple(x for x in MEASURED if x not in NARROWED) + tuple(paths)
    return MEASURED


def here():
    """(mpi, host) as scripts/provenance would record them now."""
    lines = subprocess.run([os.path.join(ROOT, "scripts", "provenance"), "-"], capture_output=True,
                           text=True).stdout.splitlines()
    rec = dict(line.partition(": ")[::2] for line in lines)
    return rec.get("mpi", "?"), rec.get("host", "?")


def record_path(name):
    """The record of result file name (benchfiles.record_of)."""
    return benchfiles.record_of(bench_path(name))


def code_changed(a, b, paths=MEASURED):
    """git's answer whether the code of paths (default: the measured code)
    differs between revisions a and b: 0 no, 1 yes, else git cannot tell."""
    return subprocess.run(["git", "-C", ROOT, "diff", "--quiet", a, b, "--", *paths],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def mixes(name):
    """What the records of result file name (its first run and every
    resumed one) disagree on: the measured code of their revisions, the
    MPI build, the machine; [] when its rows are of one of each."""
    words = {"different measured code": "different code"}
    return [f"its rows come from {words.get(w, w)}" for w in apart(name)]


def apart(*names):
    """Why result files names cannot stand side by side in one table or
    sentence: their records name revisions of different measured code,
    different MPI builds or different machines; [] when they agree."""
    paths = [record_path(n) for n in names]
    revs = sorted({r.split("-")[0] for p in paths for r in benchfiles.revisions(p) if r and r != "NA"})
    code = tuple(sorted({x for n in names for x in measured_for(n)}))
    why = []
    if any(code_changed(a, b, code) == 1 for a, b in zip(revs, revs[1:])):
        why.append("different measured code")
    if len({v for p in paths for v in benchfiles.values(p, "mpi")}) > 1:
        why.append("different MPI builds")
    if len({v for p in paths for v in benchfiles.values(p, "host")}) > 1:
        why.append("different machines")
    return why


def left_out(what, *names):
    """The line that stands where a comparison across files names would
    be when they are apart (apart), else None."""
    why = apart(*names)
    if not why:
        return None
    return (f"{what} is left out: {' and '.join(f'`{n}`' for n in names)} come from {', '.join(why)} "
            "(`make stale`; `make remeasure` makes them again at one revision).")


def stale_reasons(name, now, head="HEAD"):
    """Why result file name no longer stands for the code at head and this
    MPI build (now: here()'s pair), [] when it does: no record, a file of
    mixed records (mixes), the measured code changed since, a revision with
    edits to it, another MPI build, points or runs left.  The machine is
    not a reason: a file stands for the machine its record names (a resume
    on another starts anew, so none mixes two), and this VM's kernel build
    changes between working days, longer than a re-measurement takes;
    cmd_stale lists the files of other machines apart (machine)."""
    path = record_path(name)
    if not os.path.exists(path):
        return ["no record"]
    revs = benchfiles.revisions(path)
    why = []
    if any(r.endswith("-dirty") for r in revs):
        why.append("measured on uncommitted code")
    why += mixes(name)
    base = sorted({r.split("-")[0] for r in revs if r and r != "NA"})
    to_head = {r: code_changed(r, head, measured_for(name)) for r in base}
    since = [r for r in base if to_head[r] == 1]
    if since:
        why.append(f"the measured code changed since {', '.join(since)}")
    if any(rc not in (0, 1) for rc in to_head.values()):
        why.append("git does not know a revision")
    if any(m != now[0] for m in benchfiles.values(path, "mpi")):
        why.append("another MPI build")
    left = unfinished(name)
    if left:
        why.append(f"unfinished: {left}")
    return why


def unfinished(name):
    """The last chunk line's "L of T left" when L > 0 (a benchmark stopped
    at its budget: the same command resumes it), else None."""
    chunks = chunk_lines(name)
    if chunks and int(chunks[-1].group(3)) > 0:
        return f"{chunks[-1].group(3)} of {chunks[-1].group(4)} points left"
    # a soak across hosts (bench_multihost.sh) writes no chunk lines: its
    # command's MH_RUNS per variant of MH_VARIANTS, against its soak rows
    cmd = next(iter(benchfiles.values(record_path(name), "command")), "")
    try:
        env = dict(w.split("=", 1) for w in shlex.split(cmd) if "=" in w)
    except ValueError:
        return None
    if env.get("MH_PARTS") == "soak" and "MH_RUNS" in env and "MH_VARIANTS" in env:
        want = int(env["MH_RUNS"]) * len(env["MH_VARIANTS"].split())
        have = sum(1 for x in rows(name) if x.get("kind") == "soak")
        if have < want:
            return f"{want - have} of {want} runs left"
    return None


def short_host(host):
    """A record's host line, short: its last part (the kernel; cores and
    memory are the same here)."""
    return host.rsplit(", ", 1)[-1]


def machine(name):
    """The machine of result file name's record (short_host), or "?" when
    it has none or several."""
    hosts = set(benchfiles.values(record_path(name), "host"))
    return short_host(hosts.pop()) if len(hosts) == 1 else "?"


def machines_note(names):
    """The sentence that says a table joins files of several machines
    (each file's own), or None when they share one."""
    by = {n: machine(n) for n in names}
    if len(set(by.values())) < 2:
        return None
    return ("Made on " + str(len(set(by.values()))) + " machines (the kernel of each file's record): "
            + ", ".join(f"{n} {m}" for n, m in by.items()) + "; no cell joins numbers of two of them.")


def kept(name):
    """Why result file name is kept as history (a "kept:" line in its
    record, which the bins of NAME.csv share: measured on code since
    changed, on purpose), or None."""
    return next(iter(benchfiles.values(record_path(name), "kept")), None)


def chunk_lines(name):
    """The chunk lines of result file name's record (cells.sh), as
    matches of (points, seconds, left, total)."""
    try:
        lines = open(record_path(name), encoding="utf-8").read().splitlines()
    except OSError:
        return []
    return [m for m in (re.match(r"chunk: (\d+) points in (\d+) s.*, (\d+) of (\d+) left$", x.strip())
                        for x in lines) if m]


def made_in(name):
    """Seconds that making result file name took, from its record's chunk
    lines (cells.sh), or None when it has none."""
    spent = [int(m.group(2)) for m in chunk_lines(name)]
    return sum(spent) if spent else None


def remeasure_chunks():
    """(start, end, minutes) of each chunk remeasure.sh logged."""
    path = bench_path("remeasure.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(m.group(1), m.group(2), int(m.group(3))) for m in
                (re.match(r"(\S+) to (\S+): (\d+) min at ", x) for x in f) if m]


def cmd_stale(names_only=False):
    """Every result file of BENCH that no longer stands for the current
    code and MPI build, with why; the files kept as history and those
    made on other machines apart; the count at the end."""
    now = here()
    names = sorted(n for n in os.listdir(BENCH) if n.endswith(".csv"))
    n, history, timed, machines = 0, [], [], {}
    for name in names:
        if kept(name):
            history.append(name)
            continue
        other = machine(name)
        if other not in ("?", short_host(now[1])):  # "?": no record, or mixed (stale_reasons says)
            machines.setdefault(other, []).append(name)
        why = stale_reasons(name, now)
        if why:
            n += 1
            took = made_in(name)
            timed.append(took)
            print(name if names_only else f"{name}: {'; '.join(why)}"
                  + (f" (made in {took / 60:.0f} min)" if took is not None else ""))
    if names_only:
        return 0
    known = [t for t in timed if t is not None]
    if known:
        print(f"the {len(known)} stale files whose records time them took {sum(known) / 3600:.1f} h to make; "
              f"{len(timed) - len(known)} others are not timed")
    chunks = remeasure_chunks()
    if chunks:
        print(f"remeasure.log: {len(chunks)} chunks from {chunks[0][0]} to {chunks[-1][1]}, "
              f"{sum(c[2] for c in chunks) / 60:.1f} h in all, the longest {max(c[2] for c in chunks)} min")
    if history:
        print(f"kept as history (their records say why): {', '.join(history)}")
    for host, files in sorted(machines.items()):
        print(f"made on another machine ({host}; each stands for its own, and a table that would "
              f"join it with another machine's file says so): {', '.join(files)}")
    print(f"{n} of {len(names) - len(history)} result files stale (revision {subprocess.run(['git', '-C', ROOT, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}, {now[0]}, {now[1]})")
    return 0


def multihost(name="multihost.csv"):
    """multihost.csv (BENCH=multihost make bench): one host beside the test
    cluster's hosts, three tables (store against raw RMA, recovery after one
    kill, the outcomes of soak runs that kill one rank or lose one node);
    multihost-node.csv the node-loss soak (MH_SCENARIO=node)."""
    r = rows(name)
    if not r:
        return []
    skipped = [x for x in r if x["outcome"] == "unsupported"]  # the MPI's probe said it cannot
    r = [x for x in r if x["outcome"] != "unsupported"]
    out = [f"Not run, the MPI's probe (multihost.mpiprobe.json) saying it cannot support them: "
           f"{len(skipped)} runs ({', '.join(sorted({x['variant'] for x in skipped}))}).", ""] if skipped else []
    raw = collections.defaultdict(list)
    for x in r:
        if x["kind"] == "store-vs-raw":
            raw[(x["operation"], x["backend"], int(x["hosts"]))].append(x)
    if raw:
        body = []
        for (op, b, h), g in sorted(raw.items()):
            s, w = med([x["store_us"] for x in g]), med([x["raw_us"] for x in g])
            body.append([op, b, h, len(g), f"{s:.1f}", f"{w:.1f}", f"{s / w:.2f}"])
        out += table(["operation", "backend", "hosts", "runs", "store (us)", "raw RMA (us)", "ratio"], body)
    rec = collections.defaultdict(list)
    for x in r:
        if x["kind"] == "recovery":
            rec[(x["variant"], int(x["hosts"]), int(x["ranks"]))].append(x)
    if rec:
        body = []
        for (v, h, n), g in sorted(rec.items()):
            ok = [x for x in g if x["outcome"] == "pass"]
            ms = lambda col: f"{med([x[col] for x in ok]) / 1000:.1f}" if ok else "NA"  # noqa: E731
            lost = sum(int(x["lost"]) for x in ok if x["lost"] not in ("", "NA"))
            body.append([v, h, n, len(g), len(g) - len(ok), ms("detect_us"), ms("shrink_us"), ms("windows_us"),
                         ms("total_us"), lost])
        out += table(["variant", "hosts", "ranks", "runs", "not passed", "detect (ms)", "shrink (ms)",
                      "windows (ms)", "total excl. detect (ms)", "lost in sample"], body)
    soak_ = collections.defaultdict(list)
    for x in r:
        if x["kind"] == "soak":
            soak_[(x["variant"], int(x["hosts"]), x["operation"])].append(x["outcome"])
    if soak_:  # every outcome by name: a nonlinearizable run is not an "other"
        seen = [o for o in HISTORY_OUTCOMES if any(o in g for g in soak_.values())]
        seen += sorted({o for g in soak_.values() for o in g} - set(seen))
        body = []
        kills = {"single": "one rank", "node": "one node"}
        for (v, h, sc), g in sorted(soak_.items()):
            c = collections.Counter(g)
            body.append([v, h, kills.get(sc, FAULTS.get(sc, sc)), len(g), *(c[o] for o in seen),
                         hang_rate(c["hung"], len(g))])
        out += table(["variant", "hosts", "killed", "runs", *seen, "hang rate [95% CI]"], body)
    return out


def uct():
    """uct.csv (BENCH=uct make bench): the suite's MPI cases over btl/uct,
    by window backend, and what stopped the others."""
    r = rows("uct.csv")
    if not r:
        return []
    by = collections.defaultdict(collections.Counter)
    why = collections.Counter()
    for x in r:
        by[x["backend"]][x["outcome"]] += 1
        if x["outcome"] != "pass":  # one line per kind: pids, descriptors and addresses vary
            kind = re.sub(r"/proc/\d+/fd/\d+", "/proc/PID/fd/N", x["signature"])
            why[(x["backend"], re.sub(r"at address (\(nil\)|0x[0-9a-f]+)\)?", "at address A", kind))] += 1
    body = [[b, sum(c.values()), c["pass"], c["fail"], c["crashed"], c["hung"]] for b, c in sorted(by.items())]
    out = table(["backend", "cases", "passed", "failed", "crashed", "hung"], body)
    return out + [""] + table(["backend", "cases", "what the log says first"],
                              [[b, n, f"`{s}`" if s else ""] for (b, s), n in sorted(why.items())])


def silentnode():
    """silentnode.csv (BENCH=silentnode make bench): when the survivors
    noticed a node gone silent, over all runs."""
    r = rows("silentnode.csv")
    if not r:
        return []
    ms = nums([x["detect_ms"] for x in r])
    runs = len({x["run"] for x in r})
    loads = nums([load_of(x) for x in r])
    return table(["runs", "survivors noticed", "min (s)", "median (s)", "max (s)", "load (1 min)"],
                 [[runs, len(ms), f"{min(ms) / 1000:.2f}", f"{med(ms) / 1000:.2f}", f"{max(ms) / 1000:.2f}",
                   f"{min(loads):.2f} to {max(loads):.2f}"]])


def mpiprobe():
    """mpiprobe.csv (BENCH=mpiprobe make bench): per build, how often each
    probe came out which way across the test cluster's hosts."""
    r = rows("mpiprobe.csv")
    if not r:
        return []
    by = collections.defaultdict(list)
    for x in r:
        by[(x["build"], int(x["patches"]), int(x["hosts"]))].append(x)

    def counts(g, col):
        c = collections.Counter(x[col] for x in g)
        return ", ".join(f"{k} {n} of {len(g)}" for k, n in c.most_common())
    body = [[b, p or "none", h, len(g), counts(g, "rank_loss"), counts(g, "node_loss"),
             counts(g, "proposed_rma"), counts(g, "class")] for (b, p, h), g in sorted(by.items())]
    return table(["build", "patches", "hosts", "probes", "rank loss (2 per host)", "node loss",
                  "proposed RMA", "class"], body) + [
        "", f"Load (1 min) when the probes started: {min(nums([load_of(x) for x in r])):.2f} to "
            f"{max(nums([load_of(x) for x in r])):.2f}."]


PROGRESS_OPS = ("get", "put", "kv_get", "kv_put")


def progress():
    """progress.csv (BENCH=progress make bench): per place, setting and
    target, the medians over launches of each launch's median round, and
    the store's calls against the ping-pong of the same launch."""
    r = [x for x in rows("progress.csv") if float(x["us"]) >= 0]
    if not r:
        return []
    launch = collections.defaultdict(list)  # (hosts, setting, target, op, launch) -> rounds' us
    for x in r:
        launch[(int(x["hosts"]), x["setting"], x["target"], x["operation"], x["launch"])].append(float(x["us"]))
    per = {k: statistics.median(v) for k, v in launch.items()}
    cells = collections.defaultdict(dict)  # (hosts, setting, target, op) -> {launch: us}
    for (h, st, t, op, l), us in per.items():
        cells[(h, st, t, op)][l] = us
    body, aim, verdicts = [], targets("progress.csv").get("kv/ping-pong"), []
    for h, st, t in sorted({k[:3] for k in cells}, key=lambda k: (k[0], k[1], k[2] != "polling")):
        ping = cells.get((h, st, "polling", "pingpong"), {})
        us = lambda v: ci(v, "{:.1f}" if med(v) >= 1 else "{:.3f}")  # noqa: E731 (osc/sm: tens of ns)
        row = [h, st, t, us(list(ping.values())) if t == "polling" else ""]
        row += [us(list(cells.get((h, st, t, op), {}).values())) for op in PROGRESS_OPS]
        for op in ("kv_get", "kv_put"):
            ratios = paired(cells.get((h, st, t, op), {}), ping)
            verdicts += [verdict(stats.summary(ratios), aim)] if ratios else []
            row.append(f"{ci(ratios, '{:.2f}')} {verdicts[-1]}" if ratios else "NA")
        body.append(row)
    loads = nums([load_of(x) for x in r])
    n = len({x["launch"] for x in r})
    return table(["hosts", "setting", "target", "ping-pong (us)"] + [f"{op} (us)" for op in PROGRESS_OPS] +
                 ["kv_get / ping-pong, target", "kv_put / ping-pong, target"],
                 body) + ["", f"{n} launches of each setting and place, interleaved; load (1 min) at the launches: "
                              f"{min(loads):.2f} to {max(loads):.2f}. " + target_line(aim, verdicts)]


def timeline(name="timeline.csv"):
    """timeline.csv (BENCH=timeline make bench): per variant, throughput
    through one kill in 10 ms bins: the failure-free rate, the worst bin
    from the kill to the end of recovery against it, how long until every
    pair had its copies again, from the kill until the last survivor
    noticed it and how long the survivors served nothing (a file written
    before those columns: NA), the bins with no
    operation, failed operations; timeline-3hosts.csv the same across 3
    hosts."""
    r = rows(name)
    if not r:
        return []
    by = collections.defaultdict(list)
    for x in r:
        by[x["variant"]].append(x)
    body = []
    for v in sorted(by, key=lambda v: (v == "proposed", v)):
        g = by[v]
        ok = [x for x in g if x["outcome"] == "pass"]
        body.append([v, len(g), len(ok), kilo([x["rate_ops_s"] for x in ok]),
                     ci([x["worst_ratio"] for x in ok], "{:.2f}"), ci([x["redundant_ms"] for x in ok]),
                     ci([x.get("detect_ms", "NA") for x in ok], "{:.1f}"),
                     ci([x.get("stopped_ms", "NA") for x in ok], "{:.1f}"),
                     ci([x["zero_bins"] for x in ok], "{:.0f}"), int(sum(nums([x["failed_ops"] for x in ok])))])
    loads = nums([load_of(x) for x in r])
    return table(["variant", "runs", "passed", "failure-free (ops/s)", "worst 10 ms bin / failure-free",
                  "kill to full redundancy (ms)", "kill to last notice (ms)", "served nothing (ms)",
                  "bins with no operation",
                  "failed operations"], body) + [
        f"Load (1 min) at the runs: {min(loads):.2f} to {max(loads):.2f}."]


TABLES = {"store-vs-raw": store_vs_raw, "hotpath": hotpath, "readpath-gap": readpath_gap, "recovery": recovery,
          "recovery-floor": recovery_floor, "recovery-profile": recovery_profile, "recovery-slope": recovery_slope, "ycsb": ycsb, "ftcost": ftcost, "firsttouch": firsttouch,
          "soak": soak, "soak-paced": lambda: soak("soak-paced.csv"), "soak-proposed": lambda: soak("soak-proposed.csv"),
          "soak-online": lambda: soak("soak-online.csv"), "hangs-rdma": lambda: soak("hangs-rdma.csv"), "checkpoint": checkpoint,
          "proposed": proposed, "redis": redis, "multihost": multihost,
          "multihost-node": lambda: multihost("multihost-node.csv"),
          "multihost-node-create": lambda: multihost("multihost-node-create.csv"), "taskapp": taskapp, "soak-taskapp": soak_taskapp,
          "loc": loc, "mpiprobe": mpiprobe, "silentnode": silentnode, "uct": uct, "progress": progress,
          "timeline": timeline, "timeline-3hosts": lambda: timeline("timeline-3hosts.csv"),
          "timeline-create": lambda: timeline("timeline-create.csv"),
          "timeline-3hosts-create": lambda: timeline("timeline-3hosts-create.csv"),
          "timeline-revs": lambda: timeline("timeline-revs.csv"),
          "variants": variants, "faults": faults,
          "conformance": conformance, "provenance": provenance}
# Tables computed from the source, not from result files: `check` leaves them.
SOURCE_TABLES = {"loc", "variants"}  # variants: its code columns
# The file each table reads first (what --file replaces).
PRIMARY = {"store-vs-raw": "store-vs-raw.csv", "hotpath": "hotpath.csv", "recovery": "recovery.csv",
           "recovery-floor": "recovery-floor.csv", "recovery-profile": "recovery-profile.csv",
           "recovery-slope": "recovery-floor.csv",
           "ycsb": "ycsb.csv", "ftcost": "ftcost.csv", "firsttouch": "firsttouch.csv", "soak": "soak.csv", "soak-paced": "soak-paced.csv", "soak-proposed": "soak-proposed.csv",
           "soak-online": "soak-online.csv", "hangs-rdma": "hangs-rdma.csv",
           "checkpoint": "checkpoint.csv", "proposed": "proposed.csv", "redis": "redis.csv",
           "multihost": "multihost.csv", "multihost-node": "multihost-node.csv",
           "multihost-node-create": "multihost-node-create.csv", "taskapp": "taskapp.csv",
           "soak-taskapp": "soak-taskapp.csv", "mpiprobe": "mpiprobe.csv",
           "silentnode": "silentnode.csv", "uct": "uct.csv", "progress": "progress.csv",
           "timeline": "timeline.csv", "timeline-3hosts": "timeline-3hosts.csv",
           "timeline-create": "timeline-create.csv", "timeline-3hosts-create": "timeline-3hosts-create.csv",
           "timeline-revs": "timeline-revs.csv",
           "variants": "timeline.csv", "faults": "soak.csv",
           "conformance": "conformance.csv"}
REGION = re.compile(r"(<!-- report: ([a-z0-9 -]+) -->\n)(.*?)(<!-- end report -->)", re.S)


class ReportError(Exception):
    pass


def render(names):
    for n in names:
        if n not in TABLES:
            raise ReportError(f"unknown table '{n}' (known: {', '.join(TABLES)})")
    return "".join(line + "\n" for n in names for line in TABLES[n]())


def rewrite(text, where, results_only=False):
    """text with every marked region rewritten (results_only: leave the
    regions of tables that count the source, not a result file)."""
    def one(m):
        names = m.group(2).split()
        if results_only and any(n in SOURCE_TABLES for n in names):
            return m.group(0)
        return m.group(1) + render(names) + m.group(4)
    if "<!-- report:" in text and not REGION.search(text):
        raise ReportError(f"{where}: a '<!-- report:' marker without its '<!-- end report -->'")
    return REGION.sub(one, text)


def marked_files():
    """Every Markdown file of the project that holds a marked region."""
    cands = [os.path.join(ROOT, "README.md")]
    for top in ("docs", "results"):
        for d, _, names in os.walk(os.path.join(ROOT, top)):
            cands += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]
    return [p for p in cands if "<!-- report:" in open(p, encoding="utf-8").read()]


def cmd_files(paths, write):
    stale = []
    for p in paths:
        try:
            old = open(p, encoding="utf-8").read()
        except OSError as e:
            raise ReportError(f"{p}: {e.strerror}")
        new = rewrite(old, p, results_only=not write)
        if new != old:
            stale.append(p)
            if write:
                with open(p, "w", encoding="utf-8") as f:
                    f.write(new)
                print(f"updated {p}")
    if stale and not write:
        print(f"out of date (run `make report`): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


def main():
    global BENCH
    ap = argparse.ArgumentParser(prog="report.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("print", help="tables to stdout")
    p.add_argument("tables", nargs="*", metavar="TABLE", help="default: all of " + ", ".join(TABLES))
    p.add_argument("--dir", help="the benchmark files' directory (default results/bench)")
    p.add_argument("--file", help="with one TABLE: read this CSV instead of the table's file in DIR")
    sub.add_parser("files", help="the documents with a marked region")
    sub.add_parser("measured-for", help="the measured code of a result file, as git pathspecs "
                   "(scripts/provenance --matches)").add_argument("name", metavar="NAME.csv")
    p = sub.add_parser("stale", help="the result files that no longer stand for the code and MPI at hand")
    p.add_argument("--dir", help="the benchmark files' directory (default results/bench)")
    p.add_argument("--names", action="store_true", help="their names alone, one per line")
    for name in ("update", "check"):
        sub.add_parser(name, help=f"{name} the marked regions").add_argument(
            "files", nargs="*", metavar="FILE", help="default: every .md file of README.md, docs/ and "
            "results/ with a marked region")
    a = ap.parse_args()
    try:
        if a.command == "files":
            print("\n".join(marked_files()))
            return 0
        if a.command == "measured-for":
            print("\n".join(measured_for(a.name)))
            return 0
        if a.command == "stale":
            BENCH = os.path.abspath(a.dir) if a.dir else BENCH
            return cmd_stale(a.names)
        if a.command != "print":
            return cmd_files(a.files or marked_files(), a.command == "update")
        BENCH = os.path.abspath(a.dir) if a.dir else BENCH
        names = a.tables or list(TABLES)
        if a.file and (len(names) != 1 or names[0] not in PRIMARY):
            raise ReportError("--file goes with one table that reads a file: " + ", ".join(PRIMARY))
        if a.file:
            OVERRIDE[PRIMARY[names[0]]] = a.file
        sys.stdout.write(render(names))
    except ReportError as e:
        ap.exit(2, f"report.py: error: {e}\n")
    except (KeyError, ValueError) as e:
        ap.exit(2, f"report.py: error: a benchmark file lacks a column or holds a bad number ({e})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
