#!/usr/bin/env bash
# task.sh -- one Slurm array task: the run named on line $SLURM_ARRAY_TASK_ID
# of the group listing, run with `campaign.py run-one` (scripts/kvrun, that
# is mpirun --with-ft ulfm inside this allocation).  Submitted by
# slurm_submit.py; KV_ROOT is the checkout, KV_MODULES the modules the
# campaign names.  A module that cannot be loaded (or no `module` command
# when modules are asked for) ends the task with a message: running with
# another MPI than the campaign names would measure the wrong thing.
#SBATCH --open-mode=append
set -uo pipefail
CAMPAIGN=$1 LISTING=$2
ROOT=${KV_ROOT:?KV_ROOT not set (submit with slurm/submit.sh)}
if [ -n "${KV_MODULES:-}" ]; then
  if ! type module >/dev/null 2>&1; then  # batch shells may not have read the profile
    for init in /etc/profile.d/modules.sh /etc/profile.d/lmod.sh "${MODULESHOME:-/nonexistent}/init/bash" \
                /usr/share/lmod/lmod/init/bash; do
      # shellcheck disable=SC1090
      [ -r "$init" ] && . "$init" && break
    done
  fi
  type module >/dev/null 2>&1 ||
    { echo "task.sh: error: the campaign loads modules ($KV_MODULES) but this node has no 'module' command" >&2; exit 2; }
  # shellcheck disable=SC2086
  module load $KV_MODULES || { echo "task.sh: error: module load $KV_MODULES failed" >&2; exit 2; }
  echo "task.sh: loaded modules: $KV_MODULES"
fi
run=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" "$LISTING")
[ -n "$run" ] || { echo "task.sh: no line $SLURM_ARRAY_TASK_ID in $LISTING" >&2; exit 2; }
echo "task.sh: job ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}: run $run of $CAMPAIGN on $(hostname)"
exec python3 "$ROOT/experiments/campaign/campaign.py" run-one "$CAMPAIGN" "$run"
