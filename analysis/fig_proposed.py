#!/usr/bin/env python3
"""Variant proposed (the patched Open MPI's fault-tolerant RMA) against the
workarounds, from results/bench/.

Reads proposed.csv and proposed-overhead.csv (BENCH=proposed make bench)
and hangs-rdma*.csv (make soak), and draws one figure with four panels:
  a. recovery time without detection, per variant, for every ranks x pairs
     cell measured: median total with its 95% distribution-free interval, and
     inside its bar the median windows phase (the rest is mostly
     re-replication);
  b. detection: time from the kill to the first survivor noticing it,
     median per variant and cell, with its interval;
  c. hang rate on osc/rdma (backend create) with random kill times, per
     variant, with the number of runs and its 95% Clopper-Pearson interval;
  d. failure-free YCSB B and C throughput relative to variant none's
     median: the median over the repetitions with its interval.
Usage: fig_proposed.py [BENCH_DIR [OUT_DIR]]  (default results/bench,
BENCH_DIR/figures).  Prints what it drew and from how many runs.
"""
import os
import statistics as st
import sys

import pyfind

pyfind.ensure()  # a python3 with matplotlib (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import stats  # noqa: E402
from benchfiles import directories, num, rows, save  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = ["proposed", "recreate-copy", "recreate-free", "recreate-inplace", "spare"]
COLORS = {"proposed": "#c03030", "recreate-copy": "#3060c0", "recreate-free": "#30a060",
          "recreate-inplace": "#a0a030", "spare": "#8040a0"}


def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else None


def main():
    bench, out = directories(__doc__)
    rec = [r for r in rows(os.path.join(bench, "proposed.csv")) if r["hang"] == "no"]
    if not rec:
        sys.exit(f"fig_proposed: no runs in {bench}/proposed.csv: run BENCH=proposed make bench")
    ov = rows(os.path.join(bench, "proposed-overhead.csv"))
    soak = [r for f in sorted(os.listdir(bench)) if f.startswith("hangs-rdma") and f.endswith(".csv")
            for r in rows(os.path.join(bench, f)) if r["backend"] == "create"]
    os.makedirs(out, exist_ok=True)

    cells = sorted({(int(r["ranks"]), int(r["pairs"])) for r in rec}, key=lambda c: (c[1], c[0]))
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rec)]
    fig, ax = plt.subplots(2, 2, figsize=(13, 8.5))
    w = 0.8 / len(variants)
    for vi, v in enumerate(variants):
        xs, win, rerep, rest, det, tot_err, det_err = [], [], [], [], [], [[], []], [[], []]
        for ci, (n, p) in enumerate(cells):
            g = [r for r in rec if r["variant"] == v and int(r["ranks"]) == n and int(r["pairs"]) == p]
            if not g:
                continue
            xs.append(ci + (vi - (len(variants) - 1) / 2) * w)
            tw = med([num(r["windows_us"]) for r in g]) / 1e3
            tr = med([num(r["rereplicate_us"]) for r in g]) / 1e3
            tt = med([num(r["total_us"]) for r in g]) / 1e3
            win.append(tw)
            rerep.append(tr)
            rest.append(max(tt - tw - tr, 0))
            det.append((med([num(r["detect_us"]) for r in g]) or 0) / 1e3)
            for err, col in ((tot_err, "total_us"), (det_err, "detect_us")):
                lo, hi = stats.errorbar(stats.summary([num(r[col]) for r in g]), 1e-3)
                err[0].append(lo[0])
                err[1].append(hi[0])
        c = COLORS.get(v, "grey")
        # Not stacked (the axis is logarithmic): the total, and inside it,
        # from the same baseline, the windows phase.
        ax[0][0].bar(xs, [a + b + r for a, b, r in zip(win, rerep, rest)], w, color=c, alpha=0.45,
                     label=f"{v}: total")
        ax[0][0].bar(xs, win, w * 0.5, color=c, label=f"{v}: windows phase")
        ax[0][0].errorbar(xs, [a + b + r for a, b, r in zip(win, rerep, rest)], yerr=tot_err, fmt="none",
                          ecolor="k", capsize=2, lw=0.8)
        ax[0][1].bar(xs, det, w, color=c, label=v)
        ax[0][1].errorbar(xs, det, yerr=det_err, fmt="none", ecolor="k", capsize=2, lw=0.8)
    labels = [f"{n} ranks\n{p // 1000}k pairs" for n, p in cells]
    for a, title, yl in ((ax[0][0], "a. recovery, detection excluded (median, 95% CI)", "ms"),
                         (ax[0][1], "b. detection: kill to first notice (median, 95% CI)", "ms")):
        a.set_xticks(range(len(cells)))
        a.set_xticklabels(labels, fontsize=8)
        a.set_yscale("log")
        a.set_ylabel(yl)
        a.set_title(title)
        a.legend(fontsize=7, ncol=2)

    hv = [v for v in VARIANTS if any(r["variant"] == v for r in soak)]
    if hv:
        runs = [sum(r["variant"] == v for r in soak) for v in hv]
        rated = [stats.rate(sum(r["outcome"] == "hang" for r in soak if r["variant"] == v), n)
                 for v, n in zip(hv, runs)]
        rates = [100 * x[0] for x in rated]
        bars = ax[1][0].bar(range(len(hv)), rates, color=[COLORS.get(v, "grey") for v in hv])
        ax[1][0].errorbar(range(len(hv)), rates, yerr=[[100 * (x[0] - x[1]) for x in rated],
                                                       [100 * (x[2] - x[0]) for x in rated]],
                          fmt="none", ecolor="k", capsize=4)
        for b, n, rt in zip(bars, runs, rates):
            ax[1][0].annotate(f"{rt:.0f}% of {n}", (b.get_x() + b.get_width() / 2, rt),
                              ha="center", va="bottom", fontsize=8)
        ax[1][0].set_xticks(range(len(hv)))
        ax[1][0].set_xticklabels(hv, fontsize=8)
    ax[1][0].set_ylim(0, 110)
    ax[1][0].set_ylabel("runs that hung (%)")
    ax[1][0].set_title("c. hangs on osc/rdma, one kill at a random operation (95% CI)")

    groups = sorted({(r["workload"], int(r["ranks"])) for r in ov})
    ovv = [v for v in ("recreate-copy", "proposed") if any(r["variant"] == v for r in ov)]
    for vi, v in enumerate(ovv):
        ys, err = [], [[], []]
        for wl, n in groups:
            base = med([num(r["throughput_ops_per_s"]) for r in ov
                        if r["variant"] == "none" and r["workload"] == wl and int(r["ranks"]) == n])
            mine = stats.summary([num(r["throughput_ops_per_s"]) for r in ov
                                  if r["variant"] == v and r["workload"] == wl and int(r["ranks"]) == n])
            ys.append(mine.median / base if base and mine.median else 0)
            lo, hi = stats.errorbar(mine, 1 / base if base else 0)
            err[0].append(lo[0])
            err[1].append(hi[0])
        xs = [i + (vi - 0.5) * 0.4 for i in range(len(groups))]
        ax[1][1].bar(xs, ys, 0.4, color=COLORS.get(v, "grey"), label=v)
        ax[1][1].errorbar(xs, ys, yerr=err, fmt="none", ecolor="k", capsize=3)
    ax[1][1].axhline(1.0, color="black", lw=0.8)
    ax[1][1].set_xticks(range(len(groups)))
    ax[1][1].set_xticklabels([f"YCSB {wl.upper()}\n{n} ranks" for wl, n in groups], fontsize=8)
    ax[1][1].set_ylabel("throughput / variant none")
    ax[1][1].set_title("d. failure-free throughput (median of repetitions, 95% CI)")
    ax[1][1].legend(fontsize=8)

    path = save(fig, out, "proposed")
    print(f"wrote {path}: {len(rec)} recovery runs, {len(soak)} osc/rdma soak runs, "
          f"{len(ov)} failure-free runs")


if __name__ == "__main__":
    main()
