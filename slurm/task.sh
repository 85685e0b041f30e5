#!/usr/bin/env bash
# task.sh -- one Slurm array task: the run on line $SLURM_ARRAY_TASK_ID of
# the group listing, run with `campaign.py run-one` (scripts/kvrun, that is
# mpirun --with-ft ulfm inside this allocation).  Submitted by
# slurm_submit.py; KV_ROOT is the checkout, KV_MODULES what to load.
#SBATCH --open-mode=append
set -uo pipefail
CAMPAIGN=$1 LISTING=$2
ROOT=${KV_ROOT:?KV_ROOT not set (submit with slurm/submit.sh)}
if [ -n "${KV_MODULES:-}" ] && command -v module >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  module load $KV_MODULES
fi
index=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" "$LISTING")
[ -n "$index" ] || { echo "task.sh: no line $SLURM_ARRAY_TASK_ID in $LISTING" >&2; exit 2; }
echo "task.sh: job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}: run $index of $CAMPAIGN on $(hostname)"
exec python3 "$ROOT/experiments/campaign/campaign.py" run-one "$CAMPAIGN" "$index"
