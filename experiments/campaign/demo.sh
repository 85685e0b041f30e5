#!/usr/bin/env bash
# demo.sh -- `make run`: the default experiment on this machine.
#
# Runs experiments/campaign/campaigns/default.campaign (YCSB A, 8 ranks, r = 2, one
# rank killed with SIGKILL mid-run, three recovery variants), then makes its
# figures and summary table with analysis/figures.py, and prints where they
# are.  Finished runs are kept: delete results/default/ to run them again.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CAMPAIGN=${CAMPAIGN:-$ROOT/experiments/campaign/campaigns/default.campaign}
python3 "$ROOT/experiments/campaign/campaign.py" run "$CAMPAIGN"
NAME=$(sed -n 's/^name *= *//p' "$CAMPAIGN" | head -1)
DIR=${KV_RESULTS:-$ROOT/results}/$NAME
for r in "$DIR"/*/summary.txt; do
  echo "== $(basename "$(dirname "$r")")"
  grep -h -E 'Throughput' "$r"
  grep -h -E '"(recoveries|status)"' "$(dirname "$r")/meta.json"
done
python3 "$ROOT/analysis/figures.py" "$DIR"
echo "figures and summary table: $DIR/figures/"
