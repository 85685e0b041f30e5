"""Load and validate a campaign directory (docs/formats.md).

Campaign(path) reads results/CAMPAIGN/runs.csv and every RUN_ID/ whose
meta.json exists, checking each table's header exactly, every row's field
count and every value's type ("NA" is a missing value, parsed as None; an
empty field is an error).  Any problem raises ResultsError naming the
file, the line and the problem; figures.py prints it as
"error: FILE: problem" and exits non-zero.  Missing per-run tables are
allowed for runs that did not finish (a hung run writes few files) and, for
finished runs, for recovery.csv and kills.csv; a present table must be whole.
Files written before the clock became integer nanoseconds (kills.csv
time_s, meta.json run_start_wallclock) and runs.csv without seed columns
are read too (LEGACY), so committed older results still draw.
"""
import csv
import io
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments", "campaign"))
from campaign import OUTCOMES as STATUSES  # noqa: E402  (a run's outcomes: one definition)
OPS = ("read", "update", "insert", "scan", "rmw", "all")
LAT_PHASES = ("before_failure", "after_failure", "all")
PHASES = ("revoke", "shrink", "agree", "windows", "rereplicate")
# What a configuration is (Run.key()); records is meta.json workload.records
# (None for a runs.csv row without a meta.json).
KEY_FIELDS = ("variant", "backend", "ranks", "replicas", "workload", "records", "failures")

# Column -> type: i integer, f float, s text, e text that may be empty (an
# empty failure spec), o latency op, p latency phase, t run status, u run
# status or `pending` (runs.csv of a campaign not run to the end).  Order is the exact header.
TABLES = {
    "runs.csv": [("run_id", "s"), ("variant", "s"), ("backend", "s"), ("ranks", "i"),
                 ("nodes", "i"), ("replicas", "i"), ("workload", "s"), ("failures", "e"),
                 ("repetition", "i"), ("failure_seed", "i"), ("workload_seed", "i"),
                 ("status", "u"), ("wall_s", "f")],
    "timeline.csv": [("rank", "i"), ("t_start_s", "f"), ("t_end_s", "f"), ("ops", "i"),
                     ("read_ops", "i"), ("write_ops", "i"), ("failed_ops", "i")],
    "latency.csv": [("op", "o"), ("phase", "p"), ("count", "i"), ("p50_us", "f"),
                    ("p90_us", "f"), ("p99_us", "f"), ("p999_us", "f"), ("max_us", "f")],
    "latency_hist.csv": [("op", "o"), ("phase", "p"), ("bucket_low_us", "f"),
                         ("bucket_high_us", "f"), ("count", "i")],
    "recovery.csv": [("failure", "i"), ("rank", "i"), ("epoch", "i"), ("failed_ranks", "i"),
                     ("detect_us", "f"), ("revoke_us", "f"), ("shrink_us", "f"),
                     ("agree_us", "f"), ("windows_us", "f"), ("rereplicate_us", "f"),
                     ("total_us", "f"), ("pairs_restored", "i"), ("restarts", "i"),
                     ("stopped_us", "f"), ("spawn_us", "f")],
    "kills.csv": [("kill", "i"), ("target_rank", "i"), ("pid", "i"), ("host", "s"),
                  ("signal", "s"), ("role", "s"), ("time_ns", "i")],
}


def _ns(r):  # seconds (older kill logs) to integer ns
    return None if r["time_s"] is None else round(r["time_s"] * 1e9)


# Older headers still read: name -> [(spec, function making a row current)].
LEGACY = {
    "kills.csv": [  # before the role column (every row a rank) or integer clocks
        (TABLES["kills.csv"][:6] + [("time_s", "f")], lambda r: {**r, "time_ns": _ns(r)}),
        (TABLES["kills.csv"][:5] + [("time_ns", "i")], lambda r: {**r, "role": "rank"}),
        (TABLES["kills.csv"][:5] + [("time_s", "f")],
         lambda r: {**r, "role": "rank", "time_ns": _ns(r)}),
    ],
    "recovery.csv": [(TABLES["recovery.csv"][:-1], lambda r: {**r, "spawn_us": None}),  # before spawn_us
                     (TABLES["recovery.csv"][:-2], lambda r: {**r, "stopped_us": None, "spawn_us": None})],
    "runs.csv": [([c for c in TABLES["runs.csv"] if not c[0].endswith("_seed")],
                  lambda r: {**r, "failure_seed": None, "workload_seed": None})],
}
RUN_TABLES = ("timeline.csv", "latency.csv", "latency_hist.csv", "recovery.csv", "kills.csv")
# Tables every finished run has (recovery.csv and kills.csv may be absent
# when nothing was killed).
FINISHED_TABLES = ("timeline.csv", "latency.csv", "latency_hist.csv")
# Files whose presence marks a directory as a run (then meta.json is required).
RUN_FILES = RUN_TABLES + ("schedule.csv", "papi.csv", "summary.txt")

# meta.json fields the analysis uses: name -> accepted Python types.  Every
# run has META_FIELDS (the runner's stub meta.json of a run that hung or
# crashed has little more); a finished run's (the driver's) also has
# FINISHED_FIELDS and workload.WORKLOAD_FIELDS.
META_FIELDS = {"campaign": (str,), "run_id": (str,), "status": (str,), "variant": (str,),
               "backend": (str,), "ranks": (int,), "nodes": (int,), "replicas": (int,),
               "failures": (str,)}
FINISHED_FIELDS = {"spares": (int,), "workload": (dict,)}
START_FIELDS = ("run_start_wall_ns", "run_start_wallclock")  # integer ns; older: seconds
SEED_ITEM = re.compile(r"\s*;?\s*\bseed\s*=\s*\d+\s*")
WORKLOAD_FIELDS = {"name": (str,), "records": (int,)}


class ResultsError(Exception):
    """A malformed or partial results file: str() is 'FILE: [line N: ]problem'."""

    def __init__(self, path, problem, line=None):
        self.path, self.problem, self.line = path, problem, line
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{path}: {where}{problem}")


def warn(msg):
    print(f"warning: {msg}", file=sys.stderr)


def _value(text, kind, path, line, col):
    if text == "NA":
        return None
    if text == "" and kind != "e":
        raise ResultsError(path, f"column '{col}' is empty (a missing value must be NA)", line)
    try:
        if kind == "i":
            return int(text)
        if kind == "f":
            v = float(text)
            if not math.isfinite(v):
                raise ValueError
            return v
    except ValueError:
        want = "an integer" if kind == "i" else "a number"
        raise ResultsError(path, f"column '{col}' is '{text}', expected {want} or NA", line)
    allowed = {"o": OPS, "p": LAT_PHASES, "t": STATUSES,
               "u": STATUSES + ("pending",)}.get(kind)
    if allowed and text not in allowed:
        raise ResultsError(path, f"column '{col}' is '{text}', expected one of {', '.join(allowed)}",
                           line)
    return text


def read_table(path, name=None):
    """Read one CSV table of TABLES[name] (default: the file's base name):
    a list of dicts, column -> parsed value (None for NA)."""
    name = name or os.path.basename(path)
    spec, convert = TABLES[name], None
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(path, f"cannot read: {e}")
    if text == "":
        raise ResultsError(path, "empty file (no header line)")
    if not text.endswith("\n"):
        nlines = text.count("\n") + 1
        raise ResultsError(path, "last line is incomplete (no newline at the end: truncated?)",
                           nlines)
    want = [c for c, _ in spec]
    rows = []
    reader = csv.reader(io.StringIO(text))
    try:
        for rec in reader:
            line = reader.line_num
            if line == 1:
                for spec_old, conv in LEGACY.get(name, []) if rec != want else []:
                    if rec == [c for c, _ in spec_old]:
                        spec, convert, want = spec_old, conv, rec
                        break
                if rec != want:
                    raise ResultsError(path, f"header is '{','.join(rec)}', expected "
                                             f"'{','.join(want)}'", 1)
                continue
            if not rec:
                raise ResultsError(path, "empty line", line)
            if len(rec) != len(want):
                raise ResultsError(path, f"{len(rec)} fields, expected {len(want)} "
                                         f"(truncated or malformed row)", line)
            rows.append({c: _value(v, k, path, line, c) for (c, k), v in zip(spec, rec)})
    except csv.Error as e:
        raise ResultsError(path, f"malformed CSV: {e}", reader.line_num)
    return [convert(r) for r in rows] if convert else rows


def read_meta(path):
    """Read and check meta.json: a dict (see META_FIELDS)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(path, f"cannot read: {e}")
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsError(path, f"invalid JSON: {e.msg} (column {e.colno})", e.lineno)
    if not isinstance(meta, dict):
        raise ResultsError(path, "not a JSON object")

    check_fields(path, meta, META_FIELDS)
    if meta["status"] not in STATUSES:
        raise ResultsError(path, f"field 'status' is '{meta['status']}', expected one of "
                                 f"{', '.join(STATUSES)}")
    return meta


def check_fields(path, obj, fields, prefix=""):
    """Every field present with one of its types (a bool is no int)."""
    for k, types in fields.items():
        if k not in obj:
            raise ResultsError(path, f"missing field '{prefix}{k}'")
        v = obj[k]
        if isinstance(v, bool) or not isinstance(v, types):
            raise ResultsError(path, f"field '{prefix}{k}' is {json.dumps(v)}, expected "
                                     f"{'/'.join(t.__name__ for t in types)}")


class Run:
    """One run: meta (dict), its tables (list of rows, or None when the file
    is absent) and the fields it is grouped by."""

    def __init__(self, directory, meta, row=None):
        self.dir, self.meta, self.row = directory, meta, row
        self.id = meta["run_id"]
        self.tables = {}
        src = row or {}
        status = src.get("status") if src.get("status") not in (None, "pending") \
            else meta["status"]
        mp = os.path.join(directory, "meta.json")
        if status == "finished":
            check_fields(mp, meta, FINISHED_FIELDS)
            check_fields(mp, meta["workload"], WORKLOAD_FIELDS, "workload.")
            if not any(isinstance(meta.get(f), (int, float)) and not isinstance(meta.get(f), bool)
                       for f in START_FIELDS):
                raise ResultsError(mp, "missing field 'run_start_wall_ns' (a number)")
        for name in RUN_TABLES:
            p = os.path.join(directory, name)
            if os.path.exists(p):
                self.tables[name] = read_table(p)
            elif status == "finished" and name in FINISHED_TABLES:
                raise ResultsError(p, "missing, but the run finished (partial results?)")
            else:
                self.tables[name] = None
        self.variant = meta["variant"]
        self.backend = meta["backend"]
        self.ranks = meta["ranks"]
        self.replicas = meta["replicas"]
        self.spares = meta.get("spares") or 0
        wl = meta.get("workload") if isinstance(meta.get("workload"), dict) else {}
        self.records = wl.get("records")
        self.workload = src.get("workload") or wl.get("name")
        # The spec without the seed the runner drew for this repetition:
        # repetitions of one configuration share it.
        self.failure_spec = meta["failures"] or ""
        self.failures = SEED_ITEM.sub("", self.failure_spec).strip().strip(";").strip()
        self.status = status
        self.repetition = src.get("repetition")

    @property
    def finished(self):
        return self.status == "finished"

    def table(self, name):
        return self.tables.get(name) or []

    @property
    def start_ns(self):
        """meta.json run_start_wall_ns: rank 0's wall clock (ns since 1970)
        at timeline t = 0 (older runs: run_start_wallclock in seconds)."""
        if "run_start_wall_ns" in self.meta:
            return self.meta["run_start_wall_ns"]
        s = self.meta.get("run_start_wallclock")
        return None if s is None else round(s * 1e9)

    def clock_offset_ns(self, host):
        """Host's wall clock minus rank 0's host's (meta.json clock_offsets),
        0 when not measured (one host, or an older run)."""
        for h in self.meta.get("clock_offsets") or []:
            if isinstance(h, dict) and h.get("host") == host and isinstance(h.get("offset_ns"), int):
                return h["offset_ns"]
        return 0

    def kill_times(self):
        """Each kill of kills.csv in seconds since timeline t = 0, on rank 0's
        clock: {kill: seconds}."""
        if self.start_ns is None:
            return {}
        return {k["kill"]: (k["time_ns"] - self.clock_offset_ns(k["host"]) - self.start_ns) / 1e9
                for k in self.table("kills.csv") if k["time_ns"] is not None}

    def key(self):
        """The configuration a run is grouped by for medians over repetitions:
        a tuple in the order of KEY_FIELDS."""
        return (self.variant, self.backend, self.ranks, self.replicas, self.workload,
                self.records, self.failures)


class Campaign:
    """A results/CAMPAIGN/ directory: .runs (Run objects, from meta.json),
    .rows (runs.csv rows, with 'run' set to the Run when it has one)."""

    def __init__(self, path):
        self.path = path
        if not os.path.isdir(path):
            raise ResultsError(path, "not a directory")
        runs_csv = os.path.join(path, "runs.csv")
        if not os.path.exists(runs_csv):
            raise ResultsError(runs_csv, "missing (every campaign directory has runs.csv)")
        self.rows = read_table(runs_csv)
        by_id = {}
        for i, r in enumerate(self.rows):
            if r["run_id"] in by_id:
                raise ResultsError(runs_csv, f"run_id '{r['run_id']}' appears twice", i + 2)
            by_id[r["run_id"]] = r
        self.runs = []
        for name in sorted(os.listdir(path)):
            d = os.path.join(path, name)
            if not os.path.isdir(d):
                continue
            mp = os.path.join(d, "meta.json")
            if not os.path.exists(mp):
                if by_id.get(name, {}).get("status") == "pending":
                    continue    # not run yet, or running now
                if any(os.path.exists(os.path.join(d, f)) for f in RUN_FILES):
                    raise ResultsError(mp, "missing, but the directory holds run files")
                continue
            meta = read_meta(mp)
            if meta["run_id"] != name:
                raise ResultsError(mp, f"run_id '{meta['run_id']}' differs from the "
                                       f"directory name '{name}'")
            row = by_id.get(name)
            if row is None:
                warn(f"{mp}: run '{name}' is not listed in {runs_csv}")
            else:
                for f in ("variant", "backend"):
                    if row[f] != meta[f]:
                        raise ResultsError(mp, f"field '{f}' is {json.dumps(meta[f])} but "
                                               f"runs.csv says {json.dumps(row[f])}")
                for f in ("ranks", "replicas"):
                    if row[f] != meta[f]:
                        warn(f"{mp}: {f} {meta[f]}, runs.csv says {row[f]} (meta.json is used)")
                if row["status"] not in (meta["status"], "pending"):
                    warn(f"{mp}: status '{meta['status']}', runs.csv says '{row['status']}' "
                         "(runs.csv is used)")
            run = Run(d, meta, row)
            self.runs.append(run)
            if row is not None:
                row["run"] = run
        pending = [r for r in self.rows if r["status"] == "pending" and "run" not in r]
        if pending:
            print(f"note: {len(pending)} run(s) of {runs_csv} pending (left out)")
        self.rows = [r for r in self.rows if r not in pending]
        for r in self.rows:
            if "run" not in r:
                r["run"] = None
                warn(f"{runs_csv}: run '{r['run_id']}' has no directory with a meta.json")
        names = sorted({r.meta["campaign"] for r in self.runs})
        self.name = ", ".join(names) if names else os.path.basename(os.path.abspath(path))

    def all_runs(self):
        """Every run for counting: [(key, status, Run or None)] from runs.csv
        plus the runs it does not list; key as Run.key()."""
        out = []
        for r in self.rows:
            run = r["run"]
            key = run.key() if run else (r["variant"], r["backend"], r["ranks"], r["replicas"],
                                         r["workload"], None, r["failures"] or "")
            out.append((key, run.status if run else r["status"], run))
        listed = {r["run_id"] for r in self.rows}
        out += [(r.key(), r.status, r) for r in self.runs if r.id not in listed]
        return out

    def variants(self):
        """Every variant of the campaign, runs.csv and meta.json alike."""
        return {k[0] for k, _, _ in self.all_runs()}

    def finished(self):
        return [r for r in self.runs if r.finished]
