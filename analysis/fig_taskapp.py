#!/usr/bin/env python3
"""What resilience and a failure cost a task-parallel application, from
results/bench/taskapp.csv (BENCH=taskapp make bench).

One figure per application and size (taskapp-APP-SIZE.png), four panels,
each the median of the repetitions with its 95% distribution-free interval
(stats.py, as every figure and table; runs whose answer was not the
published one are left out and counted in the title):
  a. overhead of resilience: time to the answer without failures, per
     variant, relative to the same code not resilient (variant none, r = 1,
     no state in the store);
  b. time a failure costs: per repetition, time to the answer with one
     rank killed minus the time without, per variant, beside
     checkpoint/restart;
  c. time to the answer against the number of ranks, with and without a
     kill;
  d. against the checkpoint frequency (how often a rank's state goes to
     the store), with and without a kill.
Usage: fig_taskapp.py [BENCH_DIR [OUT_DIR]]  (default results/bench,
BENCH_DIR/figures).  Prints what it drew and from how many runs.
"""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import pyfind  # noqa: E402

pyfind.ensure()  # a python3 with matplotlib, numpy and scipy (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import stats  # noqa: E402
from benchfiles import directories, num, rows, save  # noqa: E402

# The selections of the benchmark's table, defined once beside report.py
# (loaded by path: the two folders are not one package).
_spec = importlib.util.spec_from_file_location(
    "report_taskapp", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "experiments", "bench", "report_taskapp.py"))
report_taskapp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_taskapp)


def times(rs, **want):
    """solve_s of the correct runs in rs that match every want[column]."""
    return [num(r["solve_s"]) for r in rs if r["correct"] == "true" and num(r["solve_s"]) is not None
            and all(r[k] == str(v) for k, v in want.items())]


def bars(ax, labels, sums, title, ylabel, scale=1.0):
    """One bar per stats.Summary (its median), its interval as the error bar."""
    xs = range(len(labels))
    ms = [s.median * scale if s.median is not None else 0 for s in sums]
    lo_hi = [stats.errorbar(s, scale) for s in sums]  # one run: no interval
    ax.bar(xs, ms, yerr=[[e[0][0] for e in lo_hi], [e[1][0] for e in lo_hi]], capsize=3, color="tab:blue")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_title(title)
    ax.set_ylabel(ylabel)


def overhead(ax, rs):
    base = stats.summary(times(rs, set="overhead", variant="none", kills=0)).median
    pairs = sorted({(r["set"], r["variant"]) for r in rs if r["set"] in ("overhead", "restart")
                    and r["variant"] != "none"}, key=lambda p: p[1])
    sums = [stats.summary(times(rs, set=s, variant=v, kills=0)) for s, v in pairs]
    if base:  # relative to the not resilient code's median
        bars(ax, [v for _, v in pairs], sums, "a. overhead of resilience (no failure)", "time / not resilient",
             1.0 / base)
    ax.axhline(1.0, color="gray", lw=0.8)


def failure_cost(ax, rs):
    labels, sums = [], []
    for s, v in sorted({(r["set"], r["variant"]) for r in rs if r["set"] in ("failure", "restart")},
                       key=lambda p: p[1]):
        costs = report_taskapp.failure_costs(rs, report_taskapp.SETS[s], v)
        if costs:
            labels.append(v)
            sums.append(stats.summary(costs))
    bars(ax, labels, sums, "b. time a failure costs (one kill)", "seconds (kill - no kill, per repetition)")


def lines(ax, rs, s, xcol, series, title, xlabel):
    for label, want in series:
        xs = sorted({int(float(r[xcol])) for r in rs if r["set"] == s})
        pts = [(x, stats.summary(times(rs, set=s, **{xcol: x}, **want))) for x in xs]
        pts = [(x, sm) for x, sm in pts if sm.median is not None]
        if pts:
            err = [stats.errorbar(sm) for _, sm in pts]
            ax.errorbar([x for x, _ in pts], [sm.median for _, sm in pts],
                        yerr=[[e[0][0] for e in err], [e[1][0] for e in err]], marker="o", capsize=3, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds to the answer")
    ax.set_title(title)
    ax.legend(fontsize=7)


def draw(rs, app, size, out):
    fig, ((a, b), (c, d)) = plt.subplots(2, 2, figsize=(11, 8))
    overhead(a, rs)
    failure_cost(b, rs)
    lines(c, rs, "ranks", "ranks", [("not resilient", {"variant": "none", "kills": 0}),
                                    ("recreate-copy", {"variant": "recreate-copy", "kills": 0}),
                                    ("recreate-copy, 1 kill", {"variant": "recreate-copy", "kills": 1}),
                                    ("proposed", {"variant": "proposed", "kills": 0}),
                                    ("proposed, 1 kill", {"variant": "proposed", "kills": 1})],
          "c. against ranks", "ranks")
    lines(d, rs, "frequency", "checkpoint_ms", [("no kill", {"kills": 0}), ("1 kill", {"kills": 1})],
          "d. against the checkpoint interval (recreate-copy)", "checkpoint_ms")
    d.set_xscale("log")
    wrong = sum(r["correct"] != "true" for r in rs)
    fig.suptitle(f"task runtime on the store: {app} {size}, {len(rs)} runs"
                 f"{f', {wrong} without the published answer (left out)' if wrong else ''}; median, 95% CI (order statistics)")
    return save(fig, out, f"taskapp-{app}-{size}")


def main():
    bench, out = directories(__doc__)
    rs = rows(os.path.join(bench, "taskapp.csv"))
    if not rs:
        sys.exit(f"fig_taskapp: no {bench}/taskapp.csv: run BENCH=taskapp make bench")
    os.makedirs(out, exist_ok=True)
    for app, size in sorted({(r["app"], r["size"]) for r in rs}):
        sub = [r for r in rs if (r["app"], r["size"]) == (app, size)]
        print(f"fig_taskapp: {draw(sub, app, size, out)} from {len(sub)} runs")


if __name__ == "__main__":
    main()
