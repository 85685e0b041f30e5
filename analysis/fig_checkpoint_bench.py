#!/usr/bin/env python3
"""Checkpoint/restart against in-memory recovery, from results/bench/.

Reads checkpoint.csv (experiments/bench/bench_checkpoint.sh) and recovery.csv
(the recovery matrix of experiments/bench/bench.sh) and draws one figure with
three panels:
  a. checkpoint time against the bytes each rank writes, one line per rank
     count, with the time the disk's plain write+fsync of the same bytes
     would take (measured in the same runs): is the checkpoint disk-bound?
  b. failure-free throughput against the checkpoint interval, relative to
     no checkpoints;
  c. time until the store serves again after a rank is killed, 4 ranks,
     100k and 1M pairs in all: restart (job start + reload + resume,
     stacked) beside each in-memory variant (detection + recovery), medians.
Usage: fig_checkpoint_bench.py [BENCH_DIR [OUT_DIR]]  (default results/bench,
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


def main():
    bench, out = directories(__doc__)
    ck = rows(os.path.join(bench, "checkpoint.csv"))
    rec = rows(os.path.join(bench, "recovery.csv"))
    if not ck:
        sys.exit(f"fig_checkpoint_bench: no {bench}/checkpoint.csv: run BENCH=checkpoint make bench")
    os.makedirs(out, exist_ok=True)
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.5))

    cost = [r for r in ck if r["mode"] == "cost"]
    for n in sorted({int(r["ranks"]) for r in cost}):
        pts = {}
        for r in cost:
            if int(r["ranks"]) == n:
                pts.setdefault(int(r["bytes"]) / n / 1e6, []).append(r)
        xs = sorted(pts)
        sm = [stats.summary([float(r["ckpt_s"]) for r in pts[x]]) for x in xs]
        errs = [stats.errorbar(v) for v in sm]
        a.errorbar(xs, [v.median for v in sm], yerr=[[e[0][0] for e in errs], [e[1][0] for e in errs]],
                   fmt="o-", capsize=3, label=f"{n} ranks: checkpoint")
        a.plot(xs, [x / st.median(float(r["disk_mb_s"]) / n for r in pts[x]) for x in xs], "x:",
               label=f"{n} ranks: disk write+fsync")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("MB per rank")
    a.set_ylabel("seconds (median, 95% CI)")
    a.set_title("a. checkpoint time")
    a.legend(fontsize=7)

    ov = [r for r in ck if r["mode"] == "overhead"]
    base = [float(r["ops_per_s"]) for r in ov if float(r["interval_s"]) == 0]
    if base:
        b0 = st.median(base)
        ivs = sorted({float(r["interval_s"]) for r in ov if float(r["interval_s"]) > 0})
        sm = [stats.summary([float(r["ops_per_s"]) / b0 for r in ov if float(r["interval_s"]) == iv])
              for iv in ivs]
        errs = [stats.errorbar(v) for v in sm]
        b.errorbar(ivs, [v.median for v in sm], yerr=[[e[0][0] for e in errs], [e[1][0] for e in errs]],
                   fmt="o-", capsize=3, label="median, 95% CI; dots: runs")
        b.legend(fontsize=7)
        for iv in ivs:
            pts = [float(r["ops_per_s"]) / b0 for r in ov if float(r["interval_s"]) == iv]
            b.plot([iv] * len(pts), pts, ".", color="grey")
        b.axhline(1.0, color="black", lw=0.8)
        b.set_xscale("log")
        b.set_xticks(ivs)
        b.set_xticklabels([f"{iv:g}" for iv in ivs])
        b.minorticks_off()
        b.set_xlabel("checkpoint interval (s)")
        b.set_ylabel("throughput / throughput without checkpoints")
        b.set_title(f"b. failure-free cost (4 ranks, n={len(ov)} runs)")

    labels, parts = [], []
    for pairs, per_rank in ((100000, 25000), (1000000, 250000)):
        rs = [r for r in ck if r["mode"] == "restart" and int(r["pairs_per_rank"]) == per_rank
              and num(r["job_start_s"]) is not None]
        if rs:
            labels.append(f"restart\n{pairs // 1000}k (n={len(rs)})")
            parts.append([st.median(float(r[k]) for r in rs) for k in ("job_start_s", "reload_s", "resume_s")])
        for v in ("recreate-copy", "recreate-inplace", "recreate-free", "spare"):
            g = [r for r in rec if r["variant"] == v and r["ranks"] == "4" and int(r["pairs"]) == pairs
                 and r["hang"] == "no"]
            if g:
                labels.append(f"{v}\n{pairs // 1000}k (n={len(g)})")
                parts.append([st.median(float(r["detect_us"]) for r in g) / 1e6,
                              st.median(float(r["total_us"]) for r in g) / 1e6, 0])
    bottom = [0.0] * len(parts)
    names = ("job start / detection", "reload / recovery", "resume")
    for i, name in enumerate(names):
        vals = [p[i] for p in parts]
        c.bar(range(len(parts)), vals, bottom=bottom, label=name)
        bottom = [x + y for x, y in zip(bottom, vals)]
    c.set_xticks(range(len(parts)))
    c.set_xticklabels(labels, rotation=90, fontsize=7)
    c.set_yscale("log")
    c.set_ylabel("seconds until serving again (medians of the parts)")
    c.set_title("c. after a kill, 4 ranks")
    c.legend(fontsize=7)

    path = save(fig, out, "checkpoint")
    print(f"wrote {path}: {len(cost)} cost, {len(ov)} overhead, "
          f"{sum(1 for r in ck if r['mode'] == 'restart')} restart rows; {len(rec)} recovery rows")


if __name__ == "__main__":
    main()
