#!/usr/bin/env python3
"""report.py -- every benchmark table, computed from the files of results/bench/.

Each table is a function of the committed CSV files (medians over
repetitions, with the number of runs behind each value), printed as
Markdown.  The benchmark scripts print their tables with it, and the
documents carry them in marked regions that it rewrites, so no number in a
table is ever typed:

    <!-- report: TABLE [TABLE...] -->
    ... written by report.py ...
    <!-- end report -->

  report.py print [TABLE ...] [--dir DIR] [--file CSV]   tables to stdout (default: all)
  report.py update FILE ...                              rewrite the marked regions of FILE
  report.py check FILE ...                               exit 1 if a region is out of date

`make report` updates docs/benchmarks.md and README.md; tests/scripts/
test_report.sh checks that they match the committed results.  Table `loc`
counts lines of the recovery code in kvstore/ instead of a result file:
`check` leaves it out (an edit of recovery code is not a stale result).
"""
import argparse
import collections
import csv
import os
import re
import statistics
import sys

import report_taskapp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VARIANTS = ("recreate-copy", "recreate-inplace", "recreate-free", "spare")
HISTORY_OUTCOMES = ("pass", "lost", "nonlinearizable", "divergent", "failed", "crashed", "hung")
BENCH = os.path.join(ROOT, "results", "bench")  # --dir replaces it
OVERRIDE = {}  # file name -> the path --file gave for it


def rows(name):
    path = OVERRIDE.get(name) or os.path.join(BENCH, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def med(values):
    vals = [float(v) for v in values if v not in ("", "NA", None)]
    return statistics.median(vals) if vals else float("nan")


def table(head, body):
    """Markdown table lines from a header list and rows of cells."""
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return out + [""]


def store_vs_raw():
    r = rows("store-vs-raw.csv")
    return table(["operation", "backend", "ranks", "store (us)", "raw RMA (us)", "ratio"],
                 [[x["operation"], x["backend"], x["ranks"], f"{float(x['store_us']):.3f}",
                   f"{float(x['raw_us']):.3f}", f"{float(x['ratio']):.2f}"] for x in r]) if r else []


def hotpath():
    r = rows("hotpath.csv")
    return table(["step", "ns per call", "rounds"],
                 [[x["step"], f"{float(x['ns_per_call']):.2f}", x["rounds"]] for x in r]) if r else []


def recovery(name="recovery.csv"):
    r = rows(name)
    if not r:
        return []
    groups = {}
    for x in r:
        groups.setdefault((x["variant"], int(x["ranks"]), int(x["pairs"])), []).append(x)
    body, hung_all, lost_all = [], 0, 0
    for (v, n, p), g in sorted(groups.items()):
        ok = [x for x in g if x["hang"] == "no"]
        ms = lambda col: med([x[col] for x in ok]) / 1000  # noqa: E731
        lost = sum(int(x["lost"]) for x in ok if x["lost"] not in ("", "NA"))
        hung_all += len(g) - len(ok)
        lost_all += lost
        body.append([v, n, p, len(g), len(g) - len(ok), f"{ms('detect_us'):.1f}", f"{ms('windows_us'):.1f}",
                     f"{ms('rereplicate_us'):.1f}", f"{ms('total_us'):.1f}", lost])
    out = table(["variant", "ranks", "pairs", "runs", "hung", "detect (ms)", "windows (ms)",
                 "re-replicate (ms)", "total excl. detect (ms)", "lost in sample"], body)
    return out + [f"{len(r)} runs: {hung_all} hung, {lost_all} pairs of the samples lost.", ""]


def ycsb():
    r = rows("ycsb.csv")
    if not r:
        return []
    t = {}
    for x in r:
        t.setdefault((x["workload"], int(x["ranks"])), {})[x["variant"]] = x["throughput_ops_per_s"]
    kops = lambda v: "NA" if v in ("", "NA", None) else f"{float(v) / 1000:.0f}k"  # noqa: E731
    out = table(["workload", "ranks", "none", *VARIANTS],
                [[w.upper(), n] + [kops(c.get(v)) for v in ("none", *VARIANTS)] for (w, n), c in sorted(t.items())])
    out += ["Failure-free overhead on YCSB B (throughput of `none` / variant - 1):", ""]
    for (w, n), c in sorted(t.items()):
        if w == "b" and c.get("none", "NA") not in ("", "NA"):
            parts = [f"{v} {(float(c['none']) / float(c[v]) - 1) * 100:+.0f}%" for v in VARIANTS
                     if c.get(v, "NA") not in ("", "NA")]
            out.append(f"- {n} ranks: " + ", ".join(parts))
    return out + [""]


def killed_rank0(victims):
    return any(v.split("@")[0] == "0" for v in victims.split(";") if v)


def soak_history(groups):
    body, total = [], collections.Counter()
    for (v, b), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out = collections.Counter(x["outcome"] for x in g)
        total.update(out)
        total["runs"] += len(g)
        sc = collections.Counter(x["scenario"] for x in g)
        body.append([v, b, len(g), *(out[o] for o in HISTORY_OUTCOMES), sum(int(x["orphans"] or 0) for x in g),
                     sum(killed_rank0(x["victims"]) for x in g), sum(int(x["ops"] or 0) for x in g),
                     ", ".join(f"{k} {n}" for k, n in sc.items())])
    out = table(["variant", "backend", "runs", *HISTORY_OUTCOMES, "orphans", "rank 0 killed", "operations",
                 "scenarios (runs)"], body)
    return out + [f"{total['runs']} runs: " + ", ".join(f"{total[o]} {o}" for o in HISTORY_OUTCOMES), ""]


def soak(name="soak.csv"):
    """soak.csv (make soak); hangs-rdma: every hangs-rdma*.csv (SET=hangs-rdma
    make soak writes hangs-rdma.csv; sets run apart keep their own suffix)."""
    if name == "hangs-rdma.csv" and os.path.isdir(BENCH) and name not in OVERRIDE:
        r = [x for n in sorted(os.listdir(BENCH)) if n.startswith("hangs-rdma") and n.endswith(".csv")
             for x in rows(n)]
    else:
        r = rows(name)
    if not r:
        return []
    groups = {}
    for x in r:
        groups.setdefault((x["variant"], x["backend"]), []).append(x)
    if "victims" in r[0]:  # the history soak
        return soak_history(groups)
    body = []
    for (v, b), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out = [x["outcome"] for x in g]
        sc = collections.Counter(x.get("scenario", "single") for x in g)  # old files: single only
        body.append([v, b, len(g), out.count("pass"), out.count("fail"), out.count("hang"),
                     ", ".join(f"{k} {n}" for k, n in sc.items())])
    return table(["variant", "backend", "runs", "passed", "failed", "hung", "scenarios (runs)"], body)


def checkpoint_cost(r):
    cost = {}
    for x in r:
        if x["mode"] == "cost":
            cost.setdefault((int(x["ranks"]), int(x["pairs_per_rank"])), []).append(x)
    return table(["ranks", "pairs per rank", "MB per rank", "checkpoint (s)", "checkpoint MB/s, all ranks",
                  "plain write+fsync MB/s, all ranks", "runs"],
                 [[n, p, f"{med([x['bytes'] for x in g]) / n / 1e6:.1f}", f"{med([x['ckpt_s'] for x in g]):.3f}",
                   f"{med([x['ckpt_mb_s'] for x in g]):.0f}", f"{med([x['disk_mb_s'] for x in g]):.0f}", len(g)]
                  for (n, p), g in sorted(cost.items())]) if cost else []


def checkpoint_overhead(r):
    ov = [x for x in r if x["mode"] == "overhead"]
    base = med([x["ops_per_s"] for x in ov if float(x["interval_s"]) == 0])
    if not ov or base != base:
        return []
    body = []
    for iv in sorted({float(x["interval_s"]) for x in ov}, reverse=True):
        g = [x["ops_per_s"] for x in ov if float(x["interval_s"]) == iv]
        t = med(g)
        body.append(["none" if iv == 0 else f"{iv:g}", f"{t:.0f}", f"{(base / t - 1) * 100:+.1f}%", len(g)])
    return table(["checkpoint interval (s)", "throughput (ops/s)", "overhead", "runs"], body)


def checkpoint_against_recovery(rs, rec):
    """After a kill, 4 ranks: how long until serving again, both ways."""
    cells = []
    for per_rank in (25000, 250000):
        g = [x for x in rs if int(x["pairs_per_rank"]) == per_rank]
        cells.append(med([float(x["job_start_s"]) + float(x["reload_s"]) + float(x["resume_s"]) for x in g]))
    body = [["checkpoint/restart (kill 0.5 s after a checkpoint)", f"{cells[0]:.2f}", f"{cells[1]:.2f}",
             f"{med([x['lost_writes'] for x in rs]):.0f} (median)"]]
    for v in VARIANTS:
        cells = []
        for pairs in (100000, 1000000):
            g = [x for x in rec if x["variant"] == v and x["ranks"] == "4" and int(x["pairs"]) == pairs
                 and x["hang"] == "no"]
            cells.append(med([(float(x["detect_us"]) + float(x["total_us"])) / 1e6 for x in g]))
        body.append([f"{v} (detection + recovery)", f"{cells[0]:.2f}", f"{cells[1]:.2f}", 0])
    return table(["after a kill, 4 ranks", "100k pairs (s)", "1M pairs (s)", "acknowledged writes lost"], body)


def checkpoint():
    r = rows("checkpoint.csv")
    if not r:
        return []
    out = checkpoint_cost(r) + checkpoint_overhead(r)
    rs = [x for x in r if x["mode"] == "restart"]
    rec = rows("recovery.csv")
    if rs and rec:
        out += checkpoint_against_recovery(rs, rec)
    if rs:
        out += table(["pairs per rank (4 ranks)", "job start (s)", "reload (s)", "resume (s)", "writes lost", "runs"],
                     [[p, f"{med([x['job_start_s'] for x in g]):.2f}", f"{med([x['reload_s'] for x in g]):.3f}",
                       f"{med([x['resume_s'] for x in g]):.4f}", f"{med([x['lost_writes'] for x in g]):.0f}", len(g)]
                      for p in sorted({int(x["pairs_per_rank"]) for x in rs})
                      for g in [[x for x in rs if int(x["pairs_per_rank"]) == p]]])
    return out


def proposed():
    """Variant proposed against the workarounds, measured side by side."""
    out, rec = [], rows("proposed.csv")
    if rec:
        out += recovery("proposed.csv")
        cells = sorted({(int(x["ranks"]), int(x["pairs"])) for x in rec}, key=lambda c: (c[1], c[0]))
        others = sorted({x["variant"] for x in rec} - {"proposed"})
        t = lambda v, n, p: med([x["total_us"] for x in rec if x["variant"] == v and int(x["ranks"]) == n  # noqa: E731
                                 and int(x["pairs"]) == p and x["hang"] == "no"])
        out += table(["ranks", "pairs"] + [f"{v} / proposed, recovery" for v in others],
                     [[n, p] + [f"{t(v, n, p) / t('proposed', n, p):.2f}" for v in others] for n, p in cells])
    ov = rows("proposed-overhead.csv")
    if ov:
        body = []
        for wl, n in sorted({(x["workload"], int(x["ranks"])) for x in ov}):
            g = lambda v: [x["throughput_ops_per_s"] for x in ov  # noqa: E731
                           if x["variant"] == v and x["workload"] == wl and int(x["ranks"]) == n]
            none, copy, prop = med(g("none")), med(g("recreate-copy")), med(g("proposed"))
            body.append([f"YCSB {wl.upper()}", n, f"{none:.0f}", f"{copy:.0f} ({(copy / none - 1) * 100:+.1f}%)",
                         f"{prop:.0f} ({(prop / none - 1) * 100:+.1f}%)", f"{prop / copy:.3f}", len(g("proposed"))])
        out += table(["workload", "ranks", "none (ops/s)", "recreate-copy", "proposed", "proposed / recreate-copy",
                      "runs each"], body)
    return out


def redis():
    """The store against Redis: failure-free side by side, and the failovers."""
    r = rows("redis.csv")
    if not r:
        return []
    ff = {}
    for x in r:
        if x["kind"] == "failure-free":
            ff.setdefault((x["workload"], int(x["ranks"])), {})[x["system"]] = x
    k = lambda v, d: "NA" if v in ("", "NA") else f"{float(v) / 1000:.{d}f}k"  # noqa: E731
    pp = lambda x, d: f"{float(x['p50_us']):.{d}f} / {float(x['p99_us']):.0f}"  # noqa: E731
    body = [[w.upper(), n, k(c["store"]["throughput_ops_per_s"], 0), k(c["redis"]["throughput_ops_per_s"], 1),
             f"{float(c['store']['throughput_ops_per_s']) / float(c['redis']['throughput_ops_per_s']):.0f}x",
             pp(c["store"], 1), pp(c["redis"], 1)]
            for (w, n), c in sorted(ff.items()) if "store" in c and "redis" in c]
    out = table(["workload", "ranks", "store (ops/s)", "Redis (ops/s)", "store / Redis", "store p50 / p99 (us)",
                 "Redis p50 / p99 (us)"], body)
    fo = [x for x in r if x["kind"] == "failover"]
    if fo:
        out += table(["failover run", "ranks", "kill to first write, first rank (ms)",
                      "kill to first write, last rank (ms)", "acknowledged writes lost", "degraded writes", "status"],
                     [[x["repetition"], x["ranks"], x["failover_first_ms"], x["failover_last_ms"], x["acked_lost"],
                       x["degraded_writes"], x["status"]] for x in fo])
        first = [float(x["failover_first_ms"]) for x in fo if x["failover_first_ms"] not in ("", "NA")]
        if first:
            out += [f"{len(fo)} failovers: kill to the first acknowledged write {min(first):.0f}-{max(first):.0f} ms "
                    f"(median {statistics.median(first):.0f} ms) on the first rank to write again.", ""]
    return out


def taskapp():
    """A task-parallel application through failures (report_taskapp.py)."""
    return report_taskapp.taskapp_table(rows("taskapp.csv"), table)


def code_lines(path, only=None, skip=()):
    """Lines of C code in path: not blank, not comment, none containing a
    word of skip; with only, just those inside the named functions."""
    n, in_comment, fn = 0, False, None
    for line in open(path):
        t = line.strip()
        if in_comment:
            in_comment = "*/" not in t
            continue
        if t.startswith("/*"):
            in_comment = "*/" not in t
            continue
        if line[:1].isalpha() and "(" in line and line.rstrip().endswith("{"):
            fn = line.split("(")[0].split()[-1].lstrip("*")
        if not t or t.startswith("//") or any(w in t for w in skip):
            continue
        if only is None or fn in only:
            n += 1
        if line.startswith("}"):
            fn = None
    return n


def loc():
    """Recovery code per variant, counted in the source (not a result file):
    the variant's own file, the failure detection only it needs, and the
    recovery every variant shares.  Detection for the workarounds is the
    watchdog (detect.c: start, stop, test, alarm, without the two hooks
    variant proposed adds); proposed detects through the window, in its own
    file.  Both use detect.c's error classification (kvw_status), counted
    with the shared part."""
    kv = os.path.join(ROOT, "kvstore")
    det = os.path.join(kv, "detect.c")
    hooks = ("window_failed", "revoke_window")
    watchdog = code_lines(det, only=("kvw_start", "kvw_stop", "kvw_test", "kvw_alarm"), skip=hooks)
    shared = (sum(code_lines(os.path.join(kv, f)) for f in ("recover.c", "rereplicate.c"))
              + code_lines(det, only=("kvw_is_ft_error", "kvw_failure_known", "kvw_status")))
    body = []
    for v in (*VARIANTS, "proposed"):
        own = code_lines(os.path.join(kv, "variant_" + v.replace("-", "_") + ".c"))
        w = 0 if v == "proposed" else watchdog
        body.append([v, own, w, shared, own + w + shared])
    return table(["variant", "its own file", "failure detection (watchdog)", "shared recovery", "total"], body)


TABLES = {"store-vs-raw": store_vs_raw, "hotpath": hotpath, "recovery": recovery, "ycsb": ycsb,
          "soak": soak, "hangs-rdma": lambda: soak("hangs-rdma.csv"), "checkpoint": checkpoint,
          "proposed": proposed, "redis": redis, "taskapp": taskapp, "loc": loc}
# The file each table reads first (what --file replaces).
PRIMARY = {"store-vs-raw": "store-vs-raw.csv", "hotpath": "hotpath.csv", "recovery": "recovery.csv",
           "ycsb": "ycsb.csv", "soak": "soak.csv", "hangs-rdma": "hangs-rdma.csv",
           "checkpoint": "checkpoint.csv", "proposed": "proposed.csv", "redis": "redis.csv",
           "taskapp": "taskapp.csv"}
REGION = re.compile(r"(<!-- report: ([a-z0-9 -]+) -->\n)(.*?)(<!-- end report -->)", re.S)


class ReportError(Exception):
    pass


def render(names):
    for n in names:
        if n not in TABLES:
            raise ReportError(f"unknown table '{n}' (known: {', '.join(TABLES)})")
    return "".join(line + "\n" for n in names for line in TABLES[n]())


def rewrite(text, where, results_only=False):
    """text with every marked region rewritten (results_only: leave the
    regions of tables that count the source, not a result file)."""
    def one(m):
        names = m.group(2).split()
        if results_only and any(n not in PRIMARY for n in names):
            return m.group(0)
        return m.group(1) + render(names) + m.group(4)
    if "<!-- report:" in text and not REGION.search(text):
        raise ReportError(f"{where}: a '<!-- report:' marker without its '<!-- end report -->'")
    return REGION.sub(one, text)


def cmd_files(paths, write):
    stale = []
    for p in paths:
        try:
            old = open(p, encoding="utf-8").read()
        except OSError as e:
            raise ReportError(f"{p}: {e.strerror}")
        new = rewrite(old, p, results_only=not write)
        if new != old:
            stale.append(p)
            if write:
                with open(p, "w", encoding="utf-8") as f:
                    f.write(new)
                print(f"updated {p}")
    if stale and not write:
        print(f"out of date (run `make report`): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


def main():
    global BENCH
    ap = argparse.ArgumentParser(prog="report.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("print", help="tables to stdout")
    p.add_argument("tables", nargs="*", metavar="TABLE", help="default: all of " + ", ".join(TABLES))
    p.add_argument("--dir", help="the benchmark files' directory (default results/bench)")
    p.add_argument("--file", help="with one TABLE: read this CSV instead of the table's file in DIR")
    for name in ("update", "check"):
        sub.add_parser(name, help=f"{name} the marked regions").add_argument("files", nargs="+", metavar="FILE")
    a = ap.parse_args()
    try:
        if a.command != "print":
            return cmd_files(a.files, a.command == "update")
        BENCH = os.path.abspath(a.dir) if a.dir else BENCH
        names = a.tables or list(TABLES)
        if a.file and (len(names) != 1 or names[0] not in PRIMARY):
            raise ReportError("--file goes with one table that reads a file: " + ", ".join(PRIMARY))
        if a.file:
            OVERRIDE[PRIMARY[names[0]]] = a.file
        sys.stdout.write(render(names))
    except ReportError as e:
        ap.exit(2, f"report.py: error: {e}\n")
    except (KeyError, ValueError) as e:
        ap.exit(2, f"report.py: error: a benchmark file lacks a column or holds a bad number ({e})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
