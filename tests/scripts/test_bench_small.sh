#!/usr/bin/env bash
# test_bench_small.sh -- `make bench` at a tiny size, into a directory of its
# own (BENCH_OUT), never into results/bench.
#
# Pass rules: BENCH=hotpath and BENCH=store-vs-raw (2 launches each, a row
# per launch, the ratio's interval in the table), BENCH=ycsb (YCSB C, 2 ranks, 2 repetitions of
# 1 s), BENCH=recovery and BENCH=recovery-floor (1,000 pairs, 4 ranks, 2
# repetitions), BENCH=ftcost (2 ranks, 3 turn pairs of 50 ms per variant)
# and BENCH=firsttouch (8 MB, 2 launches of 2 rounds) each write their CSV with the
# header of docs/formats.md and the rows they should (12 ycsb rows with repetitions 1 and 2, none with
# one copy and with two, the variants with two; 2 recovery
# rows that did not hang, 3 phases per floor run with a positive floor,
# 9 ftcost rows with both throughputs positive, 4 firsttouch rows of 8 MB)
# and a NAME.meta beside it naming the revision (with the dirty flag
# when the tree is edited), the MPI, the date, the host, the load and the
# command; the ycsb repetitions ran their cells in different orders, and
# the same command again resumes (a row taken away is the one point run
# again); every row has its load before and after; report.py prints their tables with a median and its interval
# ("x [lo, hi]") in every cell of two runs and with the run count, and
# its provenance table lists the three files with their revision; the
# committed results/bench/ is untouched.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R="python3 $ROOT/experiments/bench/report.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
before=$(cd "$ROOT" && git status --porcelain results/bench)
bench() { BENCH_OUT=$T LOAD_WAIT=0 BUSY_SAMPLE=0.1 "$@" bash "$ROOT/experiments/bench/bench.sh" > "$T/$BENCH.log" 2>&1 ||
  fail "BENCH=$BENCH: $(tail -3 "$T/$BENCH.log")"; }
BENCH=hotpath bench env HOTPATH_ITERS=100000 HOTPATH_REPS=2
BENCH=store-vs-raw bench env OPS=2000 STORE_RAW_REPS=2
BENCH=ycsb bench env YCSB_WORKLOADS=c YCSB_RANKS=2 YCSB_REPS=2 YCSB_SECONDS=1
BENCH=recovery bench env PAIRS=1000 RANKS=4 REPS=2 VARIANTS=recreate-copy
BENCH=recovery-floor bench env PAIRS=1000 RANKS=4 REPS=2 VARIANTS=recreate-copy
BENCH=ftcost bench env YCSB_RANKS=2 FTCOST_ROUNDS=3 FTCOST_MS=50
BENCH=firsttouch bench env TOUCH_MB=8 TOUCH_ROUNDS=2 TOUCH_REPS=2

[ "$(head -1 "$T/ycsb.csv")" = "workload,variant,backend,ranks,replicas,repetition,throughput_ops_per_s,p50_us,p99_us,load_before,load_after,busy_before" ] ||
  fail "ycsb.csv header: $(head -1 "$T/ycsb.csv")"
[ "$(grep -c '^c,[a-z-]*,allocate,2,2,[12],[0-9.]*,' "$T/ycsb.csv")" -eq 10 ] &&
  [ "$(grep -c '^c,none,allocate,2,1,[12],[0-9.]*,' "$T/ycsb.csv")" -eq 2 ] || fail "ycsb.csv rows: $(cat "$T/ycsb.csv")"
[ "$(grep -c '^recreate-copy,allocate,4,1000,[12],.*,no,[0-9.]*,[0-9.]*,[0-9.]*$' "$T/recovery.csv")" -eq 2 ] ||
  fail "recovery.csv rows: $(cat "$T/recovery.csv")"
[ "$(head -1 "$T/recovery-floor.csv")" = "variant,backend,ranks,pairs,repetition,phase,recovery_us,floor_us,ratio,table_bytes,exchange_bytes,win_allocate_us,memcpy_us,alltoallv_us,memcpy_first_us,scan_us,exchange_us,insert_us,load_before,load_after,busy_before" ] ||
  fail "recovery-floor.csv header: $(head -1 "$T/recovery-floor.csv")"
for ph in windows rereplicate total; do
  [ "$(grep -c "^recreate-copy,allocate,4,1000,[12],$ph,[0-9]*,[1-9][0-9]*,[0-9.]*," "$T/recovery-floor.csv")" -eq 2 ] ||
    fail "recovery-floor.csv rows of $ph: $(cat "$T/recovery-floor.csv")"
done
# every row has the two copies' times and re-replication's parts (its scan
# of 1,000 pairs' slots takes some microseconds)
awk -F, 'NR > 1 && !/^#/ && (NF != 21 || $13 < 1 || $15 < 1 || $16 < 1) {bad = 1} END {exit bad}' \
  "$T/recovery-floor.csv" || fail "recovery-floor.csv copies or parts: $(cat "$T/recovery-floor.csv")"
[ "$(grep -c '^recreate-[a-z]*,b,2,2,[123],[1-9][0-9]*,[1-9][0-9]*,-\?[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*$' "$T/ftcost.csv")" -eq 9 ] ||
  fail "ftcost.csv rows: $(cat "$T/ftcost.csv")"
[ "$(grep -c '^[12],[12],8,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*$' "$T/firsttouch.csv")" -eq 4 ] || fail "firsttouch.csv rows: $(cat "$T/firsttouch.csv")"
rev=$(git -C "$ROOT" rev-parse --short HEAD)
for f in hotpath store-vs-raw ycsb recovery recovery-floor ftcost firsttouch; do
  m=$T/$f.meta
  grep -q "^revision: $rev\(-dirty\)\?$" "$m" && grep -q '^mpi: Open MPI' "$m" && grep -q '^date: 20' "$m" &&
    grep -q '^host: [0-9]* cores' "$m" && grep -q '^load: ' "$m" && grep -q "^command: BENCH=$f .*make bench$" "$m" ||
    fail "$f.meta: $(cat "$m" 2>/dev/null)"
done
# store-vs-raw and hotpath: a row per launch, two launches each
[ "$(grep -c '^\(recreate-copy\|none\),\(allocate\|create\),[12],\(get\|put\),2,' "$T/store-vs-raw.csv")" -eq 12 ] ||
  fail "store-vs-raw.csv rows: $(cat "$T/store-vs-raw.csv"); its launches: $(grep -a 'kvrun: [A-Z]' "$T/store-vs-raw.log")"
[ "$(grep -c '^[12],[a-z]*,' "$T/hotpath.csv")" -ge 10 ] || fail "hotpath.csv rows: $(cat "$T/hotpath.csv")"
out=$($R print store-vs-raw --dir "$T") || fail "report.py print store-vs-raw: $out"
grep -q '^| get | create | recreate-copy | 2 | 2 | [0-9.]* \[[0-9.]*, [0-9.]*\] (50%) | .* | [0-9.]* \[[0-9.]*, [0-9.]*\] (50%) | \(met\|missed\|unsure\) |$' <<<"$out" ||
  fail "the store-vs-raw table has no interval of its ratio or no verdict: $out"
out=$($R print ycsb recovery hotpath --dir "$T") || fail "report.py print: $out"
grep -q '^| C | 2 | [0-9.]*k \[[0-9.]*k, [0-9.]*k\]\( ([0-9]*%)\)\? |.* | 2 |$' <<<"$out" || fail "the ycsb table has no interval or count: $out"
grep -q '^| recreate-copy | 4 | 1000 | 2 | 0 | [0-9.]* \[[0-9.]*, [0-9.]*\]\( ([0-9]*%)\)\? |' <<<"$out" ||
  fail "the recovery table has no interval: $out"
out=$($R print ftcost --dir "$T") || fail "report.py print ftcost: $out"
grep -q '^| B | 2 | recreate-copy | [0-9.]*k \[[0-9.]*k, [0-9.]*k\]\( ([0-9]*%)\)\? | [0-9.]*k \[.* | [-+][0-9.]*% \[.*\]\( ([0-9]*%)\)\? | 3 | \(met\|missed\|unsure\) |$' <<<"$out" ||
  fail "the ftcost table has no interval or count: $out"
out=$($R print recovery-floor --dir "$T") || fail "report.py print recovery-floor: $out"
grep -q '^| recreate-copy | 4 | 1000 | total | 2 | [0-9.]* \[[0-9.]*, [0-9.]*\]\( ([0-9]*%)\)\? | [0-9.]* \[' <<<"$out" ||
  fail "the recovery-floor table has no interval: $out"
prov=$($R print provenance --dir "$T")
for f in hotpath ycsb recovery recovery-floor; do
  grep -q "^| \`$f.csv\` | [0-9]* | $rev" <<<"$prov" || fail "provenance lacks $f.csv: $prov"
done
# a benchmark that does not exist is refused with the list of those that do
out=$(BENCH=nonsense BENCH_OUT=$T bash "$ROOT/experiments/bench/bench.sh" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q 'no benchmark BENCH=nonsense (there are: store-vs-raw hotpath ycsb .*revisions' <<<"$out" ||
  fail "BENCH=nonsense: rc $rc: $out"
# every cell once per repetition, in an order of the repetition's own
order() { awk -F, -v r="$1" '$6 == r {printf "%s:%s ", $2, $5}' "$T/ycsb.csv"; }
[ "$(order 1)" != "$(order 2)" ] || fail "repetitions 1 and 2 ran the variants in one order: $(order 1)"
# the same command resumes: a row taken away is the one point run again
head -n -1 "$T/ycsb.csv" > "$T/y" && mv "$T/y" "$T/ycsb.csv"
BENCH=ycsb bench env YCSB_WORKLOADS=c YCSB_RANKS=2 YCSB_REPS=2 YCSB_SECONDS=1
grep -q 'ycsb.csv: all 12 points (1 this time)' "$T/ycsb.log" && [ "$(grep -c '^c,' "$T/ycsb.csv")" -eq 12 ] &&
  grep -q '^resumed:' "$T/ycsb.meta" || fail "ycsb did not resume: $(tail -3 "$T/ycsb.log")"
# a target stands in the record before the first run, once, and the table
# judges by it; every chunk is timed in the record
[ "$(grep -c '^target: ratio at most 3 ' "$T/store-vs-raw.meta")" -eq 1 ] &&
  [ "$(grep -c '^target: ' "$T/ycsb.meta")" -eq 0 ] || fail "targets: $(grep target "$T"/*.meta)"
grep -q '^Target, stated in the file.s record before its first run: ratio at most 3 ' <<<"$($R print store-vs-raw --dir "$T")" ||
  fail "the store-vs-raw table does not quote its target"
[ "$(grep -c '^chunk: [0-9]* points in [0-9]* s (longest [0-9]* s), 0 of 12 left$' "$T/ycsb.meta")" -eq 2 ] ||
  fail "ycsb.meta's chunks: $(grep chunk "$T/ycsb.meta")"
# checkpoint/restart and the task application through cells.sh, at a tiny
# size: every point a row with its loads, none left
BENCH=checkpoint bench env CKPT_RANKS=2 CKPT_PAIRS=1000 CKPT_INTERVALS='0 1' CKPT_SECONDS=1 CKPT_RESTART_PAIRS=1000 CKPT_REPS=1
for m in 'cost,2,1000' 'overhead,4,100000,0,' 'overhead,4,100000,1,' 'restart,4,1000,'; do
  grep -q "^1,$m.*,[0-9.]*,[0-9.]*$" "$T/checkpoint.csv" || fail "checkpoint.csv has no $m row: $(cat "$T/checkpoint.csv")"
done
grep -q 'checkpoint.csv: all 4 points' "$T/checkpoint.log" || fail "checkpoint: $(tail -3 "$T/checkpoint.log")"
BENCH=taskapp bench env TASKAPP_OUT="$T/taskapp.csv" TASKAPP_SMALL=1 APPS=nqueens:9 REPS=1 VARIANTS=recreate-copy RANKSET=2 FREQS=10
[ "$(grep -c ',pass,[0-9.]*,[0-9.]*,[0-9.]*$' "$T/taskapp.csv")" -eq 12 ] && [ "$(grep -c ',true,pass,' "$T/taskapp.csv")" -eq 12 ] &&
  grep -q '^failure,nqueens,9,recreate-copy,allocate,4,2,50,0,1,1,' "$T/taskapp.csv" ||
  fail "taskapp.csv: $(cat "$T/taskapp.csv"); $(tail -3 "$T/taskapp.log")"
# a chunk does not start a point longer than what is left of its budget
# (the record's longest point, 120 s, against MINUTES=1); a budget no point
# fits runs one point, unless strict (make remeasure), where it waits
fit() {  # CELLS_FIT: rows of cells a b c after one chunk of a minute
  # shellcheck disable=SC2030,SC2031,SC2317  # a subshell's own settings; key, run called by name
  ( MINUTES=1 CELLS_FIT=$1 LOAD_WAIT=0 BUSY_SAMPLE=0.1
    # shellcheck source=experiments/bench/cells.sh
    . "$ROOT/experiments/bench/cells.sh"
    key() { echo "$1,$2,"; }; run() { echo "$1,$2,x"; }
    cells_open "$T/fit.csv" cell,rep,v "BENCH=fit make bench" >/dev/null
    cells_each "$T/fit.csv" 1 7 key run a b c >/dev/null )
  grep -c ',x,' "$T/fit.csv"
}
rm -f "$T/fit.csv"; ( . "$ROOT/experiments/bench/cells.sh"; cells_open "$T/fit.csv" cell,rep,v "BENCH=fit make bench" >/dev/null )
echo "chunk: 1 points in 120 s (longest 120 s), 3 of 3 left" >> "$T/fit.meta"
[ "$(fit strict)" -eq 0 ] || fail "strict: a point longer than the budget started: $(cat "$T/fit.csv")"
[ "$(fit any)" -eq 1 ] || fail "a budget no point fits did not run exactly one point: $(cat "$T/fit.csv")"
grep -q '^chunk: 1 points in [0-9]* s (longest 120 s), 2 of 3 left$' "$T/fit.meta" || fail "fit.meta: $(cat "$T/fit.meta")"
[ "$(cd "$ROOT" && git status --porcelain results/bench)" = "$before" ] || fail "results/bench was written to"
echo "PASS: hotpath, ycsb, recovery, recovery-floor, ftcost, firsttouch, checkpoint and taskapp at a tiny size, with provenance, targets, intervals and chunk budgets"
