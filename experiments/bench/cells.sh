# shellcheck shell=bash
# cells.sh -- how the benchmarks that compare variants measure, sourced by
# bench.sh.
#
# A benchmark is a set of points: a cell (variant, size, ranks...) at one
# repetition.  Repetitions go outer; within one, every cell runs once, in
# an order drawn from the repetition's number (cells_order), so that a
# position in the sequence (first after a pause, last before the next
# repetition) falls on every variant alike and no variant is always the
# one that runs after another.  Each point's rows carry the 1-minute load
# average sampled right before and right after it (load_before,
# load_after) and the cores busy in the second before it (busy_before,
# from /proc/stat: every process's and the hypervisor's steal).  A point
# waits, up to LOAD_WAIT seconds (default 120), until no more than
# BUSY_MAX cores (default a quarter of them) were busy in the last second,
# then runs anyway, its busy cores in its rows for the report to show.
# (The 1-minute load is no gate: it still counts the points before, for
# a minute after they ended, and held every point a minute or two.)
#
# A file resumes: cells_open keeps FILE when its first record matches
# what would be recorded now (scripts/provenance --matches: the measured
# code, the Open MPI build, the machine, the command) and appends a
# "resumed:" record, else starts it anew; a point whose key
# (the first columns of its row) is in FILE is not run again.  MINUTES
# (0: no limit) is the chunk's budget: a point is not started when the
# longest point so far (this chunk's, or any earlier chunk's in the
# record) would end past it, except that a chunk whose whole budget is
# shorter than that point runs it (else it would never run) unless
# CELLS_FIT=strict (make remeasure: the point waits for a chunk it fits).
# The benchmark then says how many points are left and how long they take
# at the pace so far; the same command resumes.  So a benchmark of hours
# runs in chunks of minutes, and a table holds one revision.
#
#   cells_open FILE HEADER COMMAND   start or resume FILE (HEADER without
#                                    CELLS_LOADS, the columns of the loads)
#   cells_order SEED WORD...         the words, one per line, in SEED's order
#   cell_run FILE KEY CMD...         run CMD for the point KEY unless FILE has
#                                    it; append CMD's lines with the loads;
#                                    status 1 when the point does not fit
#                                    in what is left of MINUTES
#   cells_fresh FILE                 FILE has no rows yet (absent, or its
#                                    header alone): cells_open started it
#                                    anew, or its first chunk ran nothing
#   cells_target FILE QUANTITY at most|at least NUMBER SCOPE
#                                    a target, written into FILE's record
#                                    before its first run (report.py judges
#                                    every cell by it, never the best one)
#   cells_close FILE TOTAL           the line saying what is left; the
#                                    chunk's points and seconds to the record
#   cells_each FILE REPS SEED KEYFN RUNFN CELL...
#                                    every CELL once per repetition, in
#                                    SEED's order for that repetition: the
#                                    point `KEYFN CELL REP` runs `RUNFN CELL
#                                    REP`; then cells_close

CELLS_STOP=0 CELLS_DONE=0 CELLS_SKIPPED=0 CELLS_SPENT=0 CELLS_LONGEST=0

load1() { cut -d' ' -f1 /proc/loadavg; }
# cores busy over the next BUSY_SAMPLE seconds (default 1): all time less
# idle and iowait
busy1() {
  local a b
  read -ra a < <(head -1 /proc/stat); sleep "${BUSY_SAMPLE:-1}"; read -ra b < <(head -1 /proc/stat)
  awk -v n="$(nproc)" -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    for (i = 2; i <= 9; i++) t += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])
    printf "%.2f\n", (t > 0 ? (t - idle) / t * n : 0) }'
}
CELLS_LOADS=load_before,load_after,busy_before   # the columns cell_run appends
# noted COMMAND: the command with BENCH_NOTE='...' in it when one is set (a
# small trial run says so in its record)
noted() {
  if [ -n "${BENCH_NOTE:-}" ]; then echo "${1% make bench} BENCH_NOTE='$BENCH_NOTE' make bench"; else echo "$1"; fi
}

cells_open() {
  local f=$1 header=$2 cmd
  cmd=$(noted "$3")
  if [ -s "$f" ] && [ "$(head -1 "$f")" = "$header,$CELLS_LOADS" ] &&
     "$ROOT/scripts/provenance" --matches "${f%.csv}.meta" "$cmd"; then
    { echo "resumed:"; "$ROOT/scripts/provenance" "$cmd" | sed 's/^/  /'; } >> "${f%.csv}.meta"
    echo "resuming $f ($(($(wc -l < "$f") - 1)) rows)"
  else
    echo "$header,$CELLS_LOADS" > "$f"
    "$ROOT/scripts/provenance" "$cmd" > "${f%.csv}.meta"
  fi
  CELLS_DONE=0 CELLS_SKIPPED=0 CELLS_SPENT=0
  CELLS_STOP=0; [ "${MINUTES:-0}" -gt 0 ] && CELLS_STOP=$(( $(date +%s) + 60 * MINUTES ))
  # the longest point of the earlier chunks, from their chunk: lines
  CELLS_LONGEST=$(sed -n 's/^chunk: .*(longest \([0-9]*\) s).*/\1/p' "${f%.csv}.meta" | sort -n | tail -1)
  CELLS_LONGEST=${CELLS_LONGEST:-0}
}

# cells_fits: a point as long as the longest so far ends within the budget
# (or there is no budget, or no point has been timed yet)
cells_fits() {
  local now; now=$(date +%s)
  [ "$CELLS_STOP" -eq 0 ] && return 0
  [ "$now" -ge "$CELLS_STOP" ] && return 1
  [ $((now + CELLS_LONGEST)) -le "$CELLS_STOP" ] && return 0
  # no chunk of this budget can hold it: run it once, unless strict
  [ "${CELLS_FIT:-}" != strict ] && [ "$CELLS_DONE" -eq 0 ] && [ $((60 * MINUTES)) -lt "$CELLS_LONGEST" ]
}

# A permutation drawn from the seed: each word's rank is the hash of the
# seed and the word (the same seed, the same order; another seed, another).
cells_order() {
  local seed=$1 w; shift
  for w in "$@"; do printf '%s %s\n' "$(printf '%s/%s' "$seed" "$w" | sha256sum | cut -c1-16)" "$w"; done |
    sort | cut -d' ' -f2
}

cell_run() {
  local f=$1 key=$2 lb la out t0 line; shift 2
  if awk -v k="$key" 'index($0, k) == 1 { found = 1; exit } END { exit !found }' "$f"; then
    CELLS_SKIPPED=$((CELLS_SKIPPED + 1)); return 0
  fi
  cells_fits || return 1
  local bb start; start=$(date +%s)
  while :; do
    bb=$(busy1)
    awk -v b="$bb" -v m="${BUSY_MAX:-$(awk -v n="$(nproc)" 'BEGIN { print n / 4 }')}" 'BEGIN { exit !(b > m) }' || break
    [ $(($(date +%s) - start)) -lt "${LOAD_WAIT:-120}" ] || break
  done
  lb=$(load1); t0=$(date +%s)
  out=$("$@")
  la=$(load1)
  t0=$(($(date +%s) - t0))
  CELLS_SPENT=$((CELLS_SPENT + t0))
  [ "$t0" -gt "$CELLS_LONGEST" ] && CELLS_LONGEST=$t0
  if [ -z "$out" ]; then  # no rows: the point stays to do (the same command runs it again)
    echo "$(basename "$f"): no rows from point $key" >&2
    return 0
  fi
  CELLS_DONE=$((CELLS_DONE + 1))
  while IFS= read -r line; do echo "$line,$lb,$la,$bb"; done <<<"$out" | tee -a "$f"
  return 0
}

# The rule by which report.py judges a target, one for every benchmark.
CELLS_RULE="(the median over the repetitions; met when its 95% distribution-free interval lies on the target's side of it, missed when it lies beyond, unsure when it straddles it)"

cells_fresh() { [ ! -s "$1" ] || [ "$(grep -c . "$1")" -le 1 ]; }

# cells_target FILE QUANTITY at most|at least NUMBER SCOPE: a target for the
# cells of FILE, written into its record when the file starts (a resumed
# file keeps the target it started with): stated before the first run.
cells_target() {
  local f=$1 q=$2 op="$3 $4" n=$5 meta; shift 5
  meta=${f%.csv}.meta
  cells_fresh "$f" && ! grep -q "^target: $q " "$meta" || return 0
  echo "target: $q $op $n $* $CELLS_RULE" >> "$meta"
}

# cells_close FILE TOTAL: after a loop that stopped at the first point past
# the budget (cell_run's 1), or ran through; TOTAL is the benchmark's points.
cells_close() {
  local f=$1 total=$2 left pace
  left=$((total - CELLS_DONE - CELLS_SKIPPED))
  echo "chunk: $CELLS_DONE points in $CELLS_SPENT s (longest $CELLS_LONGEST s), $left of $total left" >> "${f%.csv}.meta"
  if [ "$left" -gt 0 ]; then
    pace=$(( CELLS_DONE > 0 ? CELLS_SPENT / CELLS_DONE : 0 ))
    # (left without a budget: points that gave no rows, which stay to do)
    echo "$(basename "$f"): stopped${MINUTES:+ within $MINUTES minutes}, $left of $total points left" \
      "(about $(( (left * pace + 59) / 60 )) minutes at ${pace} s a point); the same command resumes"
    return 1
  fi
  echo "$(basename "$f"): all $total points ($CELLS_DONE this time)"
}

# cells_each FILE REPS SEED KEYFN RUNFN CELL...: the loop every benchmark
# that compares runs.  A CELL is one word (its parts joined by / or :,
# which KEYFN and RUNFN take apart); KEYFN CELL REP prints the point's key,
# the first columns of its rows; RUNFN CELL REP prints its rows.
cells_each() {
  local f=$1 reps=$2 seed=$3 keyfn=$4 runfn=$5 rep c; shift 5
  CELLS_DONE=0 CELLS_SKIPPED=0 CELLS_SPENT=0  # this loop's (a file may have two)
  for rep in $(seq 1 "$reps"); do
    for c in $(cells_order "$seed$rep" "$@"); do
      cell_run "$f" "$("$keyfn" "$c" "$rep")" "$runfn" "$c" "$rep" || break 2
    done
  done
  cells_close "$f" $(( reps * $# ))
}
