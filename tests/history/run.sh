#!/usr/bin/env bash
# run.sh -- one recorded run of the history client, with ranks SIGKILLed
# from outside at random instants, and its verdict.
#
#   tests/history/run.sh [--backend allocate|create] [--variant V] [--r R]
#       [--spares S] [--np N] [--scenario NAME] [--seconds T] [--keys K]
#       [--seed N] [--timeout S] [--signal NAME] --out DIR
#
# Scenarios (victims drawn from every rank, rank 0 included, by the seed):
#   none       no kill
#   single     one rank killed
#   rank0      rank 0 killed
#   double     two ranks killed at the same instant
#   staggered  two ranks killed GAP ms apart, GAP drawn from the seed between
#              0 and 400 ms, so the second kill lands anywhere in the first
#              recovery (detection, shrink, windows, re-replication) or after it
#   seq        two ranks killed 0.8 s apart (the second after the first recovery)
#   rerep      one rank killed from outside, and a second one kills itself
#              inside the recovery from it, at a re-replication point drawn
#              from the seed (windows, made, rereplicate, exchange or
#              insert, which online never passes: see KVR_POINT in
#              kvstore/kv_internal.h)
#   node       a whole node lost: every rank of one host (not the launcher's)
#              and its Open MPI daemon, killed by kv_inject from the pid
#              table the ranks publish (kv_inject --publish), the node drawn
#              from the seed; needs ranks on several hosts (the test cluster:
#              KV_CLUSTER=1; victims on other hosts are reached through
#              KV_INJECT_REMOTE, by default a plain kill, as the test
#              cluster's hosts share this machine's pids)
#   node2      two nodes lost at one instant (kv_inject target=node:random:2,
#              frozen together, then killed): with --r 3 every pair keeps a
#              copy on the third node (on the test cluster)
#   cascade    a node lost, then a second one 20 to 80 ms later, while the
#              survivors recover from the first (kv_inject cascade=)
#   stop       a straggler: one rank stopped (SIGSTOP) for 200 to 800 ms,
#              drawn from the seed, then continued (SIGCONT), by kv_inject
#              (signal=STOP; for=...); nobody dies, so the run must pass as
#              one without failures and no rank may have recovered from
#              anything (the client's "N" line): a straggler is never taken
#              for dead
#   node-stop  the same for a whole node (its ranks and its daemon), on the
#              test cluster (KV_CLUSTER=1)
#   partition  a node (not the launcher's) cut off the network for 200 to
#              800 ms, then put back (kv_inject signal=LINK; for=...,
#              through KV_INJECT_LINK, by default the test cluster's
#              `vcluster link`): nothing closes a socket, TCP retransmits,
#              and the run must pass as one without failures, no recovery
#              run; on the test cluster
#   cut        the same cut for 8 s, longer than the runtime's keepalive
#              takes to declare the node lost (kvrun's settings: about 5 s):
#              its ranks are failed, the others recover, and no write
#              acknowledged on either side may be lost
#   slow       a node's link slow and lossy (kv_inject signal=SLOW:
#              10 mbit/s both ways, 10% of its packets dropped) for 500 to
#              1500 ms, then back to normal: nothing fails, TCP
#              retransmits, and the run must pass as one without failures,
#              no recovery run (on the test cluster)
#   vanish     a node gone silent: its daemon and ranks stopped and its
#              link cut at one instant (kv_inject signal=VANISH; for=8),
#              8 s later killed and the link put back; nothing closes a
#              socket and nothing on the node acts: the runtime's
#              keepalive declares the node lost, the others recover, and
#              no acknowledged write may be lost (on the test cluster)
#   daemon     a node's Open MPI daemon killed alone (kv_inject
#              target=daemon:random), its ranks spared: whatever the
#              runtime then does with them, no acknowledged write may be
#              lost
# --signal (KILL) is the killer's signal; another one (SEGV) makes the
# victims crash as a buggy rank would, which the verdict must call crashed.
# The kill instant is uniform over the middle of the run.  Afterwards
# check.py judges the logs.  Prints one line "outcome=... victims=..." and
# writes DIR/result.txt with the same key=value pairs.  Outcomes: pass,
# lost (acknowledged data missing from the final reads), nonlinearizable,
# divergent (kv_audit), failed (a FAIL verdict or no verdict), crashed (a
# rank died of a signal it did not get from the killer: a survivor's crash,
# which ULFM lets the job outlive, is named so, not by what it broke; a
# process of a node killed whole is a victim, whatever ends it:
# scripts/crash-lines),
# hung, aborted (the launcher ended the job: a lost daemon); orphans=N counts processes of the run left after it (must be 0).
# In scenarios stop, node-stop, partition and slow gap_ms is the fault's length;
# in cascade the time between the two node losses.
# detect_ms is the time from the first fault to the moment the last
# survivor noticed it (NA when nobody did).
# Exit 0 for pass, 1 otherwise.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
BACKEND=allocate VARIANT=recreate-copy R=2 SPARES=0 NP= SCENARIO=single SECONDS_=2 KEYS=16
SEED=1 TIMEOUT=40 OUT= SIG=KILL
die() { echo "run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --backend) BACKEND=$2 ;; --variant) VARIANT=$2 ;; --r) R=$2 ;; --spares) SPARES=$2 ;;
    --np) NP=$2 ;; --scenario) SCENARIO=$2 ;; --seconds) SECONDS_=$2 ;; --keys) KEYS=$2 ;;
    --seed) SEED=$2 ;; --timeout) TIMEOUT=$2 ;; --out) OUT=$2 ;; --signal) SIG=$2 ;;
    *) die "unknown argument '$1' (see the top of $0)" ;;
  esac
  shift 2 || die "$1 needs a value"
done
[ -n "$OUT" ] || die "--out DIR is required"
[ -x "$B/tests/history/client" ] || die "no $B/tests/history/client: run make first"
kill -l "$SIG" > /dev/null 2>&1 || die "unknown signal '$SIG'"
case $SCENARIO in none|single|rank0|double|staggered|seq|rerep|node|node2|cascade|stop|node-stop|partition|cut|vanish|daemon|slow) ;;
  *) die "unknown scenario '$SCENARIO'" ;; esac
INJ=$B/bin/kv_inject
BY_INJ=; case $SCENARIO in node|node2|cascade|stop|node-stop|partition|cut|vanish|daemon|slow) BY_INJ=1 ;; esac  # kv_inject, from the pid table
CUTS=; case $SCENARIO in partition|cut|vanish|slow) CUTS=1 ;; esac  # a host's link cut or slowed
[ -z "$BY_INJ" ] || [ -x "$INJ" ] || die "no $INJ: run make first"
NP=${NP:-$((R + 2 + SPARES))}
rm -rf "$OUT" && mkdir -p "$OUT" || die "cannot make $OUT"

RANDOM=$SEED
# PICKED: N distinct ranks of 0..NP-1.  Drawn in this shell, not in a
# command substitution: bash (5.1 on) reseeds $RANDOM in every subshell, and
# the victims would not follow from the seed.
pick() {
  local n=$1 all=() v
  PICKED=()
  for ((v = 0; v < NP; v++)); do all+=("$v"); done
  while [ ${#PICKED[@]} -lt "$n" ]; do
    v=$((RANDOM % ${#all[@]})); PICKED+=("${all[$v]}"); all=("${all[@]:0:$v}" "${all[@]:$((v + 1))}")
  done
}
POINT= POINT_RANK=
case $SCENARIO in
  none) VICTIMS= ;;
  single) pick 1; VICTIMS=${PICKED[*]} ;;
  rank0) VICTIMS=0 ;;
  double|staggered|seq) pick 2; VICTIMS=${PICKED[*]} ;;
  rerep) pick 2; VICTIMS=${PICKED[0]} POINT_RANK=${PICKED[1]}
         POINTS=(windows made rereplicate exchange insert)
         [ "$VARIANT" = online ] && unset 'POINTS[4]'  # no scan, no "insert" (kv_internal.h)
         POINT=${POINTS[$((RANDOM % ${#POINTS[@]}))]} ;;
  node|node2|cascade) VICTIMS= ;;  # kv_inject draws the nodes; kills.csv says whom it killed
  stop) pick 1; STOPPED=${PICKED[0]} VICTIMS= ;;
  node-stop|partition|cut|vanish|daemon|slow) VICTIMS= ;;
esac
# Kill at a uniform instant over the middle of the run (milliseconds).
GAP=0; [ "$SCENARIO" = staggered ] && GAP=$((RANDOM % 401))
case $SCENARIO in stop|node-stop|partition) GAP=$((200 + RANDOM % 601)) ;; cut|vanish) GAP=8000 ;;
  slow) GAP=$((500 + RANDOM % 1001)) ;; cascade) GAP=$((20 + RANDOM % 61)) ;; esac
span=$(awk -v s="$SECONDS_" 'BEGIN {printf "%d", s * 1000 * 0.55}')
AT=$(( $(awk -v s="$SECONDS_" 'BEGIN {printf "%d", s * 1000 * 0.15}') + (RANDOM * 32768 + RANDOM) % (span + 1) ))

# opened: wait until every rank has its store open (the client writes
# pid.N after kv_open), so the fault's instant counts from the workload's
# start and not from the launch (an ASan build across hosts can take more
# than the whole window to open); 1 when the store did not open in 60 s.
# OPENED: then the moment the last rank opened (the newest pid.N's time,
# CLOCK_REALTIME seconds), from which the fault's instant counts: a
# killer that notices late (a loaded machine once took 1.2 s to start
# kv_inject, past the workload's end) still strikes inside the workload.
opened() {
  local deadline=$((SECONDS + 60)) v
  for ((v = 0; v < NP; v++)); do
    while [ ! -s "$OUT/pid.$v" ]; do
      [ $SECONDS -gt $deadline ] && return 1
      sleep 0.02
    done
  done
  OPENED=$(stat -c %.9Y "$OUT"/pid.* | sort -n | tail -1)
}

# The seconds left until the fault's instant (0 when it has passed).
until_fault() {
  awk -v o="$OPENED" -v ms="$AT" -v now="$EPOCHREALTIME" 'BEGIN { d = o + ms / 1000 - now; printf "%.3f", (d > 0 ? d : 0) }'
}

killer() {
  opened || return
  sleep "$(until_fault)"
  local pids=() v t
  for v in $VICTIMS; do pids+=("$(cat "$OUT/pid.$v")"); done
  if [ "$SCENARIO" = double ]; then  # one kill(1): both die within microseconds
    kill -"$SIG" "${pids[@]}" 2>/dev/null
    t=$EPOCHREALTIME  # a builtin: no fork between the kill and its time
    for v in $VICTIMS; do echo "$v $t" >> "$OUT/kills"; done
    return
  fi
  set -- "${pids[@]}"
  for v in $VICTIMS; do
    kill -"$SIG" "$1" 2>/dev/null
    echo "$v $EPOCHREALTIME" >> "$OUT/kills"
    shift
    case $SCENARIO in
      staggered) sleep "$(awk -v ms="$GAP" 'BEGIN {printf "%.3f", ms / 1000}')" ;;
      seq) sleep 0.8 ;;
    esac
  done
}

# kv_inject's scenarios: a node loss (the node's daemon and ranks killed
# by the pid table), a stopped rank or node (continued GAP ms later).
inj_killer() {
  local at for_s what
  opened || return  # kv_inject counts from OPENED (--start-time)
  at=$(awk -v ms="$AT" 'BEGIN {printf "%.3f", ms / 1000}')
  for_s=$(awk -v ms="$GAP" 'BEGIN {printf "%.3f", ms / 1000}')
  case $SCENARIO in
    node) what="target=node:random" ;;
    node2) what="target=node:random:2" ;;
    cascade) what="target=node:random; count=2; cascade=$for_s" ;;
    stop) what="signal=STOP; for=$for_s; target=ranks:$STOPPED" ;;
    node-stop) what="signal=STOP; for=$for_s; target=node:random" ;;
    partition|cut) what="signal=LINK; for=$for_s; target=node:random" ;;
    vanish) what="signal=VANISH; for=$for_s; target=node:random" ;;
    slow) what="signal=SLOW; rate=10mbit; loss=10; for=$for_s; target=node:random" ;;
    daemon) what="target=daemon:random" ;;
  esac
  KV_INJECT_LINK=${KV_INJECT_LINK:-"$ROOT/scripts/vcluster link {host} {state}"} \
  KV_INJECT_REMOTE=${KV_INJECT_REMOTE:-'kill -{signal} {pids}'} "$INJ" --pids "$OUT/pids" --nranks "$NP" \
    --schedule "$what; when=time:$at; seed=$SEED" --start-time "$OPENED" \
    --max-simultaneous $((R - 1)) --log "$OUT/kills.csv" --schedule-out "$OUT/schedule.csv" --timeout 20 \
    > "$OUT/inject.log" 2>&1
}
WRAP=()
if [ -n "$BY_INJ" ]; then
  mkdir -p "$OUT/pids"
  WRAP=("$INJ" --publish "$OUT/pids" --)
fi

export KVRUN_TAG=hist-$$-$RANDOM$RANDOM
if [ -n "$BY_INJ" ]; then (unset KVRUN_TAG; inj_killer) &
else (unset KVRUN_TAG; killer) &  # the killer is not part of the run
fi
kpid=$!
KVRUN_STACKS="$OUT/stacks.txt" HIST_POINT_RANK=$POINT_RANK "$ROOT/scripts/kvrun" -n "$NP" --timeout "$TIMEOUT" --out "$OUT/ranks" -- \
  "${WRAP[@]}" "$B/tests/history/client" "$BACKEND" "$VARIANT" "$R" "$SPARES" "$SECONDS_" "$KEYS" "$SEED" "$OUT" \
  $POINT > "$OUT/kvrun.log" 2>&1
krc=$?
# a cut link is put back before anything else (the injector ends on its
# own after that, 30 s at most; else the link is put back here); any other
# injector is stopped
if [ -n "$CUTS" ]; then
  for ((i = 0; i < 300; i++)); do kill -0 "$kpid" 2>/dev/null || break; sleep 0.1; done
fi
kill "$kpid" 2>/dev/null; wait "$kpid" 2>/dev/null
# The host of kv_inject's first log line whose column $1 is $2 (5 signal, 6 role).
logged_host() { awk -F, -v c="$1" -v v="$2" 'NR > 1 && $c == v { print $4; exit }' "$OUT/kills.csv" 2>/dev/null; }
# The ranks the pid table puts on host $1, joined by $2.
ranks_on() { cat "$OUT"/pids/rank.* 2>/dev/null | awk -v h="$1" -v sep="$2" '$3 == h { printf "%s%s", s, $1; s = sep }'; }
# a vanished node's processes that the injector did not end are killed
# here, before its link is put back (the injector's own order)
if [ "$SCENARIO" = vanish ] && ! grep -q ',KILL,' "$OUT/kills.csv" 2>/dev/null; then
  stopped=$(awk -F, 'NR > 1 && $5 == "STOP" { print $3 }' "$OUT/kills.csv" 2>/dev/null)
  [ -z "$stopped" ] || kill -KILL $stopped 2>/dev/null
fi
LINKFAULT=LINKDOWN; [ "$SCENARIO" = slow ] && LINKFAULT=SLOW
if grep -q ",$LINKFAULT," "$OUT/kills.csv" 2>/dev/null && ! grep -q ',LINKUP,' "$OUT/kills.csv"; then
  host=$(logged_host 5 $LINKFAULT)
  link=${KV_INJECT_LINK:-"$ROOT/scripts/vcluster link {host} {state}"}
  link=${link//\{host\}/$host}
  sh -c "${link//\{state\}/up}" >> "$OUT/inject.log" 2>&1
fi
# kv_inject's log names the node's ranks it killed (role rank)
case $SCENARIO in node|node2|cascade) VICTIMS=$(awk -F, 'NR > 1 && $6 == "rank" { printf "%s%s", s, $2; s = " " }' \
  "$OUT/kills.csv" 2>/dev/null) ;; esac
# a node loss that killed no rank is no test of one (inject.log says why),
# nor a stop that stopped none, nor a cut that cut nothing
NOKILL=; case $SCENARIO in node|node2|cascade) [ -z "$VICTIMS" ] && NOKILL=1 ;; esac
# a lost daemon: its node's ranks are reported failed though they live; none
# may answer what its client asked once the others serve again (check.py --evicted)
EVICTED=
if [ "$SCENARIO" = daemon ]; then
  grep -q ',daemon,' "$OUT/kills.csv" 2>/dev/null || NOKILL=1
  EVICTED=$(ranks_on "$(logged_host 6 daemon)" ,)
fi
case $SCENARIO in stop|node-stop)
  STOPPED=$(awk -F, 'NR > 1 && $5 == "STOP" && $6 == "rank" { printf "%s%s", s, $2; s = ";" }' "$OUT/kills.csv" 2>/dev/null)
  grep -q ',CONT,' "$OUT/kills.csv" 2>/dev/null || NOKILL=1 ;;
esac
case $SCENARIO in partition|cut|vanish|slow)  # the ranks of the host cut off or slowed (the pid table's)
  cut_ranks=$(ranks_on "$(logged_host 5 $LINKFAULT)" ";")
  grep -q ',LINKUP,' "$OUT/kills.csv" 2>/dev/null && [ -n "$cut_ranks" ] || NOKILL=1
  case $SCENARIO in partition|slow) STOPPED=$cut_ranks ;; *) VICTIMS=${cut_ranks//;/ } ;; esac ;;
esac
orphans=$(env -u KVRUN_TAG grep -lzxF "KVRUN_TAG=$KVRUN_TAG" /proc/[0-9]*/environ 2>/dev/null)
for p in $orphans; do p=${p#/proc/}; p=${p%/environ}; echo "orphan: $(ps -o pid=,stat=,args= -p "$p")" >> "$OUT/orphans"; done
orphans=$(grep -c . <<<"$orphans")

python3 "$ROOT/tests/history/check.py" "$OUT" --json "$OUT/check.json" --evicted "$EVICTED" > "$OUT/check.log" 2>&1
crc=$?
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or '')" "$OUT/check.json" "$1" 2>/dev/null; }
# the most recoveries a rank ran (-1: no rank said)
REC=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('recoveries', -1))" "$OUT/check.json" 2>/dev/null || echo -1)
case $krc in
  4) outcome=aborted ;;
  3) outcome=hung ;;
  2) outcome=crashed ;;
  *) mapfile -t rank_logs < <(find "$OUT/ranks" -type f 2>/dev/null)
     if "$ROOT/scripts/crash-lines" "$OUT/kvrun.log" "${rank_logs[@]}" > /dev/null; then
       outcome=crashed
     elif [ "$crc" -ne 0 ] && grep -q 'NOT linearizable' "$OUT/check.log"; then
       if grep -q '^lost' "$OUT/check.log"; then outcome=lost; else outcome=nonlinearizable; fi
     elif [ -n "$(field divergent)" ] && [ "$(field divergent)" != 0 ]; then outcome=divergent
     elif [ -n "$(field evicted_answers)" ]; then outcome=failed  # a rank reported failed answered (0 reads empty)
     elif [ -n "$NOKILL" ]; then outcome=failed
     elif [ -n "${STOPPED:-}" ] && [ "$REC" != 0 ]; then outcome=failed  # taken for dead (-1: unknown)
     elif [ "$krc" -ne 0 ]; then outcome=failed
     elif [ "$crc" -ne 0 ]; then outcome=failed
     else outcome=pass; fi ;;
esac
ops=$(field operations)
# Detection: from the first fault (the killer's first line, or kv_inject's
# first event) to the moment the last survivor noticed it (the client's "D"
# lines); NA without either.  Wall clocks: the test cluster's hosts share
# the machine's.
fault_ns=
if [ -s "$OUT/kills" ]; then fault_ns=$(awk 'NR == 1 { printf "%.0f", $2 * 1e9 }' "$OUT/kills")
elif [ -s "$OUT/kills.csv" ]; then
  fault_ns=$(awk -F, 'NR > 1 && (m == "" || $7 < m) { m = $7 } END { print m }' "$OUT/kills.csv")
fi
noticed_ns=$(field noticed_last_ns)
DETECT=NA
[ -n "$fault_ns" ] && [ -n "$noticed_ns" ] &&
  DETECT=$(awk -v a="$fault_ns" -v b="$noticed_ns" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
line="outcome=$outcome variant=$VARIANT backend=$BACKEND scenario=$SCENARIO r=$R ranks=$NP seed=$SEED victims=${VICTIMS// /;}${POINT:+;$POINT_RANK@$POINT} gap_ms=$GAP${STOPPED:+ stopped=$STOPPED recoveries=$REC}${EVICTED:+ evicted=${EVICTED//,/;} evicted_answers=$(field evicted_answers)} detect_ms=$DETECT ops=${ops:-0} orphans=$orphans kvrun=\"$(tr -d '\000' < "$OUT/kvrun.log" | tail -1)\""
echo "$line" > "$OUT/result.txt"
echo "$line"
[ "$outcome" = pass ] && [ "$orphans" -eq 0 ]
