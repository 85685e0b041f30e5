"""Recovery time figures.

recovery_phases: one stacked bar per configuration (variant): the phases
(revoke, shrink, agree, windows, rereplicate, other) along the critical
path of the median run, that is of the run whose total is the median's
(common.critical_paths: the survivor that resumed last), so the stack is
one rank's recovery and adds up to its total; the marker is the median
total over runs with its 95% distribution-free interval (stats.py) and n;
detection (the same ranks') in a panel of its own, median and interval.
Writes data/recovery_phases.csv for gnuplot.

recovery_vs_ranks, recovery_vs_pairs: the per-run total (ms, critical
path) against meta.json ranks - spares and workload.records, one line per
variant (and the other configuration fields that differ), median with its
95% distribution-free interval.
"""
import os

import numpy as np

import common as C
import stats
from results import KEY_FIELDS, PHASES

STACK = PHASES + ("other",)


def _groups_with_placeholders(camp):
    """[(label, runs)] for finished runs with a failure spec by configuration,
    plus one empty entry per variant that has none (then label is the
    variant: _nodata_reason says why)."""
    groups = C.group_runs([r for r in camp.finished() if r.failures])
    label = C.group_labeler(groups)
    out = [(label(k), g) for k, g in groups.items()]
    have = {k[0] for k in groups}
    missing = sorted(camp.variants() - have, key=C.variant_sort_key)
    out += [(v, []) for v in missing]
    return out


def _nodata_reason(runs, camp, label):
    if runs:
        return "no recovery rows"
    states = [s for k, s, _ in camp.all_runs() if k[0] == label]
    fin = [k for k, s, _ in camp.all_runs() if k[0] == label and s == "finished"]
    if fin:
        return "no failures injected"
    return "no finished run" + (f" ({states.count('hung')} hung)" if "hung" in states else "")


def median_run(recs):
    """The per-run recovery whose total is the (lower) median of the totals."""
    with_total = sorted((r for r in recs if r["total"] is not None), key=lambda r: r["total"])
    return with_total[(len(with_total) - 1) // 2] if with_total else None


def make_phases(camp, out, gp):
    entries = _groups_with_placeholders(camp)
    fig, axes = C.figure(1, 2, width=C.bar_width(1.6 * len(entries)),
                         gridspec_kw={"width_ratios": [3, 2]})
    ax, axd = axes[0]
    used, rows, labels, ytop, first = 0, [], [], 0.0, True
    ms = lambda v: None if v is None else v / 1e3  # noqa: E731
    for i, (lbl, runs) in enumerate(entries):
        recs = [C.run_recovery(r) for r in runs if r.table("recovery.csv")]
        mid = median_run(recs)
        labels.append(lbl)
        if mid is None:
            ax.text(i, 0, "no data:\n" + _nodata_reason(runs, camp, lbl), rotation=90,
                    ha="center", va="bottom", fontsize=8, color="#b00000",
                    transform=ax.get_xaxis_transform())
            axd.text(i, 0.02, "no data", rotation=90, ha="center", va="bottom", fontsize=8,
                     color="#b00000", transform=axd.get_xaxis_transform())
            rows.append([i] + [None] * 12 + [0])
            continue
        used += len(recs)
        bottom, parts = 0.0, []
        for ph in STACK:
            m = (mid[ph] or 0.0) / 1e3
            parts.append(m)
            ax.bar(i, m, bottom=bottom, color=C.PHASE_COLORS[ph], width=0.6,
                   label=ph if first else None)
            bottom += m
        tot = stats.summary([r["total"] for r in recs])
        ax.errorbar(i, tot.median / 1e3, yerr=stats.errorbar(tot, 1e-3), fmt="kx", capsize=5,
                    label="total: median, 95% CI" if first else None)
        top = max(bottom, (tot.hi or tot.median) / 1e3)
        ytop = max(ytop, top)
        ax.annotate(f"n={tot.n}", (i, top), xytext=(0, 5), textcoords="offset points",
                    ha="center", fontsize=8)
        det = stats.summary([r["detect"] for r in recs])
        if det.median is not None:
            axd.bar(i, det.median / 1e3, color=C.PHASE_COLORS["detect"], width=0.6,
                    label="detect: median, 95% CI" if not axd.patches else None)
            axd.errorbar(i, det.median / 1e3, yerr=stats.errorbar(det, 1e-3), fmt="none", ecolor="k",
                         capsize=4)
            axd.annotate(f"n={det.n}", (i, (det.hi or det.median) / 1e3), xytext=(0, 4),
                         textcoords="offset points", ha="center", fontsize=8)
        else:
            axd.text(i, 0.02, "no detect data", rotation=90, ha="center", va="bottom",
                     fontsize=8, color="#b00000", transform=axd.get_xaxis_transform())
        first = False
        rows.append([i] + parts + [ms(tot.median), ms(tot.lo), ms(tot.hi), ms(det.median), ms(det.lo),
                                   ms(det.hi), tot.n])
    for a in (ax, axd):
        C.set_bar_labels(a, labels)
        a.set_xlabel("variant")
        a.set_xlim(-0.6, max(len(entries), 1) - 0.4)
    ax.set_ylabel("recovery time (ms), detection excluded")
    axd.set_ylabel("detection time (ms)")
    ax.set_title("stack: the phases of the survivor that resumed last, in the median run\n"
                 "marker: median total over runs, 95% CI (order statistics)", fontsize=9)
    axd.set_title("detection of the same survivors", fontsize=9)
    if not entries:
        C.note(ax, "no data: the campaign has no runs")
    ax.set_ylim(0, ytop * 1.45 if ytop else 1)
    axd.set_ylim(0, axd.get_ylim()[1] * 1.3)
    C.legend(ax, loc="upper right")
    C.legend(axd, loc="upper right")
    C.title(fig, camp.name, "recovery time by phase, critical path", used)
    C.write_csv(os.path.join(out, "data", "recovery_phases.csv"),
                ["x"] + [p + "_ms" for p in STACK] +
                ["total_median_ms", "total_ci_low_ms", "total_ci_high_ms", "detect_median_ms",
                 "detect_ci_low_ms", "detect_ci_high_ms", "n_runs"], rows)
    gp["phase_labels"] = " ".join(labels)
    gp["phase_total_runs"] = used
    gp["phase_ymax_ms"] = float(max([r[9] or 0 for r in rows] + [sum(r[1:7]) for r in rows
                                                                  if r[1] is not None] + [0]))
    gp["detect_ymax_ms"] = float(max([r[12] or r[10] or 0 for r in rows] + [0]))
    return C.save(fig, out, "recovery_phases")


def _make_vs(camp, out, name, xname, xlabel, xof, drop):
    """Per-run total recovery against xof(run); lines keyed by the run's
    configuration with field `drop` (index in Run.key()) left out."""
    runs = [r for r in camp.finished() if r.table("recovery.csv")]
    lines = {}
    for r in runs:
        tot = C.run_recovery(r)["total"]
        if tot is None:
            continue
        k = list(r.key())
        k[drop] = "*"
        lines.setdefault(tuple(k), {}).setdefault(xof(r), []).append(tot / 1e3)
    label = C.group_labeler(lines)
    fig, axes = C.figure()
    ax = axes[0][0]
    used, xs_all = 0, set()
    for k in sorted(lines, key=C.key_sort):
        pts = sorted(lines[k].items())
        xs = [p[0] for p in pts]
        sm = [stats.summary(v) for _, v in pts]
        med = np.array([x.median for x in sm])
        bars = [stats.errorbar(x) for x in sm]
        n = sum(x.n for x in sm)
        used += n
        xs_all.update(xs)
        ax.errorbar(xs, med, yerr=[[b[0][0] for b in bars], [b[1][0] for b in bars]], marker="o", capsize=4,
                    label=f"{label(k)} (n per point {'/'.join(str(x.n) for x in sm)}; median, 95% CI)")
    have = {k[0] for k in lines}
    missing = [v for v in sorted(camp.variants(), key=C.variant_sort_key)
               if v not in have]
    notes = []
    if not lines:
        notes.append("no data: no finished run with recovery rows")
    elif len(xs_all) == 1:
        notes.append(f"only one {xname} value in this campaign")
    if missing and lines:
        notes.append("no data for: " + ", ".join(missing))
    if notes:
        C.note(ax, "\n".join(notes), y=0.85)
    if len(xs_all) > 1 and max(xs_all) / max(min(xs_all), 1) >= 20:
        ax.set_xscale("log")
    if 0 < len(xs_all) <= 8:
        ax.set_xticks(sorted(xs_all))
        ax.set_xticklabels([str(x) for x in sorted(xs_all)])
        ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("recovery time (ms), detection excluded")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)
    C.legend(ax, loc="lower right")
    C.title(fig, camp.name, f"recovery time against {xname}", used)
    return C.save(fig, out, name)


def make(camp, out, gp):
    files = make_phases(camp, out, gp)
    files += _make_vs(camp, out, "recovery_vs_ranks", "ranks",
                      "ranks holding data (MPI processes, spares excluded)",
                      lambda r: r.ranks - r.spares, KEY_FIELDS.index("ranks"))
    files += _make_vs(camp, out, "recovery_vs_pairs", "pairs held",
                      "pairs held (meta.json workload.records, pairs)", lambda r: r.records,
                      KEY_FIELDS.index("records"))
    return files
