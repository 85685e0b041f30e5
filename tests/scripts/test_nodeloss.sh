#!/usr/bin/env bash
# test_nodeloss.sh -- a node loss on the 3-host test cluster: kv_inject (the
# external form) kills exactly the node's ranks and Open MPI daemon
# processes, logs each with its role, and kvrun reports the job that the
# launcher then either survives (the project's patched Open MPI) or ends as
# ABORTED, with the launcher's message (a stock one).
#
# On a cluster of its own (own state directory and bridge), the ranks are
# tests/mpi/mpi_busy (allreduce every 10 ms), started through `kv_inject
# --publish` (6 ranks, 2 per host), so their pid table is written by the
# same code as the driver's; in the Slurm allocation they are `sleep`
# processes.  Pass rules:
#  1. the daemon of every rank is its parent: on kvnode2 and kvnode3 a
#     prted whose own parent is a prted, on kvnode1 (the head node) prterun
#     with no daemon parent; so through the launch agent, and inside a Slurm
#     allocation (sbatch -N 3, daemons started by srun);
#  2. signal=STOP, target=node:kvnode2: the kill log has 4 lines, the node's
#     daemon-parent, daemon and 2 ranks with the table's pids, all 4 are
#     stopped and no other rank or daemon of the run is; after SIGCONT the
#     run goes on and passes;
#  3. target=node:random: the node drawn is not kvnode1, its 4 processes
#     die (seen through pidfds: the spread of their deaths is printed),
#     and long before its deadline the run ends as the Open MPI decides:
#     with the project's patches (the lost daemon is absorbed: its build
#     prints "the job goes on") mpirun says so for that node, the job goes
#     on, and the survivors write a verdict (FAIL: their collective saw the
#     failure, as it must); with a stock Open MPI kvrun says ABORTED (exit
#     4) with "PRTE has lost communication with a remote daemon" and that
#     node;
#  4. no process of any run is left on any host.
# Exit 0 pass, 1 fail, 77 skip (not root, no namespaces or Slurm).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
VC=$ROOT/scripts/vcluster KVRUN=$ROOT/scripts/kvrun INJ=$B/bin/kv_inject
T0=$SECONDS
say() { printf '[nodeloss-test +%3ds] %s\n' "$((SECONDS - T0))" "$*"; }
FAILMSG=""
fail() { FAILMSG=$*; exit 1; }

why=$("$ROOT/scripts/vcluster" can) || { echo "skip: $why"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is not installed"; exit 77; }
for b in "$INJ" "$B/tests/mpi/mpi_busy"; do [ -x "$b" ] || { echo "FAIL: not built: $b"; exit 1; }; done

export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrnl
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvnodeloss-test.XXXXXX)
WORK=$KV_CLUSTER_DIR/work; mkdir -p "$WORK"; chmod 0755 "$KV_CLUSTER_DIR" "$WORK"
TAGS=()
# The test cluster's hosts share this machine's pid namespace, so one
# plain kill(1) signals a host's victims (`vcluster exec {host}` first
# would enter the host as ssh would, 0.2 s slower here).
export KV_INJECT_REMOTE='kill -{signal} {pids}'

cleanup() {
  local rc=$? t left
  trap - EXIT
  for t in "${TAGS[@]}"; do   # processes of a run: none may be left
    left=$(env -u KVRUN_TAG grep -lzxF "KVRUN_TAG=$t" /proc/[0-9]*/environ 2>/dev/null | grep -c .)
    [ "$left" -eq 0 ] || { [ "$rc" -eq 0 ] && rc=1; FAILMSG+="; $left processes of run $t left"; }
  done
  "$VC" down >/dev/null 2>&1 || { [ "$rc" -eq 0 ] && rc=1; FAILMSG+="; vcluster down failed"; }
  [ "$rc" -eq 0 ] && rm -rf "$KV_CLUSTER_DIR"   # kept on failure: the logs
  if [ "$rc" -eq 0 ]; then say "PASS: node losses injected, logged by role, the job went on (ABORTED on a stock Open MPI), nothing left"
  else say "FAIL: ${FAILMSG:-exit $rc} (logs: $KV_CLUSTER_DIR)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'FAILMSG="interrupted"; exit 1' INT TERM

comm() { cat "/proc/$1/comm" 2>/dev/null; }
sorted() { printf '%s\n' "$@" | sort -n | tr '\n' ' '; }
state() { awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# launch NAME SECONDS TIMEOUT: mpi_busy for SECONDS on 6 ranks, publishing
# $WORK/NAME/pids, under kvrun in the background (RUN_PID, RUN_TAG).
launch() {
  local d=$WORK/$1
  mkdir -p "$d"
  RUN_TAG=nodeloss-$1-$$; TAGS+=("$RUN_TAG")
  # A hung run leaves every rank's stacks in $d/stacks.txt (kept with the logs).
  KVRUN_TAG=$RUN_TAG KVRUN_STACKS=$d/stacks.txt timeout $(($3 + 30)) "$KVRUN" --cluster --ppn 2 --timeout "$3" -- \
    "$INJ" --publish "$d/pids" -- "$B/tests/mpi/mpi_busy" "$2" >"$d/kvrun.out" 2>"$d/kvrun.err" &
  RUN_PID=$!
}
# table DIR: wait for the 6 entries (30 s); E[r] = "rank pid host daemon daemon_parent"
table() {
  local i r
  for ((i = 0; i < 300; i++)); do
    [ "$(ls "$1"/rank.* 2>/dev/null | wc -l)" -eq 6 ] && break
    sleep 0.1
  done
  E=()
  for r in 0 1 2 3 4 5; do E[r]=$(cat "$1/rank.$r" 2>/dev/null) || fail "no pid table entry $1/rank.$r"; done
}
# check_daemons WHERE: rule 1 for the table in E[].
check_daemons() {
  local r pid host d dp want
  for r in 0 1 2 3 4 5; do
    read -r _ pid host d dp <<<"${E[r]}"
    [ "$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")" = "$d" ] || fail "$1: rank $r: its daemon $d is not its parent"
    if [ "$host" = kvnode1 ]; then
      [ "$(comm "$d")" = prterun ] && [ "$dp" = 0 ] || fail "$1: rank $r on the head node: daemon $d ($(comm "$d")), parent $dp"
    else
      want="prted prted"
      [ "$(comm "$d") $(comm "$dp")" = "$want" ] || fail "$1: rank $r on $host: daemon $d ($(comm "$d")), parent $dp ($(comm "$dp"))"
    fi
  done
  say "$1: every rank's parent is its daemon: prterun on kvnode1, prted (forked by a prted) elsewhere"
}
# node_pids HOST: the node's daemon-parent, daemon and ranks (from E[]).
node_pids() {
  local r pid host d dp out=""
  for r in 0 1 2 3 4 5; do
    read -r _ pid host d dp <<<"${E[r]}"
    [ "$host" = "$1" ] || continue
    [[ " $out " == *" $d "* ]] || out+=" $d"
    [ "$dp" != 0 ] && [[ " $out " != *" $dp "* ]] && out+=" $dp"
    out+=" $pid"
  done
  echo $out
}
# finish: wait for the run in the background (bounded by its timeout(1)).
finish() { wait "$RUN_PID"; RUN_RC=$?; RUN_LAST=$(tail -1 "$WORK/$1/kvrun.out"); }

say "vcluster up 3"
timeout 180 "$VC" up 3 >"$WORK/up.log" 2>&1 || fail "vcluster up 3: $(tail -2 "$WORK/up.log")"

# ---------------------------------------------------------------- 1, 2: STOP
say "signal=STOP; target=node:kvnode2 (external form)"
launch stop 10 40
table "$WORK/stop/pids"
check_daemons "through the launch agent"
"$INJ" --pids "$WORK/stop/pids" --nranks 6 --schedule 'signal=STOP; target=node:kvnode2; when=time:0.2' \
  --max-simultaneous 1 --log "$WORK/stop/kills.csv" --schedule-out "$WORK/stop/schedule.csv" \
  --timeout 30 2>"$WORK/stop/inject.log" || fail "kv_inject: $(cat "$WORK/stop/inject.log")"
victims=$(node_pids kvnode2)
logged=$(awk -F, 'NR > 1 {print $3}' "$WORK/stop/kills.csv")
[ "$(sorted $logged)" = "$(sorted $victims)" ] || fail "kill log pids '$logged', the node's are '$victims'"
roles=$(awk -F, 'NR > 1 {print $6}' "$WORK/stop/kills.csv" | tr '\n' ' ')
[ "$roles" = "daemon-parent daemon rank rank " ] || fail "kill log roles: $roles"
awk -F, 'NR > 1 && ($4 != "kvnode2" || $5 != "STOP") {exit 1}' "$WORK/stop/kills.csv" || fail "kill log: $(cat "$WORK/stop/kills.csv")"
for p in $victims; do [ "$(state "$p")" = T ] || fail "victim $p ($(comm "$p")) is in state $(state "$p"), not T"; done
for p in $(node_pids kvnode1) $(node_pids kvnode3); do
  [ "$(state "$p")" != T ] || fail "pid $p ($(comm "$p")), not on kvnode2, was stopped"
done
say "kill log: $roles; exactly kvnode2's 4 processes are stopped"
kill -CONT $victims
finish stop
[ "$RUN_RC" -eq 0 ] && [[ $RUN_LAST == *"FINISHED PASS"* ]] || fail "after SIGCONT the run did not pass: $RUN_LAST"
say "after SIGCONT: $RUN_LAST"

# ---------------------------------------------------------------- 3: KILL, ABORTED
say "target=node:random (external form)"
launch kill 40 60
table "$WORK/kill/pids"
watched="$(node_pids kvnode2) $(node_pids kvnode3)"
python3 - "$WORK/kill/ready" $watched >"$WORK/kill/deaths" 2>&1 <<'EOF' &
# Print "PID SECONDS" (CLOCK_MONOTONIC) as each watched process exits.
import os, select, sys, time
fds = {os.pidfd_open(int(p)): p for p in sys.argv[2:]}
open(sys.argv[1], "w").close()
poll = select.poll()
for fd in fds:
    poll.register(fd, select.POLLIN)
end = time.monotonic() + 40
while fds and time.monotonic() < end:
    for fd, _ in poll.poll(500):
        t = time.monotonic()
        print(fds.pop(fd), "%.6f" % t, flush=True)
        poll.unregister(fd)
EOF
watcher=$!
for ((i = 0; i < 100; i++)); do [ -e "$WORK/kill/ready" ] && break; sleep 0.1; done
t_kill=$SECONDS
"$INJ" --pids "$WORK/kill/pids" --nranks 6 --schedule 'target=node:random; when=time:0.1; seed=5' \
  --max-simultaneous 1 --log "$WORK/kill/kills.csv" --schedule-out "$WORK/kill/schedule.csv" \
  --timeout 30 2>"$WORK/kill/inject.log" || fail "kv_inject: $(cat "$WORK/kill/inject.log")"
node=$(awk -F, 'NR == 2 {print $4}' "$WORK/kill/kills.csv")
[ -n "$node" ] && [ "$node" != kvnode1 ] || fail "node:random drew '$node'"
victims=$(node_pids "$node")
[ "$(awk -F, 'NR > 1' "$WORK/kill/kills.csv" | wc -l)" -eq 4 ] || fail "kill log: $(cat "$WORK/kill/kills.csv")"
finish kill
wait "$watcher"
if "$ROOT/scripts/node-loss-survivable" >/dev/null; then  # patched: the job survives
  grep -q "lost daemon .* on node $node: its 2 processes are reported failed and the job goes on" \
    "$WORK/kill/kvrun.err" ||
    fail "mpirun did not report $node's daemon as absorbed: $(tail -3 "$WORK/kill/kvrun.err")"
  [ "$RUN_RC" -eq 1 ] && [[ $RUN_LAST == *"FINISHED FAIL mpi_busy errors="* ]] ||
    fail "kvrun exit $RUN_RC, not the survivors' verdict FAIL (they saw the failure): $RUN_LAST"
  ! grep -q 'returned MPI_SUCCESS with the sum' "$WORK/kill/kvrun.out" ||
    fail "a survivor's MPI_Allreduce succeeded with a wrong sum: $(grep -m1 'with the sum' "$WORK/kill/kvrun.out")"
  say "the job went on without $node: the survivors wrote their verdict, and no allreduce that succeeded was wrong"
else  # stock: the launcher ends the job
  [ "$RUN_RC" -eq 4 ] || fail "kvrun exit $RUN_RC, not 4 (ABORTED): $RUN_LAST"
  [[ $RUN_LAST == *ABORTED*"PRTE has lost communication with a remote daemon"*"on node $node"* ]] ||
    fail "kvrun's last line: $RUN_LAST"
fi
[ $((SECONDS - t_kill)) -lt 30 ] || fail "the job ended $((SECONDS - t_kill)) s after the kill"
spread=$(awk -v v=" $victims " 'index(v, " " $1 " ") {n++; if (!lo || $2 < lo) lo = $2; if ($2 > hi) hi = $2}
  END {if (n == 4) printf "%.0f", (hi - lo) * 1e6; else print "missing"}' "$WORK/kill/deaths")
[ "$spread" != missing ] || fail "not every victim died: $(cat "$WORK/kill/deaths")"
say "$node's 4 processes died within $spread us ($(grep 'within' "$WORK/kill/inject.log" | sed 's/.*: //'))"
ended=$(awk -v v=" $victims " '{if (index(v, " " $1 " ")) {if ($2 > k) k = $2} else if ($2 > o) o = $2}
  END {if (o) printf "%.0f ms", (o - k) * 1e3; else print "never"}' "$WORK/kill/deaths")
say "the other node's processes ended $ended after the last victim died"
say "$RUN_LAST"

# ---------------------------------------------------------------- 1: Slurm
say "inside a Slurm allocation (sbatch -N 3): the daemons srun starts"
mkdir -p "$WORK/slurm"
RUN_TAG=nodeloss-slurm-$$; TAGS+=("$RUN_TAG")
"$VC" exec kvnode1 sbatch -N 3 -t 2 -o "$WORK/slurm/job.out" --wrap \
  "KVRUN_TAG=$RUN_TAG $KVRUN --ppn 2 --no-verdict --timeout 40 -- $INJ --publish $WORK/slurm/pids -- sleep 6" \
  >"$WORK/slurm/sbatch.out" 2>&1 || fail "sbatch: $(cat "$WORK/slurm/sbatch.out")"
table "$WORK/slurm/pids"
check_daemons "in the allocation"
for ((i = 0; i < 300; i++)); do grep -qE '^kvrun: [A-Z]{4}' "$WORK/slurm/job.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^kvrun: FINISHED' "$WORK/slurm/job.out" || fail "the Slurm job: $(tail -2 "$WORK/slurm/job.out")"
for ((i = 0; i < 100; i++)); do [ -z "$("$VC" exec kvnode1 squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
