#!/usr/bin/env bash
# test_soak_short.sh -- the soak target's machinery, in miniature.
# Pass rule: experiments/bench/soak.sh with one seed, variants recreate-copy and
# proposed, scenarios single and rerep, writes one CSV row per cell
# (osc/sm for both variants, osc/rdma for proposed: 6 rows) with the
# victims named, every run passes with no orphan, a second invocation
# resumes (runs nothing more), and the report prints the soak table.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
export OUT=$W/soak.csv BENCH_OUT=$W RUNS=1 VARIANTS="recreate-copy proposed" SCENARIOS="single rerep"  # logs of failed runs in $W too
bash "$ROOT/experiments/bench/soak.sh" > "$W/log" 2>&1 || { cat "$W/log"; echo "FAIL: soak.sh exited non-zero"; exit 1; }
rows=$(($(wc -l < "$OUT") - 1))
[ "$rows" -eq 6 ] || { cat "$OUT"; echo "FAIL: $rows rows, wanted 6"; exit 1; }
bad=$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
               $col["outcome"] != "pass" || $col["orphans"] != 0 || $col["victims"] == ""' "$OUT")
[ -z "$bad" ] || { echo "FAIL: runs that did not pass (or left orphans, or name no victim):"; echo "$bad"; exit 1; }
bash "$ROOT/experiments/bench/soak.sh" > "$W/log2" 2>&1
[ "$(($(wc -l < "$OUT") - 1))" -eq 6 ] || { echo "FAIL: the rerun did not resume"; exit 1; }
grep -q '^| proposed | create | 2 |' "$W/log2" || { cat "$W/log2"; echo "FAIL: no soak table"; exit 1; }
echo "PASS: 6 soak runs recorded and judged, resume runs nothing twice"
