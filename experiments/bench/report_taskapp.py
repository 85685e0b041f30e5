"""report_taskapp.py -- the table of results/bench/taskapp.csv (bench_taskapp.sh)
for report.py, and the selections behind it and behind analysis/fig_taskapp.py.

Per application and size, per variant: the runs, how many ended with the
published answer, the time to the answer without and with one kill, the
overhead against the same code not resilient (variant none, no state in
the store: the ratio of the medians), and what one failure cost: per
repetition, its time with a kill minus its time without (the two runs of a
repetition ran one after the other, under the same load).  Every cell that
summarises repetitions is their median with its interval (stats.INTERVAL), as
in every other table (analysis/stats.py, passed in by the caller).  Only
runs with the published answer count in the times.
"""


def solve_times(rs, sets, variant, kills):
    """solve_s of the correct runs of variant in sets with that many kills."""
    return [float(r["solve_s"]) for r in rs if r["set"] in sets and r["variant"] == variant
            and r["kills"] == str(kills) and r["correct"] == "true" and r["solve_s"] not in ("", "NA")]


def failure_costs(rs, sets, variant):
    """Per repetition with both runs correct: time with one kill minus time
    without (the failure-free run of the same repetition, in sets too)."""
    by = {}
    for r in rs:
        if r["set"] in sets and r["variant"] == variant and r["correct"] == "true" and \
                r["solve_s"] not in ("", "NA") and r["kills"] in ("0", "1"):
            by.setdefault(r["repetition"], {})[r["kills"]] = float(r["solve_s"])
    return [t["1"] - t["0"] for t in by.values() if "0" in t and "1" in t]


# Where each set's failure-free runs are: a variant's kill runs (set
# failure) are measured against its runs of set overhead.
SETS = {"failure": ("overhead", "failure"), "restart": ("restart",)}


def taskapp_table(rows, table, stats):
    """Markdown lines (table: report.py's table helper; stats: analysis/stats.py)."""
    if not rows:
        return []
    cell = lambda xs: stats.text(stats.summary(xs), "{:.2f}")  # noqa: E731
    out = []
    for app, size in sorted({(r["app"], r["size"]) for r in rows}):
        rs = [r for r in rows if (r["app"], r["size"]) == (app, size)]
        base = stats.summary(solve_times(rs, ("overhead",), "none", 0)).median
        body = []
        for v in sorted({r["variant"] for r in rs if r["set"] in ("overhead", "failure", "restart")},
                        key=lambda v: (v != "none", v)):
            mine = [r for r in rs if r["variant"] == v and r["set"] in ("overhead", "failure", "restart")]
            t0 = solve_times(rs, ("overhead", "restart"), v, 0)
            m0 = stats.summary(t0).median
            sets = SETS["restart"] if v == "checkpoint-restart" else SETS["failure"]
            over = f"{m0 / base:.2f}" if m0 is not None and base else "NA"
            body.append([f"{app} {size}", v, len(mine), sum(r["correct"] == "true" for r in mine), cell(t0), over,
                         cell(solve_times(rs, ("failure", "restart"), v, 1)), cell(failure_costs(rs, sets, v))])
        out += table(["application", "variant", "runs", "published answer", "no failure (s)",
                      "against not resilient", "one kill (s)", "a failure costs (s)"], body)
    return out + [f"Times to the answer: the median of the repetitions with its {stats.INTERVAL} in "
                  "brackets (none with one repetition); a failure's cost per repetition is its time with a "
                  "kill minus its time without; the overhead is the ratio of the medians. `none` is the "
                  "same code not resilient (r = 1, no state in the store).", ""]


def soak_table(rows, table):
    """Markdown lines of results/bench/soak-taskapp.csv (soak_taskapp.sh): per
    application and variant, the runs, the kills sent, and each outcome's count."""
    if not rows:
        return []
    outcomes = sorted({r["outcome"] for r in rows}, key=lambda o: (o != "pass", o))
    body = []
    for app, size, v in sorted({(r["app"], r["size"], r["variant"]) for r in rows}):
        rs = [r for r in rows if (r["app"], r["size"], r["variant"]) == (app, size, v)]
        body.append([f"{app} {size}", v, len(rs), sum(int(r["kills"]) for r in rs)] +
                    [sum(r["outcome"] == o for r in rs) for o in outcomes])
    return table(["application", "variant", "runs", "kills"] + outcomes, body) + [
        "A run passes with the published answer and every kill it was sent; every outcome met is a "
        "column (soak_taskapp.sh names them all).", ""]
