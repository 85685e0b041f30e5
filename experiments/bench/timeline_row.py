#!/usr/bin/env python3
"""timeline_row.py -- one row of results/bench/timeline.csv from one driver run.

bench_timeline.sh runs kv_driver through one kill and calls this with the
run directory; it prints the CSV row (with --header, the header: the one
list of the columns).  From the run's timeline.csv (bins summed over ranks,
analysis/common.run_timeline), kills.csv and recovery.csv
(common.recovery_spans: from the kill to the end of the last survivor's
recovery, re-replication included, so every pair has its copies again):
  rate_ops_s     the failure-free rate: the median bin before the kill
                 (the first bin, the warm-up, left out);
  worst_ops_s    the lowest bin that overlaps the span from the kill to
                 the end of recovery, and worst_ratio it over rate_ops_s;
  redundant_ms   from the kill to the end of recovery;
  zero_bins      the bins of that span with no operation at all;
  failed_ops     operations that returned an error during that span;
  detect_ms      from the kill to the moment the last survivor noticed
                 it (recovery.csv detect_us, the largest);
  stopped_ms     how long the survivors served nothing in the first
                 recovery (recovery.csv stopped_us, the median over them):
                 with detect_ms, what bounds the worst bin.
A run without a kill or a recovery gives NA for what it lacks.
With --bins FILE it also appends the run's bins around the kill to FILE
(columns BIN_COLUMNS, --bins-header prints them): from BEFORE_MS before
the kill to AFTER_MS after the end of recovery, each bin's start in ms
from the kill and its rate over rate_ops_s: what fig_timeline_bench.py
draws.
"""
import csv
import importlib.util
import os
import statistics
import sys

from nodeloss_row import OUTCOMES, row_parser  # kvrun's exit status -> outcome; the common arguments

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = ["variant", "rep", "ranks", "outcome", "bin_ms", "rate_ops_s", "worst_ops_s",
           "worst_ratio", "redundant_ms", "zero_bins", "failed_ops", "detect_ms",
           "stopped_ms"]
BIN_COLUMNS = ["variant", "rep", "t_ms", "ratio"]
BEFORE_MS, AFTER_MS = 50, 50


def analysis(name):
    here = os.path.join(ROOT, "analysis")
    if here not in sys.path:
        sys.path.insert(0, here)  # common.py imports its siblings by name
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "analysis", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(d, around=None):
    """The row's measured columns for run directory d (NA where missing);
    around, a list, gets (t_ms, ratio) of the bins around the kill."""
    results, common = analysis("results"), analysis("common")
    na = ["NA"] * (len(COLUMNS) - 5)
    try:
        run = results.Run(d, results.read_meta(os.path.join(d, "meta.json")))
    except results.ResultsError:
        return na
    tl = common.run_timeline(run)
    spans = common.recovery_spans(run)
    bins = sorted(tl)
    if len(bins) < 3 or not spans:
        return na
    width = bins[1] - bins[0]
    kill, _, end = spans[0]
    before = [tl[b] for b in bins[1:] if b + width <= kill]
    during = [b for b in bins if b + width > kill and b < end]
    if not before or not during:
        return na
    rate = statistics.median(before)
    worst = min(tl[b] for b in during)
    if around is not None and rate:
        around.extend(((b - kill) * 1e3, tl[b] / rate) for b in bins
                      if kill - BEFORE_MS / 1e3 <= b + width and b <= end + AFTER_MS / 1e3)
    failed = sum(r["failed_ops"] or 0 for r in run.table("timeline.csv")
                 if r["t_start_s"] + width > kill and r["t_start_s"] < end)
    first = [r for r in run.table("recovery.csv") if r["failure"] == 0]
    detect = [r["detect_us"] for r in first if r["detect_us"] is not None]
    stopped = [r["stopped_us"] for r in first if r["stopped_us"] is not None]
    return [f"{width * 1e3:.0f}", f"{rate:.0f}", f"{worst:.0f}", f"{worst / rate:.3f}" if rate else "NA",
            f"{(end - kill) * 1e3:.1f}", str(sum(tl[b] == 0 for b in during)), str(int(failed)),
            f"{max(detect) / 1e3:.2f}" if detect else "NA",
            f"{statistics.median(stopped) / 1e3:.2f}" if stopped else "NA"]


def main():
    ap = row_parser(__doc__)
    ap.add_argument("--bins", metavar="FILE", help="append the bins around the kill to FILE")
    ap.add_argument("--bins-header", action="store_true", help="print the header of --bins' file only")
    a = ap.parse_args()
    w = csv.writer(sys.stdout, lineterminator="\n")
    if a.header or a.bins_header:
        w.writerow(BIN_COLUMNS if a.bins_header else COLUMNS)
        return 0
    if not a.dir or a.rc is None:
        ap.error("--dir and --rc are needed (or --header)")
    around = []
    w.writerow([a.variant, a.rep, a.ranks, OUTCOMES.get(a.rc, "error")] + measure(a.dir, around))
    if a.bins:
        with open(a.bins, "a", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows([a.variant, a.rep, f"{t:.1f}", f"{r:.4f}"]
                                                          for t, r in around)
    return 0


if __name__ == "__main__":
    sys.exit(main())
