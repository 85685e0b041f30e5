#!/usr/bin/env python3
"""nodeloss_row.py -- one row of results/bench/nodeloss.csv from one driver run.

bench_nodeloss.sh runs kv_driver under scripts/kvrun and calls this with
the run directory and what kvrun said; it prints the CSV row (or, with
--header, the header: the one list of the columns).  From the run
directory (docs/formats.md): kills.csv gives what was killed (processes
and their hosts), recovery.csv the detection and recovery times (per
survivor rank and recovery), summary.txt and meta.json the reads that
found a loaded record missing or wrong.  A column the run did not produce
(an aborted run writes no results) is NA.
"""
import argparse
import csv
import os
import re
import sys

COLUMNS = ["variant", "rep", "seed", "ranks", "nodes", "outcome", "killed", "victim_hosts", "lost",
           "detect_first_us", "detect_last_us", "recoveries", "revoke_us", "shrink_us", "agree_us",
           "windows_us", "rereplicate_us", "total_us", "seconds", "message"]
PHASES = ["revoke_us", "shrink_us", "agree_us", "windows_us", "rereplicate_us", "total_us"]
# scripts/kvrun's exit status -> outcome
OUTCOMES = {0: "pass", 1: "failed", 2: "crashed", 3: "hung", 4: "aborted"}


def table(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return None


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fmt(x):
    return "NA" if x is None else f"{x:.0f}"


def kills(d):
    """(processes killed, their hosts ';'-joined), NA when no kill log."""
    k = table(os.path.join(d, "kills.csv"))
    if k is None:
        return "NA", "NA"
    return str(len(k)), ";".join(sorted({r["host"] for r in k})) or "NA"


def lost(d):
    """Reads of loaded records that found nothing or a wrong value, summed
    over the survivors: the driver's "# run ..." line (verify errors, not
    found), in the run's output (kvrun.log) or an older summary.txt."""
    for name in ("kvrun.log", "summary.txt"):
        try:
            with open(os.path.join(d, name), errors="replace") as f:
                m = re.search(r"verify errors (\d+), not found (\d+)", f.read().replace("\0", ""))
        except OSError:
            continue
        if m:
            return str(int(m.group(1)) + int(m.group(2)))
    return "NA"


def recovery(d):
    """detect first and last (first recovery, over survivors), the number
    of recoveries, and each phase summed over a rank's recoveries, the
    maximum over ranks."""
    rows = table(os.path.join(d, "recovery.csv")) or []
    if not rows:
        return ["NA", "NA", "0" if os.path.exists(os.path.join(d, "recovery.csv")) else "NA"] + \
               ["NA"] * len(PHASES)
    first = min(int(r["failure"]) for r in rows)
    det = [num(r["detect_us"]) for r in rows if int(r["failure"]) == first]
    det = [x for x in det if x is not None]
    per_rank = {}
    for r in rows:
        acc = per_rank.setdefault(r["rank"], [0.0] * len(PHASES))
        for i, p in enumerate(PHASES):
            acc[i] += num(r[p]) or 0
    phases = [max(acc[i] for acc in per_rank.values()) for i in range(len(PHASES))]
    return [fmt(min(det) if det else None), fmt(max(det) if det else None),
            str(len({r["failure"] for r in rows}))] + [fmt(x) for x in phases]


def row_parser(doc):
    """The arguments every X_row.py of a driver run takes (this one's and
    timeline_row.py's): --header, --dir, --variant, --rep, --ranks, --rc;
    doc's first paragraph is the help."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--header", action="store_true", help="print the header line only")
    ap.add_argument("--dir", help="the run directory (driver.out)")
    ap.add_argument("--variant")
    ap.add_argument("--rep")
    ap.add_argument("--ranks")
    ap.add_argument("--rc", type=int, help="scripts/kvrun's exit status")
    return ap


def main():
    ap = row_parser(__doc__)
    ap.add_argument("--seed")
    ap.add_argument("--nodes")
    ap.add_argument("--seconds", help="the run's wall time")
    ap.add_argument("--kvrun", default="", help="kvrun's last line")
    ap.add_argument("--unsupported", metavar="WHY",
                    help="not run: the MPI's probe says it cannot support the run (no --dir, --rc)")
    a = ap.parse_args()
    w = csv.writer(sys.stdout, lineterminator="\n")
    if a.header:
        w.writerow(COLUMNS)
        return 0
    if a.unsupported:
        w.writerow([a.variant, a.rep, a.seed, a.ranks, a.nodes, "unsupported"] + ["NA"] * 3 +
                   ["NA", "NA", "0"] + ["NA"] * len(PHASES) + ["NA", a.unsupported])
        return 0
    if not a.dir or a.rc is None:
        ap.error("--dir and --rc are needed (or --header, or --unsupported)")
    k, hosts = kills(a.dir)
    msg = re.sub(r"^kvrun: ", "", a.kvrun.strip())
    w.writerow([a.variant, a.rep, a.seed, a.ranks, a.nodes, OUTCOMES.get(a.rc, "error"), k, hosts,
                lost(a.dir)] + recovery(a.dir) + [a.seconds, msg])
    return 0


if __name__ == "__main__":
    sys.exit(main())
