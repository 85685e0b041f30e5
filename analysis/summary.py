"""The campaign's summary table: summary.csv and summary.md.

One row per configuration (variant, backend, ranks, replicas, workload,
records, failure spec; in a campaign that sweeps only variants: one row per variant
and backend).  Columns: runs (runs.csv plus runs found only by meta.json),
hung, finished; then, over the finished runs, each value as the median
over runs with its 95% distribution-free interval and the number of runs behind
it (columns NAME, NAME_ci_low, NAME_ci_high, NAME_n; stats.py):
  throughput_ops_per_s  common.run_throughput
  read_p50_us, read_p99_us  latency.csv op=read phase=all
  detect_us ... total_us    common.run_recovery (per run the critical path,
                            the survivor that resumed last; median over its
                            failures); other_us is the part of the total
                            outside the named phases
A value without data is NA (n = 0); one run has no interval (NA).
"""
import csv
import os

import common as C
import stats
from results import KEY_FIELDS

KEY_COLS = list(KEY_FIELDS)
VALUE_COLS = (["throughput_ops_per_s", "read_p50_us", "read_p99_us"]
              + [p + "_us" for p in C.RECOVERY_PARTS])
HEADER = KEY_COLS + ["runs", "hung", "finished"] + [c for v in VALUE_COLS
                                                    for c in (v, v + "_ci_low", v + "_ci_high", v + "_n")]


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
        for ph in C.RECOVERY_PARTS:
            vals[ph + "_us"] = [x[ph] for x in rec]
        for col in VALUE_COLS:
            s = stats.summary(vals[col])
            row[col], row[col + "_ci_low"], row[col + "_ci_high"], row[col + "_n"] = s[:4]
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
        [(p + "_us", f"{p} (us)") for p in C.RECOVERY_PARTS]
    lines = [f"# Summary of campaign {camp.name}", "",
             "One row per configuration.  Each value is the median over the finished runs "
             f"that have it, its {stats.INTERVAL} in brackets, and the "
             "number of those runs as (n=N); NA: no data.  "
             "Recovery phases: per run the critical path, the survivor that resumed last "
             "(median over the run's failures); other is the part of its total outside the "
             "named phases; total excludes detection.  Medians of phases need not add up to "
             "the median total.  Throughput: all ranks' operations over "
             "the run phase.  Read latency: latency.csv op=read, phase=all.", "",
             "| " + " | ".join(h for _, h in md_cols + md_vals) + " |",
             "|" + "---|" * len(md_cols) + "---:|" * len(md_vals)]

    def cell(r, c):
        v = r[c]
        if c in VALUE_COLS:
            s = stats.restored(v, r[c + "_ci_low"], r[c + "_ci_high"], r[c + "_n"])
            return f"{stats.text(s)} (n={s.n})"
        return (_fmt(v) if v != "" else "(none)").replace("|", "\\|")
    for r in table:
        lines.append("| " + " | ".join(cell(r, c) for c, _ in md_cols + md_vals) + " |")
    if not table:
        lines.append("\nno data: the campaign has no runs")
    with open(p_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    return [p_csv, p_md]
