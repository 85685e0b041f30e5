#!/usr/bin/env python3
"""The store across the hosts of the test cluster, beside one host, from
results/bench/.

Reads multihost.csv (BENCH=multihost make bench) and, for the one-host hang
rates it is set beside, soak.csv (make soak: the history soak on one host,
its single-kill runs) and hangs-rdma*.csv (SET=hangs-rdma make soak:
store_kill on osc/rdma on one host).  One figure, three panels:
  a. kv_get / kv_put against the raw RMA they need, one host and two
     hosts, per backend (median over runs, log scale);
  b. recovery after one kill per variant, one host and three hosts:
     median total without detection, and detection (kill to first
     notice) beside it;
  c. the hang rate of single-kill runs at random instants per variant:
     three hosts (multihost.csv), one host on osc/sm and on osc/rdma.
Usage: fig_multihost.py [BENCH_DIR [OUT_DIR]]  (default results/bench,
BENCH_DIR/figures).  Prints what it drew and from how many runs.
"""
import os
import statistics as st
import sys

import pyfind

pyfind.ensure()  # a python3 with matplotlib (pyfind.py)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchfiles import directories, num, rows, save  # noqa: E402

VARIANTS = ["proposed", "recreate-copy", "recreate-free", "recreate-inplace", "spare"]
HOST_COLORS = {1: "#909090", 2: "#3060c0", 3: "#3060c0"}


def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else None


def panel_raw(ax, mh):
    raw = [r for r in mh if r["kind"] == "store-vs-raw" and r["outcome"] == "pass"]
    cells = sorted({(r["operation"], r["backend"]) for r in raw})
    hosts = sorted({int(r["hosts"]) for r in raw})
    w = 0.8 / max(1, 2 * len(hosts))
    for hi, h in enumerate(hosts):
        for ki, (col, label, alpha) in enumerate((("store_us", "store", 1.0), ("raw_us", "raw RMA", 0.45))):
            ys = [med([num(r[col]) for r in raw if (r["operation"], r["backend"]) == c and int(r["hosts"]) == h])
                  or 0 for c in cells]
            xs = [i + (2 * hi + ki - (2 * len(hosts) - 1) / 2) * w for i in range(len(cells))]
            ax.bar(xs, ys, w, color=HOST_COLORS.get(h, "grey"), alpha=alpha,
                   label=f"{label}, {h} host{'s' if h > 1 else ''}")
    ax.set_xticks(range(len(cells)))
    ax.set_xticklabels([f"{op}\n{b}" for op, b in cells], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("us per operation")
    ax.set_title(f"a. store against raw RMA ({len(raw)} runs)")
    ax.legend(fontsize=7)


def panel_recovery(ax, mh):
    rec = [r for r in mh if r["kind"] == "recovery"]
    ok = [r for r in rec if r["outcome"] == "pass"]
    vs = [v for v in VARIANTS if any(r["variant"] == v for r in rec)]
    hosts = sorted({int(r["hosts"]) for r in rec})
    w = 0.8 / max(1, 2 * len(hosts))
    for hi, h in enumerate(hosts):
        for ki, (col, label, alpha) in enumerate((("total_us", "recovery", 1.0), ("detect_us", "detection", 0.45))):
            ys = [(med([num(r[col]) for r in ok if r["variant"] == v and int(r["hosts"]) == h]) or 0) / 1e3
                  for v in vs]
            xs = [i + (2 * hi + ki - (2 * len(hosts) - 1) / 2) * w for i in range(len(vs))]
            ax.bar(xs, ys, w, color=HOST_COLORS.get(h, "grey"), alpha=alpha,
                   label=f"{label}, {h} host{'s' if h > 1 else ''}")
    for i, v in enumerate(vs):
        bad = sum(r["variant"] == v and r["outcome"] != "pass" for r in rec)
        if bad:
            ax.annotate(f"{bad} not passed", (i, 0.02), xycoords=("data", "axes fraction"), ha="center",
                        va="bottom", fontsize=7, color="#c03030")
    ax.set_xticks(range(len(vs)))
    ax.set_xticklabels(vs, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms (median)")
    ax.set_title(f"b. one kill: recovery without detection, and detection ({len(rec)} runs)")
    ax.legend(fontsize=7)


def panel_hangs(ax, mh, bench):
    sets = [("3 hosts (osc/rdma)", [r for r in mh if r["kind"] == "soak"], "hung", "#3060c0")]
    one = [r for r in rows(os.path.join(bench, "soak.csv")) if r.get("scenario") == "single"
           and r["backend"] == "allocate"]
    sets.append(("1 host, osc/sm (history soak)", one, "hung", "#909090"))
    rdma = [r for f in sorted(os.listdir(bench)) if f.startswith("hangs-rdma") and f.endswith(".csv")
            for r in rows(os.path.join(bench, f))]
    sets.append(("1 host, osc/rdma (store_kill)", rdma, "hang", "#c0c0c0"))
    vs = [v for v in VARIANTS if any(r["variant"] == v for _, rs, _, _ in sets for r in rs)]
    w = 0.8 / len(sets)
    for si, (label, rs, hung, color) in enumerate(sets):
        for i, v in enumerate(vs):
            g = [r for r in rs if r["variant"] == v]
            if not g:
                continue
            rate = 100 * sum(r["outcome"] == hung for r in g) / len(g)
            x = i + (si - (len(sets) - 1) / 2) * w
            ax.bar(x, rate, w, color=color, label=label)
            label = None  # one legend entry per set
            ax.annotate(f"{rate:.0f}%\nof {len(g)}", (x, rate), ha="center", va="bottom", fontsize=6)
    ax.legend(fontsize=7)
    ax.set_xticks(range(len(vs)))
    ax.set_xticklabels(vs, fontsize=8)
    ax.set_ylim(0, 115)
    ax.set_ylabel("runs that hung (%)")
    ax.set_title("c. hang rate, one kill at a random instant")


def main():
    bench, out = directories(__doc__)
    mh = rows(os.path.join(bench, "multihost.csv"))
    if not mh:
        sys.exit(f"fig_multihost: no rows in {bench}/multihost.csv: run BENCH=multihost make bench")
    os.makedirs(out, exist_ok=True)
    fig, ax = plt.subplots(1, 3, figsize=(17, 5.2))
    panel_raw(ax[0], mh)
    panel_recovery(ax[1], mh)
    panel_hangs(ax[2], mh, bench)
    path = save(fig, out, "multihost")
    count = {k: sum(r["kind"] == k for r in mh) for k in ("store-vs-raw", "recovery", "soak")}
    print(f"wrote {path}: " + ", ".join(f"{n} {k} rows" for k, n in count.items()))


if __name__ == "__main__":
    main()
