#!/usr/bin/env bash
# test_slurm_campaign.sh -- a campaign submitted to a real Slurm.
#
# Pass rule: on a one-node Slurm started here (slurm/cluster.sh: munged,
# slurmctld, slurmd), slurm/submit.sh turns tests/fixtures/slurm-mini.campaign
# into a job array; within 240 s every run has a meta.json with status
# finished, a job id of the form JOB_TASK matching the submitted array, a
# recovery.csv with one recovery and a non-empty timeline; a second submit
# submits nothing (finished runs are skipped); status.sh reports them all
# finished.  The daemons are stopped on every exit.  Exit 77 (skip) only
# when Slurm is not installed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v slurmctld >/dev/null && command -v slurmd >/dev/null || { echo "skip: Slurm not installed"; exit 77; }
export KV_SLURM_DIR=$(mktemp -d /tmp/kvslurm-test.XXXXXX) KV_SLURM_CPUS=8
export KV_RESULTS=$(mktemp -d /tmp/kvslurm-results.XXXXXX)
fail() { echo "FAIL: $*"; exit 1; }
cleanup() { "$ROOT/slurm/cluster.sh" stop >/dev/null 2>&1; rm -rf "$KV_SLURM_DIR" "$KV_RESULTS"; }
trap cleanup EXIT
"$ROOT/slurm/cluster.sh" start || fail "cluster did not start"
eval "$("$ROOT/slurm/cluster.sh" env)"
CAMP=$ROOT/tests/fixtures/slurm-mini.campaign
out=$("$ROOT/slurm/submit.sh" "$CAMP") || fail "submit: $out"
echo "$out"
job=$(sed -n 's/^submitted job array \([0-9]*\):.*/\1/p' <<<"$out" | head -1)
[ -n "$job" ] || fail "no job id in: $out"
D=$KV_RESULTS/slurm-mini
for i in $(seq 1 240); do
  n=$(grep -l '"status": "finished"' "$D"/*/meta.json 2>/dev/null | wc -l)
  [ "$n" -ge 2 ] && ! squeue -h -j "$job" 2>/dev/null | grep -q . && break
  sleep 1
done
echo "after ${i}s: $n runs finished"
[ "$n" -eq 2 ] || { cat "$D"/slurm/*.out 2>/dev/null | tail -20; fail "$n of 2 runs finished"; }
for m in "$D"/*/meta.json; do
  r=$(dirname "$m")
  grep -q "\"job_id\": \"${job}_[01]\"" "$m" || fail "$m: job id is not ${job}_0/1: $(grep job_id "$m")"
  [ "$(tail -n +2 "$r/recovery.csv" | wc -l)" -ge 1 ] || fail "$r: no recovery recorded"
  [ "$(tail -n +2 "$r/timeline.csv" | wc -l)" -ge 10 ] || fail "$r: timeline too short"
  grep -q '^0,2,' "$r/kills.csv" || fail "$r: kill of rank 2 not logged"
done
again=$("$ROOT/slurm/submit.sh" "$CAMP") || fail "second submit failed: $again"
grep -q 'nothing to submit' <<<"$again" || fail "finished runs were submitted again: $again"
st=$("$ROOT/slurm/status.sh" "$CAMP")
grep -q '^finished *2$' <<<"$st" || fail "status says: $st"
"$ROOT/slurm/gather.sh" "$CAMP" >/dev/null && [ "$(grep -c ',finished,' "$D/runs.csv")" -eq 2 ] || fail "gather"
echo "PASS: campaign ran as Slurm job array $job"
