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
# few points; a minute or two).  Every run is a point of cells.sh: REPS
# repetitions, each running every cell once in an order drawn from it,
# the load before and after each run at the end of its row; the same
# command resumes (MINUTES=N: a chunk).  A kill lands 40% into the
# failure-free task count of the app and size, taken from a failure-free
# row of the file or, before there is one, from an uncounted run.
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
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
cells_open "$OUT" "set,app,size,variant,backend,ranks,replicas,checkpoint_ms,checkpoint_s,kills,repetition,solve_s,run_s,tasks,tasks_per_s,tasks_redone,lost_s,correct,status" \
  "BENCH=taskapp TASKAPP_SMALL=${TASKAPP_SMALL:-0} APPS='$APPS' REPS=$REPS RANKS=$RANKS make bench"

# row SET APP SIZE VARIANT RANKS R CKMS CKS KILLS REP DIR STATUS: the run's row.
row() {
  python3 - "$@" <<'EOF'
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

# tasks APP SIZE: the failure-free task count (a correct failure-free row
# of the file, else one uncounted run, kept for the next ask).
tasks() {
  local c=$W/tasks-$1-$2 d=$W/count
  [ -s "$c" ] || awk -F, -v a="$1" -v s="$2" '$2 == a && $3 == s && $10 == 0 && $18 == "true" && $14 > 0 {
    print $14; exit }' "$OUT" > "$c"
  if [ ! -s "$c" ]; then
    nice -n 10 "$RUN" -n "$RANKS" --timeout 600 -- "$DRV" workload.kind=taskapp workload.app="$1" \
      workload.size="$2" store.variant=none store.replicas=1 store.slots_per_rank=8192 store.max_value=4096 \
      workload.checkpoint_ms=0 driver.progress=0 driver.out="$d" > "$d.log" 2>&1
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['taskapp']['tasks_counted'])" \
      "$d/meta.json" > "$c" 2>/dev/null || rm -f "$c"
    rm -rf "$d" "$d.log"
  fi
  cat "$c" 2>/dev/null || echo 100000
}

# A cell SET/APP/SIZE/VARIANT/RANKS/R/CKMS/KILLS (KILLS 0 or 1); cs_key its
# key, cs_run its run as a row.
cs_key() {
  local set app size v n r ckms kills cks=0
  IFS=/ read -r set app size v n r ckms kills <<<"$1"
  [ "$v" = checkpoint-restart ] && cks=$CR_S
  echo "$set,$app,$size,$v,allocate,$n,$r,$ckms,$cks,$kills,$2,"
}
cs_run() {
  local set app size v n r ckms kills rep=$2 np sp=0 cks=0 d=$W/run st args=()
  IFS=/ read -r set app size v n r ckms kills <<<"$1"
  np=$n; [ "$v" = spare ] && np=$((n + 1)) sp=1
  args=(workload.kind=taskapp workload.app="$app" workload.size="$size" store.variant="$v"
        store.replicas="$r" store.spares="$sp" store.slots_per_rank=8192 store.max_value=4096
        workload.checkpoint_ms="$ckms" workload.seed="$rep" driver.progress=0 driver.out="$d")
  if [ "$kills" = 1 ]; then
    # rank rep mod n (rank 0 too; never a spare), 40% into its share of
    # the tasks (the failure-free count)
    args+=("driver.failures=target=ranks:$((rep % n)); when=ops:$(( $(tasks "$app" "$size") * 4 / 10 / n ))")
  fi
  rm -rf "$d"
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
  rm -rf "$d" "$d.log"
}

cells=$(for a in $APPS; do
  app=${a%%:*} size=${a#*:}
  echo "overhead/$app/$size/none/$RANKS/1/0/0"
  for v in $VARIANTS; do echo "overhead/$app/$size/$v/$RANKS/2/50/0" "failure/$app/$size/$v/$RANKS/2/50/1"; done
  for n in $RANKSET; do
    echo "ranks/$app/$size/none/$n/1/0/0"
    for v in recreate-copy proposed; do for k in 0 1; do echo "ranks/$app/$size/$v/$n/2/50/$k"; done; done
  done
  for f in $FREQS; do for k in 0 1; do echo "frequency/$app/$size/recreate-copy/$RANKS/2/$f/$k"; done; done
  for k in 0 1; do echo "restart/$app/$size/checkpoint-restart/$RANKS/1/0/$k"; done
done)
# shellcheck disable=SC2086  # a list of words
cells_each "$OUT" "$REPS" taskapp cs_key cs_run $cells || exit 0
echo "bench_taskapp: $(($(wc -l < "$OUT") - 1)) runs in $OUT"
