"""Shared helpers of the figure modules: per-run statistics computed from a
results.Run (throughput, timeline, recovery phases along the critical
path, recovery spans, latency histograms), grouping and ordering of
variants, and matplotlib plumbing (Agg backend, titles with the campaign
and run count, "no data" notes, saving every figure as PNG and PDF).
Repetitions are summarised by stats.py (median, 95% distribution-free interval, n).

The recovery of one failure is followed along its critical path: the
survivor that resumed last (largest detect + total, or total when the
detection is unknown), whose phases add up to its own total (the rest of
the total, not inside a named phase, is "other").  Maxima over ranks would
mix ranks: their stack can exceed every rank's total."""
import csv
import os

import matplotlib
matplotlib.use("Agg")
import numpy as np  # noqa: E402

import stats  # noqa: E402
from results import KEY_FIELDS, PHASES  # noqa: E402

VARIANT_ORDER = ("none", "recreate-copy", "recreate-inplace", "recreate-free", "spare",
                 "proposed", "checkpoint-restart", "checkpoint", "redis")
CHECKPOINT_VARIANTS = ("checkpoint-restart", "checkpoint")
BASELINE_VARIANTS = CHECKPOINT_VARIANTS + ("redis",)
PHASE_COLORS = {"detect": "#9e9e9e", "revoke": "#1f77b4", "shrink": "#ff7f0e",
                "agree": "#2ca02c", "windows": "#d62728", "rereplicate": "#9467bd",
                "other": "#bcbd22"}
FIGSIZE = (9, 5.5)
DPI = 100


# ---- statistics -----------------------------------------------------------

def median(values):
    v = stats.clean(values)
    return float(np.median(v)) if v else None


def variant_sort_key(v):
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), v)


def variants_of(runs):
    return sorted({r.variant for r in runs}, key=variant_sort_key)


def run_throughput(run):
    """Operations per second over the whole run phase: sum of ops over every
    rank and bin, over (last t_end_s - first t_start_s); None without data."""
    rows = run.table("timeline.csv")
    ops = [r["ops"] for r in rows if r["ops"] is not None]
    if not ops:
        return None
    t0 = min(r["t_start_s"] for r in rows)
    t1 = max(r["t_end_s"] for r in rows)
    return sum(ops) / (t1 - t0) if t1 > t0 else None


def run_timeline(run):
    """{bin start (s, rounded to 1 us): ops/s summed over ranks}.  Each
    rank's last bin is left out, and any bin after the first of those: a
    rank stops when its run time is up, part way through that bin (or in
    one past the run's length, when an operation ran over), so the bin
    holds only part of a bin's operations and is no rate."""
    out, width, last = {}, {}, {}
    for r in run.table("timeline.csv"):
        if r["ops"] is None:
            continue
        k = round(r["t_start_s"], 6)
        out[k] = out.get(k, 0) + r["ops"]
        width[k] = r["t_end_s"] - r["t_start_s"]
        last[r["rank"]] = max(last.get(r["rank"], k), k)
    end = min(last.values(), default=None)
    return {k: out[k] / width[k] for k in out if width[k] > 0 and k < end}


RECOVERY_PARTS = ("detect",) + PHASES + ("other", "total")


def critical_paths(run):
    """One dict per failure of the run, in failure order: the phases (us)
    of the survivor that resumed last, with 'rank' and 'other' (total minus
    its named phases)."""
    per_failure = {}
    for r in run.table("recovery.csv"):
        if r["total_us"] is not None:
            per_failure.setdefault(r["failure"], []).append(r)
    out = []
    for _, rows in sorted(per_failure.items()):
        last = max(rows, key=lambda r: r["total_us"] + (r["detect_us"] or 0))
        path = {ph: last[ph + "_us"] for ph in ("detect",) + PHASES + ("total",)}
        path["other"] = max(0.0, last["total_us"] - sum(last[p + "_us"] or 0 for p in PHASES))
        path["rank"] = last["rank"]
        out.append(path)
    return out


def run_recovery(run):
    """The run's recovery in us, {part: value or None} for RECOVERY_PARTS:
    its critical path, the median over the run's failures (one kill: that
    one's)."""
    paths = critical_paths(run)
    return {ph: median([p[ph] for p in paths]) for ph in RECOVERY_PARTS}


def recovery_spans(run):
    """[(kill time, span start, span end)] in s since the run start.  Kill:
    Run.kill_times (kills.csv time_ns on rank 0's clock).  Recovery
    `failure` i is matched to kill i (else the last kill).  Span start: the
    kill time plus the smallest detect_us (the kill time when detect_us is
    NA); end: the latest kill + detect + total_us over the ranks."""
    kills = run.kill_times()
    per_failure = {}
    for r in run.table("recovery.csv"):
        per_failure.setdefault(r["failure"], []).append(r)
    spans = []
    for f, rows in sorted(per_failure.items()):
        if f in kills:
            kt = kills[f]
        elif kills:
            kt = kills[max(kills)]
        else:
            continue
        starts = [kt + (r["detect_us"] or 0) / 1e6 for r in rows]
        ends = [kt + (r["detect_us"] or 0) / 1e6 + r["total_us"] / 1e6
                for r in rows if r["total_us"] is not None]
        spans.append((kt, min(starts), max(ends) if ends else min(starts)))
    return spans


def failure_free(run):
    """A finished run with an empty failure spec and no kill logged."""
    return run.finished and not run.failures and not run.table("kills.csv")


def kill_times(run):
    return list(run.kill_times().values())


def hist_rows(run, phase):
    """The run's latency_hist.csv rows of one phase: the `all` op when the
    file has it, else every operation's rows (merged by the caller)."""
    rows = [r for r in run.table("latency_hist.csv") if r["phase"] == phase]
    if any(r["op"] == "all" for r in rows):
        rows = [r for r in rows if r["op"] == "all"]
    return rows


def cdf(rows):
    """Merge histogram rows (summing counts per bucket): (x us, F) arrays,
    x the bucket upper bounds, starting at the lowest bound with F = 0."""
    buckets = {}
    for r in rows:
        if r["count"]:
            k = (r["bucket_low_us"], r["bucket_high_us"])
            buckets[k] = buckets.get(k, 0) + r["count"]
    if not buckets:
        return None, None
    keys = sorted(buckets, key=lambda k: (k[1], k[0]))
    counts = np.array([buckets[k] for k in keys], dtype=float)
    x = np.array([keys[0][0]] + [k[1] for k in keys])
    y = np.concatenate([[0.0], np.cumsum(counts) / counts.sum()])
    return x, y


def run_latency(run, op, phase, col):
    for r in run.table("latency.csv"):
        if r["op"] == op and r["phase"] == phase:
            return r[col]
    return None


def group_runs(runs):
    """{Run.key(): [runs]} in variant order."""
    groups = {}
    for r in sorted(runs, key=lambda r: key_sort(r.key())):
        groups.setdefault(r.key(), []).append(r)
    return groups


def key_sort(k):
    """Sort key of a configuration: variant order, then numbers as numbers."""
    return (variant_sort_key(k[0]),) + tuple(
        (0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x)) for x in k[1:])


def group_labeler(keys):
    """A function key -> short label naming the variant and the key fields
    that differ between the given keys (backend, ranks, r, workload, pairs,
    failures).  A failure spec is shortened to "no-failures", "failures" (the
    only spec) or "failures#N" (N-th of the sorted specs; summary.md has the
    text)."""
    keys = list(keys)
    names = dict(zip(KEY_FIELDS, ("", "", "ranks", "r", "", "pairs", "")))
    nf = len(KEY_FIELDS) - 1
    vary = [i for i in range(1, nf + 1) if len({k[i] for k in keys}) > 1]
    specs = sorted({k[nf] for k in keys if k[nf] not in ("", None, "*")})

    def label(k):
        parts = [k[0]]
        for i in vary:
            v = k[i]
            if i == nf:
                v = ("no-failures" if v in ("", None) else "failures" if len(specs) == 1
                     else f"failures#{specs.index(v) + 1}")
            n = names[KEY_FIELDS[i]]
            parts.append(f"{n}={v}" if n else str(v))
        return "/".join(str(p).replace(" ", "") for p in parts)
    return label


# ---- plotting -------------------------------------------------------------

def figure(nrows=1, ncols=1, height=None, width=None, **kw):
    import matplotlib.pyplot as plt   # here: the tables need no pyplot (import time)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width or FIGSIZE[0], height or FIGSIZE[1]),
                             squeeze=False, **kw)
    return fig, axes


def bar_width(n):
    """Figure width (in) for n bars with multi-line labels."""
    return max(FIGSIZE[0], 3 + 1.1 * n)


def set_bar_labels(ax, labels):
    """x tick labels of a bar chart, one configuration field per line."""
    ax.set_xticks(np.arange(len(labels)))
    ax.set_xticklabels([lbl.replace("/", "\n") for lbl in labels], fontsize=8)


def title(fig, campaign, what, nruns):
    fig.suptitle(f"{campaign}: {what} ({nruns} run{'s' if nruns != 1 else ''})")


def summary_label(s, unit=""):
    """'median 12.3 [11.0, 14.2] ms, n=5' for a legend or a bar."""
    return f"{stats.text(s)}{' ' + unit if unit else ''}, n={s.n}"


def note(ax, text, y=0.5, x=0.5):
    ax.text(x, y, text, transform=ax.transAxes, ha="center", va="center", fontsize=10,
            color="#b00000", wrap=True,
            bbox=dict(boxstyle="round", facecolor="#fff4f4", edgecolor="#b00000"))


def legend(ax, loc="best", **kw):
    """A legend without repeated labels, also when nothing was drawn (then
    one 'no data' entry)."""
    seen, handles, labels = set(), [], []
    for h, lab in zip(*ax.get_legend_handles_labels()):
        if lab not in seen:
            seen.add(lab)
            handles.append(h)
            labels.append(lab)
    if not handles:
        from matplotlib.patches import Patch
        handles = [Patch(facecolor="none", edgecolor="#b00000")]
        labels = ["no data"]
    ax.legend(handles, labels, fontsize=8, loc=loc, framealpha=0.85, **kw)


def save(fig, out, name):
    """Write out/name.png and out/name.pdf; returns both paths."""
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    paths = []
    for ext in ("png", "pdf"):
        p = os.path.join(out, f"{name}.{ext}")
        fig.savefig(p, dpi=DPI)
        paths.append(p)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return paths


def write_csv(path, header, rows):
    """A CSV for gnuplot: a '# ' comment header, then numeric rows (NaN for
    a missing value, which gnuplot skips)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        f.write("# " + ",".join(header) + "\n")
        w = csv.writer(f)
        for r in rows:
            w.writerow(["NaN" if v is None or (isinstance(v, float) and np.isnan(v))
                        else (f"{v:.6g}" if isinstance(v, float) else v) for v in r])
    return path
