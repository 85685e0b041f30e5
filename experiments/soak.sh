#!/usr/bin/env bash
# soak.sh -- randomised kill runs per variant and backend; counts hangs.
#
# Each run is tests/mpi/store_kill (r = 2, one rank killed at a random
# operation, every acknowledged write checked afterwards) with its own
# seed, under the launcher's deadline: a run that exceeds it is a hang,
# killed and counted, never a pass.  Writes results/bench/soak.csv
# (variant,backend,ranks,seed,outcome,seconds) and prints per variant and
# backend: runs, passed, failed, hung.
# Settings: RUNS (50), VARIANTS, BACKENDS (allocate create), OUT, TIMEOUT (60).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/results/bench/soak.csv}
RUNS=${RUNS:-50}
mkdir -p "$(dirname "$OUT")"
echo "variant,backend,ranks,seed,outcome,seconds" > "$OUT"
for b in ${BACKENDS:-allocate create}; do
  for v in ${VARIANTS:-recreate-copy recreate-inplace recreate-free spare}; do
    n=4; extra=""; [ "$v" = spare ] && { n=5; extra=1; }
    for seed in $(seq 1 "$RUNS"); do
      t0=$(date +%s%N)
      log=$(mktemp)
      KV_TEST_SEED=$seed "$ROOT/scripts/kvrun" -n $n --timeout "${TIMEOUT:-60}" -- \
            "${KV_BUILD:-$ROOT/build}/tests/mpi/store_kill" "$b" "$v" 2 1 $extra > "$log" 2>&1
      res=$(tr -d '\000' < "$log" | tail -1)
      case $res in
        *"FINISHED PASS"*) o=pass ;;
        *HUNG*) o=hang ;;
        *) o=fail ;;
      esac
      if [ "$o" != pass ]; then  # keep the evidence of every run that did not pass
        mkdir -p "$(dirname "$OUT")/soak-logs"
        tr -d '\000' < "$log" > "$(dirname "$OUT")/soak-logs/$v-$b-seed$seed.log"
      fi
      rm -f "$log"
      ms=$(( ($(date +%s%N) - t0) / 1000000 ))
      printf '%s,%s,%s,%s,%s,%d.%03d\n' "$v" "$b" "$n" "$seed" "$o" $((ms / 1000)) $((ms % 1000)) >> "$OUT"
    done
    awk -F, -v v="$v" -v b="$b" '$1==v && $2==b {n++; c[$5]++} END {
      printf "%-17s %-9s runs %3d  passed %3d  failed %3d  hung %3d\n", v, b, n, c["pass"], c["fail"], c["hang"]}' "$OUT"
  done
done
echo "wrote $OUT"
