#!/usr/bin/env bash
# soak.sh -- randomised kill runs judged by the history checker.
#
# Each run is tests/history/run.sh: ranks run random gets, puts and
# deletes on shared keys, every operation logged; ranks are SIGKILLed from
# outside at a random instant (any rank, rank 0 included); afterwards
# tests/history/check.py checks that the history is linearizable and that
# the survivors' final reads hold every acknowledged write and delete, and
# kv_audit that the replicas agree.  A run past its deadline is a hang,
# killed and counted, never a pass.
#
# `make soak` runs, interleaved seed by seed so that a stopped soak is
# still balanced (and a rerun resumes where it stopped):
#   osc/sm (backend allocate): every variant in every scenario of run.sh
#     (none of recreate-inplace's after its first recovery: its rebuilt
#     windows are osc/rdma windows, which hang on a later failure; it runs
#     single, rank0 and double, whose kills one recovery handles, and stop,
#     a straggler, which needs none);
#   osc/rdma (backend create): variants proposed and online in every
#     scenario;
# RUNS (31) runs per cell, each TIMEOUT (40) s at most, SECONDS_ (1.5) s of
# workload, JOBS (1) runs at a time (each run has its own processes, shared
# memory and ports; the rows come in the order the runs end).  It writes
# results/bench/soak.csv, one row per run:
#   variant,backend,scenario,r,ranks,seed,victims,gap_ms,outcome,ops,orphans,seconds,detect_ms
# (victims: the ranks killed from outside, ';'-separated, and RANK@POINT
# for a rank killed inside recovery; gap_ms: the time between the two
# kills of scenario staggered, the straggler's stop in scenario stop, 0
# otherwise; detect_ms: from the first fault to the last survivor's notice
# of it, run.sh's, NA without one), keeps the files of every run that
# did not pass under results/bench/soak-logs/, writes what made the file
# to results/bench/soak.meta (scripts/provenance), and prints a summary.
# `SET=hangs-rdma make soak` instead measures the hang rate of every
# variant on osc/rdma with tests/mpi/store_kill (results/bench/
# hangs-rdma.csv: variant,backend,scenario,ranks,seed,outcome,seconds;
# hangs-rdma.meta says what made it).
# `SET=taskapp make soak`: the task runtime under kills from outside at
# random instants (soak_taskapp.sh, results/bench/soak-taskapp.csv).
# VARIANTS, SCENARIOS and OUT narrow or redirect a run; MINUTES (0: no
# limit) ends a history soak that long after it started, between runs, so
# that a long soak goes in chunks (rerun the same command to resume).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=${BENCH_OUT:-$ROOT/results/bench}  # BENCH_OUT: elsewhere (a trial at a small size)
RUNS=${RUNS:-31}
TIMEOUT=${TIMEOUT:-40}
SECONDS_=${SECONDS_:-1.5}
JOBS=${JOBS:-1}
VARIANTS=${VARIANTS:-recreate-copy recreate-inplace recreate-free spare proposed online}
SCENARIOS=${SCENARIOS:-single rank0 double staggered seq rerep stop}
# A finalize that hangs after a verdict is cut after 2 s (kvrun's grace).
export KVRUN_GRACE=${KVRUN_GRACE:-2}
CMD="JOBS=$JOBS RUNS=$RUNS TIMEOUT=$TIMEOUT SECONDS_=$SECONDS_ VARIANTS='$VARIANTS' SCENARIOS='$SCENARIOS' make soak"
[ -z "${OUT:-}" ] || CMD="OUT=${OUT#"$ROOT"/} $CMD"  # the file it wrote, in the record too

cells() {  # "variant backend scenario" lines, osc/sm first, then osc/rdma
  local v sc
  for v in $VARIANTS; do
    for sc in $SCENARIOS; do
      if [ "$v" = recreate-inplace ]; then case $sc in single|rank0|double|stop) ;; *) continue ;; esac; fi
      echo "$v allocate $sc"
    done
  done
  for v in proposed online; do  # the variants on the fault-tolerant RMA, on osc/rdma too
    case " $VARIANTS " in *" $v "*) for sc in $SCENARIOS; do echo "$v create $sc"; done ;; esac
  done
}

one_run() {  # variant backend scenario seed out: one run, one row appended to out
  local v=$1 b=$2 sc=$3 seed=$4 out=$5 r sp dir t0 ms line res
  r=2; case $sc in double|staggered|rerep) r=3 ;; esac
  sp=0; [ "$v" = spare ] && sp=1
  dir=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")
  t0=$(date +%s%N)
  line=$(bash "$ROOT/tests/history/run.sh" --backend "$b" --variant "$v" --r "$r" --spares "$sp" \
         --scenario "$sc" --seconds "$SECONDS_" --seed "$seed" --timeout "$TIMEOUT" --out "$dir/run")
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  res=$(sed -n 's/.*outcome=\([a-z]*\).*/\1/p' <<<"$line")
  get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  # One printf of one short line: appends of concurrent runs do not interleave.
  printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d.%03d,%s\n' "$v" "$b" "$sc" "$r" "$(get ranks)" "$seed" \
    "$(get victims)" "$(get gap_ms)" "${res:-error}" "$(get ops)" "$(get orphans)" $((ms / 1000)) $((ms % 1000)) \
    "$(get detect_ms)" >> "$out"
  if [ "$res" != pass ] || [ "$(get orphans)" != 0 ]; then  # keep the evidence
    mkdir -p "$BENCH/soak-logs"
    rm -rf "$BENCH/soak-logs/$v-$b-$sc-seed$seed"
    mv "$dir/run" "$BENCH/soak-logs/$v-$b-$sc-seed$seed"
    echo "soak: $v $b $sc seed $seed: $line"
  fi
  rm -rf "$dir"
}

history_soak() {
  local out=${OUT:-$BENCH/soak.csv} v b sc seed cell
  local header=variant,backend,scenario,r,ranks,seed,victims,gap_ms,outcome,ops,orphans,seconds,detect_ms
  mkdir -p "$(dirname "$out")"
  if [ -s "$out" ] && [ "$(head -1 "$out")" = "$header" ]; then
    { echo "resumed:"; "$ROOT/scripts/provenance" "$CMD" | sed 's/^/  /'; } >> "${out%.csv}.meta"
  else
    echo "$header" > "$out"
    "$ROOT/scripts/provenance" "$CMD" > "${out%.csv}.meta"
  fi
  mapfile -t CELLS < <(cells)
  local stop=0
  [ "${MINUTES:-0}" -gt 0 ] && stop=$(( $(date +%s) + 60 * MINUTES ))
  for seed in $(seq 1 "$RUNS"); do
    for cell in "${CELLS[@]}"; do
      read -r v b sc <<<"$cell"
      grep -q "^$v,$b,$sc,[0-9]*,[0-9]*,$seed," "$out" && continue  # done before: resume
      if [ "$stop" -gt 0 ] && [ "$(date +%s)" -ge "$stop" ]; then
        wait
        echo "soak: stopped after $MINUTES minutes at seed $seed; the same command resumes"
        python3 "$ROOT/experiments/bench/report.py" print soak --file "$out"
        return 0
      fi
      while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
      one_run "$v" "$b" "$sc" "$seed" "$out" &
    done
  done
  wait
  python3 "$ROOT/experiments/bench/report.py" print soak --file "$out"
  echo "wrote $out"
}

# The hang rate on osc/rdma: store_kill, one kill at a random operation.
hang_soak() {
  local out=${OUT:-$BENCH/hangs-rdma.csv} v seed n o log t0 ms sp
  echo "variant,backend,scenario,ranks,seed,outcome,seconds" > "$out"
  "$ROOT/scripts/provenance" "SET=hangs-rdma VARIANTS='$VARIANTS' RDMA_RUNS=${RDMA_RUNS:-100} RDMA_TIMEOUT=${RDMA_TIMEOUT:-15} make soak" \
    > "${out%.csv}.meta"
  for v in $VARIANTS; do
    sp=0; [ "$v" = spare ] && sp=1
    n=$((4 + sp))
    for seed in $(seq 1 "${RDMA_RUNS:-100}"); do
      t0=$(date +%s%N); log=$(mktemp)
      KV_TEST_SEED=$seed "$ROOT/scripts/kvrun" -n $n --timeout "${RDMA_TIMEOUT:-15}" -- \
        "${KV_BUILD:-$ROOT/build}/tests/mpi/store_kill" create "$v" 2 1 $sp > "$log" 2>&1
      case $(tr -d '\000' < "$log" | tail -1) in
        *"FINISHED PASS"*) o=pass ;; *HUNG*) o=hang ;; *ABORTED*) o=aborted ;; *) o=fail ;;
      esac
      rm -f "$log"
      ms=$(( ($(date +%s%N) - t0) / 1000000 ))
      printf '%s,create,single,%s,%s,%s,%d.%03d\n' "$v" "$n" "$seed" "$o" $((ms / 1000)) $((ms % 1000)) >> "$out"
    done
  done
  echo "wrote $out"
}

case ${SET:-history} in
  history) history_soak ;;
  hangs-rdma) hang_soak ;;
  taskapp) exec bash "$ROOT/experiments/bench/soak_taskapp.sh" ;;  # the task runtime
  *) echo "soak.sh: unknown SET '$SET' (history, hangs-rdma or taskapp)" >&2; exit 2 ;;
esac
