#!/usr/bin/env bash
# bench_silentnode.sh -- `BENCH=silentnode make bench`: how long the
# survivors take to notice a node that goes silent (its network link taken
# down and its processes stopped with SIGSTOP: a powered-off node, a cut
# cable, a frozen kernel; nothing closes its sockets), with the TCP
# keepalive settings scripts/kvrun gives fault-tolerant runs across hosts.
# SILENT_RUNS (10) runs of tests/scripts/test_killnode.sh's case freeze (3
# hosts, 2 ranks each, the last host silenced; its own cluster), one row
# per survivor and run in results/bench/silentnode.csv (run, survivor,
# detect_ms: from the moment the link went down to the survivor's failed
# receive; the load before and after the run, cells.sh), what made it in
# silentnode.meta.  A run that does not pass writes no rows (its output
# goes to stderr) and stays to do; the same command resumes (MINUTES=N: a
# chunk).  Needs root: else it says so, writes nothing and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${SILENT_CSV:-$ROOT/results/bench/silentnode.csv}
RUNS=${SILENT_RUNS:-10}
[ "$(id -u)" -eq 0 ] || { echo "bench_silentnode: needs root (the test cluster's namespaces): skipped"; exit 0; }
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
cells_open "$OUT" "run,survivor,detect_ms" "SILENT_RUNS=$RUNS BENCH=silentnode make bench"
freeze_key() { echo "$2,"; }
freeze() {  # freeze RUN: one run of the case, a row per survivor
  local out line ms i
  out=$(KILLNODE_CASES="3 2 freeze" bash "$ROOT/tests/scripts/test_killnode.sh" 2>&1)
  line=$(grep -a '^  ok   3x2-freeze: detected after (ms)' <<<"$out") ||
    { echo "$out" | tail -20; echo "bench_silentnode: run $2 did not pass"; return 0; } >&2
  read -ra ms <<<"$(sed 's/.*detected after (ms) \([0-9. ]*\) (.*/\1/' <<<"$line")"
  for i in "${!ms[@]}"; do echo "$2,$((i + 1)),${ms[i]}"; done
  echo "bench_silentnode: run $2: ${ms[*]} ms" >&2
}
cells_each "$OUT" "$RUNS" silentnode freeze_key freeze freeze || exit 0
echo "bench_silentnode: $OUT"
