"""Throughput over time (throughput_timeline.png/.pdf).

One panel per variant.  Per run, timeline.csv is summed over ranks per bin
(ops/s); runs of one configuration (repetitions) are aligned by bin start
and drawn as their median with a band of its 95% distribution-free interval per
bin (stats.py; a configuration of one run is that run, without a band,
and the legend says which).  Every run's kills (Run.kill_times: kills.csv
time_ns on rank 0's clock) are vertical lines and its recovery spans
(common.recovery_spans) are shaded.  Only finished runs are used; a
variant without any is a panel with a "no data" note.  Also writes
data/timeline_N.csv (t_s, median, CI low, CI high ops/s; two rows per bin,
at its start and its end, so that lines draw steps) and
data/timeline_N_kills.csv (kill_s, span_start_s, span_end_s) for gnuplot.
"""
import os

import numpy as np

import common as C
import stats


def series(runs):
    """Median and its 95% interval over runs of the per-bin throughput:
    (t, med, lo, hi, n); lo = hi = med where a bin has one run."""
    per_run = [C.run_timeline(r) for r in runs]
    per_run = [s for s in per_run if s]
    if not per_run:
        return None
    t = np.array(sorted(set().union(*per_run)))
    m = np.full((len(per_run), len(t)), np.nan)
    for i, s in enumerate(per_run):
        for j, k in enumerate(t):
            if k in s:
                m[i, j] = s[k]
    sm = [stats.summary(m[:, j]) for j in range(len(t))]
    med = np.array([x.median for x in sm])
    lo = np.array([x.median if x.lo is None else x.lo for x in sm])
    hi = np.array([x.median if x.hi is None else x.hi for x in sm])
    return t, med, lo, hi, len(per_run)


def make(camp, out, gp):
    variants = sorted(camp.variants(), key=C.variant_sort_key)
    runs = [r for r in camp.finished() if r.table("timeline.csv")]
    groups = C.group_runs(runs)
    label = C.group_labeler(groups)
    n_panels = max(1, len(variants))
    fig, axes = C.figure(n_panels, 1, height=max(4.0, 2.4 * n_panels), sharex=True)
    used, gp_labels, gp_runs, gp_kills, gp_spans = 0, [], [], [], []
    if not variants:
        C.note(axes[0][0], "no data: the campaign has no runs")
        C.legend(axes[0][0])
    colors = iter(["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22"] * 10)
    for ax, v in zip(axes[:, 0], variants):
        ax.set_ylabel("throughput (ops/s)")
        ax.set_title(v, fontsize=10, loc="left")
        vgroups = {k: g for k, g in groups.items() if k[0] == v}
        if not vgroups:
            states = [s for k, s, _ in camp.all_runs() if k[0] == v]
            desc = ", ".join(f"{states.count(s)} {s}" for s in sorted(set(states)))
            C.note(ax, f"no data: no finished run with a timeline ({desc})")
        kill_lbl, span_lbl = "kill", "recovery span"
        for k, g in vgroups.items():
            s = series(g)
            if s is None:
                continue
            t, med, lo, hi, n = s
            c = next(colors)
            used += n
            w = t[-1] - t[-2] if len(t) > 1 else 0.1   # close the last bin
            t, med, lo, hi = (np.append(t, t[-1] + w), np.append(med, med[-1]),
                              np.append(lo, lo[-1]), np.append(hi, hi[-1]))
            ax.plot(t, med, color=c, lw=1.5, drawstyle="steps-post",
                    label=f"{label(k)}: median of {n} runs" if n > 1 else f"{label(k)}: one run")
            if n > 1:
                ax.fill_between(t, lo, hi, color=c, alpha=0.25, step="post", label="95% CI of the median")
            idx = len(gp_labels)
            steps = [(x, m, a, b) for i in range(len(t) - 1)
                     for x, m, a, b in ((t[i], med[i], lo[i], hi[i]),
                                        (t[i + 1], med[i], lo[i], hi[i]))]
            C.write_csv(os.path.join(out, "data", f"timeline_{idx}.csv"),
                        ["t_s", "median_ops_per_s", "ci_low_ops_per_s", "ci_high_ops_per_s"],
                        [tuple(float(v) for v in s) for s in steps])
            krows = []
            for r in g:
                spans = C.recovery_spans(r)
                for kt in C.kill_times(r):
                    ax.axvline(kt, color="#d00000", ls="--", lw=1, label=kill_lbl)
                    kill_lbl = None
                    krows.append((kt, None, None))
                for kt, a, b in spans:
                    ax.axvspan(a, b, color="#ff9900", alpha=0.3, label=span_lbl)
                    span_lbl = None
                    krows.append((None, a, b))
            C.write_csv(os.path.join(out, "data", f"timeline_{idx}_kills.csv"),
                        ["kill_s", "span_start_s", "span_end_s"], krows)
            gp_labels.append(label(k))
            gp_runs.append(n)
            gp_kills.append(sum(1 for x in krows if x[0] is not None))
            gp_spans.append(len(krows) - gp_kills[-1])
        ax.set_ylim(bottom=0)
        C.legend(ax)
    axes[-1][0].set_xlabel("time since run start (s)")
    C.title(fig, camp.name, "throughput over time (median over repetitions where n > 1)", used)
    gp["timeline_labels"] = " ".join(gp_labels)
    gp["timeline_runs"] = " ".join(map(str, gp_runs))
    gp["timeline_total_runs"] = used
    gp["timeline_kills"] = " ".join(map(str, gp_kills))
    gp["timeline_spans"] = " ".join(map(str, gp_spans))
    return C.save(fig, out, "throughput_timeline")
