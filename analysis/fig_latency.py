"""Latency figures: CDFs (latency_cdf.png/.pdf) and the tail
(latency_percentiles.png/.pdf).

latency_cdf: two panels, before and after the
failure, one line per configuration (variant).  The latency_hist.csv rows of
the finished runs of a configuration are pooled (bucket counts summed over
runs and, unless the file has op `all`, over operations); a run without a
before_failure row falls back to phase `all`.  A configuration without data
in a panel is named in a note on it.  Writes data/latency_cdf_PHASE_N.csv
(latency_us, cumulative_fraction) for gnuplot.

latency_percentiles: the same pooled histograms drawn as HdrHistogram
draws them, latency (log) against 1/(1 - percentile) (log, ticks at 50%,
90%, 99%, 99.9%, ...), so the tail a CDF squeezes into its last pixel
takes most of the width; each line ends at its maximum.  The runs' own
percentile distributions are in their latency*.hgrm files.
"""
import os

import numpy as np

import common as C

PANELS = (("before_failure", "before the failure"), ("after_failure", "after the failure"))


def make(camp, out, gp):
    return make_cdf(camp, out, gp) + make_percentiles(camp, out, gp)


def make_cdf(camp, out, gp):
    groups = C.group_runs([r for r in camp.finished()])
    label = C.group_labeler(groups)
    all_variants = sorted(camp.variants(), key=C.variant_sort_key)
    fig, axes = C.figure(1, 2, sharey=True)
    used_runs = set()
    for ax, (phase, title) in zip(axes[0], PANELS):
        missing, idx, labels = [], 0, []
        for k, runs in groups.items():
            rows, n = [], 0
            for r in runs:
                rr = C.hist_rows(r, phase)
                if not rr and phase == "before_failure":
                    rr = C.hist_rows(r, "all")
                if rr:
                    rows += rr
                    n += 1
                    used_runs.add(r.id)
            x, y = C.cdf(rows)
            if x is None:
                missing.append(label(k))
                continue
            ax.step(x, y, where="post", lw=1.5,
                    label=f"{label(k)} ({n} run{'s' if n > 1 else ''})")
            C.write_csv(os.path.join(out, "data", f"latency_cdf_{phase}_{idx}.csv"),
                        ["latency_us", "cumulative_fraction"], zip(x.tolist(), y.tolist()))
            labels.append(label(k))
            idx += 1
        gp[f"cdf_{phase}_labels"] = " ".join(labels)
        missing += [v for v in all_variants if v not in {k[0] for k in groups}]
        if not labels and not missing:
            C.note(ax, "no data: no finished run with latency_hist.csv rows")
        elif missing:
            C.note(ax, "no data for:\n" + "\n".join(missing), y=0.8, x=0.3)
        if ax.lines:
            ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("latency (us, log scale)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        C.legend(ax, loc="lower right")
    axes[0][0].set_ylabel("fraction of operations (cumulative)")
    C.title(fig, camp.name, "latency CDF, all operations, pooled over runs", len(used_runs))
    gp["cdf_total_runs"] = len(used_runs)
    return C.save(fig, out, "latency_cdf")


def pooled(runs, phase):
    """The histogram rows of these runs for one phase (falling back to
    phase all when a run has no before_failure rows), and how many runs."""
    rows, n = [], 0
    for r in runs:
        rr = C.hist_rows(r, phase)
        if not rr and phase == "before_failure":
            rr = C.hist_rows(r, "all")
        if rr:
            rows += rr
            n += 1
    return rows, n


def make_percentiles(camp, out, gp):
    groups = C.group_runs([r for r in camp.finished()])
    label = C.group_labeler(groups)
    fig, axes = C.figure(1, 2, sharey=True)
    used, top = set(), 1
    for ax, (phase, title) in zip(axes[0], PANELS):
        for k, runs in groups.items():
            rows, n = pooled(runs, phase)
            x, y = C.cdf(rows)
            if x is None:
                continue
            used.update(r.id for r in runs)
            count = sum(r["count"] for r in rows)
            inv = 1 / np.maximum(1 - y, 1 / count)  # the last bucket: all but none left
            ax.step(inv, x, where="pre", lw=1.5, label=f"{label(k)} ({n} run{'s' if n > 1 else ''}, "
                                                        f"{count} ops)")
            top = max(top, count)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks = [t for t in (2, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7) if t <= top * 1.01]
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{100 * (1 - 1 / t):g}%" for t in ticks], rotation=30)
        ax.minorticks_off()
        if not ax.lines:
            C.note(ax, "no data: no finished run with latency_hist.csv rows")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("percentile (axis: 1/(1 - p), log)")
        ax.grid(alpha=0.3)
        C.legend(ax, loc="upper left")
    axes[0][0].set_ylabel("latency (us, log scale)")
    C.title(fig, camp.name, "latency by percentile, all operations, pooled over runs", len(used))
    return C.save(fig, out, "latency_percentiles")
