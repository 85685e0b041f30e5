#!/usr/bin/env bash
# status.sh CAMPAIGN_FILE -- every run's state: its outcome (finished,
# failed, crashed, hung), queued or running (Slurm's state of its array
# task), ended without a result, or not run (slurm_submit.py status).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: slurm/status.sh CAMPAIGN_FILE" >&2; exit 64; }
exec python3 "$ROOT/slurm/slurm_submit.py" status "$1"
