#!/usr/bin/env bash
# test_slurm_cluster.sh -- the local one-node Slurm (slurm/cluster.sh) works.
#
# Starts the cluster (or finds it up), then, against the real slurmctld and
# slurmd:
#   1. a job with --time=1 running `sleep 300` is submitted first; it must end
#      in TIMEOUT after its one-minute limit (checked last, it runs meanwhile);
#   2. a job array --array=0-2%2 --time=1: each task writes
#      "$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $(hostname)" to its own file;
#      all three files must appear with the right ids, the throttle must be 2,
#      and every task must end COMPLETED;
#   3. scancel of a running job (its process must go) and of a held,
#      pending job: both end CANCELLED.
# The cluster is stopped in an EXIT trap, even on failure (KV_SLURM_KEEP=1
# leaves it up), and no daemon, slurmstepd or job process of it may remain.
# Exit 0 pass, 1 fail, 77 skip (only when slurmctld/slurmd are not installed).
# The last line printed says the outcome.  Takes about 75-100 s.
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLUSTER=$ROOT/slurm/cluster.sh
T0=$SECONDS

say() { printf '[slurm-test +%3ds] %s\n' "$((SECONDS - T0))" "$*"; }
FAILMSG=""
fail() { FAILMSG=$*; exit 1; }

for b in slurmctld slurmd; do
  if ! command -v "$b" >/dev/null; then
    echo "skip: $b is not installed (Debian package slurm-wlm); cannot run a local Slurm"
    exit 77
  fi
done
for b in sbatch squeue scancel sinfo scontrol munge unmunge munged; do
  command -v "$b" >/dev/null || { echo "FAIL: $b is not installed (slurm-client/munge)"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "FAIL: must run as root (the test cluster runs SlurmUser=root)"; exit 1; }

export KV_SLURM_DIR=${KV_SLURM_DIR:-/tmp/kvslurm}
WORK=$(mktemp -d /tmp/kvslurm-test.XXXXXX)
chmod 0755 "$WORK"

# pids of live (non-zombie) processes whose environment names our slurm.conf
# and that are slurm daemons or job tasks
ours_left() {
  local conf=$KV_SLURM_DIR/slurm.conf f p c
  # shellcheck disable=SC2013  # /proc paths have no blanks
  for f in $(grep -lzxF "SLURM_CONF=$conf" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] && continue
    grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null && continue
    c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
    case $c in
      slurmctld|slurmd|slurmstepd|slurmscriptd) echo "$p($c)" ;;
      *) { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -q '^SLURM_JOB_ID=' && echo "$p($c)" ;;
    esac
  done
  for p in $(pgrep -x slurmctld) $(pgrep -x slurmd); do
    grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null && continue
    { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qF -- "-f $conf" && echo "$p(slurm)"
  done
}

MUNGED_MARK=$KV_SLURM_DIR/munged.started
cleanup() {
  local rc=$? left munged=""
  trap - EXIT
  if [ "${KV_SLURM_KEEP:-0}" = 1 ]; then
    say "KV_SLURM_KEEP=1: leaving the cluster up (slurm/cluster.sh stop stops it)"
  else
    [ -e "$MUNGED_MARK" ] && munged=$(tr -dc '0-9' <"$MUNGED_MARK")
    say "stopping the cluster"
    if ! "$CLUSTER" stop; then
      [ "$rc" -eq 0 ] && { rc=1; FAILMSG="slurm/cluster.sh stop failed"; }
    fi
    left=$(ours_left | sort -u | tr '\n' ' ')
    if [ -n "$munged" ] && kill -0 "$munged" 2>/dev/null &&
       grep -q '^State:[[:space:]]*[^Z[:space:]]' "/proc/$munged/status" 2>/dev/null; then
      left+="$munged(munged)"
    fi
    if [ -n "${left// /}" ]; then
      [ "$rc" -eq 0 ] && rc=1
      FAILMSG="${FAILMSG:+$FAILMSG; }still running after stop: $left"
    fi
  fi
  rm -rf "$WORK"
  if [ "$rc" -eq 0 ]; then
    say "PASS: local Slurm ran a throttled job array, enforced a time limit and cancelled jobs"
  else
    say "FAIL: ${FAILMSG:-exit $rc}"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILMSG="interrupted"; exit 1' INT TERM

# state of a job (or array task) while slurmctld still knows it (MinJobAge)
job_state() { squeue -h -t all -j "$1" -o '%T' 2>/dev/null | head -1; }
# wait (in this shell, so a signal is handled within a second) until the
# job's state is one of $want; leaves the last state seen in $st
wait_state() {  # job want seconds
  local j=$1 want=$2 limit=$3 t=$SECONDS
  st=""
  while ((SECONDS - t < limit)); do
    st=$(job_state "$j")
    [[ " $want " == *" $st "* ]] && return 0
    sleep 1
  done
  st=${st:-unknown}; return 1
}

# ---------------------------------------------------------------- cluster
say "starting the local cluster (KV_SLURM_DIR=$KV_SLURM_DIR)"
"$CLUSTER" start || fail "slurm/cluster.sh start failed"
eval "$("$CLUSTER" env)"
[ "$SLURM_CONF" = "$KV_SLURM_DIR/slurm.conf" ] || fail "cluster.sh env gave SLURM_CONF=$SLURM_CONF"
"$CLUSTER" status || fail "slurm/cluster.sh status does not say up after start"
"$CLUSTER" start >/dev/null || fail "a second slurm/cluster.sh start failed (must be idempotent)"
NODE=$(hostname -s)
st=$(sinfo -h -N -n "$NODE" -o '%T')
[[ $st == idle* || $st == mixed* ]] || fail "node $NODE is '$st', expected idle"
say "node $NODE is $st; partition: $(sinfo -h -o '%P %a %l %D')"

# ---------------------------------------------------------------- time limit
TO_JOB=$(sbatch --parsable -J kvtest-timeout --time=1 -o "$WORK/timeout.out" \
  --wrap "echo \$\$ > $WORK/timeout.pid; exec sleep 300") || fail "sbatch of the time-limit job failed"
TO_JOB=${TO_JOB%%;*}
TO_T0=$SECONDS
say "submitted job $TO_JOB: sleep 300 with --time=1 (must be killed as TIMEOUT)"

# ---------------------------------------------------------------- job array
cat >"$WORK/task.sh" <<EOF
#!/bin/bash
f=$WORK/task-\$SLURM_ARRAY_TASK_ID
echo "\$SLURM_ARRAY_JOB_ID \$SLURM_ARRAY_TASK_ID \$(hostname)" > "\$f.tmp"
mv "\$f.tmp" "\$f.txt"
EOF
chmod +x "$WORK/task.sh"
ARR=$(sbatch --parsable -J kvtest-array --array=0-2%2 --time=1 \
  -o "$WORK/array-%A_%a.out" "$WORK/task.sh") || fail "sbatch --array failed"
ARR=${ARR%%;*}
[[ $ARR =~ ^[0-9]+$ ]] || fail "sbatch --parsable gave '$ARR'"
say "submitted job array $ARR (--array=0-2%2 --time=1)"
thr=$(scontrol show job "$ARR" 2>/dev/null | grep -o 'ArrayTaskThrottle=[0-9]*' | head -1)
[ "$thr" = ArrayTaskThrottle=2 ] || fail "array $ARR throttle is '${thr:-missing}', expected ArrayTaskThrottle=2"
t=$SECONDS
while :; do
  active=$(squeue -h -j "$ARR" -o '%i' 2>/dev/null | wc -l)
  n=$(find "$WORK" -maxdepth 1 -name 'task-*.txt' | wc -l)
  [ "$active" -eq 0 ] && [ "$n" -eq 3 ] && break
  ((SECONDS - t >= 120)) && fail "array $ARR not done after 120 s ($n of 3 files, $active still queued: $(squeue -h -j "$ARR" -o '%i %T %r' | tr '\n' ';'))"
  sleep 1
done
say "array $ARR finished in $((SECONDS - t)) s"
HOST=$(hostname)
for i in 0 1 2; do
  f=$WORK/task-$i.txt
  [ -s "$f" ] || fail "task $i wrote no $f"
  read -r jid tid h <"$f"
  [ "$jid" = "$ARR" ] || fail "task $i wrote job id '$jid', expected $ARR"
  [ "$tid" = "$i" ] || fail "task file $i holds task id '$tid'"
  [ "$h" = "$HOST" ] || fail "task $i ran on '$h', expected $HOST"
  st=$(job_state "${ARR}_$i")
  [ "$st" = COMPLETED ] || fail "array task ${ARR}_$i ended '$st', expected COMPLETED"
done
say "all 3 task files hold job id $ARR, task ids 0 1 2, host $HOST; all COMPLETED"

# ---------------------------------------------------------------- scancel
RUN=$(sbatch --parsable -J kvtest-cancel-run --time=5 -o /dev/null \
  --wrap "echo \$\$ > $WORK/run.pid; exec sleep 300") || fail "sbatch of the job to cancel failed"
RUN=${RUN%%;*}
HELD=$(sbatch --parsable -J kvtest-cancel-held --hold --time=5 -o /dev/null --wrap "sleep 300") ||
  fail "sbatch --hold failed"
HELD=${HELD%%;*}
wait_state "$RUN" RUNNING 60 || fail "job $RUN is '$st' after 60 s, expected RUNNING"
t=$SECONDS
until [ -s "$WORK/run.pid" ]; do ((SECONDS - t > 20)) && fail "job $RUN wrote no pid"; sleep 0.5; done
RUN_PID=$(cat "$WORK/run.pid")
kill -0 "$RUN_PID" 2>/dev/null || fail "job $RUN's process $RUN_PID is not running"
st=$(job_state "$HELD")
[ "$st" = PENDING ] || fail "held job $HELD is '$st', expected PENDING"
say "job $RUN running (pid $RUN_PID), job $HELD pending (held); scancel both"
scancel "$RUN" "$HELD" || fail "scancel $RUN $HELD failed"
wait_state "$RUN" CANCELLED 30 || fail "job $RUN is '$st' 30 s after scancel"
wait_state "$HELD" CANCELLED 30 || fail "job $HELD is '$st' 30 s after scancel"
t=$SECONDS
while kill -0 "$RUN_PID" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$RUN_PID/status" 2>/dev/null; do
  ((SECONDS - t > 20)) && fail "job $RUN is CANCELLED but its process $RUN_PID still runs"
  sleep 0.5
done
say "both CANCELLED; the running job's process is gone"

# ---------------------------------------------------------------- time limit, end
st=$(job_state "$TO_JOB")
say "waiting for job $TO_JOB to hit its 1-minute limit (now $st, $((SECONDS - TO_T0)) s after submit)"
wait_state "$TO_JOB" "TIMEOUT COMPLETED FAILED CANCELLED" $((150 - (SECONDS - TO_T0))) ||
  fail "job $TO_JOB is '$st' 150 s after submit, expected TIMEOUT"
[ "$st" = TIMEOUT ] || fail "job $TO_JOB ended '$st', expected TIMEOUT"
el=$((SECONDS - TO_T0))
((el >= 55)) || fail "job $TO_JOB ended TIMEOUT after only $el s (limit 1 min)"
TO_PID=$(cat "$WORK/timeout.pid" 2>/dev/null)
if [ -n "$TO_PID" ]; then
  t=$SECONDS
  while kill -0 "$TO_PID" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$TO_PID/status" 2>/dev/null; do
    ((SECONDS - t > 20)) && fail "job $TO_JOB is TIMEOUT but its process $TO_PID still runs"
    sleep 0.5
  done
fi
grep -q 'DUE TO TIME LIMIT' "$WORK/timeout.out" 2>/dev/null &&
  say "job output says: $(grep -o 'CANCELLED.*DUE TO TIME LIMIT.*' "$WORK/timeout.out" | head -1)"
say "job $TO_JOB ended TIMEOUT $el s after submit; its process is gone"
