#!/usr/bin/env bash
# status.sh CAMPAIGN_FILE -- how many runs finished, failed, hung, are pending.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: slurm/status.sh CAMPAIGN_FILE" >&2; exit 64; }
exec python3 "$ROOT/experiments/campaign/campaign.py" status "$1"
