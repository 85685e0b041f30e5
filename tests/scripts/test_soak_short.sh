#!/usr/bin/env bash
# test_soak_short.sh -- the short version of the soak target.
# Pass rule: 3 randomised kill runs (distinct seeds; scenarios single,
# double and seq in turn, see experiments/soak.sh) of every recovery
# variant on the osc/sm backend all pass: no lost acknowledged write, no
# failure, and no hang (each run bounded at 60 s).  `make soak` runs 50
# per variant (results/bench/soak.csv) and measures the hang rate on
# osc/rdma (results/bench/hangs-rdma.csv).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
RUNS=3 BACKENDS=allocate OUT=$OUT bash "$ROOT/experiments/soak.sh"
bad=$(awk -F, 'NR > 1 && $6 != "pass"' "$OUT")
[ -z "$bad" ] || { echo "FAIL: runs that did not pass:"; echo "$bad"; exit 1; }
echo "PASS: $(($(wc -l < "$OUT") - 1)) randomised kill runs, no failure, no hang"
