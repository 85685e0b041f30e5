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
# whose later failures hang (see store_kill.c).
#
# `make soak` runs two sets:
#   results/bench/soak.csv        osc/sm (backend allocate), every variant,
#                                 every scenario in turn, RUNS (50) each,
#                                 60-s deadline: must pass, never hang;
#   results/bench/hangs-rdma.csv  osc/rdma (backend create), every variant,
#                                 one kill at a random operation, RDMA_RUNS
#                                 (100) each, RDMA_TIMEOUT (15 s; a passing
#                                 run of proposed writes its verdict within
#                                 about 5 s):
#                                 the hang rate of each variant.
# Both files: variant,backend,scenario,ranks,seed,outcome,seconds; a
# summary per variant and backend is printed (runs, passed, failed, hung),
# and the log of every run that did not pass is kept in
# results/bench/soak-logs/.  Setting BACKENDS (with OUT, RUNS, SCENARIOS,
# TIMEOUT) runs one set of your own instead.  Variant proposed needs the
# patched Open MPI (patches/openmpi).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$ROOT/results/bench
VARIANTS=${VARIANTS:-recreate-copy recreate-inplace recreate-free spare proposed}

# soak OUT BACKEND RUNS TIMEOUT SCENARIOS...
soak() {
  local out=$1 b=$2 runs=$3 timeout=$4; shift 4
  local scs=("$@") v sp seed sc n args t0 log res o ms
  mkdir -p "$(dirname "$out")"
  echo "variant,backend,scenario,ranks,seed,outcome,seconds" > "$out"
  for v in $VARIANTS; do
    sp=0; [ "$v" = spare ] && sp=1
    for seed in $(seq 1 "$runs"); do
      sc=single
      [ "$v" = recreate-inplace ] || sc=${scs[$(( (seed - 1) % ${#scs[@]} ))]}
      case $sc in  # ranks, then store_kill's r kills spares mode
        single) n=$((4 + sp)); args="2 1 $sp" ;;
        double) n=$((6 + sp)); args="3 2 $sp" ;;
        seq)    n=$((5 + sp)); args="2 1 $sp seq" ;;
        rerep)  n=$((6 + sp)); args="3 2 $sp rerep" ;;
        *) echo "soak: unknown scenario $sc" >&2; return 2 ;;
      esac
      t0=$(date +%s%N)
      log=$(mktemp)
      # shellcheck disable=SC2086
      KV_TEST_SEED=$seed "$ROOT/scripts/kvrun" -n $n --timeout "$timeout" -- \
            "${KV_BUILD:-$ROOT/build}/tests/mpi/store_kill" "$b" "$v" $args > "$log" 2>&1
      res=$(tr -d '\000' < "$log" | tail -1)
      case $res in
        *"FINISHED PASS"*) o=pass ;;
        *HUNG*) o=hang ;;
        *) o=fail ;;
      esac
      if [ "$o" != pass ]; then  # keep the evidence of every run that did not pass
        mkdir -p "$(dirname "$out")/soak-logs"
        tr -d '\000' < "$log" > "$(dirname "$out")/soak-logs/$v-$b-$sc-seed$seed.log"
      fi
      rm -f "$log"
      ms=$(( ($(date +%s%N) - t0) / 1000000 ))
      printf '%s,%s,%s,%s,%s,%s,%d.%03d\n' "$v" "$b" "$sc" "$n" "$seed" "$o" $((ms / 1000)) $((ms % 1000)) >> "$out"
    done
    awk -F, -v v="$v" -v b="$b" '$1==v && $2==b {n++; c[$6]++} END {
      printf "%-17s %-9s runs %3d  passed %3d  failed %3d  hung %3d\n", v, b, n, c["pass"], c["fail"], c["hang"]}' "$out"
  done
  echo "wrote $out"
}

if [ -n "${BACKENDS:-}" ]; then
  for b in $BACKENDS; do
    # shellcheck disable=SC2086
    soak "${OUT:-$BENCH/soak-$b.csv}" "$b" "${RUNS:-50}" "${TIMEOUT:-60}" ${SCENARIOS:-single double seq rerep}
  done
else
  soak "$BENCH/soak.csv" allocate "${RUNS:-50}" 60 single double seq rerep
  soak "$BENCH/hangs-rdma.csv" create "${RDMA_RUNS:-100}" "${RDMA_TIMEOUT:-15}" single
fi
