#!/usr/bin/env python3
"""A node loss against a single-rank kill, from results/bench/nodeloss.csv.

Reads nodeloss.csv (BENCH=nodeloss make bench: one row per run, variants
node and rank) and draws one figure, nodeloss.png, with three panels:
  a. outcomes per variant: how many runs passed, were aborted by the
     launcher, hung, failed or crashed, with the lost reads of the runs
     that wrote results;
  b. detection: from the kill to the first survivor noticing it and to
     the last, every run as a point, the median as a bar;
  c. recovery phases (revoke, shrink, agree, windows, re-replication),
     median over the runs that recovered, stacked, and the median total.
A variant without a recovered run is named on panels b and c with its
outcomes ("no recovery: 20 aborted"): no data is never an error.
Usage: fig_nodeloss.py [BENCH_DIR [OUT_DIR]]  (default results/bench,
BENCH_DIR/figures).  Prints what it drew and from how many runs.
"""
import collections
import os
import statistics as st
import sys

import pyfind

pyfind.ensure()  # a python3 with matplotlib (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchfiles import directories, num, rows, save  # noqa: E402

VARIANTS = ["node", "rank"]
LABELS = {"node": "node loss", "rank": "single-rank kill"}
# Colours of the outcomes nodeloss_row.py writes; one it adds later is drawn grey, after these.
OUT_COLORS = {"pass": "#30a060", "aborted": "#c03030", "hung": "#a0a030", "failed": "#8040a0",
              "crashed": "#404040", "unsupported": "#d0d0f0", "error": "#a0a0a0"}
PHASES = ["revoke_us", "shrink_us", "agree_us", "windows_us", "rereplicate_us"]
PH_COLORS = ["#3060c0", "#60a0e0", "#30a060", "#e0a030", "#c03030"]


def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else None


def recovered(g):
    return [r for r in g if num(r["detect_first_us"]) is not None]


def note(ax, i, g):
    """Say on the panel, above variant i, why it has nothing to show."""
    c = collections.Counter(r["outcome"] for r in g)
    text = "no recovery:\n" + "\n".join(f"{n} {o}" for o, n in c.most_common())
    ax.text(i, 0.5, text, transform=ax.get_xaxis_transform(), ha="center", va="center", fontsize=9)


def ticks(ax, variants):
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels([LABELS.get(v, v) for v in variants])
    ax.set_xlim(-0.6, len(variants) - 0.4)


def outcomes(ax, variants, by):
    bottom = [0] * len(variants)
    seen = {r["outcome"] for v in variants for r in by[v]}
    for o in [o for o in OUT_COLORS if o in seen] + sorted(seen - set(OUT_COLORS)):
        n = [sum(r["outcome"] == o for r in by[v]) for v in variants]
        ax.bar(range(len(variants)), n, 0.6, bottom=bottom, color=OUT_COLORS.get(o, "#b0b0b0"), label=o)
        bottom = [b + x for b, x in zip(bottom, n)]
    for i, v in enumerate(variants):
        lost = [num(r["lost"]) for r in by[v] if num(r["lost"]) is not None]
        note = f"lost reads: {int(sum(lost))} in {len(lost)} runs" if lost else "no run wrote results"
        ax.annotate(note, (i, bottom[i]), ha="center", va="bottom", fontsize=8)
    ticks(ax, variants)
    ax.set_ylabel("runs")
    ax.set_ylim(0, max(bottom + [1]) * 1.2)
    ax.set_title("a. outcome of each run")
    ax.legend(fontsize=8)


def once(seen, label):
    """label the first time it is used on a panel, None after."""
    if label in seen:
        return None
    seen.add(label)
    return label


def detection(ax, variants, by):
    seen = set()
    for i, v in enumerate(variants):
        g = recovered(by[v])
        if not g:
            note(ax, i, by[v])
            continue
        for j, (col, c, lab) in enumerate((("detect_first_us", "#3060c0", "first survivor"),
                                           ("detect_last_us", "#c06030", "last survivor"))):
            ys = [num(x[col]) / 1e3 for x in g if num(x[col]) is not None]
            x = i + (j - 0.5) * 0.35
            ax.bar(x, med(ys) or 0, 0.3, color=c, alpha=0.4, label=once(seen, lab))
            ax.plot([x] * len(ys), ys, "o", color=c, ms=3)
    ticks(ax, variants)
    ax.set_ylabel("ms from the kill")
    ax.set_title("b. detection: kill to first and last survivor noticing")
    if seen:
        ax.legend(fontsize=8)


def phases(ax, variants, by):
    seen = set()
    for i, v in enumerate(variants):
        g = recovered(by[v])
        if not g:
            note(ax, i, by[v])
            continue
        base = 0
        for p, c in zip(PHASES, PH_COLORS):
            m = (med([num(x[p]) for x in g]) or 0) / 1e3
            ax.bar(i, m, 0.5, bottom=base, color=c, label=once(seen, p[:-3]))
            base += m
        total = (med([num(x["total_us"]) for x in g]) or 0) / 1e3
        ax.plot([i - 0.3, i + 0.3], [total, total], color="black", lw=1.5)
        ax.annotate(f"total {total:.0f} ms ({len(g)} runs)", (i, max(total, base)), ha="center",
                    va="bottom", fontsize=8)
    ticks(ax, variants)
    ax.set_ylabel("ms (median over runs; per run the maximum over survivors)")
    ax.set_title("c. recovery phases, detection excluded")
    if seen:
        ax.legend(fontsize=8)


def main():
    bench, out = directories(__doc__)
    r = rows(os.path.join(bench, "nodeloss.csv"))
    if not r:
        sys.exit(f"fig_nodeloss: no runs in {bench}/nodeloss.csv: run BENCH=nodeloss make bench")
    variants = [v for v in VARIANTS if any(x["variant"] == v for x in r)] + \
        sorted({x["variant"] for x in r} - set(VARIANTS))
    by = {v: [x for x in r if x["variant"] == v] for v in variants}
    os.makedirs(out, exist_ok=True)
    fig, ax = plt.subplots(1, 3, figsize=(15, 5))
    outcomes(ax[0], variants, by)
    detection(ax[1], variants, by)
    phases(ax[2], variants, by)
    ranks = sorted({x["ranks"] for x in r})
    fig.suptitle(f"node loss vs single-rank kill, {'/'.join(ranks)} ranks on {r[0]['nodes']} hosts, "
                 f"{len(r)} runs")
    path = save(fig, out, "nodeloss")
    print(f"wrote {path}: " + ", ".join(f"{v} {len(by[v])} runs ({len(recovered(by[v]))} recovered)"
                                        for v in variants))


if __name__ == "__main__":
    main()
