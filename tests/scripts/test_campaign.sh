#!/usr/bin/env bash
# test_campaign.sh -- campaign files: expansion, stable ids, seeds, shapes,
# errors, resume.
#
# Pass rules: the default campaign expands to 3 runs with the same ids and
# seeds on every expansion, and the spare run gets one more rank;
# repetitions of one cell get different failure and workload seeds, and a
# different campaign seed gives other ids; a seed in the failure spec or
# workload.seed is refused; every malformed file (unknown section, unknown
# setting, entry without '=', bad number, unterminated quote, missing name,
# a key in both sweep and fixed) fails with exit 2 and a message naming the
# file, the line and the problem; the shipped cluster campaigns fit the
# cluster their comment names (`check`), and a group that does not fit is
# refused naming the group and the reason; variant none in a sweep over
# r = 2, 3 still gets its baseline (r = 1); a local run of a tiny campaign
# finishes with the seeds of `list` in its meta.json and the launch command
# kvrun wrote, running it again skips it, a run that failed stays failed on
# a rerun and runs again with --retry-failed, and so does an aborted one; a
# run started again (a Slurm requeue: the same job id, SLURM_RESTART_COUNT
# 1) keeps the attempt before it, with that attempt's outcome, in
# started.json and meta.json; a Slurm task asked to load modules where there
# is no `module` command fails saying so; the campaign example of
# docs/formats.md expands; a batch setting in [campaign] is refused by name;
# sbatch gets --exclusive for a group with failures (unless [slurm]
# exclusive = 0) and not for one without.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
C="python3 $ROOT/experiments/campaign/campaign.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
a=$($C list "$ROOT/experiments/campaign/campaigns/default.campaign") || fail "list default"
b=$($C list "$ROOT/experiments/campaign/campaigns/default.campaign")
[ "$a" = "$b" ] || fail "ids not stable"
[ "$(wc -l <<<"$a")" -eq 3 ] || fail "default campaign should expand to 3 runs"
grep -q ' spare-allocate-n9-' <<<"$a" || fail "spare run should have 8+1 ranks: $a"
[ "$(grep -o '; seed=[0-9]*' <<<"$a" | sort -u | wc -l)" -eq 3 ] || fail "3 runs should have 3 failure seeds: $a"
sed 's/^seed = 7/seed = 8/' "$ROOT/experiments/campaign/campaigns/default.campaign" > "$T/seed8.campaign"
c=$($C list "$T/seed8.campaign") || fail "list seed8"
[ "$(awk '{print $2}' <<<"$a")" != "$(awk '{print $2}' <<<"$c")" ] || fail "another campaign seed kept the ids"
bad() {  # name expected-message-part file-body
  printf '%b' "$3" > "$T/$1.campaign"
  out=$($C list "$T/$1.campaign" 2>&1); rc=$?
  [ "$rc" -eq 2 ] || fail "$1: exit $rc, wanted 2 ($out)"
  grep -q "$2" <<<"$out" || fail "$1: message '$out' lacks '$2'"
}
HEAD='[campaign]\nname = t\n'
bad section "$T/section.campaign:3: bad section header" "${HEAD}[nonsense]\n"
bad setting ":3: unknown campaign setting 'colour'" "${HEAD}colour = red\n"
bad noeq ":4: no '=' in the line" "${HEAD}[fixed]\nranks 4\n"
bad number ":4: ranks must be a positive integer" "${HEAD}[sweep]\nranks = 4, x\n"
bad quote ":4: unterminated quoted value" "${HEAD}[fixed]\ndriver.failures = \"target=ranks:1\n"
bad noname "needs a name" "[campaign]\nrepetitions = 2\n[fixed]\nranks = 2\n"
bad both "in both \\[sweep\\] and \\[fixed\\]" "${HEAD}[sweep]\nranks = 2\n[fixed]\nranks = 4\n"
bad key ":4: 'store' is not store.X" "${HEAD}[fixed]\nstore = 1\n"
bad spec_seed ":4: driver.failures: seeds are drawn" "${HEAD}[fixed]\ndriver.failures = \"target=ranks:1; when=ops:9; seed=3\"\nranks = 2\n"
bad wl_seed ":4: workload.seed: seeds are drawn" "${HEAD}[fixed]\nworkload.seed = 3\nranks = 2\n"
bad account ":3: unknown campaign setting 'account'.*go in \\[slurm\\]" "${HEAD}account = proj\n[fixed]\nranks = 2\n"
# The documented example is a campaign this parser takes.
awk '/^## Campaign files/ {s = 1} s && /^```ini/ {f = 1; next} f && /^```/ {exit} f' "$ROOT/docs/formats.md" \
  > "$T/doc.campaign"
[ -s "$T/doc.campaign" ] || fail "no campaign example found in docs/formats.md"
out=$($C list "$T/doc.campaign" 2>&1) || fail "the example of docs/formats.md is refused: $out"
[ "$(wc -l <<<"$out")" -eq 60 ] || fail "the documented example should give 4 variants x 3 sizes x 5 repetitions: $out"

# Shapes: the cluster campaigns fit what their comments name; a spare
# beyond the cores of full nodes is refused with its group and the reason.
for f in scaling:8 variants:4 overhead:4 mtbf:4 taskapp-nqueens:4 taskapp-uts:4 nodeloss-site:5; do
  $C check "$ROOT/experiments/campaign/campaigns/${f%:*}.campaign" --nodes "${f#*:}" --cores-per-node 16 \
    > "$T/check.log" 2>&1 || fail "${f%:*}.campaign does not fit ${f#*:} x 16: $(cat "$T/check.log")"
done
printf '%b' "${HEAD}[sweep]\nstore.variant = recreate-copy, spare\n[fixed]\nranks = 64\nnodes = 4\nranks_per_node = 16\n" > "$T/full.campaign"
out=$($C check "$T/full.campaign" --nodes 4 --cores-per-node 16 2>&1); rc=$?
[ "$rc" -eq 2 ] || fail "an infeasible group passed check: $out"
grep -q "group 1: 65 ranks (64 + 1 spare) on 4 nodes.*put 17 on a node, over ranks_per_node = 16" <<<"$out" ||
  fail "check's message does not name the group and why: $out"
grep -q "ok  group 0: 64 ranks on 4 nodes, 16 per node" <<<"$out" || fail "the feasible group: $out"
out=$($C check "$T/full.campaign" --nodes 2 --cores-per-node 64 2>&1)
grep -q "4 nodes asked for, the cluster has 2" <<<"$out" || fail "too few nodes not named: $out"
n=$($C list "$ROOT/experiments/campaign/campaigns/overhead.campaign" | grep -c ' none-') 
[ "$n" -eq 5 ] || fail "overhead.campaign: $n runs of the none baseline, wanted 5"
printf '[campaign]\nname = tiny\ntime_limit_s = 60\n[fixed]\nranks = 2\nstore.slots_per_rank = 4096\nworkload.workload = c\nworkload.records = 1000\nworkload.operations = 20000\nworkload.value_bytes = 64\nstore.max_value = 64\n' > "$T/tiny.campaign"
KV_RESULTS=$T/res $C run "$T/tiny.campaign" > "$T/run1.log" 2>&1 || { cat "$T/run1.log"; fail "tiny campaign did not finish"; }
grep -q ',finished,' "$T/res/tiny/runs.csv" || fail "runs.csv lacks a finished run"
m=$(echo "$T"/res/tiny/*/meta.json)
ws=$($C list "$T/tiny.campaign" | grep -o 'workload.seed=[0-9]*')
python3 - "$m" "${ws#*=}" <<'PY' || fail "meta.json lacks the workload seed of list (${ws#*=}) or the launch command"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["workload"]["seed"] == int(sys.argv[2]), m["workload"]["seed"]
assert " -n 2 " in m["launch_command"] and "/mpirun " in m["launch_command"], m.get("launch_command")
PY
KV_RESULTS=$T/res $C run "$T/tiny.campaign" > "$T/run2.log" 2>&1
grep -q '1 already finished, 0 kept as failed, crashed, hung, aborted, unsupported (--retry-failed runs them again), 0 to run' "$T/run2.log" ||
  fail "rerun did not skip: $(cat "$T/run2.log")"
# A run that fails (more replicas than ranks) keeps its outcome.
sed 's/^ranks = 2/ranks = 2\nstore.replicas = 3/' "$T/tiny.campaign" > "$T/bad.campaign"
KV_RESULTS=$T/res $C run "$T/bad.campaign" > "$T/bad1.log" 2>&1 && fail "the failing run passed"
KV_RESULTS=$T/res $C run "$T/bad.campaign" > "$T/bad2.log" 2>&1
grep -q '0 already finished, 1 kept as failed.*, 0 to run' "$T/bad2.log" || fail "a failed run was rerun: $(cat "$T/bad2.log")"
KV_RESULTS=$T/res $C run "$T/bad.campaign" --retry-failed > "$T/bad3.log" 2>&1
grep -q '1 to run' "$T/bad3.log" && grep -q 'failed' "$T/bad3.log" || fail "--retry-failed: $(cat "$T/bad3.log")"
# The attempt before is kept (here: the failed one, as if Slurm requeued it).
SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID=0 SLURM_RESTART_COUNT=1 KV_RESULTS=$T/res \
  $C run "$T/bad.campaign" --retry-failed > "$T/bad4.log" 2>&1
bm=$(echo "$T"/res/tiny/*/meta.json | tr ' ' '\n' | xargs grep -l '"replicas": 3' | head -1)
python3 - "$bm" <<'PY' || fail "a rerun does not keep the attempt before it: $(cat "$(dirname "$bm")/started.json")"
import json, os, sys
m = json.load(open(sys.argv[1]))
s = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "started.json")))
assert s["job_id"] == "77_0" and s["slurm_restart_count"] == 1, s
assert [a["outcome"] for a in s["earlier_attempts"]] == ["failed", "failed"], s
assert m["slurm_restart_count"] == 1 and len(m["earlier_attempts"]) == 2, m
PY
# An aborted run (the launcher ended the job) is retried like the others.
python3 - "$bm" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["status"] = "aborted"; json.dump(m, open(sys.argv[1], "w"))
PY
KV_RESULTS=$T/res $C run "$T/bad.campaign" > "$T/ab1.log" 2>&1
grep -q '1 kept as failed, crashed, hung, aborted.*0 to run' "$T/ab1.log" || fail "an aborted run: $(cat "$T/ab1.log")"
KV_RESULTS=$T/res $C run "$T/bad.campaign" --retry-failed > "$T/ab2.log" 2>&1
grep -q '1 to run' "$T/ab2.log" || fail "--retry-failed left an aborted run: $(cat "$T/ab2.log")"
# sbatch's options: --exclusive for runs with failures only, unless told.
python3 - "$ROOT" <<'PY' || fail "sbatch options: --exclusive"
import sys
sys.path.insert(0, sys.argv[1] + "/slurm")
import slurm_submit as s
p = {"time_limit_s": 60, "throttle": "1", "name": "t", "file": "f", "slurm": {}}
run = {"nodes": 2, "tasks_per_node": 2}
assert "--exclusive" in s.sbatch_command(p, 0, run, 1, "l", "d", True)
assert "--exclusive" not in s.sbatch_command(p, 0, run, 1, "l", "d", False)
p["slurm"] = {"exclusive": "0"}
assert "--exclusive" not in s.sbatch_command(p, 0, run, 1, "l", "d", True)
PY
# A Slurm task that is to load modules fails when it cannot, saying so.
out=$(env -u module KV_ROOT="$ROOT" KV_MODULES=openmpi/ulfm SLURM_ARRAY_TASK_ID=0 MODULESHOME=/nonexistent \
      bash "$ROOT/slurm/task.sh" "$T/tiny.campaign" /dev/null 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q "loads modules (openmpi/ulfm) but this node has no 'module' command" <<<"$out" ||
  fail "task.sh without a module command: exit $rc: $out"
echo "PASS: campaign expansion, seeds, shapes, errors and resume"
