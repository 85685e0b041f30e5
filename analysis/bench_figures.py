#!/usr/bin/env python3
"""Redraw every figure of the benchmark files, from the files alone.

usage: analysis/bench_figures.py [BENCH_DIR [OUT_DIR]]

BENCH_DIR (default results/bench) holds the result files; OUT_DIR (default
BENCH_DIR/figures) receives each figure as PNG and PDF with a footer
naming the files it was drawn from (rows, revisions, MPI build) and
NAME.sha256 beside it (benchfiles.save).  A figure whose files are not in
BENCH_DIR is skipped with a line saying so; a script that fails makes the
exit status 1.  Nothing is built or measured: `make bench-figures` runs
this without the set-up.  FIGURES below is the one list of the benchmark
figures and the files each needs.
"""
import argparse
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (script, the result file it cannot do without, its arguments): the
# arguments' {bench} and {out} are the directories, {name} a timeline file's
# name without .csv.
FIGURES = (("fig_checkpoint_bench.py", "checkpoint.csv", ["{bench}", "{out}"]),
           ("fig_multihost.py", "multihost.csv", ["{bench}", "{out}"]),
           ("fig_nodeloss.py", "nodeloss.csv", ["{bench}", "{out}"]),
           ("fig_proposed.py", "proposed.csv", ["{bench}", "{out}"]),
           ("fig_recovery_floor.py", "recovery-floor.csv", ["{bench}", "{out}"]),
           ("fig_redis.py", "redis.csv", ["{bench}/redis.csv", "{out}"]),
           ("fig_taskapp.py", "taskapp.csv", ["{bench}", "{out}"]),
           ("fig_timeline_bench.py", "{name}-bins.csv", ["{bench}", "{out}", "--name", "{name}"]))


def timelines(bench):
    """The timeline files that have bins: NAME for every NAME-bins.csv."""
    return sorted(os.path.basename(p)[:-len("-bins.csv")] for p in glob.glob(os.path.join(bench, "timeline*-bins.csv")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", nargs="?", metavar="BENCH_DIR", default=os.path.join(ROOT, "results", "bench"))
    ap.add_argument("out", nargs="?", metavar="OUT_DIR")
    a = ap.parse_args()
    bench = os.path.abspath(a.bench)
    out = os.path.abspath(a.out or os.path.join(bench, "figures"))
    rc = 0
    for script, need, args in FIGURES:
        for name in (timelines(bench) if "{name}" in need else [None]):
            f = {"bench": bench, "out": out, "name": name}
            if not os.path.exists(os.path.join(bench, need.format(**f))):
                print(f"skipped {script}: no {need.format(**f)} in {bench}")
                continue
            cmd = [sys.executable, os.path.join(HERE, script)] + [x.format(**f) for x in args]
            r = subprocess.run(cmd)
            if r.returncode != 0:
                print(f"error: {' '.join(cmd)} exited {r.returncode}", file=sys.stderr)
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
