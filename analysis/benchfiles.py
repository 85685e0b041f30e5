"""benchfiles.py -- reading the benchmark files of results/bench/ for the
figure scripts that draw them (bench_figures.py runs them all) and for
experiments/bench/report.py (sidecars).

A figure says what it was drawn from.  rows() notes every result file it
read (READ); save() writes NAME.png and NAME.pdf with a footer naming each
of those files with its rows, revisions and MPI build (from NAME.meta),
and beside them NAME.sha256, the files' SHA-256 in sha256sum's format,
relative to the directory that holds them (results/bench/): `sha256sum -c figures/NAME.sha256` run
there fails when a file changed after the figure was drawn
(tests/scripts/test_figures.sh)."""
import argparse
import csv
import hashlib
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


READ = []  # every result file rows() read, in order: what the figure is drawn from


def rows(path):
    """The rows of CSV file path as dicts; none when it does not exist.
    The path goes into READ."""
    if not os.path.exists(path):
        return []
    if os.path.abspath(path) not in READ:
        READ.append(os.path.abspath(path))
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    """x as a float, or None for an empty or NA field."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def record_of(path):
    """The record of result file path: NAME.meta beside NAME.csv; the bins
    of NAME.csv (NAME-bins.csv, no record of their own) take NAME.csv's."""
    meta = path[:-len(".csv")] + ".meta"
    if not os.path.exists(meta) and path.endswith("-bins.csv"):
        meta = path[:-len("-bins.csv")] + ".meta"
    return meta


def source_line(path):
    """'NAME.csv: N rows, revision R[, R...], MPI build B' for a footer."""
    meta = record_of(path)
    with open(path, newline="") as f:
        n = sum(1 for _ in csv.DictReader(f))
    revs = ", ".join(revisions(meta)) or "not recorded"
    builds = ", ".join(sorted({os.path.basename(m.split(" at ")[-1]) for m in values(meta, "mpi")})) or "not recorded"
    return f"{os.path.basename(path)}: {n} rows, revision {revs}, MPI build {builds}"


def save(fig, out, name, inputs=None):
    """Write OUT/NAME.png and OUT/NAME.pdf with a footer naming the files
    it was drawn from (inputs, default READ), and OUT/NAME.sha256; the
    PNG's path."""
    inputs = list(inputs if inputs is not None else READ)
    lines = [source_line(p) for p in inputs] or ["drawn from no result file"]
    height = fig.get_figheight() * 72  # points
    foot = (8 * len(lines) + 6) / height
    fig.text(0.005, 0.004, "\n".join(lines), fontsize=6, color="#555555", ha="left", va="bottom",
             family="monospace")
    fig.tight_layout(rect=(0, foot, 1, 0.95 if fig._suptitle else 1))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{name}.png")
    fig.savefig(path, dpi=110)
    fig.savefig(os.path.join(out, f"{name}.pdf"), metadata={"CreationDate": None})
    top = os.path.commonpath([os.path.dirname(p) for p in inputs]) if inputs else out  # the results directory
    with open(os.path.join(out, f"{name}.sha256"), "w") as f:
        for p in inputs:
            with open(p, "rb") as g:
                f.write(f"{hashlib.sha256(g.read()).hexdigest()}  {os.path.relpath(p, top)}\n")
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
