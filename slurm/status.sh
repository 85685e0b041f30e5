#!/usr/bin/env bash
# status.sh CAMPAIGN_FILE -- how many runs finished, failed, hung, are pending
# (not run yet while jobs of this user are queued) or not run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 1 ] || { echo "usage: slurm/status.sh CAMPAIGN_FILE" >&2; exit 64; }
queued=$(timeout 20 squeue -h -u "${USER:-$(id -un)}" -o %i 2>/dev/null || true)
exec python3 "$ROOT/experiments/campaign/campaign.py" status "$1" ${queued:+--queued}
