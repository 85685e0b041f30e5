#!/usr/bin/env bash
# bench.sh -- `make bench`: the benchmarks, results in results/bench/.
#
#   store-vs-raw.csv  kv_get / kv_put against the raw RMA they need (2 ranks)
#   recovery.csv      one kill per run: variants x ranks x pairs x reps
# Each benchmark prints its table; the CSV files are rewritten by each run
# of the benchmark (BENCH=name runs just one).  The recovery matrix is
# sized by RANKS, PAIRS, REPS and VARIANTS (defaults below fit this 2-core
# machine in about half an hour).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/results/bench
BIN=$ROOT/build/bin
mkdir -p "$OUT"
want() { [ -z "${BENCH:-}" ] || [ "$BENCH" = "$1" ]; }

if want store-vs-raw; then
  f=$OUT/store-vs-raw.csv
  echo "operation,backend,ranks,value_bytes,store_us,raw_us,ratio" > "$f"
  for b in allocate create; do
    "$ROOT/scripts/kvrun" -n 2 --timeout 600 -- "$BIN/bench_store_raw" "$b" "$f" "${OPS:-100000}" 9 \
      | grep -v '^\[rank\|^PASS'
  done
  echo "wrote $f"
fi

if want recovery; then
  f=$OUT/recovery.csv
  echo "variant,backend,ranks,pairs,repetition,detect_us,revoke_us,shrink_us,agree_us,windows_us,rereplicate_us,total_us,pairs_restored,lost,hang" > "$f"
  for v in ${VARIANTS:-recreate-copy recreate-inplace recreate-free spare}; do
    for n in ${RANKS:-4 8 16}; do
      for p in ${PAIRS:-10000 100000 1000000}; do
        for rep in $(seq 1 "${REPS:-5}"); do
          np=$n; [ "$v" = spare ] && np=$((n + 1))
          export KV_KILL_LOG=$(mktemp)
          res=$("$ROOT/scripts/kvrun" -n "$np" --timeout "${RECOVERY_TIMEOUT:-300}" -- \
                env KV_SPARES=$([ "$v" = spare ] && echo 1 || echo 0) \
                "$BIN/bench_recovery" "$v" allocate "$p" "$rep" "$f" 2>&1)
          st=$?
          grep -v '^\[rank\|^PASS' <<<"$res" | grep -v '^#' | tail -2
          if [ "$st" -eq 3 ]; then
            echo "$v,allocate,$n,$p,$rep,,,,,,,,,,yes" >> "$f"
            echo "$v ranks=$n pairs=$p rep=$rep: HUNG"
          fi
          rm -f "$KV_KILL_LOG"
        done
      done
    done
  done
  echo "wrote $f"
fi
