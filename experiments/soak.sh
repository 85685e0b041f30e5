#!/usr/bin/env bash
# soak.sh -- randomised kill runs per variant and backend; counts hangs.
#
# Each run is tests/mpi/store_kill (every acknowledged write checked
# afterwards) with its own seed, under the launcher's deadline: a run that
# exceeds it is a hang, killed and counted, never a pass.  The seed also
# picks the scenario, in turn: "single" (r = 2, one rank killed at a random
# operation), "double" (r = 3, two at once), "seq" (r = 2, kills one after
# another until r members remain) and "rerep" (r = 3, the second kill inside
# the re-replication of the first recovery).  recreate-inplace runs only
# "single": after its first recovery its windows are osc/rdma windows,
# whose later failures hang (see store_kill.c).  Writes
# results/bench/soak.csv (variant,backend,scenario,ranks,seed,outcome,seconds)
# and prints per variant and backend: runs, passed, failed, hung.
# Settings: RUNS (50), VARIANTS, BACKENDS (allocate create), SCENARIOS (the
# four above, taken in turn), OUT, TIMEOUT (60).  Variant proposed needs
# the patched Open MPI (patches/openmpi).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/results/bench/soak.csv}
RUNS=${RUNS:-50}
SCENARIOS=${SCENARIOS:-single double seq rerep}
mkdir -p "$(dirname "$OUT")"
echo "variant,backend,scenario,ranks,seed,outcome,seconds" > "$OUT"
for b in ${BACKENDS:-allocate create}; do
  for v in ${VARIANTS:-recreate-copy recreate-inplace recreate-free spare proposed}; do
    sp=0; [ "$v" = spare ] && sp=1
    for seed in $(seq 1 "$RUNS"); do
      sc=single
      if [ "$v" != recreate-inplace ]; then
        scs=($SCENARIOS); sc=${scs[$(( (seed - 1) % ${#scs[@]} ))]}
      fi
      case $sc in  # ranks, then store_kill's r kills spares mode
        single) n=$((4 + sp)); args="2 1 $sp" ;;
        double) n=$((6 + sp)); args="3 2 $sp" ;;
        seq)    n=$((5 + sp)); args="2 1 $sp seq" ;;
        rerep)  n=$((6 + sp)); args="3 2 $sp rerep" ;;
      esac
      t0=$(date +%s%N)
      log=$(mktemp)
      KV_TEST_SEED=$seed "$ROOT/scripts/kvrun" -n $n --timeout "${TIMEOUT:-60}" -- \
            "${KV_BUILD:-$ROOT/build}/tests/mpi/store_kill" "$b" "$v" $args > "$log" 2>&1
      res=$(tr -d '\000' < "$log" | tail -1)
      case $res in
        *"FINISHED PASS"*) o=pass ;;
        *HUNG*) o=hang ;;
        *) o=fail ;;
      esac
      if [ "$o" != pass ]; then  # keep the evidence of every run that did not pass
        mkdir -p "$(dirname "$OUT")/soak-logs"
        tr -d '\000' < "$log" > "$(dirname "$OUT")/soak-logs/$v-$b-$sc-seed$seed.log"
      fi
      rm -f "$log"
      ms=$(( ($(date +%s%N) - t0) / 1000000 ))
      printf '%s,%s,%s,%s,%s,%s,%d.%03d\n' "$v" "$b" "$sc" "$n" "$seed" "$o" $((ms / 1000)) $((ms % 1000)) >> "$OUT"
    done
    awk -F, -v v="$v" -v b="$b" '$1==v && $2==b {n++; c[$6]++} END {
      printf "%-17s %-9s runs %3d  passed %3d  failed %3d  hung %3d\n", v, b, n, c["pass"], c["fail"], c["hang"]}' "$OUT"
  done
done
echo "wrote $OUT"
