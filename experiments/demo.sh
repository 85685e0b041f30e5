#!/usr/bin/env bash
# demo.sh -- `make run`: 4 ranks on this machine, one killed, the survivors
# recover and check every pair.  (The full default experiment, with the
# driver, the injector and figures, replaces this as those parts land.)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/results/demo
mkdir -p "$OUT"
export KV_KILL_LOG=$OUT/kill.log
"$ROOT/scripts/kvrun" -n 4 --timeout 120 --out "$OUT/ranks" -- \
  "$ROOT/build/bin/kv_demo" "${DEMO_PAIRS:-20000}" 3 "${DEMO_VARIANT:-recreate-copy}" "${DEMO_BACKEND:-allocate}" \
  | tee "$OUT/summary.txt"
