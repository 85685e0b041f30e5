#!/usr/bin/env bash
# bench_checkpoint.sh -- the checkpoint/restart baseline (BENCH=checkpoint
# of `make bench`); writes results/bench/checkpoint.csv (columns: see
# experiments/bench/bench_checkpoint.c) and prints its tables (report.py).
#   cost      checkpoint time and bandwidth against ranks and pairs per
#             rank, with the disk's write+fsync bandwidth measured in the
#             same run (3 checkpoints each);
#   overhead  failure-free throughput of a 50/50 get/put loop against the
#             checkpoint interval (0 = no checkpoints), 4 ranks;
#   restart   a rank SIGKILLed mid-run ends the job (no --with-ft); the
#             job is launched again at once and restores: job start,
#             reload, resume and acknowledged writes lost.  4 ranks with
#             25k and 250k pairs per rank: 100k and 1M pairs in all, the
#             sizes of recovery.csv.
# Every run is a point of cells.sh: CKPT_REPS (5) repetitions, each running
# every cell once (cost/RANKS/PAIRS, overhead/INTERVAL, restart/PAIRS) in
# an order drawn from it; the file's first column is the repetition and
# its last two the load before and after the run; the same command
# resumes (MINUTES=N: a chunk).  Checkpoints go to CKPT_DIR (default: a
# fresh directory under /var/tmp, on disk rather than tmpfs; on a cluster
# point it at the shared file system).  Sized by CKPT_RANKS, CKPT_PAIRS
# (cost), CKPT_INTERVALS (overhead; 0: none) and CKPT_SECONDS (5, each
# overhead run's length), CKPT_RESTART_PAIRS and CKPT_REPS.  What made the file goes beside it (checkpoint.meta).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/results/bench/checkpoint.csv}
BIN=${KV_BUILD:-$ROOT/build}/bin/bench_checkpoint RUN=$ROOT/scripts/kvrun
BASE=${CKPT_DIR:-$(mktemp -d /var/tmp/kvckpt.XXXXXX)}
trap 'rm -rf "$BASE"' EXIT
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
cells_open "$OUT" "repetition,mode,ranks,pairs_per_rank,interval_s,seconds,checkpoints,ckpt_s,bytes,ckpt_mb_s,disk_mb_s,ops_per_s,job_start_s,reload_s,resume_s,lost_writes" \
  "BENCH=checkpoint CKPT_RANKS='${CKPT_RANKS:-2 4 8}' CKPT_PAIRS='${CKPT_PAIRS:-10000 100000 500000}' CKPT_INTERVALS='${CKPT_INTERVALS:-0 2 1 0.5 0.25}' CKPT_RESTART_PAIRS='${CKPT_RESTART_PAIRS:-25000 250000}' CKPT_SECONDS=${CKPT_SECONDS:-5} CKPT_REPS=${CKPT_REPS:-5} make bench"
echo "checkpoints in $BASE ($(df -T "$BASE" | awk 'NR==2 {print $2}'))"

run() {  # label np [kvrun options] -- args
  local label=$1 np=$2; shift 2
  "$RUN" -n "$np" --timeout 600 "$@" > "$BASE/log" 2>&1 || {
    echo "$label: $(tr -d '\000' < "$BASE/log" | tail -1)" >&2; return 1; }
}

# ckpt_key / ckpt_cell CELL REP: a cell's key (bench_checkpoint's first
# columns, %g for the interval) and its rows (bench_checkpoint writes them
# to KV_BENCH_CSV; each gets the repetition in front).
ckpt_key() {
  local m=${1%%/*} a=${1#*/}
  case $m in
    cost) echo "$2,cost,${a%/*},${a#*/}," ;;
    overhead) echo "$2,overhead,4,100000,$(printf %g "$a")," ;;
    restart) echo "$2,restart,4,$a," ;;
  esac
}
ckpt_cell() {
  local m=${1%%/*} a=${1#*/} rep=$2
  export KV_BENCH_CSV=$BASE/rows; rm -f "$KV_BENCH_CSV" && rm -rf "$BASE/ck"
  case $m in
    cost) run "cost $a" "${a%/*}" -- "$BIN" cost "$BASE/ck" "${a#*/}" ;;
    overhead) run "overhead $a" 4 -- "$BIN" overhead "$BASE/ck" 100000 "$a" "${CKPT_SECONDS:-5}" ;;
    restart)
      export KV_KILL_LOG=$BASE/kill; rm -f "$KV_KILL_LOG"
      "$RUN" -n 4 --no-ft --timeout 600 -- "$BIN" crash "$BASE/ck" "$a" 0.5 > "$BASE/log" 2>&1
      if [ -s "$KV_KILL_LOG" ]; then run "restart p=$a" 4 -- "$BIN" restart "$BASE/ck" "$a"
      else echo "crash run p=$a: no kill logged" >&2; fi ;;
  esac
  [ -s "$KV_BENCH_CSV" ] && sed "s/^/$rep,/" "$KV_BENCH_CSV"
}

cells=$(for n in ${CKPT_RANKS:-2 4 8}; do for p in ${CKPT_PAIRS:-10000 100000 500000}; do echo "cost/$n/$p"; done; done
        for iv in ${CKPT_INTERVALS:-0 2 1 0.5 0.25}; do echo "overhead/$iv"; done
        for p in ${CKPT_RESTART_PAIRS:-25000 250000}; do echo "restart/$p"; done)
# shellcheck disable=SC2086  # a list of words
cells_each "$OUT" "${CKPT_REPS:-5}" checkpoint ckpt_key ckpt_cell $cells || exit 0

python3 "$ROOT/experiments/bench/report.py" print checkpoint --file "$OUT"
echo "wrote $OUT"
