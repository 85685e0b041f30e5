#!/usr/bin/env bash
# test_killnode.sh -- a job survives the loss of a whole node (ULFM's kill_node).
#
# On a test cluster of its own (scripts/vcluster, own state directory and
# bridge, so a cluster a user keeps up is not touched), runs
# tests/mpi/ulfm_killnode through `kvrun --cluster` (mpirun --with-ft ulfm
# on the first host), one case per "cluster-run: HOSTS RANKS-PER-HOST MODE"
# line at the top of tests/mpi/ulfm_killnode.c; the last host is the one
# lost.  MODE external: once the program says it is ready, this script
# SIGKILLs every rank of the last host and its prted with one kill(1).
# MODE freeze: it takes the last host's network link down and stops those
# processes with SIGSTOP instead (a node gone silent, its sockets never
# closed), and every survivor must notice within FREEZE_BOUND_S (10 s; with
# kvrun's keepalive settings about 5 s is expected); the stopped processes
# are killed after the run.
# Pass rule for each case: kvrun reports the verdict PASS (see the
# program's header); mpirun's output says the runtime went on without the
# node; mpirun does not outlive the job's ranks by more than 10 s (a finalize
# that hangs in the survivors, which Open MPI 5.0.7 does now and then after
# a failure, is cut by kvrun and reported, not failed); and no rank, prted
# or mpirun is left on any host afterwards.  Each case runs under a 90-s
# limit.  Exit 0 pass, 1 fail, 77 skip (not root, no network namespaces).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
VC=$ROOT/scripts/vcluster KVRUN=$ROOT/scripts/kvrun
SRC=$ROOT/tests/mpi/ulfm_killnode.c PROG=$B/tests/mpi/ulfm_killnode

[ -x "$VC" ] || { echo "skip: scripts/vcluster is absent: there is no test cluster to lose a node of"; exit 77; }
why=$("$ROOT/scripts/vcluster" can --no-slurm) || { echo "skip: $why"; exit 77; }
[ -x "$PROG" ] || { echo "FAIL: not built: $PROG"; exit 1; }

export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrk
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-killnode.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
# The program's files (ready, killtime) in the build directory, which every
# host sees as kvrun's verdict does.
mkdir -p "$B" && W=$(mktemp -d "$B/killnode.XXXXXX")
cleanup() {
  local rc=$?
  trap - EXIT
  "$VC" down >/dev/null 2>&1 || { echo "FAIL: vcluster down failed"; rc=1; }
  rm -rf "$W" "$KV_CLUSTER_DIR"
  exit "$rc"
}
trap cleanup EXIT

need=$(sed -n 's/^ \* cluster-run: *\([0-9]*\) .*/\1/p' "$SRC" | sort -n | tail -1)
"$VC" up "$need" --no-slurm > "$W/up.log" 2>&1 || { cat "$W/up.log"; echo "FAIL: vcluster up $need"; exit 1; }
mapfile -t HOSTS < <("$VC" hosts | awk '{print $1}')
NETS=""
for h in "${HOSTS[@]}"; do NETS+="$("$VC" exec "$h" readlink /proc/self/ns/net) "; done

# "PID:ROLE" of the live processes of a run in network namespaces $1
# (space-separated): ranks, daemons and mpirun
run_pids() {
  local p ns comm
  for p in /proc/[0-9]*; do
    ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
    [[ " $1 " == *" $ns "* ]] || continue
    grep -q '^State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
    comm=$(cat "$p/comm" 2>/dev/null) || continue
    case $comm in
      prted|prterun|mpirun) echo "${p#/proc/}:$comm" ;;
      ulfm_killnode) echo "${p#/proc/}:rank" ;;
    esac
  done
}

fails=0 n=0
run_case() {  # hosts per-host mode
  local nh=$1 k=$2 mode=$3 label="$1x$2-$3" out pid victim_ns pids now alone="" stuck="" why="" last left
  out=$W/$label.log
  n=$((n + 1))
  rm -f "$W/ready" "$W/killtime" "$W/killed"
  victim_ns=$(awk -v i="$nh" '{print $i}' <<<"$NETS")
  # grace 20 s: a finalize that ends by itself does so well within it
  KVRUN_GRACE=20 "$KVRUN" --cluster --nodes "$nh" --ppn "$k" --timeout 90 -- \
    "$PROG" "$mode" "$W" > "$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$mode" != self ] && [ -e "$W/ready" ] && [ ! -e "$W/killed" ]; then
      pids=$(run_pids "$victim_ns")
      # the survivors time detection from it: integer ns, as kvtest.h reads it
      echo "${EPOCHREALTIME/[.,]/}000" > "$W/killtime"
      if [ "$mode" = freeze ]; then  # silent: link down, processes stopped
        "$VC" exec "${HOSTS[$((nh - 1))]}" sh -c \
          'for d in $(ip -o link show | awk -F": " "{print \$2}" | cut -d@ -f1); do
             [ "$d" = lo ] || ip link set dev "$d" down; done'
        # shellcheck disable=SC2046
        kill -STOP $(cut -d: -f1 <<<"$pids") 2>/dev/null
      else
        # shellcheck disable=SC2046  # one kill(1) for the whole node
        kill -KILL $(cut -d: -f1 <<<"$pids") 2>/dev/null
      fi
      echo "${mode/external/killed} ${HOSTS[$((nh - 1))]}: $(tr '\n' ' ' <<<"$pids")" >> "$W/killed"
    fi
    # mpirun (or a daemon) still there although every rank is gone
    pids=$(run_pids "$NETS")
    if [ -n "$pids" ] && ! grep -q ':rank$' <<<"$pids"; then
      now=$SECONDS; alone=${alone:-$now}
      [ $((now - alone)) -ge 10 ] && stuck=$(tr '\n' ' ' <<<"$pids")
    else
      alone=""
    fi
    sleep 0.2
  done
  wait "$pid"
  left=$(run_pids "$NETS" | tr '\n' ' ')
  # shellcheck disable=SC2046
  [ -n "$left" ] && kill -KILL $(tr ' ' '\n' <<<"$left" | cut -d: -f1) 2>/dev/null
  last=$(tail -1 "$out")
  [[ $last == "kvrun: FINISHED PASS"* ]] || why+="${last:-no kvrun verdict}; "
  grep -q 'its [0-9]* processes are reported failed' "$out" ||
    why+="the runtime never said it went on without the node; "
  [ -n "$stuck" ] && why+="still running 10 s after the last rank: $stuck; "
  if [ "$mode" = freeze ]; then  # every survivor noticed, within the bound
    slow=$(grep -ao 'noticed the node loss [0-9.]* ms' "$out" | awk -v b="${FREEZE_BOUND_S:-10}" \
      '{n++} $5 > b * 1000 {s = s " " $5} END {if (n == 0) print "none noticed"; else if (s) print s}')
    [ -n "$slow" ] && why+="a frozen node noticed after more than ${FREEZE_BOUND_S:-10} s (ms):$slow; "
  fi
  [ -n "$left" ] && why+="left behind: $left; "
  if [ -n "$why" ]; then
    fails=$((fails + 1)); echo "  FAIL $label: $why"
    sed 's/^/    /' "$W/killed" 2>/dev/null
    grep -v '^ ' "$out" | tail -25 | sed 's/^/    /'
  else
    echo "  ok   $label: detected after (ms) $(grep -ao 'noticed the node loss [0-9.]* ms' "$out" |
      awk '{print $5}' | sort -n | tr '\n' ' ')(${last#kvrun: FINISHED })"
  fi
}

# fd 3: the launches below read their standard input
# KILLNODE_CASES="HOSTS PER-HOST MODE" (one case) and KILLNODE_REPEAT=N
# (each case N times): how experiments/bench/bench_silentnode.sh uses it.
cases() { if [ -n "${KILLNODE_CASES:-}" ]; then echo "$KILLNODE_CASES"; else sed -n 's/^ \* cluster-run: *//p' "$SRC"; fi; }
for _ in $(seq "${KILLNODE_REPEAT:-1}"); do
  while read -r nh k mode <&3; do run_case "$nh" "$k" "$mode"; done 3< <(cases)
done
[ "$fails" -eq 0 ] || { echo "FAIL: $fails of $n node-loss cases"; exit 1; }
echo "PASS: $n node-loss cases: the job went on without the lost node, shrink and collectives worked, nothing left"
