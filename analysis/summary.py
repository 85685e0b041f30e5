"""The campaign's summary table: summary.csv and summary.md.

One row per configuration (variant, backend, ranks, replicas, workload,
records, failure spec; in a campaign that sweeps only variants: one row per variant
and backend).  Columns: runs (runs.csv plus runs found only by meta.json),
hung, finished; then, over the finished runs, each value with the number of
runs behind it (column NAME_n):
  throughput_ops_per_s  median of common.run_throughput
  read_p50_us, read_p99_us  median of latency.csv op=read phase=all
  detect_us ... total_us    median of common.run_recovery (per run the
                            maximum over ranks, median over its failures)
A value without data is NA (n = 0).
"""
import csv
import os

import common as C
from results import KEY_FIELDS, PHASES

KEY_COLS = list(KEY_FIELDS)
VALUE_COLS = (["throughput_ops_per_s", "read_p50_us", "read_p99_us"]
              + [p + "_us" for p in ("detect",) + PHASES + ("total",)])
HEADER = KEY_COLS + ["runs", "hung", "finished"] + [c for v in VALUE_COLS for c in (v, v + "_n")]


def rows(camp):
    """[dict] in variant order, one per configuration."""
    groups = {}
    for key, status, run in camp.all_runs():
        groups.setdefault(key, []).append((status, run))
    out = []
    for key in sorted(groups, key=C.key_sort):
        entries = groups[key]
        fin = [run for status, run in entries if status == "finished" and run is not None]
        row = dict(zip(KEY_COLS, key))
        row["runs"] = len(entries)
        row["hung"] = sum(status == "hung" for status, _ in entries)
        row["finished"] = len(fin)
        vals = {"throughput_ops_per_s": [C.run_throughput(r) for r in fin],
                "read_p50_us": [C.run_latency(r, "read", "all", "p50_us") for r in fin],
                "read_p99_us": [C.run_latency(r, "read", "all", "p99_us") for r in fin]}
        rec = [C.run_recovery(r) for r in fin if r.table("recovery.csv")]
        for ph in ("detect",) + PHASES + ("total",):
            vals[ph + "_us"] = [x[ph] for x in rec]
        for col in VALUE_COLS:
            v = [x for x in vals[col] if x is not None]
            row[col] = C.median(v)
            row[col + "_n"] = len(v)
        out.append(row)
    return out


def _fmt(v):
    if v is None:
        return "NA"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def write(camp, out):
    table = rows(camp)
    p_csv = os.path.join(out, "summary.csv")
    with open(p_csv, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        for r in table:
            w.writerow([_fmt(r[c]) for c in HEADER])
    p_md = os.path.join(out, "summary.md")
    md_cols = [("variant", "variant"), ("backend", "backend"), ("ranks", "ranks"),
               ("replicas", "r"), ("workload", "workload"), ("records", "pairs"),
               ("failures", "failures"),
               ("runs", "runs"), ("hung", "hung")]
    md_vals = [("throughput_ops_per_s", "throughput (ops/s)"), ("read_p50_us", "read p50 (us)"),
               ("read_p99_us", "read p99 (us)")] + \
        [(p + "_us", f"{p} (us)") for p in ("detect",) + PHASES + ("total",)]
    lines = [f"# Summary of campaign {camp.name}", "",
             "One row per configuration.  Each value is the median over the finished runs "
             "that have it, with the number of those runs as (n=N); NA: no data.  "
             "Recovery phases: per run the maximum over ranks (median over the run's "
             "failures); total excludes detection.  Throughput: all ranks' operations over "
             "the run phase.  Read latency: latency.csv op=read, phase=all.", "",
             "| " + " | ".join(h for _, h in md_cols + md_vals) + " |",
             "|" + "---|" * len(md_cols) + "---:|" * len(md_vals)]

    def cell(r, c):
        v = r[c]
        if c in VALUE_COLS:
            return "NA (n=0)" if v is None else f"{v:.1f} (n={r[c + '_n']})"
        return (_fmt(v) if v != "" else "(none)").replace("|", "\\|")
    for r in table:
        lines.append("| " + " | ".join(cell(r, c) for c, _ in md_cols + md_vals) + " |")
    if not table:
        lines.append("\nno data: the campaign has no runs")
    with open(p_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    return [p_csv, p_md]
