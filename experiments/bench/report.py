#!/usr/bin/env python3
"""bench_report.py -- the benchmark tables of the README, from results/bench/.

Reads store-vs-raw.csv, recovery.csv, ycsb.csv, soak.csv, checkpoint.csv,
proposed.csv and proposed-overhead.csv (whichever exist) and prints Markdown tables: medians over repetitions, with the
number of runs behind each value.  The README's numbers are this script's
output; rerun it after `make bench` / `make soak` to refresh them.
"""
import collections
import csv
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "results", "bench")


def rows(name):
    path = os.path.join(BENCH, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def med(values):
    vals = [float(v) for v in values if v not in ("", "NA")]
    return statistics.median(vals) if vals else float("nan")


def store_vs_raw():
    r = rows("store-vs-raw.csv")
    if not r:
        return
    print("| operation | backend | ranks | store (us) | raw RMA (us) | ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for x in r:
        print(f"| {x['operation']} | {x['backend']} | {x['ranks']} | {float(x['store_us']):.3f} | "
              f"{float(x['raw_us']):.3f} | {float(x['ratio']):.2f} |")
    print()


def recovery(name="recovery.csv"):
    r = rows(name)
    if not r:
        return
    groups = {}
    for x in r:
        groups.setdefault((x["variant"], int(x["ranks"]), int(x["pairs"])), []).append(x)
    print("| variant | ranks | pairs | runs | hung | detect (ms) | windows (ms) | re-replicate (ms) "
          "| total excl. detect (ms) | lost in sample |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (v, n, p), g in sorted(groups.items()):
        ok = [x for x in g if x["hang"] == "no"]
        hung = len(g) - len(ok)
        ms = lambda col: med([x[col] for x in ok]) / 1000  # noqa: E731
        lost = sum(int(x["lost"]) for x in ok if x["lost"] not in ("", "NA"))
        print(f"| {v} | {n} | {p} | {len(g)} | {hung} | {ms('detect_us'):.1f} | {ms('windows_us'):.1f} | "
              f"{ms('rereplicate_us'):.1f} | {ms('total_us'):.1f} | {lost} |")
    print()


def ycsb():
    r = rows("ycsb.csv")
    if not r:
        return
    print("| workload | ranks | " + " | ".join(
        v for v in ("none", "recreate-copy", "recreate-inplace", "recreate-free", "spare")) + " |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    table = {}
    for x in r:
        table.setdefault((x["workload"], int(x["ranks"])), {})[x["variant"]] = x["throughput_ops_per_s"]
    for (w, n), t in sorted(table.items()):
        cells = []
        for v in ("none", "recreate-copy", "recreate-inplace", "recreate-free", "spare"):
            val = t.get(v, "NA")
            cells.append("NA" if val in ("", "NA") else f"{float(val) / 1000:.0f}k")
        print(f"| {w.upper()} | {n} | " + " | ".join(cells) + " |")
    print()
    print("Failure-free overhead on YCSB B (throughput of `none` / variant - 1):")
    print()
    for (w, n), t in sorted(table.items()):
        if w != "b" or t.get("none", "NA") in ("", "NA"):
            continue
        parts = []
        for v in ("recreate-copy", "recreate-inplace", "recreate-free", "spare"):
            if t.get(v, "NA") not in ("", "NA"):
                parts.append(f"{v} {(float(t['none']) / float(t[v]) - 1) * 100:+.0f}%")
        print(f"- {n} ranks: " + ", ".join(parts))
    print()


HISTORY_OUTCOMES = ("pass", "lost", "nonlinearizable", "divergent", "failed", "crashed", "hung")


def soak(name="soak.csv", path=None):
    # hangs-rdma*.csv: `make soak` writes hangs-rdma.csv; sets run apart
    # (other RUNS or TIMEOUT per variant) keep their own suffix.
    names = sorted(f for f in os.listdir(BENCH) if f.startswith("hangs-rdma") and f.endswith(".csv")) \
        if name == "hangs-rdma.csv" else [name]
    if path:
        with open(path, newline="") as f:
            r = list(csv.DictReader(f))
    else:
        r = [x for n in names for x in rows(n)]
    if not r:
        return
    groups = {}
    for x in r:
        groups.setdefault((x["variant"], x["backend"]), []).append(x)
    if "victims" in r[0]:  # the history soak
        soak_history(groups)
        return
    print("| variant | backend | runs | passed | failed | hung | scenarios (runs) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (v, b), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out = [x["outcome"] for x in g]
        sc = collections.Counter(x.get("scenario", "single") for x in g)  # old files: single only
        scs = ", ".join(f"{k} {n}" for k, n in sc.items())
        print(f"| {v} | {b} | {len(g)} | {out.count('pass')} | {out.count('fail')} | {out.count('hang')} | {scs} |")
    print()


def killed_rank0(victims):
    return any(v.split("@")[0] == "0" for v in victims.split(";") if v)


def soak_history(groups):
    print("| variant | backend | runs | " + " | ".join(HISTORY_OUTCOMES) +
          " | orphans | rank 0 killed | operations | scenarios (runs) |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in HISTORY_OUTCOMES) + " | --- | --- | --- | --- |")
    total = collections.Counter()
    for (v, b), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out = collections.Counter(x["outcome"] for x in g)
        total.update(out)
        total["runs"] += len(g)
        orphans = sum(int(x["orphans"] or 0) for x in g)
        rank0 = sum(killed_rank0(x["victims"]) for x in g)
        ops = sum(int(x["ops"] or 0) for x in g)
        sc = collections.Counter(x["scenario"] for x in g)
        print(f"| {v} | {b} | {len(g)} | " + " | ".join(str(out[o]) for o in HISTORY_OUTCOMES) +
              f" | {orphans} | {rank0} | {ops} | " + ", ".join(f"{k} {n}" for k, n in sc.items()) + " |")
    print()
    print(f"{total['runs']} runs: " + ", ".join(f"{total[o]} {o}" for o in HISTORY_OUTCOMES))
    print()


def checkpoint():
    r = rows("checkpoint.csv")
    if not r:
        return
    cost = {}
    for x in r:
        if x["mode"] == "cost":
            cost.setdefault((int(x["ranks"]), int(x["pairs_per_rank"])), []).append(x)
    print("| ranks | pairs per rank | MB per rank | checkpoint (s) | checkpoint MB/s, all ranks | plain write+fsync MB/s, all ranks | runs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (n, p), g in sorted(cost.items()):
        print(f"| {n} | {p} | {med([x['bytes'] for x in g]) / n / 1e6:.1f} | {med([x['ckpt_s'] for x in g]):.3f} "
              f"| {med([x['ckpt_mb_s'] for x in g]):.0f} | {med([x['disk_mb_s'] for x in g]):.0f} | {len(g)} |")
    print()
    ov = [x for x in r if x["mode"] == "overhead"]
    base = med([x["ops_per_s"] for x in ov if float(x["interval_s"]) == 0])
    if ov and base == base:
        print("| checkpoint interval (s) | throughput (ops/s) | overhead | runs |")
        print("| --- | --- | --- | --- |")
        for iv in sorted({float(x["interval_s"]) for x in ov}, reverse=True):
            g = [x["ops_per_s"] for x in ov if float(x["interval_s"]) == iv]
            t = med(g)
            print(f"| {'none' if iv == 0 else f'{iv:g}'} | {t:.0f} | {(base / t - 1) * 100:+.1f}% | {len(g)} |")
        print()
    rs = [x for x in r if x["mode"] == "restart"]
    rec = rows("recovery.csv")
    if rs and rec:  # the same question for both: how long until serving again, 4 ranks
        print("| after a kill, 4 ranks | 100k pairs (s) | 1M pairs (s) | acknowledged writes lost |")
        print("| --- | --- | --- | --- |")
        cells = []
        for per_rank in (25000, 250000):
            g = [x for x in rs if int(x["pairs_per_rank"]) == per_rank]
            cells.append(med([float(x["job_start_s"]) + float(x["reload_s"]) + float(x["resume_s"]) for x in g]))
        lost = med([x["lost_writes"] for x in rs])
        print(f"| checkpoint/restart (kill 0.5 s after a checkpoint) | {cells[0]:.2f} | {cells[1]:.2f} | {lost:.0f} (median) |")
        for v in ("recreate-copy", "recreate-inplace", "recreate-free", "spare"):
            cells = []
            for pairs in (100000, 1000000):
                g = [x for x in rec if x["variant"] == v and x["ranks"] == "4" and int(x["pairs"]) == pairs
                     and x["hang"] == "no"]
                cells.append(med([(float(x["detect_us"]) + float(x["total_us"])) / 1e6 for x in g]))
            print(f"| {v} (detection + recovery) | {cells[0]:.2f} | {cells[1]:.2f} | 0 |")
        print()
    if rs:
        print("| pairs per rank (4 ranks) | job start (s) | reload (s) | resume (s) | writes lost | runs |")
        print("| --- | --- | --- | --- | --- | --- |")
        for p in sorted({int(x["pairs_per_rank"]) for x in rs}):
            g = [x for x in rs if int(x["pairs_per_rank"]) == p]
            print(f"| {p} | {med([x['job_start_s'] for x in g]):.2f} | {med([x['reload_s'] for x in g]):.3f} "
                  f"| {med([x['resume_s'] for x in g]):.4f} | {med([x['lost_writes'] for x in g]):.0f} | {len(g)} |")
        print()


def proposed():
    """Variant proposed against the workarounds, measured side by side."""
    rec = rows("proposed.csv")
    if rec:
        recovery("proposed.csv")
        # The ratio to proposed per cell, on the medians above.
        cells = sorted({(int(x["ranks"]), int(x["pairs"])) for x in rec}, key=lambda c: (c[1], c[0]))
        others = sorted({x["variant"] for x in rec} - {"proposed"})
        print("| ranks | pairs | " + " | ".join(f"{v} / proposed, recovery" for v in others) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in others) + " |")
        for n, p in cells:
            t = lambda v: med([x["total_us"] for x in rec if x["variant"] == v and int(x["ranks"]) == n  # noqa: E731
                               and int(x["pairs"]) == p and x["hang"] == "no"])
            base = t("proposed")
            print(f"| {n} | {p} | " + " | ".join(f"{t(v) / base:.2f}" for v in others) + " |")
        print()
    ov = rows("proposed-overhead.csv")
    if ov:
        print("| workload | ranks | none (ops/s) | recreate-copy | proposed | proposed / recreate-copy | runs each |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for wl, n in sorted({(x["workload"], int(x["ranks"])) for x in ov}):
            g = lambda v: [x["throughput_ops_per_s"] for x in ov  # noqa: E731
                           if x["variant"] == v and x["workload"] == wl and int(x["ranks"]) == n]
            none, copy, prop = med(g("none")), med(g("recreate-copy")), med(g("proposed"))
            print(f"| YCSB {wl.upper()} | {n} | {none:.0f} | {copy:.0f} ({(copy / none - 1) * 100:+.1f}%) "
                  f"| {prop:.0f} ({(prop / none - 1) * 100:+.1f}%) | {prop / copy:.3f} | {len(g('proposed'))} |")
        print()


def code_lines(path, only=None, skip=()):
    """Lines of C code in path: not blank, not comment, none containing a
    word of skip; with only, just those inside the named functions."""
    n, in_comment, fn = 0, False, None
    for line in open(path):
        t = line.strip()
        if in_comment:
            in_comment = "*/" not in t
            continue
        if t.startswith("/*"):
            in_comment = "*/" not in t
            continue
        if line[:1].isalpha() and "(" in line and line.rstrip().endswith("{"):
            fn = line.split("(")[0].split()[-1].lstrip("*")
        if not t or t.startswith("//") or any(w in t for w in skip):
            continue
        if only is None or fn in only:
            n += 1
        if line.startswith("}"):
            fn = None
    return n


def loc():
    """Recovery code per variant, counted in the source (not a result file):
    the variant's own file, the failure detection only it needs, and the
    recovery every variant shares.  Detection for the workarounds is the
    watchdog (detect.c: start, stop, test, alarm, without the two hooks
    variant proposed adds); proposed detects through the window, in its own
    file.  Both use detect.c's error classification (kvw_status), counted
    with the shared part."""
    kv = os.path.join(ROOT, "kvstore")
    det = os.path.join(kv, "detect.c")
    hooks = ("window_failed", "revoke_window")
    watchdog = code_lines(det, only=("kvw_start", "kvw_stop", "kvw_test", "kvw_alarm"), skip=hooks)
    shared = (sum(code_lines(os.path.join(kv, f)) for f in ("recover.c", "rereplicate.c"))
              + code_lines(det, only=("kvw_is_ft_error", "kvw_failure_known", "kvw_status")))
    print("| variant | its own file | failure detection (watchdog) | shared recovery | total |")
    print("| --- | --- | --- | --- | --- |")
    for v in ("recreate-copy", "recreate-inplace", "recreate-free", "spare", "proposed"):
        own = code_lines(os.path.join(kv, "variant_" + v.replace("-", "_") + ".c"))
        w = 0 if v == "proposed" else watchdog
        print(f"| {v} | {own} | {w} | {shared} | {own + w + shared} |")
    print()


if __name__ == "__main__":
    import argparse
    tables = {"store-vs-raw": store_vs_raw, "recovery": recovery, "ycsb": ycsb, "soak": soak,
              "hangs-rdma": lambda: soak("hangs-rdma.csv"),
              "checkpoint": checkpoint, "proposed": proposed, "loc": loc}
    ap = argparse.ArgumentParser(description="Print the benchmark tables of results/bench/ as Markdown.")
    ap.add_argument("tables", nargs="*", metavar="TABLE",
                    help="which tables (default: all): " + ", ".join(tables))
    ap.add_argument("--file", help="with 'soak': read this soak CSV instead of results/bench/soak.csv")
    a = ap.parse_args()
    for p in a.tables:
        if p not in tables:
            ap.error(f"unknown table '{p}' (choose from {', '.join(tables)})")
    for p in a.tables or ["store-vs-raw", "recovery", "ycsb", "soak", "hangs-rdma", "checkpoint",
                          "proposed", "loc"]:
        if p == "soak" and a.file:
            soak(path=a.file)
        else:
            tables[p]()
