#!/usr/bin/env python3
"""The store against Redis, from results/bench/redis.csv.

usage: analysis/fig_redis.py results/bench/redis.csv OUTDIR

A separate script, not a figures.py module: figures.py reads campaign
directories (one run directory per run), while experiments/bench/bench_redis.sh
keeps one CSV row per run (its header names the columns).  Writes
OUTDIR/redis.png and .pdf, three panels: failure-free throughput per transport,
workload and ranks, store and Redis side by side, each the median of the
repetitions with its 95% distribution-free interval (stats.py), and for Redis the
redis-benchmark ceiling measured in the same runs (a black line, with its
interval); the medians of their p50 and p99 latency; and for each failover
run the time from the kill of the primary
to the first acknowledged write (first rank and last rank to write again)
with the acknowledged writes lost.  A malformed file prints
"error: FILE: problem" and exits 2.
"""
import argparse
import csv
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import pyfind  # noqa: E402

COLUMNS = ("system", "kind", "workload", "ranks", "repetition", "throughput_ops_per_s", "p50_us",
           "p99_us", "failover_first_ms", "failover_last_ms", "acked_lost")
COLORS = {"store": "#1f77b4", "redis": "#d62728"}


def number(path, line, row, col):
    v = row[col]
    if v in ("", "NA"):
        return None
    try:
        return float(v)
    except ValueError:
        sys.exit(f"error: {path}:{line}: column {col} is '{v}', not a number or NA")


def read(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except OSError as e:
        sys.exit(f"error: {path}: {e.strerror}")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        sys.exit(f"error: {path}: no column {', '.join(missing)} (experiments/bench/bench_redis.sh writes them)")
    for i, r in enumerate(rows, start=2):
        for c in COLUMNS[3:] + tuple(c for c in ("ceiling_ops_per_s",) if c in header):
            r[c] = number(path, i, r, c)
    return rows


def failure_free(ax_t, ax_l, rows):
    configs = []  # (transport, workload, ranks); older files have no transport: "mixed"
    key = lambda r: (r.get("transport") or "mixed", r["workload"].upper(), int(r["ranks"]))  # noqa: E731
    for r in rows:
        k = key(r)
        if r["kind"] == "failure-free" and k not in configs:
            configs.append(k)
    import numpy as np
    import stats
    x = np.arange(len(configs))
    for i, system in enumerate(("store", "redis")):
        get = {}
        for r in rows:
            if r["kind"] == "failure-free" and r["system"] == system:
                get.setdefault(key(r), []).append(r)
        sm = [stats.summary([r["throughput_ops_per_s"] for r in get.get(k, [])]) for k in configs]
        off = (i - 0.5) * 0.38
        ax_t.bar(x + off, [s.median / 1e3 if s.median else 0 for s in sm], width=0.38, color=COLORS[system],
                 label="store (recreate-copy, r=2)" if system == "store" else
                 "Redis (primary + replica, WAIT 1)")
        errs = [stats.errorbar(s, 1e-3) for s in sm]
        ax_t.errorbar(x + off, [s.median / 1e3 if s.median else 0 for s in sm],
                      yerr=[[e[0][0] for e in errs], [e[1][0] for e in errs]], fmt="none", ecolor="k", capsize=3)
        for xi, s in zip(x + off, sm):
            if s.median:
                v = s.median
                ax_t.annotate((f"{v / 1e3:.0f}k" if v >= 1e4 else f"{v / 1e3:.1f}k") + f" n={s.n}",
                              (xi, (s.hi or v) / 1e3), xytext=(0, 2), textcoords="offset points", ha="center",
                              fontsize=7)
        if system == "redis":  # the ceiling of the same runs (older files have none)
            for xi, k in zip(x + off, configs):
                c = stats.summary([r.get("ceiling_ops_per_s") for r in get.get(k, [])])
                if c.median:
                    ax_t.errorbar([xi], [c.median / 1e3], yerr=stats.errorbar(c, 1e-3), xerr=0.17, fmt="none",
                                  ecolor="black", lw=1.5, capsize=0, label="redis-benchmark ceiling (median, 95% CI)")
        for p, marker in (("p50_us", "o"), ("p99_us", "^")):
            ys = [stats.summary([r[p] for r in get.get(k, [])]).median for k in configs]
            ax_l.scatter([xi for xi, y in zip(x + off, ys) if y], [y for y in ys if y],
                         color=COLORS[system], marker=marker, label=f"{system} {p[:3]} (median)")
    for ax in (ax_t, ax_l):
        ax.set_xticks(x)
        ax.set_xticklabels([f"{t}\nYCSB {w}\n{n} ranks" for t, w, n in configs], fontsize=8)
    ax_t.set_yscale("log")
    tops = [r["throughput_ops_per_s"] for r in rows if r["kind"] == "failure-free" and r["throughput_ops_per_s"]]
    if tops:  # room above the bars for the legend
        ax_t.set_ylim(min(tops) / 1e3 / 2, max(tops) / 1e3 * 8)
    ax_t.set_ylabel("throughput (thousand ops/s, log)")
    ax_t.set_title("failure-free throughput (median, 95% CI)", fontsize=10)
    ax_l.set_yscale("log")
    ax_l.set_ylabel("latency of all operations (us, log)")
    ax_l.set_title("failure-free latency: p50 (circle), p99 (triangle)", fontsize=10)
    import common as C
    C.legend(ax_t, loc="upper right")
    C.legend(ax_l, loc="upper left")
    if not configs:
        C.note(ax_t, "no failure-free runs")


def failover(ax, rows):
    import common as C
    fo = [r for r in rows if r["kind"] == "failover"]
    for r in fo:
        rep = int(r["repetition"])
        for col, marker, lbl in (("failover_first_ms", "o", "first rank writes again"),
                                 ("failover_last_ms", "^", "last rank writes again")):
            if r[col] is not None:
                ax.scatter([rep], [r[col]], color=COLORS["redis"], marker=marker, label=lbl)
        top = max([v for v in (r["failover_first_ms"], r["failover_last_ms"]) if v is not None], default=0)
        lost = "NA" if r["acked_lost"] is None else f"{r['acked_lost']:.0f}"
        ax.annotate(f"lost {lost}", (rep, top), xytext=(0, 6), textcoords="offset points",
                    ha="center", fontsize=7)
    reps = sorted({int(r["repetition"]) for r in fo})
    ax.set_xticks(reps)
    ax.set_xlim(min(reps, default=1) - 0.6, max(reps, default=1) + 0.6)
    ax.set_xlabel("failover run")
    ax.set_ylabel("kill to first acknowledged write (ms)")
    ax.set_ylim(bottom=0, top=max([r["failover_last_ms"] or r["failover_first_ms"] or 0 for r in fo],
                                  default=1) * 1.25 or 1)
    ranks = sorted({str(int(r["ranks"])) for r in fo})
    ax.set_title(f"Redis Sentinel failover, primary SIGKILLed ({', '.join(ranks)} ranks, YCSB A)",
                 fontsize=10)
    C.legend(ax, loc="lower right")
    if not fo:
        C.note(ax, "no failover runs")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", metavar="REDIS_CSV", help="results/bench/redis.csv")
    ap.add_argument("out", metavar="OUTDIR")
    a = ap.parse_args(argv[1:])
    rows = read(a.csv)
    pyfind.ensure()  # a python3 with matplotlib (pyfind.py)
    import benchfiles
    import common as C
    os.makedirs(a.out, exist_ok=True)
    fig, axes = C.figure(1, 3, width=16, height=5.5)
    failure_free(axes[0][0], axes[0][1], rows)
    failover(axes[0][2], rows)
    C.title(fig, os.path.basename(a.csv), "the store against Redis on the same driver", len(rows))
    print(f"wrote {benchfiles.save(fig, a.out, 'redis', inputs=[os.path.abspath(a.csv)])}")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            sys.exit(2 if e.code.startswith("error") else 64)
        raise
