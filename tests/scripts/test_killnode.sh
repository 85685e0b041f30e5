#!/usr/bin/env bash
# test_killnode.sh -- a job survives the loss of a whole node (ULFM's kill_node).
#
# Runs tests/mpi/ulfm_killnode on the test cluster (scripts/vcluster), one
# case per "cluster-run: HOSTS RANKS-PER-HOST MODE" line at the top of
# tests/mpi/ulfm_killnode.c, under --with-ft ulfm with mpirun on the first
# host; the last host is the one lost.  MODE external: once the program says
# it is ready, this script SIGKILLs every rank of the last host and its prted
# with one kill(1).
# Pass rule for each case: the program's verdict is PASS (see its header);
# mpirun's log says the runtime went on without the node; mpirun ends by
# itself within 60 s of the verdict, or, if it does not, only because
# survivors hang in MPI_Finalize (which Open MPI 5.0.7 does now and then
# after a failure: reported, not failed); and no rank, prted or mpirun of
# the case is left on any host afterwards.  Every case runs under a 90-s
# limit.  The cluster is started here unless it is already up, and then
# stopped again.  Exit 0 pass, 1 fail, 77 skip (no scripts/vcluster, or not
# root: no test cluster can run).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VC=$ROOT/scripts/vcluster
SRC=$ROOT/tests/mpi/ulfm_killnode.c
PROG=${KV_BUILD:-$ROOT/build}/tests/mpi/ulfm_killnode
LIMIT=90 GRACE=60

[ -x "$VC" ] || { echo "skip: scripts/vcluster is absent: there is no test cluster to lose a node of"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "skip: the test cluster needs root"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: $PROG is not built (make)"; exit 1; }

W=$(mktemp -d /tmp/kv-killnode.XXXXXX)
started=0
cleanup() {
  local rc=$?
  trap - EXIT
  [ "$started" = 1 ] && { "$VC" down >/dev/null 2>&1 || { echo "FAIL: vcluster down failed"; rc=1; }; }
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT

need=$(sed -n 's/^ \* cluster-run: *\([0-9]*\) .*/\1/p' "$SRC" | sort -n | tail -1)
if "$VC" status >/dev/null 2>&1; then
  have=$("$VC" hosts | wc -l)
  [ "$have" -ge "$need" ] || { echo "FAIL: the test cluster is up with $have hosts, $need needed"; exit 1; }
else
  "$VC" up "$need" --no-slurm > "$W/up.log" 2>&1 || { cat "$W/up.log"; echo "FAIL: vcluster up $need"; exit 1; }
  started=1
fi
mapfile -t HOSTS < <("$VC" hosts | awk '{print $1}')

netns_of_host() { "$VC" exec "$1" readlink /proc/self/ns/net; }
# pids (with their role) of the case's processes in network namespace $1
case_pids() {
  local p ns comm
  for p in /proc/[0-9]*; do
    ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
    [ "$ns" = "$1" ] || continue
    comm=$(cat "$p/comm" 2>/dev/null) || continue
    grep -q '^State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
    case $comm in
      prted|prterun|mpirun) echo "${p#/proc/}:$comm" ;;
      ulfm_killnode) echo "${p#/proc/}:rank" ;;
    esac
  done
}
leftovers() { local h; for h in "${HOSTS[@]:0:$1}"; do case_pids "$(netns_of_host "$h")"; done; }

fails=0 n=0
run_case() {  # hosts per-host mode
  local nh=$1 k=$2 mode=$3 label="$1x$2-$3" hl="" i pid victim_ns t0 left verdict_at="" out
  out=$W/$label.log
  n=$((n + 1))
  for ((i = 0; i < nh; i++)); do hl+="${hl:+,}${HOSTS[$i]}:$k"; done
  rm -f "$W/done" "$W/ready" "$W/killtime"
  victim_ns=$(netns_of_host "${HOSTS[$((nh - 1))]}")
  KVRUN_DONE=$W/done KV_KILLNODE_READY=$W/ready KV_KILL_LOG=$W/killtime setsid "$VC" mpirun \
    --with-ft ulfm -n $((nh * k)) --host "$hl" --bind-to none \
    -x KVRUN_DONE -x KV_KILLNODE_READY -x KV_KILL_LOG "$PROG" "$mode" > "$out" 2>&1 &
  pid=$!
  t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$mode" = external ] && [ -e "$W/ready" ] && [ ! -e "$W/killed" ]; then
      local victims pids; victims=$(case_pids "$victim_ns"); pids=$(cut -d: -f1 <<<"$victims")
      echo "$EPOCHREALTIME" > "$W/killtime"  # the survivors time detection from it
      # shellcheck disable=SC2086  # one kill(1) for the whole node
      kill -KILL $pids 2>/dev/null
      echo "killed ${HOSTS[$((nh - 1))]}: $(tr '\n' ' ' <<<"$victims")" >> "$out"
      touch "$W/killed"
    fi
    [ -s "$W/done" ] && [ -z "$verdict_at" ] && verdict_at=$SECONDS
    if [ -n "$verdict_at" ] && [ $((SECONDS - verdict_at)) -ge "$GRACE" ]; then break; fi
    if [ $((SECONDS - t0)) -ge "$LIMIT" ]; then break; fi
    sleep 0.2
  done
  rm -f "$W/killed"
  local ended=1 hung_ranks=""
  if kill -0 "$pid" 2>/dev/null; then
    ended=0
    hung_ranks=$(leftovers "$nh" | grep ':rank$' | tr '\n' ' ')
    kill -KILL -- -"$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  left=$(leftovers "$nh" | tr '\n' ' ')
  # shellcheck disable=SC2046
  [ -n "$left" ] && kill -KILL $(tr ' ' '\n' <<<"$left" | sed 's/:.*//') 2>/dev/null
  local verdict; verdict=$(head -1 "$W/done" 2>/dev/null)
  local why=""
  [[ $verdict == PASS* ]] || why+="verdict '${verdict:-none}'; "
  grep -q 'its [0-9]* processes are reported failed' "$out" || why+="the runtime never said it went on without the node; "
  if [ "$ended" = 0 ]; then
    if [ -z "$verdict_at" ]; then why+="no verdict within ${LIMIT}s (hang); "
    elif [ -z "$hung_ranks" ]; then why+="mpirun still running ${GRACE}s after the verdict with no rank left; "
    else echo "  note: $label: MPI_Finalize hung in ranks $hung_ranks(cut after ${GRACE}s)"; fi
  fi
  [ "$ended" = 1 ] && [ -n "$left" ] && why+="left behind: $left; "
  if [ -n "$why" ]; then
    fails=$((fails + 1)); echo "  FAIL $label: $why"; sed 's/^/    /' "$out" | tail -30
  else
    echo "  ok   $label: survivors noticed the loss after (ms): $(grep -ao 'noticed the node loss [0-9.]* ms' "$out" | awk '{print $5}' | sort -n | tr '\n' ' ')"
  fi
}

# fd 3: the launches below read their standard input
while read -r nh k mode <&3; do run_case "$nh" "$k" "$mode"; done 3< <(sed -n 's/^ \* cluster-run: *//p' "$SRC")
[ "$fails" -eq 0 ] || { echo "FAIL: $fails of $n node-loss cases"; exit 1; }
echo "PASS: $n node-loss cases: the job went on without the lost node, shrink and collectives worked, nothing left"
