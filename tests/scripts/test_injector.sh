#!/usr/bin/env bash
# test_injector.sh -- the external injector (kv_inject) against dummy ranks.
#
# Dummy "ranks" are `sleep` processes whose pid table this script writes in
# the format kvi_publish_pid uses ("rank pid host" in DIR/rank.N, renamed
# into place).  Pass rules: with `target=ranks:1; when=time:0.5` exactly
# rank 1's pid dies, by SIGKILL, the others live, the kill log holds rank,
# pid, KILL and a timestamp within 0.3 s of the scheduled moment, and the
# schedule CSV was written; with signal=STOP the victim is left stopped
# (state T), not dead; a straggler (signal=STOP with for=0.5) is stopped
# in the middle of its stop, runs again after it, and the log holds its
# STOP line at the moment and a CONT line 0.5 s later; two simultaneous kills with --max-simultaneous 1 are
# refused (non-zero exit, message, nobody killed) and run with force=1;
# when=ops:N is refused with a pointer to the in-process form; a node loss
# on this host (ranks 1 and 2 here with a daemon and its parent, rank 0 on
# another host) kills the daemon-parent, the daemon, rank 2 and rank 1, in
# that order in the kill log with their roles, each by SIGKILL, and spares
# rank 0; a partition (signal=LINK; for=0.4) runs KV_INJECT_LINK with the
# host and "down" at its moment, "up" 0.4 s later, logs both, touches no
# process, and is refused without KV_INJECT_LINK, as a slow link
# (signal=SLOW) is, whose command gets its settings; a vanish (signal=VANISH;
# for=0.4) stops a node's processes and cuts its link, then kills them
# and puts the link back; --help works.
# Every process started here is killed on exit (trap).  Exit 0 = pass.
# The binary: $KV_INJECT_BIN, default $ROOT/build/bin/kv_inject (make).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KV_INJECT_BIN:-${KV_BUILD:-$ROOT/build}/bin/kv_inject}
TOL=0.3
T=$(mktemp -d "${TMPDIR:-/tmp}/test_injector.XXXXXX")
STARTED=()
FAILS=0

cleanup() {
  exec 2>/dev/null   # no "Killed" job notices for our own sleepers
  for p in "${STARTED[@]}"; do
    kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null
  done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok:   $*"; }
check() {  # check OK-MESSAGE FAIL-MESSAGE COMMAND...
  local good=$1 bad=$2
  shift 2
  if "$@"; then ok "$good"; else fail "$bad"; fi
}

# state PID: first letter of ps's STAT (S sleeping, T stopped, Z dead), "" if gone.
state() { ps -o stat= -p "$1" 2>/dev/null | cut -c1; }

# start_ranks CASE N: N sleepers as ranks 0..N-1 in R[], pid table in $T/CASE/pids.
start_ranks() {
  local dir=$T/$1/pids r
  mkdir -p "$dir"
  R=()
  for ((r = 0; r < $2; r++)); do
    sleep 60 &
    R[r]=$!
    STARTED+=("$!")
    printf '%d %d %s\n' "$r" "${R[r]}" "$(hostname)" >"$dir/.rank.$r.tmp"
    mv "$dir/.rank.$r.tmp" "$dir/rank.$r"
  done
}

# inject CASE SPEC MAXSIM: run kv_inject on CASE's table; sets RC, OUT, START.
inject() {
  START=$(date +%s.%N)
  OUT=$(timeout 30 "$BIN" --pids "$T/$1/pids" --nranks "${#R[@]}" --schedule "$2" \
    --max-simultaneous "$3" --log "$T/$1/kill.log" --schedule-out "$T/$1/schedule.csv" \
    --start-time "$START" --timeout 5 2>&1)
  RC=$?
}

# died_by PID SIGNUM: PID is dead (zombie child) and wait says it was that
# signal; else WHY says what.  (Not in $(...): only this shell can wait.)
died_by() {
  local st rc
  st=$(state "$1")
  [ "$st" = Z ] || [ -z "$st" ] || { WHY="pid $1 is alive (state $st)"; return 1; }
  wait "$1" 2>/dev/null
  rc=$?
  [ "$rc" -eq $((128 + $2)) ] || { WHY="pid $1 ended with status $rc, not $((128 + $2))"; return 1; }
}

# near A B: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$TOL" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# check_log CASE RANK PID SIGNAL AT: the log's last line is that kill, near START+AT.
check_log() {
  local log=$T/$1/kill.log line
  [ "$(head -1 "$log" 2>/dev/null)" = "kill,target_rank,pid,host,signal,role,time_ns" ] ||
    { fail "$1: kill log header missing"; return; }
  line=$(tail -1 "$log")
  IFS=, read -r _ rank pid host sig role t <<<"$line"
  t=$(awk -v n="$t" 'BEGIN { printf "%.6f", n / 1e9 }')  # time_ns to seconds
  if [ "$rank" != "$2" ] || [ "$pid" != "$3" ] || [ "$sig" != "$4" ] || [ "$host" != "$(hostname)" ] ||
     [ "$role" != rank ]; then
    fail "$1: kill log line '$line', wanted rank $2 pid $3 signal $4"
  elif ! near "$t" "$(awk -v s="$START" -v a="$5" 'BEGIN { printf "%.6f", s + a }')"; then
    fail "$1: kill logged at $t, scheduled $START + $5 s (tolerance $TOL s)"
  else
    ok "$1: kill log: rank $2, pid $3, $4, at +$(awk -v t="$t" -v s="$START" 'BEGIN { printf "%.3f", t - s }') s"
  fi
}

[ -x "$BIN" ] || { echo "FAIL: no kv_inject at $BIN (run make, or set KV_INJECT_BIN)"; exit 1; }

# 1. SIGKILL of rank 1 at +0.5 s.
start_ranks kill 3
inject kill 'target=ranks:1; when=time:0.5' 1
if [ "$RC" -ne 0 ]; then fail "kill: kv_inject exit $RC: $OUT"
else
  if died_by "${R[1]}" 9; then ok "kill: rank 1 (pid ${R[1]}) died by SIGKILL"
  else fail "kill: $WHY"; fi
  for r in 0 2; do
    check "kill: rank $r still alive" "kill: rank $r was hit" [ "$(state "${R[r]}")" = S ]
  done
  check_log kill 1 "${R[1]}" KILL 0.5
  check "kill: schedule CSV written" "kill: schedule CSV: $(cat "$T/kill/schedule.csv" 2>/dev/null)" \
    grep -q "^0,1,${R[1]},$(hostname),KILL,time,,0.500000,rank,$" "$T/kill/schedule.csv"
fi

# 2. SIGSTOP leaves the victim stopped, not dead.
start_ranks stop 3
inject stop 'signal=STOP; target=ranks:2; when=time:0.3' 1
if [ "$RC" -ne 0 ]; then fail "stop: kv_inject exit $RC: $OUT"
else
  st=$(state "${R[2]}")
  check "stop: rank 2 is stopped (state T)" "stop: rank 2 in state '$st', not T" [ "$st" = T ]
  check_log stop 2 "${R[2]}" STOP 0.3
fi

# 2b. A straggler: stopped at +0.3 s, continued at +0.8 s.
start_ranks straggler 3
START=$(date +%s.%N)
timeout 30 "$BIN" --pids "$T/straggler/pids" --nranks 3 --max-simultaneous 1 \
  --schedule 'signal=STOP; target=ranks:1; when=time:0.3; for=0.5' --log "$T/straggler/kill.log" \
  --start-time "$START" --timeout 5 >"$T/straggler/out" 2>&1 &
inj=$!
sleep "$(awk -v s="$START" -v now="$(date +%s.%N)" 'BEGIN { d = s + 0.55 - now; printf "%.3f", (d > 0 ? d : 0) }')"
mid=$(state "${R[1]}")
wait "$inj"; RC=$?
after=$(state "${R[1]}")
if [ "$RC" -ne 0 ]; then fail "straggler: kv_inject exit $RC: $(cat "$T/straggler/out")"
else
  check "straggler: rank 1 stopped during its stop" "straggler: rank 1 in state '$mid' at +0.55 s" [ "$mid" = T ]
  check "straggler: rank 1 runs again after it" "straggler: rank 1 in state '$after' after" [ "$after" = S ]
  check "straggler: the others never stopped" "straggler: rank 0 or 2 hit" \
    [ "$(state "${R[0]}")$(state "${R[2]}")" = SS ]
  check_log straggler 1 "${R[1]}" CONT 0.8
  check "straggler: its STOP logged before the CONT" "straggler: log $(cat "$T/straggler/kill.log")" \
    [ "$(cut -d, -f2,5 "$T/straggler/kill.log" | tail -n +2 | tr '\n' ' ')" = "1,STOP 1,CONT " ]
fi

# 3. Two at once with --max-simultaneous 1: refused, then forced.
start_ranks limit 4
inject limit 'target=ranks:1,2; when=time:0.2' 1
if [ "$RC" -eq 0 ]; then fail "limit: 2 simultaneous kills with max 1 accepted"
elif ! grep -q "force=1" <<<"$OUT"; then fail "limit: refused without a useful message: $OUT"
elif [ "$(state "${R[1]}")$(state "${R[2]}")" != SS ]; then fail "limit: refused, but killed"
else ok "limit: refused (exit $RC): $OUT"; fi
inject limit 'target=ranks:1,2; when=time:0.2; force=1' 1
if [ "$RC" -ne 0 ]; then fail "limit: force=1 not accepted (exit $RC): $OUT"
else
  for r in 1 2; do
    if died_by "${R[r]}" 9; then ok "limit: forced, rank $r died"; else fail "limit: $WHY"; fi
  done
  n=$(grep -c ',KILL,' "$T/limit/kill.log" 2>/dev/null)
  check "limit: two kills logged" "limit: kill log: $(cat "$T/limit/kill.log" 2>/dev/null)" \
    [ "${n:-0}" -eq 2 ]
fi

# 4. Operation counts are only visible in-process.
inject limit 'target=ranks:3; when=ops:100' 1
if [ "$RC" -ne 0 ] && grep -q "in-process" <<<"$OUT"; then ok "ops: refused, pointing to the in-process form"
else fail "ops: exit $RC: $OUT"; fi

# 6. A node loss on this host: its daemon-parent, daemon and ranks, by kill(2).
# node_table CASE: rank 0 elsewhere (the head node); 1, 2 here; 3, 4 their
# daemon and daemon-parent; dir: its pid table.
node_table() {
  start_ranks "$1" 5
  dir=$T/$1/pids
  printf '0 %d head-elsewhere 0 0\n' "${R[0]}" >"$dir/rank.0"
  for r in 1 2; do printf '%d %d %s %d %d\n' "$r" "${R[r]}" "$(hostname)" "${R[3]}" "${R[4]}" >"$dir/rank.$r"; done
  rm -f "$dir/rank.3" "$dir/rank.4"
}
# node_lost CASE SPEC: kv_inject SPEC over CASE's node table, its clock
# from START; the node's four processes must die by SIGKILL and rank 0
# live on; 1 when kv_inject failed.
node_lost() {
  START=$(date +%s.%N)
  OUT=$(timeout 30 "$BIN" --pids "$dir" --nranks 3 --schedule "$2" \
    --max-simultaneous 1 --log "$T/$1/kill.log" --start-time "$START" --timeout 5 2>&1 >/dev/null)
  RC=$?
  [ "$RC" -eq 0 ] || { fail "$1: kv_inject exit $RC: $OUT"; return 1; }
  for r in 4 3 2 1; do
    if died_by "${R[r]}" 9; then ok "$1: pid ${R[r]} died by SIGKILL"; else fail "$1: $WHY"; fi
  done
  check "$1: rank 0 (another node) still alive" "$1: rank 0 was hit" [ "$(state "${R[0]}")" = S ]
}
node_table node
if node_lost node "target=node:$(hostname); when=time:0.2"; then
  got=$(awk -F, 'NR > 1 {printf "%s:%s:%s ", $6, $2, $3}' "$T/node/kill.log")
  want="daemon-parent:-1:${R[4]} daemon:-1:${R[3]} rank:2:${R[2]} rank:1:${R[1]} "
  check "node: kill log by role: $got" "node: kill log '$got', wanted '$want'" [ "$got" = "$want" ]
  ok "node: $(grep -o '[0-9]* kills sent within.*' <<<"$OUT")"
fi

# 6b. A failure log replayed: a log's one failure at 0.1 s, scaled by 2,
# is the loss of the one eligible node (this host's: rank 0 is elsewhere)
# at +0.2 s, its daemon-parent, daemon and ranks killed.
node_table trace
printf '# one failure\ntime_s,node\n0.1,cn0042\n' > "$T/trace/log.csv"
if node_lost trace "target=node:random; when=trace:$T/trace/log.csv; scale=2"; then
  t=$(awk -F, 'NR == 2 {printf "%.6f", $7 / 1e9}' "$T/trace/kill.log")
  check "trace: the node lost at +0.2 s" "trace: lost at $t, wanted $START + 0.2" \
    near "$t" "$(awk -v s="$START" 'BEGIN { printf "%.6f", s + 0.2 }')"
fi
printf 'time_s,node\n0.5,a\n0.1,b\n' > "$T/trace/bad.csv"
OUT=$(timeout 30 "$BIN" --pids "$dir" --nranks 3 --schedule "target=node:random; when=trace:$T/trace/bad.csv" \
  --max-simultaneous 1 --log "$T/trace/kill2.log" --timeout 5 2>&1 >/dev/null)
RC=$?
if [ "$RC" -eq 2 ] && grep -q 'line 3' <<<"$OUT"; then ok "trace: a log going back in time refused, naming its line"
else fail "trace: a bad log: exit $RC: $OUT"; fi

# 7. A partition: a host's link cut at +0.2 s and put back at +0.6 s through
# KV_INJECT_LINK (here a command that records its words), no process
# touched; refused without KV_INJECT_LINK.
start_ranks link 4
dir=$T/link/pids
printf '0 %d head-elsewhere 0 0\n' "${R[0]}" >"$dir/rank.0"
for r in 1 2 3; do printf '%d %d cut-host 0 0\n' "$r" "${R[r]}" >"$dir/rank.$r"; done
START=$(date +%s.%N)
OUT=$(KV_INJECT_LINK="echo {host} {state} >> $T/link/links" timeout 30 "$BIN" --pids "$dir" --nranks 4 \
  --schedule 'signal=LINK; for=0.4; target=node:random; when=time:0.2' --max-simultaneous 1 \
  --log "$T/link/kill.log" --start-time "$START" --timeout 5 2>&1 >/dev/null)
RC=$?
if [ "$RC" -ne 0 ]; then fail "link: kv_inject exit $RC: $OUT"
else
  check "link: cut-host's link went down, then up" "link: commands run: $(cat "$T/link/links" 2>/dev/null)" \
    [ "$(tr '\n' ' ' < "$T/link/links" 2>/dev/null)" = "cut-host down cut-host up " ]
  got=$(awk -F, 'NR > 1 {printf "%s:%s:%s ", $4, $5, $6}' "$T/link/kill.log")
  check "link: log $got" "link: log '$got'" [ "$got" = "cut-host:LINKDOWN:host cut-host:LINKUP:host " ]
  t=$(awk -F, 'NR == 3 {printf "%.6f", $7 / 1e9}' "$T/link/kill.log")
  check "link: put back at +0.6 s" "link: put back at $t, wanted $START + 0.6" \
    near "$t" "$(awk -v s="$START" 'BEGIN { printf "%.6f", s + 0.6 }')"
  check "link: no process touched" "link: a rank was hit" [ "$(for r in 0 1 2 3; do state "${R[r]}"; done | tr -d '\n')" = SSSS ]
fi
OUT=$(env -u KV_INJECT_LINK timeout 30 "$BIN" --pids "$dir" --nranks 4 --max-simultaneous 1 --timeout 5 \
  --schedule 'signal=LINK; target=node:random; when=time:0.2' --log "$T/link/kill2.log" 2>&1 >/dev/null)
RC=$?
if [ "$RC" -eq 2 ] && grep -q KV_INJECT_LINK <<<"$OUT"; then ok "link: refused without KV_INJECT_LINK"
else fail "link: without KV_INJECT_LINK: exit $RC: $OUT"; fi

# 7b. A slow link: the same host's link made slow and lossy at +0.2 s and
# put back at +0.6 s, the template given the settings; refused without
# KV_INJECT_LINK.
rm -f "$T/link/links"
START=$(date +%s.%N)
OUT=$(KV_INJECT_LINK="echo {host} {state} >> $T/link/links" timeout 30 "$BIN" --pids "$dir" --nranks 4 \
  --schedule 'signal=SLOW; rate=10mbit; loss=5; for=0.4; target=node:random; when=time:0.2' \
  --max-simultaneous 1 --log "$T/link/slow.log" --start-time "$START" --timeout 5 2>&1 >/dev/null)
RC=$?
if [ "$RC" -ne 0 ]; then fail "slow: kv_inject exit $RC: $OUT"
else
  check "slow: cut-host's link slowed, then put back" "slow: commands run: $(cat "$T/link/links" 2>/dev/null)" \
    [ "$(tr '\n' ' ' < "$T/link/links" 2>/dev/null)" = "cut-host slow 10000kbit 5% cut-host up " ]
  got=$(awk -F, 'NR > 1 {printf "%s:%s:%s ", $4, $5, $6}' "$T/link/slow.log")
  check "slow: log $got" "slow: log '$got'" [ "$got" = "cut-host:SLOW:host cut-host:LINKUP:host " ]
  check "slow: no process touched" "slow: a rank was hit" [ "$(for r in 0 1 2 3; do state "${R[r]}"; done | tr -d '\n')" = SSSS ]
fi
OUT=$(env -u KV_INJECT_LINK timeout 30 "$BIN" --pids "$dir" --nranks 4 --max-simultaneous 1 --timeout 5 \
  --schedule 'signal=SLOW; loss=5; target=node:random; when=time:0.2' --log "$T/link/slow2.log" 2>&1 >/dev/null)
RC=$?
if [ "$RC" -eq 2 ] && grep -q KV_INJECT_LINK <<<"$OUT"; then ok "slow: refused without KV_INJECT_LINK"
else fail "slow: without KV_INJECT_LINK: exit $RC: $OUT"; fi

# 8. A vanish: at +0.2 s the node's processes stopped and its link cut (in
# that order: STOP lines, then LINKDOWN); at +0.6 s the processes killed
# (KILL) and the link put back (LINKUP); the other node untouched.
start_ranks vanish 3
dir=$T/vanish/pids
printf '0 %d head-elsewhere 0 0\n' "${R[0]}" >"$dir/rank.0"
for r in 1 2; do printf '%d %d %s 0 0\n' "$r" "${R[r]}" "$(hostname)" >"$dir/rank.$r"; done
START=$(date +%s.%N)
KV_INJECT_LINK="echo {host} {state} >> $T/vanish/links" timeout 30 "$BIN" --pids "$dir" --nranks 3 \
  --schedule 'signal=VANISH; for=0.4; target=node:random; when=time:0.2' --max-simultaneous 1 \
  --log "$T/vanish/kill.log" --start-time "$START" --timeout 5 >/dev/null 2>"$T/vanish/err" &
inj=$!
sleep 0.4
mid="$(state "${R[1]}")$(state "${R[2]}")"
wait "$inj"
RC=$?
if [ "$RC" -ne 0 ]; then fail "vanish: kv_inject exit $RC: $(cat "$T/vanish/err")"
else
  check "vanish: the node's ranks stopped at +0.4 s" "vanish: their states at +0.4 s: '$mid'" [ "$mid" = TT ]
  for r in 2 1; do
    if died_by "${R[r]}" 9; then ok "vanish: pid ${R[r]} died by SIGKILL"; else fail "vanish: $WHY"; fi
  done
  check "vanish: the other node untouched" "vanish: rank 0 was hit" [ "$(state "${R[0]}")" = S ]
  h=$(hostname)
  check "vanish: the link went down, then up" "vanish: commands run: $(cat "$T/vanish/links" 2>/dev/null)" \
    [ "$(tr '\n' ' ' < "$T/vanish/links" 2>/dev/null)" = "$h down $h up " ]
  got=$(awk -F, 'NR > 1 {printf "%s:%s ", $2, $5}' "$T/vanish/kill.log")
  want="2:STOP 1:STOP -1:LINKDOWN 2:KILL 1:KILL -1:LINKUP "
  check "vanish: log $got" "vanish: log '$got', wanted '$want'" [ "$got" = "$want" ]
fi

# 5. --help
check "--help prints usage" "--help: no usage" grep -q "^usage: kv_inject" <<<"$("$BIN" --help)"

if [ "$FAILS" -gt 0 ]; then echo "test_injector: $FAILS check(s) failed"; exit 1; fi
echo "test_injector: all checks passed"
