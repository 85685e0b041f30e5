#!/usr/bin/env python3
"""What resilience and a failure cost a task-parallel application, from
results/bench/taskapp.csv (BENCH=taskapp make bench).

One figure per application and size (taskapp-APP-SIZE.png), four panels,
each a mean with its 95% confidence interval (Student's t over the
repetitions; runs whose answer was not the published one are left out and
counted in the title):
  a. overhead of resilience: time to the answer without failures, per
     variant, relative to the same code not resilient (variant none, r = 1,
     no state in the store);
  b. time a failure costs: time to the answer with one rank killed minus
     the mean without, per variant, beside checkpoint/restart;
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

import pyfind

pyfind.ensure()  # a python3 with matplotlib (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchfiles import directories, num, rows, save  # noqa: E402

# The statistics of the benchmark's table, defined once beside report.py
# (loaded by path: the two folders are not one package).
_spec = importlib.util.spec_from_file_location(
    "report_taskapp", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "experiments", "bench", "report_taskapp.py"))
report_taskapp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_taskapp)
mean_ci = report_taskapp.mean_ci


def times(rs, **want):
    """solve_s of the correct runs in rs that match every want[column]."""
    return [num(r["solve_s"]) for r in rs if r["correct"] == "true" and num(r["solve_s"]) is not None
            and all(r[k] == str(v) for k, v in want.items())]


def bars(ax, labels, vals, title, ylabel):
    xs = range(len(labels))
    ms = [v[0] if v[0] is not None else 0 for v in vals]
    ax.bar(xs, ms, yerr=[v[1] or 0 for v in vals], capsize=3, color="tab:blue")  # one run: no bar
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_title(title)
    ax.set_ylabel(ylabel)


# Where each set's failure-free runs are: a variant's kill runs (set
# failure) are measured against its runs of set overhead.
BASE_SET = {"overhead": "overhead", "failure": "overhead", "restart": "restart"}


def overhead(ax, rs):
    base = mean_ci(times(rs, set="overhead", variant="none", kills=0))[0]
    pairs = sorted({(r["set"], r["variant"]) for r in rs if r["set"] in ("overhead", "restart")
                    and r["variant"] != "none"}, key=lambda p: p[1])
    vs = [v for _, v in pairs]
    vals = []
    for s, v in pairs:
        m, h = mean_ci(times(rs, set=s, variant=v, kills=0))
        vals.append((m / base, (h or 0) / base) if m is not None and base else (None, None))
    bars(ax, vs, vals, "a. overhead of resilience (no failure)", "time / not resilient")
    ax.axhline(1.0, color="gray", lw=0.8)


def failure_cost(ax, rs):
    labels, vals = [], []
    for s, v in sorted({(r["set"], r["variant"]) for r in rs if r["set"] in ("failure", "restart")},
                       key=lambda p: p[1]):
        base = mean_ci(times(rs, set=BASE_SET[s], variant=v, kills=0))[0]
        killed = times(rs, set=s, variant=v, kills=1)
        if base is None or not killed:
            continue
        m, h = mean_ci([t - base for t in killed])
        labels.append(v)
        vals.append((m, h))
    bars(ax, labels, vals, "b. time a failure costs (one kill)", "seconds (kill - no kill)")


def lines(ax, rs, s, xcol, series, title, xlabel):
    for label, want in series:
        xs = sorted({int(float(r[xcol])) for r in rs if r["set"] == s})
        pts = [(x, mean_ci(times(rs, set=s, **{xcol: x}, **want))) for x in xs]
        pts = [(x, m, h) for x, (m, h) in pts if m is not None]
        if pts:
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] or 0 for p in pts], marker="o",
                        capsize=3, label=label)
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
                 f"{f', {wrong} without the published answer (left out)' if wrong else ''}; mean, 95% CI")
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
