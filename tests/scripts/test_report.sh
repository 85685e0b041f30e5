#!/usr/bin/env bash
# test_report.sh -- the benchmark tables of the documents are the report
# tool's output, never typed.
#
# Pass rules: `report.py check` finds every marked table of the documents
# (README.md, docs/, results/bench/README.md with the provenance of every
# result file; docs/setup.md among them) equal to what report.py computes from
# the committed files in results/bench/; every result file is listed in
# results/bench/README.md; a changed number in a copy is
# found (check exits 1) and `update` puts it back; a bad table name or a
# lone marker is refused with exit 2 and a message, no traceback.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R="python3 $ROOT/experiments/bench/report.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
$R check ||
  fail "tables out of date: run make report"
for f in "$ROOT"/results/bench/*.csv; do
  grep -q "^| \`$(basename "$f")\` |" "$ROOT/results/bench/README.md" || fail "results/bench/README.md lacks $(basename "$f")"
done
grep -q '<!-- report: recovery -->' "$ROOT/docs/benchmarks.md" || fail "docs/benchmarks.md has no recovery table"
# grep reads it all: -q would stop early and break report.py's pipe (pipefail)
$R files | grep -x "$ROOT/docs/setup.md" >/dev/null || fail "report.py does not find the table of docs/setup.md: $($R files)"
sed 's/^| recreate-copy | 4 | 10000 | 5 | 0 | [0-9.]* /| recreate-copy | 4 | 10000 | 5 | 0 | 1.0 /' "$ROOT/docs/benchmarks.md" > "$T/b.md"
cmp -s "$T/b.md" "$ROOT/docs/benchmarks.md" && fail "the test's edit changed nothing"
$R check "$T/b.md" 2>/dev/null && fail "a typed number went unnoticed"
# The code-size table (loc) is computed from the sources, not from result
# files, so compare with an updated copy of the original, not the original.
cp "$ROOT/docs/benchmarks.md" "$T/orig.md" && $R update "$T/orig.md" >/dev/null
$R update "$T/b.md" >/dev/null && cmp -s "$T/b.md" "$T/orig.md" || fail "update did not restore the table"
printf '<!-- report: nonsense -->\n<!-- end report -->\n' > "$T/bad.md"
out=$($R update "$T/bad.md" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown table 'nonsense'" <<<"$out" && ! grep -q Traceback <<<"$out" || fail "bad table: rc $rc: $out"
printf '<!-- report: ycsb -->\nno end\n' > "$T/lone.md"
out=$($R check "$T/lone.md" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q "without its" <<<"$out" || fail "lone marker: rc $rc: $out"

# stale: a file made at HEAD with this MPI on this machine stands; one made
# at the first commit, one with another MPI build and one without a record
# are listed, each with its reason
mkdir "$T/bench"
for f in now old mpi bare; do echo "a,b" > "$T/bench/$f.csv"; done
"$ROOT/scripts/provenance" test > "$T/bench/now.meta"
sed "s/^revision: .*/revision: $(git -C "$ROOT" rev-list --max-parents=0 --abbrev-commit HEAD | tail -1)/" \
  "$T/bench/now.meta" > "$T/bench/old.meta"
sed 's/^mpi: .*/mpi: Open MPI 4.1.0 at \/elsewhere/' "$T/bench/now.meta" > "$T/bench/mpi.meta"
sed -i "s/^revision: .*/revision: $(git -C "$ROOT" rev-parse --short HEAD)/" "$T/bench/now.meta" "$T/bench/mpi.meta"
out=$($R stale --dir "$T/bench" 2>&1) || fail "stale: $out"
grep -q '^now.csv' <<<"$out" && fail "a file made at HEAD here is called stale: $out"
grep -q '^old.csv: .*the measured code changed since' <<<"$out" || fail "the first commit's file is not stale: $out"
grep -q '^mpi.csv: another MPI build$' <<<"$out" || fail "another MPI build not found: $out"
grep -q '^bare.csv: no record$' <<<"$out" || fail "a file without a record not found: $out"
grep -q '^3 of 4 result files stale' <<<"$out" || fail "stale count: $out"
echo "kept: history" >> "$T/bench/old.meta"
out=$($R stale --dir "$T/bench" 2>&1)
grep -q '^kept as history (their records say why): old.csv$' <<<"$out" && grep -q '^2 of 3 result files stale' <<<"$out" ||
  fail "a file kept as history: $out"

# the only-lines of scripts/measured-paths: a one-host soak is not measured
# by the test cluster's scripts, a run across hosts is; neither by the
# benchmark programs that are not theirs
python3 - "$ROOT/experiments/bench" <<'PY' || fail "report.measured_for narrows the measured code wrongly"
import sys; sys.path.insert(0, sys.argv[1]); import report as r
soak, multi, ycsb = r.measured_for("soak.csv"), r.measured_for("multihost-node-create.csv"), r.measured_for("ycsb.csv")
assert "scripts/kvrun" in soak and "scripts/vcluster" not in soak and "scripts" not in soak, soak
assert "scripts/vcluster" in multi and "experiments/bench/bench_ycsb.c" not in multi, multi
assert "scripts" in ycsb and "experiments/bench" in ycsb and "kvstore" in soak + multi, ycsb
PY

# the intervals: exact coverage of order statistics (analysis/stats.py)
PY3=$(python3 "$ROOT/analysis/pyfind.py") || fail "no python3 with numpy, scipy and matplotlib"
"$PY3" - "$ROOT/analysis" <<'PY' || fail "analysis/stats.py's intervals"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("stats", sys.argv[1] + "/stats.py")
s = importlib.util.module_from_spec(spec); spec.loader.exec_module(s)
assert s.order_interval(5) == (1, 0.9375), s.order_interval(5)           # [min, max], 93.75%
j, c = s.order_interval(20)
assert (j, round(c, 4)) == (6, 0.9586) and s.coverage(20, 7) < 0.95, (j, c)  # the narrowest at 95%
x = s.summary([5, 1, 4, 2, 3])
assert (x.median, x.lo, x.hi) == (3, 1, 5) and s.text(x) == "3.0 [1.0, 5.0] (94%)", s.text(x)
assert s.text(s.summary(range(20))) == "9.5 [5.0, 14.0]", s.text(s.summary(range(20)))
lo, hi = s.rate(0, 30)[1:]
assert lo == 0 and abs(hi - 0.1157) < 1e-3, hi                            # Clopper-Pearson
PY
echo "PASS: the documents' benchmark tables match results/bench/; stale files and intervals as they should be"
