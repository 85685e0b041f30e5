"""Failure-free overhead against the replication factor
(overhead_replication.png/.pdf).

Failure-free runs are finished runs with an empty failure spec and no kill
in kills.csv.  Each one's throughput (common.run_throughput) is divided by
the median throughput of the failure-free runs of variant `none` with the
same workload, workload.records and ranks (and backend when such runs
exist); the ratios are
drawn against meta.json replicas, one line per variant and backend, median
with its 95% distribution-free interval (stats.py) and n per point.  Without a `none` baseline the figure holds only a
"no data" note; variants without failure-free runs are named in a note.
The baselines (checkpoint-restart, redis) are left out.
"""
import common as C
import stats


def failure_free(camp):
    return [r for r in camp.finished() if C.failure_free(r) and C.run_throughput(r)
            and r.variant not in C.BASELINE_VARIANTS]


def make(camp, out, gp):
    runs = failure_free(camp)
    base = {}
    for r in runs:
        if r.variant == "none":
            for k in ((r.workload, r.records, r.ranks, r.backend),
                      (r.workload, r.records, r.ranks)):
                base.setdefault(k, []).append(C.run_throughput(r))
    fig, axes = C.figure()
    ax = axes[0][0]
    lines, nobase, used = {}, set(), 0
    for r in runs:
        b = (base.get((r.workload, r.records, r.ranks, r.backend))
             or base.get((r.workload, r.records, r.ranks)))
        if not b:
            nobase.add(r.variant)
            continue
        ratio = C.run_throughput(r) / C.median(b)
        lines.setdefault((r.variant, r.backend), {}).setdefault(r.replicas, []).append(ratio)
        used += 1
    for (v, be) in sorted(lines, key=lambda k: (C.variant_sort_key(k[0]), k[1])):
        pts = sorted(lines[(v, be)].items())
        xs = [p[0] for p in pts]
        sm = [stats.summary(vals) for _, vals in pts]
        bars = [stats.errorbar(x) for x in sm]
        ax.errorbar(xs, [x.median for x in sm], yerr=[[b[0][0] for b in bars], [b[1][0] for b in bars]],
                    marker="o", capsize=4,
                    label=f"{v}/{be} (n per point {'/'.join(str(x.n) for x in sm)}; median, 95% CI)")
    notes = []
    if not base:
        notes.append("no data: no failure-free run of variant 'none' to compare with")
    elif nobase:
        notes.append("no 'none' run at the same workload and ranks for: "
                     + ", ".join(sorted(nobase, key=C.variant_sort_key)))
    have = {r.variant for r in runs}
    without = [v for v in sorted(camp.variants(), key=C.variant_sort_key)
               if v not in have and v not in C.BASELINE_VARIANTS]
    if without:
        notes.append("no failure-free runs of: " + ", ".join(without))
    if notes:
        C.note(ax, "\n".join(notes), y=0.2)
    if lines:
        ax.axhline(1.0, color="grey", ls=":", lw=1, label="variant none (baseline)")
    ax.set_xlabel("replication factor r (copies of each pair)")
    ax.set_ylabel("throughput relative to variant none (ratio)")
    ax.set_ylim(bottom=0)
    reps = sorted({x for d in lines.values() for x in d})
    if reps:
        ax.set_xticks(reps)
        ax.set_xlim(min(reps) - 0.5, max(reps) + 0.5)
    C.legend(ax, loc="upper right")
    C.title(fig, camp.name, "failure-free overhead against replication factor", used)
    return C.save(fig, out, "overhead_replication")
