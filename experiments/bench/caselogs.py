#!/usr/bin/env python3
"""caselogs.py -- the cases of one tests/run.sh run, read from its logs.

One CSV row per case log (LOGDIR/CASE.log) whose name starts with one of
the prefixes and ends with none of the --skip suffixes: the case, its
backend (allocate, create or none, from the name), the extra columns
that --column NAME=VALUE gives (repeatable, in order), the outcome from scripts/kvrun's verdict
line (pass, hung, crashed or fail), and for a case that did not pass its
signature: the first match of --why in the log, else the verdict.  The
benchmarks that record which cases pass under some condition use it
(bench_uct.sh: over btl/uct; bench_conformance.sh: the switch on and off).

usage: caselogs.py LOGDIR PREFIX... [--skip=SUFFIX,...] [--why REGEX]
                   [--column NAME=VALUE] [--header]
"""
import argparse
import glob
import os
import re
import sys


def verdict(text):
    """kvrun's last status line ("kvrun: FINISHED PASS ..."), or a stand-in."""
    lines = [l for l in text.splitlines() if re.match(r"\s*kvrun: [A-Z]+ ", l) and "launch:" not in l]
    return (lines or ["kvrun: no verdict"])[-1].strip()


def outcome(status):
    return ("pass" if "FINISHED PASS" in status else "hung" if "HUNG" in status
            else "crashed" if "CRASHED" in status else "fail")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logdir")
    ap.add_argument("prefix", nargs="+")
    ap.add_argument("--skip", default="", help="suffixes, comma-separated (--skip=-off,-stock)")
    ap.add_argument("--why", default=r"$^")
    ap.add_argument("--column", action="append", default=[])
    ap.add_argument("--header", action="store_true")
    a = ap.parse_args()
    why = re.compile(a.why)
    extra = [c.split("=", 1) for c in a.column]
    out = sys.stdout
    if a.header:
        out.write(",".join(["case", "backend"] + [k for k, _ in extra] + ["outcome", "signature"]) + "\n")
    for p in sorted(glob.glob(os.path.join(a.logdir, "*.log"))):
        case = os.path.basename(p)[:-4]
        skip = tuple(x for x in a.skip.split(",") if x)
        if not case.startswith(tuple(a.prefix)) or (skip and case.endswith(skip)):
            continue
        text = open(p, "rb").read().decode("utf-8", "replace").replace("\0", "")
        status = verdict(text)
        result = outcome(status)
        m = why.search(text)
        sig = "" if result == "pass" else (m.group(0) if m else status)
        sig = re.sub(r"\s+", " ", sig.split("] ")[-1]).replace(",", ";")[:120]
        backend = "allocate" if "-allocate" in case else "create" if "-create" in case else "none"
        out.write(",".join([case, backend] + [v for _, v in extra] + [result, sig]) + "\n")


if __name__ == "__main__":
    main()
