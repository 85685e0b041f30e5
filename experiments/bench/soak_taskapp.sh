#!/usr/bin/env bash
# soak_taskapp.sh -- `SET=taskapp make soak`: the task runtime under kills
# at random instants, from outside.
#
# Each run is kv_driver workload.kind=taskapp on RANKS (5) ranks, r = 2,
# N-Queens 15 or UTS T1 and the variants by turns (VARIANTS: proposed
# recreate-copy checkpoint-restart; the last checkpoints every 50 ms, so
# that cuts fall inside steals, and its killed job is restarted to
# restore), while kv_inject SIGKILLs one rank (or, every fourth run,
# two ranks one after the other) at a random instant drawn from the seed:
# 20-80% into the solve of a failure-free run (measured first: one run of
# each application and variant, its run phase in soak-taskapp.meta), and
# with two kills the first 20-40% in (the second follows at twice that),
# counted from the moment every rank has started, so the kills fall inside
# the solve however fast the runtime gets: inside a kv_ call, a commit, a
# steal or a recovery
# as it falls, not only between tasks like the in-process injector.  A run
# passes when kvrun says PASS, the answer is the published one (the
# driver's verdict) and kills.csv holds the kills; outcomes: pass, wrong
# (a FAIL verdict: the answer was not the published one), nokill (the run
# ended before its kill), failed, crashed, hung, aborted (the launcher
# ended the job: kvrun's exit 4).  RUNS (20) runs, one row
# each in results/bench/soak-taskapp.csv:
#   app,size,variant,ranks,seed,kills,outcome,tasks_redone,seconds
# what made it in soak-taskapp.meta, the files of runs that did not pass
# under results/bench/soak-logs/taskapp-SEED/ (BENCH_OUT: another folder).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KV_BUILD:-$ROOT/build}/bin
BENCH=${BENCH_OUT:-$ROOT/results/bench}  # BENCH_OUT: elsewhere (a trial at a small size)
OUT=${OUT:-$BENCH/soak-taskapp.csv}
RUNS=${RUNS:-20} RANKS=${RANKS:-5}
read -r -a VARS <<< "${VARIANTS:-proposed recreate-copy checkpoint-restart}"
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
"$ROOT/scripts/provenance" "SET=taskapp RUNS=$RUNS RANKS=$RANKS VARIANTS='${VARS[*]}' make soak" > "${OUT%.csv}.meta"
echo "app,size,variant,ranks,seed,kills,outcome,tasks_redone,seconds" > "$OUT"
APPS=("nqueens 15" "uts T1")  # "app size"
app_of() {  # the application of a seed's run: by turns of len(VARS) runs, so every variant meets both
  echo "${APPS[$((($1 / ${#VARS[@]}) % ${#APPS[@]}))]}"
}
declare -A LEN  # "app size variant" -> seconds of a failure-free run's run phase (meta.json run_s)
for v in "${VARS[@]}"; do
  for app in "${APPS[@]}"; do
    set -- $app; d=$W/calibrate; rm -rf "$d"; mkdir -p "$d"
    extra=(); [ "$v" = checkpoint-restart ] && extra=(store.replicas=1 store.checkpoint_dir="$d/ckpt" driver.checkpoint_s=0.05)
    "$ROOT/scripts/kvrun" -n "$RANKS" --timeout 240 -- "$BIN/kv_driver" workload.kind=taskapp workload.app=$1 \
      workload.size=$2 store.variant="$v" store.slots_per_rank=8192 store.max_value=4096 driver.progress=0 \
      driver.out="$d" "${extra[@]}" > "$d/run.log" 2>&1 || { echo "soak_taskapp: the failure-free run of $app $v failed" >&2; exit 1; }
    LEN[$app $v]=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['taskapp']['run_s'])" \
                     "$d/meta.json") || { echo "soak_taskapp: no run_s in $d/meta.json" >&2; exit 1; }
    echo "failure-free: $app $v ${LEN[$app $v]} s" >> "${OUT%.csv}.meta"
  done
done
for seed in $(seq 1 "$RUNS"); do
  v=${VARS[$((seed % ${#VARS[@]}))]}
  read -r app size <<< "$(app_of "$seed")"
  count=$(( seed % 4 == 1 ? 2 : 1 ))
  [ "$v" = checkpoint-restart ] && count=1  # the kill ends the job
  at=$(python3 -c "import random; random.seed($seed); print(round(random.uniform(0.2, 0.8 / $count) * ${LEN[$app $size $v]}, 2))")
  d=$W/$seed; mkdir -p "$d"
  "$BIN/kv_inject" --pids "$d/pids" --nranks "$RANKS" --max-simultaneous 1 --log "$d/kills.csv" \
    --schedule "target=random:1; count=$count; when=time:$at; seed=$seed" --schedule-out "$d/schedule-ext.csv" \
    --timeout 60 > "$d/inject.log" 2>&1 &
  inj=$!
  t0=$(date +%s.%N)
  args=(workload.kind=taskapp workload.app=$app workload.size=$size store.variant="$v" store.slots_per_rank=8192
        store.max_value=4096 driver.progress=0 driver.out="$d")
  if [ "$v" = checkpoint-restart ]; then
    args+=(store.replicas=1 store.checkpoint_dir="$d/ckpt")
    nice -n 10 "$ROOT/scripts/kvrun" -n "$RANKS" --no-ft --timeout 240 -- "$BIN/kv_driver" "${args[@]}" \
      driver.checkpoint_s=0.05 > "$d/run.log" 2>&1
    rc=$?
    wait "$inj" 2>/dev/null
    if [ -s "$d/kills.csv" ]; then  # the job ended at the kill: a second one restores
      nice -n 10 "$ROOT/scripts/kvrun" -n "$RANKS" --timeout 240 -- "$BIN/kv_driver" "${args[@]}" \
        driver.restore=1 > "$d/run.log" 2>&1
      rc=$?
    fi
  else
    nice -n 10 "$ROOT/scripts/kvrun" -n "$RANKS" --timeout 240 -- "$BIN/kv_driver" "${args[@]}" > "$d/run.log" 2>&1
    rc=$?
  fi
  kill "$inj" 2>/dev/null; wait "$inj" 2>/dev/null
  secs=$(python3 -c "import time; print(round(time.time() - $t0, 3))")
  kills=$(($(grep -c . "$d/kills.csv" 2>/dev/null || echo 1) - 1))
  case $rc in
    0) if [ "$kills" -lt "$count" ]; then o=nokill; else o=pass; fi ;;
    1) if tr -d '\000' < "$d/run.log" | grep -aq 'FINISHED FAIL'; then o=wrong; else o=failed; fi ;;
    2) o=crashed ;; 3) o=hung ;; 4) o=aborted ;; *) o=failed ;;
  esac
  redone=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['taskapp']['tasks_redone'])" \
           "$d/meta.json" 2>/dev/null || echo NA)
  echo "$app,$size,$v,$RANKS,$seed,$kills,$o,$redone,$secs" >> "$OUT"
  echo "[$seed/$RUNS] $app $size $v: $o ($kills kills, $secs s)"
  if [ "$o" != pass ]; then
    mkdir -p "$BENCH/soak-logs" && rm -rf "$BENCH/soak-logs/taskapp-$seed"
    cp -r "$d" "$BENCH/soak-logs/taskapp-$seed"
  fi
done
echo "soak_taskapp: $(awk -F, 'NR > 1 {n[$7]++} END {for (o in n) printf "%s %d  ", o, n[o]}' "$OUT")"
echo "wrote $OUT"
