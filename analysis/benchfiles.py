"""benchfiles.py -- reading the benchmark files of results/bench/ for the
figure scripts that draw them (fig_checkpoint_bench.py, fig_proposed.py,
fig_timeline_bench.py) and for experiments/bench/report.py (sidecars)."""
import argparse
import csv
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def directories(doc, name=None):
    """The command line [BENCH_DIR [OUT_DIR]]: (bench, out), defaults
    results/bench and BENCH_DIR/figures; doc's first paragraph is the help.
    With name, also [--name NAME] (default name), the result file's name
    without .csv, returned third."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("bench", nargs="?", metavar="BENCH_DIR", default=os.path.join(ROOT, "results", "bench"),
                    help="the benchmark files (default results/bench)")
    ap.add_argument("out", nargs="?", metavar="OUT_DIR", help="where the figure goes (default BENCH_DIR/figures)")
    if name:
        ap.add_argument("--name", default=name, help=f"the result file, without .csv (default {name})")
    a = ap.parse_args()
    dirs = (a.bench, a.out or os.path.join(a.bench, "figures"))
    return (*dirs, a.name) if name else dirs


def rows(path):
    """The rows of CSV file path as dicts; none when it does not exist."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    """x as a float, or None for an empty or NA field."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def save(fig, out, name):
    """Lay the figure out and write OUT/NAME.png; its path."""
    fig.tight_layout()
    path = os.path.join(out, f"{name}.png")
    fig.savefig(path, dpi=110)
    return path


def sidecar(path):
    """The "key: value" lines of a NAME.meta file (scripts/provenance: what
    made NAME.csv; the first record when a resumed run appended more), or
    {} when there is none."""
    out = {}
    try:
        for line in open(path, encoding="utf-8"):
            if line.startswith((" ", "resumed:")):
                break
            k, _, v = line.rstrip("\n").partition(": ")
            out.setdefault(k, v)
    except OSError:
        pass
    return out


def values(path, key):
    """Every value of key ("revision", "date") that a NAME.meta names: the
    first record's and each resumed run's, in order, each once."""
    out = []
    try:
        for line in open(path, encoding="utf-8"):
            k, _, v = line.strip().partition(": ")
            if k == key and v not in out:
                out.append(v)
    except OSError:
        pass
    return out


def revisions(path):
    """Every revision a NAME.meta names (values)."""
    return values(path, "revision")
