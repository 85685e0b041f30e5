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
# Checkpoints go to CKPT_DIR (default: a fresh directory under /var/tmp,
# on disk rather than tmpfs; on a cluster point it at the shared file
# system).  Sized by CKPT_RANKS, CKPT_PAIRS, CKPT_REPS (5).  What made the
# file goes beside it (checkpoint.meta, scripts/provenance).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/results/bench/checkpoint.csv}
BIN=${KV_BUILD:-$ROOT/build}/bin/bench_checkpoint RUN=$ROOT/scripts/kvrun
BASE=${CKPT_DIR:-$(mktemp -d /var/tmp/kvckpt.XXXXXX)}
trap 'rm -rf "$BASE"' EXIT
export KV_BENCH_CSV=$OUT
echo "mode,ranks,pairs_per_rank,interval_s,seconds,checkpoints,ckpt_s,bytes,ckpt_mb_s,disk_mb_s,ops_per_s,job_start_s,reload_s,resume_s,lost_writes" > "$OUT"
"$ROOT/scripts/provenance" "BENCH=checkpoint CKPT_RANKS='${CKPT_RANKS:-2 4 8}' CKPT_PAIRS='${CKPT_PAIRS:-10000 100000 500000}' CKPT_REPS=${CKPT_REPS:-5} make bench" > "${OUT%.csv}.meta"
echo "checkpoints in $BASE ($(df -T "$BASE" | awk 'NR==2 {print $2}'))"

run() {  # label np [kvrun options] -- args
  local label=$1 np=$2; shift 2
  "$RUN" -n "$np" --timeout 600 "$@" > "$BASE/log" 2>&1 || {
    echo "$label: $(tr -d '\000' < "$BASE/log" | tail -1)"; return 1; }
}

for n in ${CKPT_RANKS:-2 4 8}; do
  for p in ${CKPT_PAIRS:-10000 100000 500000}; do
    rm -rf "$BASE/ck"; run "cost n=$n p=$p" "$n" -- "$BIN" cost "$BASE/ck" "$p"
  done
done
for rep in $(seq 1 "${CKPT_REPS:-5}"); do
  for iv in 0 2 1 0.5 0.25; do
    rm -rf "$BASE/ck"; run "overhead $iv" 4 -- "$BIN" overhead "$BASE/ck" 100000 "$iv" 5
  done
done
for p in 25000 250000; do
  for rep in $(seq 1 "${CKPT_REPS:-5}"); do
    rm -rf "$BASE/ck"; export KV_KILL_LOG=$BASE/kill; rm -f "$KV_KILL_LOG"
    "$RUN" -n 4 --no-ft --timeout 600 -- "$BIN" crash "$BASE/ck" "$p" 0.5 > "$BASE/log" 2>&1
    [ -s "$KV_KILL_LOG" ] || { echo "crash run p=$p: no kill logged"; continue; }
    run "restart p=$p" 4 -- "$BIN" restart "$BASE/ck" "$p"
  done
done

python3 "$ROOT/experiments/bench/report.py" print checkpoint --file "$OUT"
echo "wrote $OUT"
