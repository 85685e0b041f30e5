"""Baseline comparisons.

baseline_checkpoint: in-memory recovery against checkpoint/restart (variant
`checkpoint-restart`, also accepted as `checkpoint`): median per-run total
recovery time (ms, detection excluded, common.run_recovery) per
configuration, with its 95% distribution-free interval (stats.py).
baseline_redis: the store against Redis (variant `redis`): median per-run
throughput (ops/s) of failure-free runs (common.failure_free) per
configuration, with its 95% distribution-free interval; when Redis runs exist only store runs of
the same workload and records are shown.
Both say "no data yet" on the figure while the baseline's runs are absent.
"""
import numpy as np

import common as C
import stats


def _bars(ax, entries, unit_scale, baseline):
    """entries: [(label, [values])]; bars of the median (baseline variants in
    orange), its 95% interval, n written above; an empty list gets a
    'no data yet' text."""
    for i, (lbl, vals) in enumerate(entries):
        if not vals:
            ax.text(i, 0.02, "no data yet", rotation=90, ha="center", va="bottom", fontsize=9,
                    color="#b00000", transform=ax.get_xaxis_transform())
            continue
        v = np.array(vals) / unit_scale
        s = stats.summary(v)
        base = lbl.split("/")[0] in baseline
        ax.bar(i, s.median, width=0.6, color="#ff7f0e" if base else "#1f77b4",
               label=("baseline" if base else "store") + ": median, 95% CI")
        ax.errorbar(i, s.median, yerr=stats.errorbar(s), fmt="none", ecolor="k", capsize=5)
        ax.annotate(f"n={s.n}", (i, s.hi or s.median), xytext=(0, 4), textcoords="offset points",
                    ha="center", fontsize=8)
    C.set_bar_labels(ax, [e[0] for e in entries])
    ax.set_xlim(-0.6, max(1, len(entries)) - 0.4)
    top = max((max(v) / unit_scale for _, v in entries if v), default=1.0)
    ax.set_ylim(0, top * 1.35)


def _entries(runs, value, baseline_variants, baseline_name):
    groups = C.group_runs(runs)
    label = C.group_labeler(groups)
    entries = []
    for k, g in groups.items():
        vals = [x for x in (value(r) for r in g) if x is not None]
        if vals:
            entries.append((label(k), vals))
    if not any(k[0] in baseline_variants for k in groups):
        entries.append((baseline_name, []))
    return entries, sum(len(v) for _, v in entries)


def make_checkpoint(camp, out):
    runs = [r for r in camp.finished() if r.table("recovery.csv")]
    entries, n = _entries(runs, lambda r: C.run_recovery(r)["total"], C.CHECKPOINT_VARIANTS,
                          "checkpoint-restart")
    fig, axes = C.figure(width=C.bar_width(len(entries)))
    ax = axes[0][0]
    _bars(ax, entries, 1e3, C.CHECKPOINT_VARIANTS)
    if not any(e[0].split("/")[0] in C.CHECKPOINT_VARIANTS and e[1] for e in entries):
        C.note(ax, "no data yet: no checkpoint-restart runs in this campaign", y=0.9)
    ax.set_xlabel("variant")
    ax.set_ylabel("recovery time (ms), detection excluded")
    C.legend(ax, loc="upper left")
    C.title(fig, camp.name, "in-memory recovery against checkpoint/restart", n)
    return C.save(fig, out, "baseline_checkpoint")


def make_redis(camp, out):
    runs = [r for r in camp.finished() if C.failure_free(r) and C.run_throughput(r)
            and r.variant not in C.CHECKPOINT_VARIANTS]
    redis_wl = {(r.workload, r.records) for r in runs if r.variant == "redis"}
    if redis_wl:
        runs = [r for r in runs if (r.workload, r.records) in redis_wl]
    entries, n = _entries(runs, C.run_throughput, ("redis",), "redis")
    fig, axes = C.figure(width=C.bar_width(len(entries)))
    ax = axes[0][0]
    _bars(ax, entries, 1.0, ("redis",))
    if not redis_wl:
        C.note(ax, "no data yet: no redis runs in this campaign", y=0.9)
    if not runs:
        C.note(ax, "no data: no failure-free runs", y=0.6)
    ax.set_xlabel("variant")
    ax.set_ylabel("throughput (ops/s)")
    C.legend(ax, loc="upper left")
    C.title(fig, camp.name, "the store against Redis, same workload", n)
    return C.save(fig, out, "baseline_redis")


def make(camp, out, gp):
    return make_checkpoint(camp, out) + make_redis(camp, out)
