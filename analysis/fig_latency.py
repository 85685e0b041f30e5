"""Latency CDFs (latency_cdf.png/.pdf): two panels, before and after the
failure, one line per configuration (variant).  The latency_hist.csv rows of
the finished runs of a configuration are pooled (bucket counts summed over
runs and, unless the file has op `all`, over operations); a run without a
before_failure row falls back to phase `all`.  A configuration without data
in a panel is named in a note on it.  Writes data/latency_cdf_PHASE_N.csv
(latency_us, cumulative_fraction) for gnuplot.
"""
import os

import common as C

PANELS = (("before_failure", "before the failure"), ("after_failure", "after the failure"))


def make(camp, out, gp):
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
    C.title(fig, camp.name, "latency CDF, all operations", len(used_runs))
    gp["cdf_total_runs"] = len(used_runs)
    return C.save(fig, out, "latency_cdf")
