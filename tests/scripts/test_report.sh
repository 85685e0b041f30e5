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
echo "PASS: the documents' benchmark tables match results/bench/"
