#!/usr/bin/env bash
# test_cluster_campaign.sh -- a campaign with nodes = 3 on the 3-host test
# cluster, run on its hosts and as Slurm job arrays on it.
#
# On a cluster of its own (scripts/vcluster up 3: own state directory and
# bridge), tests/fixtures/cluster-mini.campaign (3 ranks, one per node, two
# repetitions):
#  1. `campaign.py run --cluster`: both runs finish; each meta.json says 3
#     nodes, the hosts kvnode1-3 with one rank each, a clock offset with its
#     uncertainty for every host, and kvrun's launch command (the agent, the
#     hostfile, --map-by ppr:1:node); the repetitions have their own seeds;
#     the figures are drawn; a rerun runs nothing;
#  2. slurm/submit.sh on host 1: one job array of 2 tasks on 3 nodes; a
#     second submit while they are queued or running submits nothing; both
#     runs finish with job ids JOB_0 and JOB_1, on 3 nodes, launched by
#     plain mpirun inside the allocation; status.sh says 2 finished;
#     gather.sh writes runs.csv and the figures are drawn;
#  3. a run whose array task is cancelled while it runs is recorded failed
#     by the next submit (Slurm's state of the task, no accounting needed)
#     and not submitted again; --retry-failed submits it again;
#  4. after `vcluster down` no process, link or namespace of the cluster is
#     left (the cleanup trap does it on every exit).
# Exit 0 pass, 1 fail, 77 skip (not root, or no namespaces/Slurm).  About
# two minutes.
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VC=$ROOT/scripts/vcluster C="python3 $ROOT/experiments/campaign/campaign.py"
CAMP=$ROOT/tests/fixtures/cluster-mini.campaign
T0=$SECONDS
say() { printf '[cluster-campaign +%3ds] %s\n' "$((SECONDS - T0))" "$*"; }
FAILMSG=""
fail() { FAILMSG=$*; exit 1; }
why=$("$ROOT/scripts/vcluster" can) || { echo "skip: $why"; exit 77; }
PY=$(python3 "$ROOT/analysis/pyfind.py") || { echo "FAIL: no python3 with matplotlib, numpy and scipy"; exit 1; }

export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrc
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-camp.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
cleanup() {
  local rc=$? left
  trap - EXIT
  "$VC" down >/dev/null 2>&1 || { [ "$rc" -eq 0 ] && rc=1 && FAILMSG="vcluster down failed"; }
  left=$("$VC" pids | tr '\n' ' ')$(ip -o link show | grep -E ": (kvbrc|kvvc-)" | awk -F': ' '{print " link " $2}')
  if [ -n "${left// /}" ]; then rc=1; FAILMSG="${FAILMSG:+$FAILMSG; }left after down: $left"; fi
  [ "$rc" -eq 0 ] && rm -rf "$KV_CLUSTER_DIR"   # kept on failure: logs and results
  if [ "$rc" -eq 0 ]; then say "PASS: a 3-node campaign on the hosts and as Slurm job arrays, nothing left"
  else say "FAIL: ${FAILMSG:-exit $rc} (state, logs and results: $KV_CLUSTER_DIR)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILMSG="interrupted"; exit 1' INT TERM

say "vcluster up 3"
timeout 180 "$VC" up 3 >"$KV_CLUSTER_DIR/up.log" 2>&1 || fail "vcluster up 3: $(tail -3 "$KV_CLUSTER_DIR/up.log")"

# placement: meta.json of every run of DIR holds 3 nodes, kvnode1-3 with one
# rank each, an offset and uncertainty per host, and a launch matching RE
check_runs() {  # DIR launch-regex
  "$PY" - "$1" "$2" <<'PY' || fail "$1: the runs do not say where they ran (above)"
import glob, json, re, sys
metas = [json.load(open(m)) for m in sorted(glob.glob(sys.argv[1] + "/*/meta.json"))]
assert len(metas) == 2, f"{len(metas)} runs"
for m in metas:
    assert m["status"] == "finished", m["status"]
    assert m["nodes"] == 3 and m["hosts"] == ["kvnode1", "kvnode2", "kvnode3"], (m["nodes"], m["hosts"])
    assert m["ranks_per_host"] == [1, 1, 1], m["ranks_per_host"]
    offs = {o["host"]: o for o in m["clock_offsets"]}
    assert set(offs) == set(m["hosts"]) and offs["kvnode1"]["offset_ns"] == 0, offs
    for h in ("kvnode2", "kvnode3"):
        o = offs[h]
        assert o["start_uncertainty_ns"] > 0 and o["end_uncertainty_ns"] > 0, o
        # one machine, one clock: the true offset is 0, inside the interval
        assert abs(o["offset_ns"]) <= o["uncertainty_ns"], o
    assert re.search(sys.argv[2], m["launch_command"]), m["launch_command"]
assert metas[0]["workload"]["seed"] != metas[1]["workload"]["seed"], "repetitions share a seed"
PY
}
figures() {  # DIR
  "$PY" "$ROOT/analysis/figures.py" "$1" --no-gnuplot >"$1.figures.log" 2>&1 || fail "figures of $1: $(tail -3 "$1.figures.log")"
  for f in throughput_timeline latency_percentiles hang_rate; do
    [ -s "$1/figures/$f.png" ] || fail "figures of $1: no $f.png"
  done
  grep -q '^| recreate-copy |.*| 2 | 0 |' "$1/figures/summary.md" || fail "summary.md of $1: $(tail -2 "$1/figures/summary.md")"
}

# ---------------------------------------------------------------- on the hosts
export KV_RESULTS=$KV_CLUSTER_DIR/local
say "campaign.py run --cluster"
timeout 300 $C run "$CAMP" --cluster >"$KV_CLUSTER_DIR/local.log" 2>&1 || fail "local run: $(tail -3 "$KV_CLUSTER_DIR/local.log")"
check_runs "$KV_RESULTS/cluster-mini" 'vcluster exec kvnode1 .*/mpirun .*--map-by ppr:1:node --hostfile .*plm_ssh_agent'
figures "$KV_RESULTS/cluster-mini"
$C run "$CAMP" --cluster 2>&1 | grep -q '2 already finished, 0 kept.*0 to run' || fail "a rerun ran runs again"
say "2 runs on kvnode1-3 through the agent, figures drawn, a rerun runs nothing"

# ---------------------------------------------------------------- as Slurm job arrays
export KV_RESULTS=$KV_CLUSTER_DIR/slurm
on1() { timeout 60 "$VC" exec 1 "$@"; }
out=$(on1 "$ROOT/slurm/submit.sh" "$CAMP") || fail "submit: $out"
job=$(sed -n 's/^submitted job array \([0-9]*\): 2 runs of 3 ranks on 3 node(s)$/\1/p' <<<"$out")
[ -n "$job" ] || fail "no job array of 2 runs on 3 nodes: $out"
again=$(on1 "$ROOT/slurm/submit.sh" "$CAMP")
grep -q '2 queued or running' <<<"$again" && grep -q 'nothing to submit' <<<"$again" ||
  fail "a second submit while the runs are queued: $again"
say "job array $job submitted; a second submit while it is queued submits nothing"
D=$KV_RESULTS/cluster-mini
for _ in $(seq 150); do
  [ -z "$(on1 squeue -h -j "$job")" ] && break
  sleep 1
done
[ -z "$(on1 squeue -h -j "$job")" ] || fail "job $job still queued after 150 s"
check_runs "$D" '^[^ ]*/mpirun -n 3 .*--map-by ppr:1:node --mca btl'
if grep -l -e '--hostfile' -e plm_ssh_agent "$D"/*/launch.txt; then fail "the allocation's runs used a hostfile or the agent"; fi
for k in 0 1; do grep -q "\"job_id\": \"${job}_$k\"" "$D"/*/meta.json || fail "no run of task ${job}_$k"; done
on1 "$ROOT/slurm/status.sh" "$CAMP" | grep -q '^finished *2$' || fail "status: $(on1 "$ROOT/slurm/status.sh" "$CAMP")"
on1 "$ROOT/slurm/gather.sh" "$CAMP" >/dev/null || fail "gather.sh"
figures "$D"
on1 "$ROOT/slurm/submit.sh" "$CAMP" | grep -q 'nothing to submit' || fail "finished runs were submitted again"
say "both runs finished in job $job on 3 nodes (mpirun in the allocation), figures drawn"

# ---------------------------------------------------------------- a task cancelled while it runs
sed -e 's/^workload.duration_s = 2/workload.duration_s = 120/' -e 's/^repetitions = 2/repetitions = 1/' \
    -e 's/^time_limit_s = 90/time_limit_s = 200/' "$CAMP" > "$KV_CLUSTER_DIR/long.campaign"
LONG=$KV_CLUSTER_DIR/long.campaign
out=$(on1 "$ROOT/slurm/submit.sh" "$LONG") || fail "submit long: $out"
job=$(sed -n 's/^submitted job array \([0-9]*\):.*/\1/p' <<<"$out")
for _ in $(seq 60); do
  ls "$D"/*/started.json 2>/dev/null | xargs grep -l "\"${job}_0\"" 2>/dev/null | grep -q . && break
  sleep 1
done
on1 scancel "$job"
for _ in $(seq 60); do [ -z "$(on1 squeue -h -j "$job")" ] && break; sleep 1; done
out=$(on1 "$ROOT/slurm/submit.sh" "$LONG")
grep -q '1 failed, crashed, hung, aborted, unsupported (kept' <<<"$out" && grep -q 'nothing to submit' <<<"$out" || fail "after the cancel: $out"
grep -l '"reason": "Slurm array task '"${job}_0"' ended CANCELLED without a result"' "$D"/*/meta.json | grep -q . ||
  fail "the cancelled run's meta.json: $(grep -h '"reason"' "$D"/*/meta.json)"
out=$(on1 "$ROOT/slurm/submit.sh" "$LONG" --retry-failed)
job2=$(sed -n 's/^submitted job array \([0-9]*\):.*/\1/p' <<<"$out")
[ -n "$job2" ] || fail "--retry-failed submitted nothing: $out"
on1 scancel "$job2"
say "a cancelled task was recorded failed (CANCELLED), kept, and submitted again with --retry-failed"
