#!/usr/bin/env bash
# test_slurm_nodeloss.sh -- a node-loss campaign as Slurm job arrays on a
# Slurm configured like a production site, every compute node a victim.
#
# On a 4-host cluster of its own with its Slurm (KillOnBadExit=1 and
# JobRequeue=1: slurm/cluster.sh), tests/fixtures/slurm-nodeloss.campaign
# (mpirun on kvnode1 alone, 2 ranks on each of kvnode2-4, one node lost per
# run, kvnode2 holding rank 0) is submitted with slurm/submit.sh; the first
# run's task is requeued by `scontrol requeue` once it has started.  Pass
# rules, within 300 s:
#  1. the 3 runs finish, each in the job array, each with 4 survivors, no
#     failed operation and no read that missed its value (no acknowledged
#     write lost as the reads see it);
#  2. the victims are kvnode2, kvnode3 and kvnode4, one per run, each with
#     its daemons and both ranks; ranks 0 and 1 die in the kvnode2 run;
#  3. every launch keeps kvnode1 free of ranks (--host without it) and
#     starts the daemons' step with srun --no-kill --kill-on-bad-exit=0;
#  4. the requeued run says so: its started.json and meta.json have
#     slurm_restart_count 1 and the attempt before, with its job id; the
#     campaign's MPI probe, made inside the allocation, says the MPI
#     survives node loss and has the proposed RMA features;
#  5. the control: the same node loss (kvnode3) in one sbatch job with
#     kvrun's srun options taken away (plm_slurm_args empty) does not
#     finish: under KillOnBadExit=1 Slurm ends the daemons' step;
#  6. after `vcluster down` no process, link or namespace is left.
# Exit 0 pass, 1 fail, 77 skip (not root, no namespaces or Slurm).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VC=$ROOT/scripts/vcluster CAMP=$ROOT/tests/fixtures/slurm-nodeloss.campaign
T0=$SECONDS
say() { printf '[slurm-nodeloss +%3ds] %s\n' "$((SECONDS - T0))" "$*"; }
FAILMSG=""
fail() { FAILMSG=$*; exit 1; }
why=$("$VC" can) || { echo "skip: $why"; exit 77; }
"$ROOT/scripts/node-loss-survivable" >/dev/null || { echo "skip: $("$ROOT/scripts/node-loss-survivable")"; exit 77; }
export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrs
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-snl.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
cleanup() {
  local rc=$? left
  trap - EXIT
  "$VC" down >/dev/null 2>&1 || { [ "$rc" -eq 0 ] && rc=1 && FAILMSG="vcluster down failed"; }
  left=$("$VC" pids | tr '\n' ' ')$(ip -o link show | grep -E ": (kvbrs|kvvc-)" | awk -F': ' '{print " link " $2}')
  if [ -n "${left// /}" ]; then rc=1; FAILMSG="${FAILMSG:+$FAILMSG; }left after down: $left"; fi
  [ "$rc" -eq 0 ] && rm -rf "$KV_CLUSTER_DIR"   # kept on failure: logs and results
  if [ "$rc" -eq 0 ]; then say "PASS: every compute node lost once under a site-like Slurm, rank 0's too; a requeue recorded"
  else say "FAIL: ${FAILMSG:-exit $rc} (state, logs and results: $KV_CLUSTER_DIR)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILMSG="interrupted"; exit 1' INT TERM

say "vcluster up 4"
timeout 180 "$VC" up 4 >"$KV_CLUSTER_DIR/up.log" 2>&1 || fail "vcluster up 4: $(tail -3 "$KV_CLUSTER_DIR/up.log")"
on1() { timeout 60 "$VC" exec 1 "$@"; }
conf=$(on1 scontrol show config)
grep -Eq '^KillOnBadExit *= *1' <<<"$conf" && grep -Eq '^JobRequeue *= *1' <<<"$conf" ||
  fail "the test Slurm lacks KillOnBadExit=1 or JobRequeue=1: $(grep -E 'KillOnBadExit|JobRequeue' <<<"$conf")"

export KV_RESULTS=$KV_CLUSTER_DIR/results
D=$KV_RESULTS/slurm-nodeloss
out=$(on1 "$ROOT/slurm/submit.sh" "$CAMP") || fail "submit: $out"
job=$(sed -n 's/^submitted job array \([0-9]*\): 3 runs of 6 ranks on 4 node(s)$/\1/p' <<<"$out")
[ -n "$job" ] || fail "no job array of 3 runs on 4 nodes: $out"
say "job array $job submitted"
# Requeue task 0 once it has started its run.
for _ in $(seq 120); do
  first=$(grep -l "\"job_id\": \"${job}_0\"" "$D"/*/started.json 2>/dev/null | head -1)
  [ -n "$first" ] && break
  sleep 0.5
done
[ -n "$first" ] || fail "task ${job}_0 never started its run"
sleep 1
on1 scontrol requeue "${job}_0" || fail "scontrol requeue ${job}_0"
# Slurm holds a requeued job back for a while (its BeginTime): not here.
for _ in $(seq 60); do
  if [ "$(on1 squeue -h -j "${job}_0" -o %T 2>/dev/null)" = PENDING ]; then
    on1 scontrol update JobId="${job}_0" StartTime=now >/dev/null 2>&1 && break
  fi
  sleep 0.5
done
say "task ${job}_0 requeued while it ran ($(dirname "$first" | xargs basename))"
for _ in $(seq 300); do
  [ -z "$(on1 squeue -h -j "$job")" ] && break
  sleep 1
done
[ -z "$(on1 squeue -h -j "$job")" ] && say "job $job done" || fail "job $job still queued after 300 s"

python3 - "$D" "$job" "$(dirname "$first")" <<'PY' || fail "the runs (above)"
import csv, glob, json, os, sys
d, job, requeued = sys.argv[1], sys.argv[2], sys.argv[3]
metas = {os.path.dirname(m): json.load(open(m)) for m in glob.glob(d + "/*/meta.json")}
assert len(metas) == 3, f"{len(metas)} runs"
victims = {}
for rdir, m in sorted(metas.items()):
    assert m["status"] == "finished", (m["run_id"], m["status"], m.get("reason"))
    assert m["job_id"].startswith(job + "_"), m["job_id"]
    assert m["survivors"] == 4 and m["failed_ops"] == 0 and m["verify_errors"] == 0, \
        (m["run_id"], m["survivors"], m["failed_ops"], m["verify_errors"])
    assert m.get("not_found", 0) == 0, (m["run_id"], m.get("not_found"))
    cmd = m["launch_command"]
    assert "--host kvnode2:2,kvnode3:2,kvnode4:2" in cmd and "kvnode1" not in cmd, cmd
    assert "plm_slurm_args" in cmd and "--no-kill" in cmd and "--kill-on-bad-exit=0" in cmd, cmd
    kills = list(csv.DictReader(open(os.path.join(rdir, "kills.csv"))))
    hosts = {k["host"] for k in kills}
    assert len(hosts) == 1, hosts
    roles = sorted(k["role"] for k in kills)
    assert roles.count("rank") == 2 and "daemon" in roles, roles
    h = hosts.pop()
    victims[h] = sorted(int(k["target_rank"]) for k in kills if k["role"] == "rank")
    print(f"  {m['run_id']}: {h} lost (ranks {victims[h]}), {m['survivors']} survivors, "
          f"{m['operations_done']} operations, job {m['job_id']}")
assert sorted(victims) == ["kvnode2", "kvnode3", "kvnode4"], victims
assert victims["kvnode2"] == [0, 1], victims
m = metas[requeued]
s = json.load(open(os.path.join(requeued, "started.json")))
assert s["slurm_restart_count"] >= 1 and m["slurm_restart_count"] >= 1, (s, m.get("slurm_restart_count"))
before = m["earlier_attempts"]
assert before and before[0]["job_id"] == job + "_0", before
print(f"  requeued: {m['run_id']} ran again (restart count {m['slurm_restart_count']}); "
      f"the attempt before: {before[0]['outcome']}")
probe = json.load(open(os.path.join(d, "mpiprobe.json")))
assert probe["where"] == "local" and probe["hosts"] == 4, probe   # in the allocation: its 4 nodes
assert probe["class"] == "survives node loss" and probe["proposed_rma"] == "yes", probe
print(f"  the MPI probe in the allocation: {probe['class']} ({probe['hosts']} nodes)")
PY
say "3 node losses survived (kvnode2 with rank 0), the requeue recorded"

# The control: without --no-kill --kill-on-bad-exit=0 the site's setting wins.
cat > "$KV_CLUSTER_DIR/control.sh" <<EOF
#!/usr/bin/env bash
"$ROOT/scripts/kvrun" --launcher-alone --nodes 3 --ppn 2 --timeout 60 --prtemca plm_slurm_args "" -- \\
  "$ROOT/build/bin/kv_driver" store.variant=proposed store.backend=create store.slots_per_rank=4096 \\
  store.max_value=128 workload.workload=a workload.records=600 workload.value_bytes=64 \\
  workload.operations=0 workload.duration_s=6 "driver.failures=target=node:kvnode3; when=time:2" \\
  driver.progress=0 driver.out="$KV_CLUSTER_DIR/control" > "$KV_CLUSTER_DIR/control.log" 2>&1
echo "kvrun exit \$?" >> "$KV_CLUSTER_DIR/control.log"
EOF
chmod 755 "$KV_CLUSTER_DIR/control.sh"
timeout 150 "$VC" exec 1 sbatch --wait -N 4 --ntasks-per-node=2 -o "$KV_CLUSTER_DIR/control.out" \
  "$KV_CLUSTER_DIR/control.sh" > /dev/null 2>&1
last=$(grep -a '^kvrun exit' "$KV_CLUSTER_DIR/control.log")
[ -n "$last" ] || fail "the control job left no kvrun verdict: $(tail -3 "$KV_CLUSTER_DIR/control.log" 2>/dev/null)"
[ "$last" != "kvrun exit 0" ] || fail "the control finished although Slurm should have ended its daemons' step"
say "control without the srun options: $(grep -ao 'kvrun: [A-Z][A-Z]* [^(]*' "$KV_CLUSTER_DIR/control.log" | grep -v launch | tail -1)($last)"
