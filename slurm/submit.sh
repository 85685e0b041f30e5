#!/usr/bin/env bash
# submit.sh CAMPAIGN_FILE [--retry-failed] -- submit a campaign's runs as Slurm
# job arrays: those not run yet and not queued (slurm_submit.py).  status.sh
# and gather.sh follow it up.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: slurm/submit.sh CAMPAIGN_FILE [--retry-failed]" >&2; exit 64; }
exec python3 "$ROOT/slurm/slurm_submit.py" submit "$@"
