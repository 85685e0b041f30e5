#!/usr/bin/env python3
"""Throughput through one kill, per variant, from results/bench/timeline-bins.csv.

Reads NAME-bins.csv (BENCH=timeline make bench: every run's 10 ms bins
around the kill, each as its rate over the run's failure-free rate) and
NAME.csv (the runs and their outcomes; NAME timeline, or timeline-3hosts
for TIMELINE_HOSTS=3), and draws NAME.png: one
panel per variant, the bins of every run as thin lines and their median per
bin as a thick one, against the time from the kill (the bin that holds the
kill drawn from 0 on); a dotted line at half
the failure-free rate, the aim of a store that keeps serving.  The title
names the revision and the MPI build that made the file (NAME.meta).
A variant without bins is named on its panel: no data is never an error.
Usage: fig_timeline_bench.py [BENCH_DIR [OUT_DIR]] [--name NAME]  (default
results/bench, BENCH_DIR/figures, timeline).  Prints what it drew and from how many runs.
"""
import collections
import math
import os
import statistics as st
import sys

import pyfind

pyfind.ensure()  # a python3 with matplotlib (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchfiles import directories, num, rows, save, sidecar  # noqa: E402


def main():
    bench, out, name = directories(__doc__, "timeline")
    bins, runs = rows(os.path.join(bench, name + "-bins.csv")), rows(os.path.join(bench, name + ".csv"))
    if not runs:
        print(f"fig_timeline_bench: no {name}.csv in {bench}", file=sys.stderr)
        return 1
    width = num(runs[0]["bin_ms"]) or 10.0
    variants = list(dict.fromkeys(r["variant"] for r in runs))
    series = collections.defaultdict(lambda: collections.defaultdict(list))  # variant -> rep -> [(t, ratio)]
    for b in bins:
        t, ratio = num(b["t_ms"]), num(b["ratio"])
        if t is not None and ratio is not None:
            series[b["variant"]][b["rep"]].append((t, ratio))
    cols = min(3, len(variants))
    nrows = math.ceil(len(variants) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.0 * nrows), sharex=True, sharey=True,
                             squeeze=False)
    for ax, v in zip(axes.flat, variants):
        reps = series.get(v, {})
        by_bin = collections.defaultdict(list)
        for pts in reps.values():
            pts.sort()
            ax.plot([width * math.ceil(t / width) for t, _ in pts], [r for _, r in pts], color="#9db4d8", lw=0.8,
                    drawstyle="steps-post")
            for t, r in pts:  # the bin holding the kill (t in (-width, 0]) is drawn from 0
                by_bin[math.ceil(t / width)].append(r)
        if by_bin:
            ks = sorted(by_bin)
            ax.plot([k * width for k in ks], [st.median(by_bin[k]) for k in ks], color="#1f4e9c", lw=2,
                    drawstyle="steps-post", label="median of the runs")
        else:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center")
        ax.axvline(0, color="#c03030", ls="--", lw=1)
        ax.axhline(0.5, color="#606060", ls=":", lw=1)
        ax.set_title(f"{v} ({len(reps)} runs)", fontsize=10)
        ax.set_ylim(0, 2.0)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(variants):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("ms from the kill (the bin holding it from 0)")
    for ax in axes[:, 0]:
        ax.set_ylabel("throughput / failure-free")
    m = sidecar(os.path.join(bench, name + ".meta"))
    hosts = f", {m['command'].split('TIMELINE_HOSTS=')[1].split()[0]} hosts" if "TIMELINE_HOSTS=" in m.get("command", "") else ""
    mpi = os.path.basename(m.get("mpi", "NA").split(" at ")[-1])
    fig.suptitle(f"Throughput through one kill{hosts}, {width:.0f} ms bins; dotted: half the failure-free rate\n"
                 f"(revision {m.get('revision', 'NA')}, {mpi})", fontsize=10)
    os.makedirs(out, exist_ok=True)
    path = save(fig, out, name)
    print(f"fig_timeline_bench: {path} from {sum(len(series[v]) for v in variants)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
