#!/usr/bin/env bash
# bench_taskapp.sh -- `BENCH=taskapp make bench`: what resilience and a
# failure cost a task-parallel application (kv_driver workload.kind=taskapp).
#
# results/bench/taskapp.csv, one row per run:
#   set,app,size,variant,backend,ranks,replicas,checkpoint_ms,checkpoint_s,kills,repetition,
#   solve_s,run_s,tasks,tasks_per_s,tasks_redone,lost_s,correct,status
# set says which question the run answers:
#   overhead    the same code failure-free: variant none, r = 1, no state in
#               the store (checkpoint_ms=0: not resilient) against each
#               resilient variant (r = 2, checkpoint_ms=50);
#   failure     one rank killed (rank REP mod ranks, 40% into its share of the tasks)
#               against none killed, per variant;
#   ranks       recreate-copy and proposed on 2, 4 and 8 ranks, 0 and 1 kill;
#   frequency   recreate-copy with checkpoint_ms 10, 50, 200, 1000, 0 and 1 kill;
#   restart     the checkpoint/restart baseline: variant checkpoint-restart
#               (kv_checkpoint every CR_S seconds; a kill ends the job and a
#               second job restores and finishes), 0 and 1 kill.
# solve_s is the time from the run's start to the answer (a restarted run:
# from the first job's start to the second job's end, the restart
# included); lost_s the sum of task_failures.csv's estimates; correct
# whether the answer is the published one; status kvrun's verdict.
# Sizes: APPS (default "nqueens:16 uts:T1"), REPS (5), RANKS (4).
# TASKAPP_SMALL=1: a proof that it works (N-Queens 14, one repetition, a
# few points; a minute or two).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${TASKAPP_OUT:-$ROOT/results/bench/taskapp.csv}
DRV=${KV_BUILD:-$ROOT/build}/bin/kv_driver
RUN=$ROOT/scripts/kvrun
if [ "${TASKAPP_SMALL:-0}" = 1 ]; then
  APPS=${APPS:-nqueens:14} REPS=${REPS:-1} VARIANTS=${VARIANTS:-recreate-copy proposed}
  RANKSET=${RANKSET:-2 4} FREQS=${FREQS:-10 200}
else
  APPS=${APPS:-nqueens:16 uts:T1} REPS=${REPS:-5}
  VARIANTS=${VARIANTS:-recreate-copy recreate-inplace recreate-free spare proposed}
  RANKSET=${RANKSET:-2 4 8} FREQS=${FREQS:-10 50 200 1000}
fi
RANKS=${RANKS:-4} CR_S=${CR_S:-1}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
mkdir -p "$(dirname "$OUT")"
# what made the file, with the load at the start (runs share the cores)
"$ROOT/scripts/provenance" "TASKAPP_SMALL=${TASKAPP_SMALL:-0} APPS='$APPS' REPS=$REPS RANKS=$RANKS bash $0" \
  > "${OUT%.csv}.meta"
echo "set,app,size,variant,backend,ranks,replicas,checkpoint_ms,checkpoint_s,kills,repetition,solve_s,run_s,tasks,tasks_per_s,tasks_redone,lost_s,correct,status" > "$OUT"

# row SET APP SIZE VARIANT RANKS R CKMS CKS KILLS REP DIR STATUS: append the run's row.
row() {
  python3 - "$@" >> "$OUT" <<'EOF'
import csv, json, os, sys
(s, app, size, v, n, r, ckms, cks, kills, rep, d, status) = sys.argv[1:]
def get(m, k):
    x = m.get("taskapp", {}).get(k)
    return "NA" if x is None else x
try:
    m = json.load(open(os.path.join(d, "meta.json")))
except (OSError, ValueError):
    m = {}
lost = "NA"
try:
    vals = [float(x["lost_s"]) for x in csv.DictReader(open(os.path.join(d, "task_failures.csv")))]
    lost = f"{sum(vals):.6f}" if vals else "0"
except (OSError, ValueError):
    pass
print(",".join(str(x) for x in (s, app, size, v, m.get("backend", "allocate"), n, r, ckms, cks, kills, rep,
      get(m, "solve_s"), get(m, "run_s"), get(m, "tasks_counted"), get(m, "throughput_tasks_per_s"),
      get(m, "tasks_redone"), lost, str(m.get("correct", False)).lower(), status)))
EOF
}

verdict() { case $1 in 0) echo pass ;; 3) echo hung ;; 2) echo crashed ;; 4) echo aborted ;; *) echo fail ;; esac; }

# point SET APP SIZE VARIANT RANKS R CKMS KILLS REP: one run (KILLS 0 or 1),
# appended to OUT; prints its row.
point() {
  local set=$1 app=$2 size=$3 v=$4 n=$5 r=$6 ckms=$7 kills=$8 rep=$9 np=$5 sp=0 cks=0
  local d=$W/run-$RANDOM$RANDOM st args=()
  [ "$v" = spare ] && np=$((n + 1)) sp=1
  args=(workload.kind=taskapp workload.app="$app" workload.size="$size" store.variant="$v"
        store.replicas="$r" store.spares=$sp store.slots_per_rank=8192 store.max_value=4096
        workload.checkpoint_ms="$ckms" workload.seed="$rep" driver.progress=0 driver.out="$d")
  if [ "$kills" = 1 ]; then
    # rank rep mod n (rank 0 too; never a spare), 40% into its share of
    # the tasks (the failure-free count)
    local at=$(( ${TASKS[$app:$size]:-100000} * 4 / 10 / n ))
    args+=("driver.failures=target=ranks:$((rep % n)); when=ops:$at")
  fi
  if [ "$v" = checkpoint-restart ]; then
    cks=$CR_S
    args+=(store.checkpoint_dir="$d/ckpt" driver.checkpoint_s="$CR_S")
    nice -n 10 "$RUN" -n "$np" --no-ft --timeout 600 -- "$DRV" "${args[@]}" > "$d.log" 2>&1; st=$?
    if [ "$kills" = 1 ] && [ -s "$d/kills.csv" ]; then  # the job ended: restart it
      nice -n 10 "$RUN" -n "$np" --no-ft --timeout 600 -- "$DRV" "${args[@]}" driver.restore=1 \
        driver.failures= driver.checkpoint_s=0 >> "$d.log" 2>&1; st=$?
    fi
  else
    nice -n 10 "$RUN" -n "$np" --timeout 600 -- "$DRV" "${args[@]}" > "$d.log" 2>&1; st=$?
  fi
  row "$set" "$app" "$size" "$v" "$n" "$r" "$ckms" "$cks" "$kills" "$rep" "$d" "$(verdict $st)"
  tail -1 "$OUT"
  if [ "$kills" = 0 ] && [ -z "${TASKS[$app:$size]:-}" ]; then
    TASKS[$app:$size]=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['taskapp']['tasks_counted'])" \
                        "$d/meta.json" 2>/dev/null || echo 100000)
  fi
  rm -rf "$d" "$d.log"
}

declare -A TASKS
for a in $APPS; do
  app=${a%%:*} size=${a#*:}
  for rep in $(seq 1 "$REPS"); do
    point overhead "$app" "$size" none "$RANKS" 1 0 0 "$rep"
    for v in $VARIANTS; do
      point overhead "$app" "$size" "$v" "$RANKS" 2 50 0 "$rep"
      point failure "$app" "$size" "$v" "$RANKS" 2 50 1 "$rep"
    done
    for n in $RANKSET; do
      point ranks "$app" "$size" none "$n" 1 0 0 "$rep"
      for v in recreate-copy proposed; do
        for k in 0 1; do point ranks "$app" "$size" "$v" "$n" 2 50 "$k" "$rep"; done
      done
    done
    for f in $FREQS; do
      for k in 0 1; do point frequency "$app" "$size" recreate-copy "$RANKS" 2 "$f" "$k" "$rep"; done
    done
    for k in 0 1; do point restart "$app" "$size" checkpoint-restart "$RANKS" 1 0 "$k" "$rep"; done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "${OUT%.csv}.meta"
echo "bench_taskapp: $(($(wc -l < "$OUT") - 1)) runs in $OUT"
