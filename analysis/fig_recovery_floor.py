#!/usr/bin/env python3
"""Recovery against its floor, from results/bench/recovery-floor.csv.

Reads recovery-floor.csv (BENCH=recovery-floor make bench: three rows per
run, phases windows, rereplicate and total, each with the floor measured
on the same survivors right after the recovery) and draws one figure,
recovery-floor.png, one panel per variant: the total recovery time
(detection excluded) against the pairs stored, one line per rank count,
median and 95% distribution-free interval (stats.py), and under each line, dashed,
the floor of the same runs (window allocation + a copy of the table +
the raw exchange of the re-replicated bytes).  The slopes of these
lines are a table of experiments/bench/report.py (recovery-slope).
Usage: fig_recovery_floor.py [BENCH_DIR [OUT_DIR]]  (default
results/bench, BENCH_DIR/figures).
"""
import collections
import os
import sys

import pyfind

pyfind.ensure()  # a python3 with matplotlib and scipy (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import stats  # noqa: E402
from benchfiles import directories, num, rows, save  # noqa: E402


def cells(rs):
    """{variant: {ranks: {pairs: (recovery ms list, floor ms list)}}} of the total rows."""
    out = collections.defaultdict(lambda: collections.defaultdict(dict))
    for r in rs:
        if r["phase"] != "total":
            continue
        c = out[r["variant"]][int(r["ranks"])].setdefault(int(r["pairs"]), ([], []))
        c[0].append(num(r["recovery_us"]) / 1e3)
        c[1].append(num(r["floor_us"]) / 1e3)
    return out


def main():
    bench, out = directories(__doc__)
    rs = rows(os.path.join(bench, "recovery-floor.csv"))
    if not rs:
        sys.exit(f"fig_recovery_floor: no rows in {bench}/recovery-floor.csv: run BENCH=recovery-floor make bench")
    by = cells(rs)
    variants = sorted(by)
    os.makedirs(out, exist_ok=True)
    fig, axes = plt.subplots(1, len(variants), figsize=(4.2 * len(variants), 4.2), squeeze=False, sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, v in zip(axes[0], variants):
        for i, n in enumerate(sorted(by[v])):
            ps = sorted(by[v][n])
            rec = [stats.summary(by[v][n][p][0]) for p in ps]
            flo = [stats.summary(by[v][n][p][1]) for p in ps]
            med = [s.median for s in rec]
            err = [[s.median - (s.lo if s.lo is not None else s.median) for s in rec],
                   [(s.hi if s.hi is not None else s.median) - s.median for s in rec]]
            c = colors[i % len(colors)]
            ax.errorbar(ps, med, yerr=err, color=c, marker="o", capsize=3, label=f"{n} ranks")
            ax.plot(ps, [s.median for s in flo], color=c, linestyle="--", marker=".", label=f"{n} ranks, floor")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("pairs stored")
        ax.set_title(v)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("recovery, detection excluded (ms)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("recovery (solid, median and 95% interval) and its floor (dashed) against the pairs stored",
                 fontsize=10)
    path = save(fig, out, "recovery-floor")
    total = sum(r["phase"] == "total" for r in rs)
    print(f"wrote {path}: {total} runs")


if __name__ == "__main__":
    main()
