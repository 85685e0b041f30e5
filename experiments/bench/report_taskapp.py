"""report_taskapp.py -- the table of results/bench/taskapp.csv (bench_taskapp.sh)
for report.py, and the statistics behind it and behind analysis/fig_taskapp.py.

Per application and size, per variant: the runs, how many ended with the
published answer, the time to the answer without and with one kill (mean
and the half width of its 95% confidence interval, Student's t over the
repetitions), the overhead against the same code not resilient (variant
none, no state in the store), and what one failure cost (mean with a kill
minus mean without; the half widths combine as the root of their squares).
Only runs with the published answer count in the times.
"""
import math
import statistics

# Student's t, two-sided 95%, for 1..30 degrees of freedom; 1.96 beyond.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
       2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
       2.052, 2.048, 2.045, 2.042]


def mean_ci(xs):
    """(mean, half width of its 95% interval) of xs; (None, None) when empty,
    no half width (None) for one value: one run gives no interval."""
    xs = [float(x) for x in xs]
    if not xs:
        return None, None
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, None
    t = T95[len(xs) - 2] if len(xs) - 1 <= len(T95) else 1.96
    return m, t * statistics.stdev(xs) / math.sqrt(len(xs))


def solve_times(rs, sets, variant, kills):
    return [r["solve_s"] for r in rs if r["set"] in sets and r["variant"] == variant
            and r["kills"] == str(kills) and r["correct"] == "true" and r["solve_s"] not in ("", "NA")]


def fmt(m, h, d=2):
    if m is None:
        return "NA"
    return f"{m:.{d}f} (one run)" if h is None else f"{m:.{d}f} ± {h:.{d}f}"


def taskapp_table(rows, table):
    """Markdown lines (table: report.py's table helper)."""
    if not rows:
        return []
    out = []
    for app, size in sorted({(r["app"], r["size"]) for r in rows}):
        rs = [r for r in rows if (r["app"], r["size"]) == (app, size)]
        base, _ = mean_ci(solve_times(rs, ("overhead",), "none", 0))
        body = []
        for v in sorted({r["variant"] for r in rs if r["set"] in ("overhead", "failure", "restart")},
                        key=lambda v: (v != "none", v)):
            mine = [r for r in rs if r["variant"] == v and r["set"] in ("overhead", "failure", "restart")]
            m0, h0 = mean_ci(solve_times(rs, ("overhead", "restart"), v, 0))
            m1, h1 = mean_ci(solve_times(rs, ("failure", "restart"), v, 1))
            both = m0 is not None and m1 is not None
            cost = (m1 - m0 if both else None, math.hypot(h0, h1) if both and None not in (h0, h1) else None)
            over = f"{m0 / base:.2f}" if m0 is not None and base else "NA"
            body.append([f"{app} {size}", v, len(mine), sum(r["correct"] == "true" for r in mine),
                         fmt(m0, h0), over, fmt(m1, h1), fmt(*cost)])
        out += table(["application", "variant", "runs", "published answer", "no failure (s)",
                      "against not resilient", "one kill (s)", "a failure costs (s)"], body)
    return out + ["Times to the answer, mean ± half width of the 95% confidence interval over the "
                  "repetitions; `none` is the same code not resilient (r = 1, no state in the store).", ""]
