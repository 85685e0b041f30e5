#!/usr/bin/env bash
# test_timeline_bench.sh -- `BENCH=timeline make bench` at a tiny size, into
# a file of its own (TIMELINE_CSV), never into results/bench.
#
# Pass rules: one repetition of every variant (2 s runs, the kill at 1 s)
# writes one row each, with the header of timeline_row.py --header, which
# is the one docs/formats.md gives timeline.csv; every run passed; its
# failure-free rate is positive, its worst bin during recovery below it
# (every variant slows down for a moment, online too), its time to full
# redundancy positive and under the run's length; every run's bins are in
# timeline-bins.csv (the header of timeline_row.py --bins-header) and the
# figure is drawn; report.py prints the table with every variant; a second
# run resumes (adds no row); every row has its loads; results/bench is untouched.  The variants are
# the ones bench_timeline.sh names.
set -uo pipefail
export LOAD_WAIT=0 BUSY_SAMPLE=0.1   # a test times nothing: no wait for idle cores (cells.sh)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
before=$(cd "$ROOT" && git status --porcelain results/bench)
export TIMELINE_CSV=$T/timeline.csv TIMELINE_REPS=1 TIMELINE_SECONDS=2 TIMELINE_KILL_AT=1
bash "$ROOT/experiments/bench/bench_timeline.sh" > "$T/run.log" 2>&1 || fail "bench_timeline.sh: $(tail -5 "$T/run.log")"
header=$(sed -n 's/^| `timeline.csv` | `\([^`]*\)`.*/\1/p' "$ROOT/docs/formats.md")
[ -n "$header" ] && [ "$(head -1 "$TIMELINE_CSV")" = "$header" ] ||
  fail "header '$(head -1 "$TIMELINE_CSV")', docs/formats.md says '$header'"
read -ra VARIANTS <<<"$(sed -n 's/^VARIANTS=(\(.*\))$/\1/p' "$ROOT/experiments/bench/bench_timeline.sh")"
[ "${#VARIANTS[@]}" -ge 6 ] || fail "bench_timeline.sh's VARIANTS: ${VARIANTS[*]}"
BINS=$T/timeline-bins.csv
[ "$(head -1 "$BINS")" = "$(python3 "$ROOT/experiments/bench/timeline_row.py" --bins-header)" ] ||
  fail "bins header: $(head -1 "$BINS")"
[ -s "$T/figures/timeline.png" ] || fail "no figure: $(tail -3 "$T/run.log")"
for v in "${VARIANTS[@]}"; do
  [ "$(grep -c "^$v,1," "$BINS")" -ge 5 ] || fail "$v: bins $(grep "^$v,1," "$BINS")"
  row=$(grep "^$v,1," "$TIMELINE_CSV") || fail "no row for $v: $(cat "$TIMELINE_CSV")"
  IFS=, read -r _ _ _ outcome bin rate worst ratio red zero failed <<<"$row"
  [ "$outcome" = pass ] || fail "$v: outcome $outcome ($row)"
  grep -q ',[0-9.]*,[0-9.]*$' <<<"$row" || fail "$v: no loads at the end of $row"
  awk -v r="$rate" -v w="$worst" -v d="$red" 'BEGIN { exit !(r > 0 && w < r && d > 0 && d < 2000) }' ||
    fail "$v: rate $rate, worst $worst, to full redundancy $red ms ($row)"
done
out=$(python3 "$ROOT/experiments/bench/report.py" print timeline --dir "$T") || fail "report.py: $out"
[ "$(grep -c '^| [a-z-]* | 1 | 1 | ' <<<"$out")" -eq "${#VARIANTS[@]}" ] || fail "the table: $out"
lines=$(wc -l < "$TIMELINE_CSV")
bash "$ROOT/experiments/bench/bench_timeline.sh" > "$T/again.log" 2>&1 || fail "second run: $(tail -3 "$T/again.log")"
[ "$(wc -l < "$TIMELINE_CSV")" = "$lines" ] || fail "the second run added rows: $(cat "$TIMELINE_CSV")"
[ "$(cd "$ROOT" && git status --porcelain results/bench)" = "$before" ] || fail "results/bench was written to"
echo "PASS: BENCH=timeline at a tiny size: every variant through one kill, the table, resume"
