"""Hang rate per variant and backend (hang_rate.png/.pdf): for every run in
runs.csv (plus runs found only by their meta.json), the fraction whose
status is `hung`, one bar per backend within each variant, with its 95%
Clopper-Pearson interval (stats.rate) and "hung/total" written on each bar."""
import numpy as np

import common as C
import stats


def counts(camp):
    """{(variant, backend): [hung, total]}"""
    c = {}
    for k, status, _ in camp.all_runs():
        e = c.setdefault(k[:2], [0, 0])
        e[0] += status == "hung"
        e[1] += 1
    return c


def make(camp, out, gp):
    c = counts(camp)
    variants = sorted({v for v, _ in c}, key=C.variant_sort_key)
    backends = sorted({b for _, b in c})
    fig, axes = C.figure()
    ax = axes[0][0]
    width = 0.8 / max(1, len(backends))
    for j, b in enumerate(backends):
        xs, ys, lo, hi, txt = [], [], [], [], []
        for i, v in enumerate(variants):
            if (v, b) in c:
                h, n = c[(v, b)]
                r, a, z = stats.rate(h, n)
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(r)
                lo.append(r - a)
                hi.append(z - r)
                txt.append(f"{h}/{n}")
        bars = ax.bar(xs, ys, width=width * 0.9, label=f"backend {b}")
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="none", ecolor="k", capsize=4,
                    label="95% Clopper-Pearson interval" if j == 0 and xs else None)
        for rect, t in zip(bars, txt):
            ax.annotate(t, (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                        xytext=(0, 3), textcoords="offset points", ha="center", fontsize=9)
    if not c:
        C.note(ax, "no data: the campaign has no runs")
    ax.set_xticks(np.arange(len(variants)))
    ax.set_xticklabels(variants, rotation=15, ha="right")
    ax.set_xlabel("variant")
    ax.set_ylabel("hang rate (fraction of runs hung)")
    ax.set_ylim(0, 1.15)
    C.legend(ax, loc="upper left")
    C.title(fig, camp.name, "hang rate per variant and backend (hung/total on bars, 95% CI)",
            sum(n for _, n in c.values()))
    return C.save(fig, out, "hang_rate")
