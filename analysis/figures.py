#!/usr/bin/env python3
"""Make every figure and table of one campaign.

usage: analysis/figures.py RESULTS_DIR [--out DIR] [--no-gnuplot] [--summary-only]

RESULTS_DIR is results/CAMPAIGN/ (runs.csv and one RUN_ID/ per run, found by
its meta.json; docs/formats.md).  DIR (default RESULTS_DIR/figures)
receives every figure as PNG and PDF, summary.md and summary.csv, and
data/*.csv plus data/vars.gp for the gnuplot scripts, which
analysis/gnuplot.sh then runs (when gnuplot is installed) to make the
*_gnuplot.png figures.  A malformed or partial input prints
"error: FILE: problem" and exits 2.  Every figure is always written; one
without data carries a "no data" note.  Needs Debian's python3-matplotlib
and python3-numpy (`make deps`): started by a python3 without them, it runs
itself with the next python3 on PATH that has them (pyfind.py).
"""
import argparse
import glob
import importlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import pyfind  # noqa: E402

pyfind.ensure()  # a python3 with matplotlib (pyfind.py)

import summary  # noqa: E402
from results import Campaign, ResultsError  # noqa: E402

# The figure modules, imported after the input was checked (matplotlib's
# import takes a second).
MODULES = ("fig_timeline", "fig_recovery", "fig_latency", "fig_overhead", "fig_hangs",
           "fig_baselines")
FIGURES = ("throughput_timeline", "recovery_phases", "recovery_vs_ranks", "recovery_vs_pairs",
           "latency_cdf", "latency_percentiles", "overhead_replication", "hang_rate", "baseline_checkpoint",
           "baseline_redis")
GNUPLOT_FIGURES = ("throughput_timeline_gnuplot", "recovery_phases_gnuplot",
                   "latency_cdf_gnuplot")


def write_vars(path, gp):
    """gnuplot variable file: strings quoted, numbers plain."""
    with open(path, "w") as f:
        f.write("# written by analysis/figures.py: values for analysis/gnuplot/*.gp\n")
        for k, v in sorted(gp.items()):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                f.write(f"{k} = {v}\n")
            else:
                s = str(v).replace("\\", "\\\\").replace('"', '\\"')
                f.write(f'{k} = "{s}"\n')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results_dir", metavar="RESULTS_DIR")
    ap.add_argument("--out", metavar="DIR", help="output directory (default RESULTS_DIR/figures)")
    ap.add_argument("--no-gnuplot", action="store_true", help="skip the gnuplot figures")
    ap.add_argument("--summary-only", action="store_true",
                    help="check the input and write summary.md and summary.csv only")
    a = ap.parse_args(argv)
    try:
        camp = Campaign(a.results_dir)
    except ResultsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = a.out or os.path.join(a.results_dir, "figures")
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    for old in glob.glob(os.path.join(data, "*.csv")) + glob.glob(os.path.join(data, "vars.gp")):
        os.remove(old)
    gp = {"campaign": camp.name}
    files = summary.write(camp, out)
    if a.summary_only:
        print(f"campaign {camp.name}: {len(camp.all_runs())} runs; wrote {', '.join(files)}")
        return 0
    for name in MODULES:
        files += importlib.import_module(name).make(camp, out, gp)
    write_vars(os.path.join(data, "vars.gp"), gp)
    n_fin = len(camp.finished())
    print(f"campaign {camp.name}: {len(camp.all_runs())} runs ({n_fin} finished); "
          f"{len(files)} files in {out}")
    if a.no_gnuplot:
        print("note: gnuplot figures skipped (--no-gnuplot)")
    elif shutil.which("gnuplot"):
        rc = subprocess.call(["bash", os.path.join(HERE, "gnuplot.sh"), out])
        if rc != 0:
            print(f"error: analysis/gnuplot.sh {out} failed (exit {rc})", file=sys.stderr)
            return 1
    else:
        print("note: gnuplot not installed: the *_gnuplot.png figures are not made")
    return 0


if __name__ == "__main__":
    sys.exit(main())
