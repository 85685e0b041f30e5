#!/usr/bin/env bash
# test_progress_bench.sh -- `BENCH=progress make bench` at a tiny size, into
# a file of its own (PROGRESS_CSV), never into results/bench.
#
# Pass rules: 2 launches of each setting (tcp, tcp-thread) and place (this
# machine, two hosts of the benchmark's own test cluster), 1 round of 40
# operations, the target computing 200 us between MPI_Tests, all pass
# (no progress-failed.txt); the header is the columns docs/formats.md
# gives progress.csv; each launch wrote its 9 rows (ping-pong with the
# target polling; get, put, kv_get, kv_put with it polling and computing),
# each with a positive operation count and time; across hosts an
# operation on a computing target takes longer than half the 200 us it
# computes between MPI calls (a request arriving at a uniform instant of
# the interval waits half of it on average; 40 gets once averaged 193 us),
# on this machine's osc/sm windows less than the whole; the .meta
# names the revision and the command; report.py's table has a ratio to
# the ping-pong with its verdict in the hosts-2 tcp polling row; a second
# run resumes (runs no launch, the file unchanged); the cluster's bridge
# is gone afterwards; results/bench is untouched.
# Exit 0 pass, 1 fail, 77 skip (not root, or no namespaces).
set -uo pipefail
export LOAD_WAIT=0 BUSY_SAMPLE=0.1   # a test times nothing: no wait for idle cores (cells.sh)
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
why=$("$ROOT/scripts/vcluster" can --no-slurm) || { echo "skip: $why"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
before=$(cd "$ROOT" && git status --porcelain results/bench)
export PROGRESS_CSV=$T/progress.csv PROGRESS_REPS=2 PROGRESS_OPS=40 PROGRESS_ROUNDS=1 PROGRESS_COMPUTE_US=200
bash "$ROOT/experiments/bench/bench_progress.sh" > "$T/run.log" 2>&1 || fail "bench_progress.sh: $(tail -5 "$T/run.log")"
[ -e "$T/progress-failed.txt" ] && fail "launches failed: $(cat "$T/progress-failed.txt")"
header=$(sed -n 's/^| `progress.csv` | `\([^`]*\)`.*/\1/p' "$ROOT/docs/formats.md")
[ -n "$header" ] && [ "$(head -1 "$PROGRESS_CSV")" = "$header" ] ||
  fail "header '$(head -1 "$PROGRESS_CSV")', docs/formats.md says '$header'"
for s in tcp tcp-thread; do
  for h in 1 2; do
    for l in 1 2; do
      n=$(grep -c "^$s,$h,$l,\(polling\|computing\),1,[a-z_]*,[1-9][0-9]*,[0-9]*\.[0-9]*,[0-9.]*,[0-9.]*,[0-9.]*$" "$PROGRESS_CSV")
      [ "$n" -eq 9 ] || fail "$s hosts $h launch $l: $n good rows, wanted 9: $(grep "^$s,$h,$l," "$PROGRESS_CSV")"
    done
  done
done
awk -F, 'NR > 1 && $8 <= 0 { bad = 1 } END { exit bad }' "$PROGRESS_CSV" || fail "a time not positive"
awk -F, 'NR > 1 && $1 == "tcp" && $4 == "computing" && $2 == 2 && $8 < 100 { bad = 1 }
         NR > 1 && $4 == "computing" && $2 == 1 && $8 > 200 { bad = 1 } END { exit bad }' \
  "$PROGRESS_CSV" || fail "computing target: $(grep computing "$PROGRESS_CSV")"
rev=$(git -C "$ROOT" rev-parse --short HEAD)
m=$T/progress.meta
grep -q "^revision: $rev\(-dirty\)\?$" "$m" && grep -q "^command: PROGRESS_REPS=2 .*BENCH=progress make bench$" "$m" ||
  fail "progress.meta: $(cat "$m")"
out=$(python3 "$ROOT/experiments/bench/report.py" print progress --dir "$T") || fail "report.py print progress: $out"
grep -Eq '^\| 2 \| tcp \| polling \| [0-9.]+ \[.*\]( \([0-9]+%\))? \| .* (met|missed|unsure) \|$' <<<"$out" &&
  grep -q "^Target, stated\|Target, stated" <<<"$out" || fail "the table: $out"
lines=$(wc -l < "$PROGRESS_CSV")
bash "$ROOT/experiments/bench/bench_progress.sh" > "$T/again.log" 2>&1 || fail "second run: $(tail -3 "$T/again.log")"
grep -q "resuming" "$T/again.log" && ! grep -q "launch [0-9]:" "$T/again.log" && [ "$(wc -l < "$PROGRESS_CSV")" = "$lines" ] ||
  fail "the second run did not resume: $(cat "$T/again.log")"
ip link show kvbrpg > /dev/null 2>&1 && fail "the cluster's bridge kvbrpg is left"
[ "$(cd "$ROOT" && git status --porcelain results/bench)" = "$before" ] || fail "results/bench was written to"
echo "PASS: BENCH=progress at a tiny size: 4 settings x 2 launches, the table, resume, nothing left"
