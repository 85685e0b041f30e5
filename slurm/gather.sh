#!/usr/bin/env bash
# gather.sh CAMPAIGN_FILE -- rebuild results/CAMPAIGN/runs.csv from the run directories.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: slurm/gather.sh CAMPAIGN_FILE" >&2; exit 64; }
exec python3 "$ROOT/experiments/campaign/campaign.py" gather "$1"
