#!/usr/bin/env bash
# submit.sh CAMPAIGN_FILE -- submit a campaign's unfinished runs as Slurm job arrays.
# status.sh and gather.sh follow it up.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: slurm/submit.sh CAMPAIGN_FILE" >&2; exit 64; }
exec python3 "$ROOT/slurm/slurm_submit.py" "$1"
