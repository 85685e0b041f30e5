"""Recovery time figures.

recovery_phases: one stacked bar per configuration (variant) of the median
over finished runs of each phase (revoke, shrink, agree, windows,
rereplicate; per run the maximum over ranks, common.run_recovery), with the
min-max of the per-run total as an error bar and its median as a marker;
detection in a panel of its own.  Medians of phases need not add up to the
median total.  Writes data/recovery_phases.csv for gnuplot.

recovery_vs_ranks, recovery_vs_pairs: the per-run total (ms) against
meta.json ranks - spares and workload.records, one line per variant (and the other
configuration fields that differ), median with min-max error bars.
"""
import os

import numpy as np

import common as C
from results import KEY_FIELDS, PHASES


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


def make_phases(camp, out, gp):
    entries = _groups_with_placeholders(camp)
    fig, axes = C.figure(1, 2, width=C.bar_width(1.6 * len(entries)),
                         gridspec_kw={"width_ratios": [3, 2]})
    ax, axd = axes[0]
    used, rows, labels, ytop = 0, [], [], 0.0
    for i, (lbl, runs) in enumerate(entries):
        rec = [C.run_recovery(r) for r in runs if r.table("recovery.csv")]
        vals = {ph: [r[ph] for r in rec if r[ph] is not None] for ph in ("detect",) + PHASES +
                ("total",)}
        labels.append(lbl)
        if not vals["total"] and not any(vals[ph] for ph in PHASES):
            ax.text(i, 0, "no data:\n" + _nodata_reason(runs, camp, lbl), rotation=90,
                    ha="center", va="bottom", fontsize=8, color="#b00000",
                    transform=ax.get_xaxis_transform())
            axd.text(i, 0.02, "no data", rotation=90, ha="center", va="bottom", fontsize=8,
                     color="#b00000", transform=axd.get_xaxis_transform())
            rows.append([i] + [None] * 11 + [0])
            continue
        used += len(rec)
        first = i == _first_with_data(entries)
        bottom = 0.0
        meds = []
        for ph in PHASES:
            m = (C.median(vals[ph]) or 0.0) / 1e3
            meds.append(m)
            ax.bar(i, m, bottom=bottom, color=C.PHASE_COLORS[ph], width=0.6,
                   label=ph if first else None)
            bottom += m
        tmed = C.median(vals["total"])
        tlo, thi = C.spread(vals["total"])
        if tmed is not None:
            ax.errorbar(i, tmed / 1e3, yerr=[[(tmed - tlo) / 1e3], [(thi - tmed) / 1e3]],
                        fmt="kx", capsize=5, label="total: median, min-max" if first else None)
        top = max(bottom, (thi or 0) / 1e3)
        ytop = max(ytop, top)
        ax.annotate(f"n={len(rec)}", (i, top), xytext=(0, 5), textcoords="offset points",
                    ha="center", fontsize=8)
        dmed = C.median(vals["detect"])
        dlo, dhi = C.spread(vals["detect"])
        if dmed is not None:
            axd.bar(i, dmed / 1e3, color=C.PHASE_COLORS["detect"], width=0.6,
                    label="detect: median" if not axd.patches else None)
            axd.errorbar(i, dmed / 1e3, yerr=[[(dmed - dlo) / 1e3], [(dhi - dmed) / 1e3]],
                         fmt="none", ecolor="k", capsize=4)
            axd.annotate(f"n={len(vals['detect'])}", (i, dhi / 1e3), xytext=(0, 4),
                         textcoords="offset points", ha="center", fontsize=8)
        else:
            axd.text(i, 0.02, "no detect data", rotation=90, ha="center", va="bottom",
                     fontsize=8, color="#b00000", transform=axd.get_xaxis_transform())
        ms = lambda v: None if v is None else v / 1e3  # noqa: E731
        rows.append([i] + meds + [ms(tmed), ms(tlo), ms(thi), ms(dmed), ms(dlo), ms(dhi),
                                  len(rec)])
    for a in (ax, axd):
        C.set_bar_labels(a, labels)
        a.set_xlabel("variant")
        a.set_xlim(-0.6, max(len(entries), 1) - 0.4)
    ax.set_ylabel("recovery time (ms), detection excluded")
    axd.set_ylabel("detection time (ms)")
    ax.set_title("phases: median over runs of the maximum over ranks\n(maxima of different "
                 "ranks: the stack may exceed the total)", fontsize=9)
    axd.set_title("detection", fontsize=9)
    if not entries:
        C.note(ax, "no data: the campaign has no runs")
    ax.set_ylim(0, ytop * 1.45 if ytop else 1)
    axd.set_ylim(0, axd.get_ylim()[1] * 1.3)
    C.legend(ax, loc="upper right")
    C.legend(axd, loc="upper right")
    C.title(fig, camp.name, "recovery time by phase", used)
    C.write_csv(os.path.join(out, "data", "recovery_phases.csv"),
                ["x"] + [p + "_ms" for p in PHASES] +
                ["total_median_ms", "total_min_ms", "total_max_ms", "detect_median_ms",
                 "detect_min_ms", "detect_max_ms", "n_runs"], rows)
    gp["phase_labels"] = " ".join(labels)
    gp["phase_total_runs"] = used
    gp["phase_ymax_ms"] = float(max([r[8] or 0 for r in rows] + [sum(r[1:6]) for r in rows
                                                                  if r[1] is not None] + [0]))
    gp["detect_ymax_ms"] = float(max([r[11] or 0 for r in rows] + [0]))
    return C.save(fig, out, "recovery_phases")


def _first_with_data(entries):
    for i, (_, runs) in enumerate(entries):
        if any(r.table("recovery.csv") for r in runs):
            return i
    return -1


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
        med = np.array([np.median(v) for _, v in pts])
        lo = med - np.array([min(v) for _, v in pts])
        hi = np.array([max(v) for _, v in pts]) - med
        n = sum(len(v) for _, v in pts)
        used += n
        xs_all.update(xs)
        ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=4,
                    label=f"{label(k)} ({n} run{'s' if n > 1 else ''}; median, min-max)")
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
