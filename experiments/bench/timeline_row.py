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
  failed_ops     operations that returned an error during that span.
A run without a kill or a recovery gives NA for what it lacks.
"""
import argparse
import csv
import importlib.util
import os
import statistics
import sys

from nodeloss_row import OUTCOMES  # scripts/kvrun's exit status -> outcome (this folder)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = ["variant", "rep", "ranks", "load_1min", "outcome", "bin_ms", "rate_ops_s", "worst_ops_s",
           "worst_ratio", "redundant_ms", "zero_bins", "failed_ops"]


def analysis(name):
    here = os.path.join(ROOT, "analysis")
    if here not in sys.path:
        sys.path.insert(0, here)  # common.py imports its siblings by name
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "analysis", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(d):
    """The row's measured columns for run directory d (NA where missing)."""
    results, common = analysis("results"), analysis("common")
    na = ["NA"] * 7
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
    failed = sum(r["failed_ops"] or 0 for r in run.table("timeline.csv")
                 if r["t_start_s"] + width > kill and r["t_start_s"] < end)
    return [f"{width * 1e3:.0f}", f"{rate:.0f}", f"{worst:.0f}", f"{worst / rate:.3f}" if rate else "NA",
            f"{(end - kill) * 1e3:.1f}", str(sum(tl[b] == 0 for b in during)), str(int(failed))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--header", action="store_true", help="print the header line only")
    ap.add_argument("--dir", help="the run directory (driver.out)")
    ap.add_argument("--variant")
    ap.add_argument("--rep")
    ap.add_argument("--ranks")
    ap.add_argument("--load")
    ap.add_argument("--rc", type=int, help="scripts/kvrun's exit status")
    a = ap.parse_args()
    w = csv.writer(sys.stdout, lineterminator="\n")
    if a.header:
        w.writerow(COLUMNS)
        return 0
    if not a.dir or a.rc is None:
        ap.error("--dir and --rc are needed (or --header)")
    w.writerow([a.variant, a.rep, a.ranks, a.load, OUTCOMES.get(a.rc, "error")] + measure(a.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
