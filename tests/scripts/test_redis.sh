#!/usr/bin/env bash
# test_redis.sh -- the driver's Redis backend against real servers.
#
# Every Redis here is started by experiments/bench/redis_harness.sh on free
# loopback ports.  Pass rules:
#  1. YCSB A on 2 ranks against a primary and a replica (WAIT 1): the run
#     passes, every value read was checked and none failed (verify_errors 0,
#     reads > 0), the operations add up in meta.json and the timeline,
#     meta.json says variant redis, and the lost-write check re-read at
#     least every loaded key and lost none;
#  2. the lost-write check is not vacuous: a FLUSHALL on the primary during
#     the run is reported as acknowledged writes lost, and the run fails;
#  3. failover: kv_inject SIGKILLs the primary 1 s into the run, Sentinel
#     (3 of them) promotes the replica, the clients follow it: the run
#     passes with no acknowledged write lost, the kill log names the
#     primary's pid and failover.csv has a kill-to-first-write time;
#  4. a port nobody listens on: a message naming the address, exit non-zero;
#     a bad redis.* setting and driver.failures with the Redis backend are
#     refused with their messages;
#  5. the harness passes its command's exit status on (3 here) and, after
#     every case, no process it started (redis-server, redis-sentinel) is
#     left: every recorded pid is gone and no process serves a recorded port;
#  6. the driver over the primary's Unix socket passes; a socket path with a
#     space is refused;
#  7. bench_redis at a tiny size has a passing store and Redis run over each
#     transport (shared memory, TCP), each Redis run with both ceilings,
#     and report.py's table shows both transports.
# Exit 0 pass, 1 fail, 77 skip when redis-server is not installed.
set -uo pipefail
export LOAD_WAIT=0 BUSY_SAMPLE=0.1   # a test times nothing: no wait for idle cores (cells.sh)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v redis-server >/dev/null || { echo "skip: redis-server not installed (make deps)"; exit 77; }
export RUN=$ROOT/scripts/kvrun DRV=${KV_BUILD:-$ROOT/build}/bin/kv_driver INJ=${KV_BUILD:-$ROOT/build}/bin/kv_inject
HARNESS=$ROOT/experiments/bench/redis_harness.sh
for b in "$DRV" "$INJ"; do [ -x "$b" ] || { echo "FAIL: $b not built (make)"; exit 1; }; done
export T; T=$(mktemp -d "${TMPDIR:-/tmp}/test_redis.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
COMMON="workload.workload=a workload.records=2000 workload.value_bytes=64 driver.verify=1 driver.progress=0"
# Run first inside each harness: what it started, for rule 5.
REC='echo "$REDIS_PIDS" >> "$T/pids"; echo "$REDIS_PORT $REDIS_REPLICA_PORT ${REDIS_SENTINEL_PORTS//,/ }" >> "$T/ports";'
json() { sed -n "s/.*\"$2\": \"*\([^\",]*\)\"*,*$/\1/p" "$1/meta.json"; }
fo() { awk -F, -v c="$2" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == c) k = i} NR == 2 {print $k}' "$1/failover.csv"; }

# 1. correctness
# shellcheck disable=SC2016  # expanded inside the harness
"$HARNESS" -- bash -c "$REC"'"$RUN" -n 2 --timeout 90 -- "$DRV" driver.backend=redis redis.port=$REDIS_PORT \
  redis.wait_replicas=1 workload.operations=4000 '"$COMMON"' driver.out="$T/ok"' > "$T/ok.log" 2>&1 \
  || { tail -5 "$T/ok.log"; fail "the Redis run did not pass"; }
grep -q "kvrun: FINISHED PASS" "$T/ok.log" || fail "no PASS verdict: $(tail -1 "$T/ok.log")"
[ "$(json "$T/ok" variant)" = redis ] || fail "meta.json variant is '$(json "$T/ok" variant)'"
[ "$(json "$T/ok" verify_errors)" = 0 ] || fail "$(json "$T/ok" verify_errors) values failed their check"
[ "$(json "$T/ok" operations_done)" = 4000 ] || fail "operations_done $(json "$T/ok" operations_done), want 4000"
tl=$(awk -F, 'NR > 1 {s += $4} END {print s}' "$T/ok/timeline.csv")
[ "$tl" = 4000 ] || fail "timeline has $tl operations, want 4000"
reads=$(awk -F, '$1 == "read" && $2 == "all" {print $3}' "$T/ok/latency.csv")
[ "${reads:-0}" -gt 0 ] || fail "no reads were checked"
[ "$(fo "$T/ok" acked_lost)" = 0 ] || fail "acked_lost $(fo "$T/ok" acked_lost) in a failure-free run"
[ "$(fo "$T/ok" keys_checked)" -ge 2000 ] || fail "only $(fo "$T/ok" keys_checked) keys re-read"
echo "ok: YCSB A against Redis, 4000 operations, $reads reads verified, every key re-read, none lost"

# 2. an injected loss is found
# shellcheck disable=SC2016
# (after the load: once the primary holds every record; the pid table can
# appear before the load ends, and a flush then left nothing to lose.  The
# run reads only (YCSB C): with updates, a flush early in a 3-s run was
# repaired by rewrites of nearly every key, and the check rightly found
# almost nothing lost.)
"$HARNESS" -- bash -c "$REC"'(for _ in $(seq 600); do
    [ "$(redis-cli -p $REDIS_PORT dbsize 2>/dev/null || echo 0)" -ge 2000 ] && break; sleep 0.1; done
  sleep 0.3; redis-cli -p $REDIS_PORT flushall > /dev/null) &
  "$RUN" -n 2 --timeout 90 -- "$DRV" driver.backend=redis redis.port=$REDIS_PORT workload.operations=0 \
  workload.duration_s=3 '"$COMMON"' workload.workload=c driver.out="$T/flushed"; st=$?; wait; exit $st' \
  > "$T/flushed.log" 2>&1
st=$?
lost=$(fo "$T/flushed" acked_lost)
[ "${lost:-0}" != NA ] && [ "${lost:-0}" -gt 0 ] || fail "FLUSHALL during the run: acked_lost '${lost}', want > 0"
[ "$st" -ne 0 ] || fail "a run that lost acknowledged writes passed"
grep -q "acknowledged write lost: key user" "$T/flushed.log" || fail "no lost key named in the output"
echo "ok: FLUSHALL during the run: $lost keys reported lost, the run failed"

# 3. failover through Sentinel, the primary killed by kv_inject
# shellcheck disable=SC2016
"$HARNESS" --sentinels 3 -- bash -c "$REC"'"$INJ" --pids "$T/fo/pids" --nranks 2 --max-simultaneous 1 \
  --schedule "target=ranks:1; when=time:1" --log "$T/fo/kills.csv" --schedule-out "$T/fo-schedule.csv" \
  --timeout 60 > "$T/inject.log" 2>&1 & inj=$!
  echo "$REDIS_PRIMARY_PID" > "$T/primary.pid"
  "$RUN" -n 2 --timeout 90 -- "$DRV" driver.backend=redis redis.port=$REDIS_PORT \
    redis.sentinel_port=$REDIS_SENTINEL_PORTS redis.master_name=$REDIS_MASTER_NAME workload.operations=0 \
    workload.duration_s=4 '"$COMMON"' driver.out="$T/fo"; st=$?; kill $inj 2>/dev/null; wait $inj; exit $st' \
  > "$T/fo.log" 2>&1 || { tail -5 "$T/fo.log"; cat "$T/inject.log"; fail "the failover run did not pass"; }
awk -F, -v p="$(cat "$T/primary.pid")" 'NR == 2 && $2 == 1 && $3 == p && $5 == "KILL" {ok = 1} END {exit !ok}' \
  "$T/fo/kills.csv" || fail "the kill log does not name the primary: $(cat "$T/fo/kills.csv")"
[ "$(fo "$T/fo" acked_lost)" = 0 ] || fail "failover lost $(fo "$T/fo" acked_lost) acknowledged writes"
ms=$(fo "$T/fo" failover_first_ms)
[[ $ms =~ ^[0-9]+\.[0-9]$ ]] || fail "no kill-to-first-write time: '$ms'"
[ "$(json "$T/fo" verify_errors)" = 0 ] || fail "verify errors after the failover"
echo "ok: primary killed, Sentinel failover, first write again after $ms ms, nothing lost"

# 4. errors
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$("$RUN" -n 2 --timeout 60 --no-verdict -- "$DRV" driver.backend=redis redis.port="$port" $COMMON \
  workload.operations=100 driver.out="$T/noport" 2>&1); st=$?
grep -q "cannot connect to Redis at 127.0.0.1:$port" <<<"$out" || fail "no clear message for a closed port: $out"
[ "$st" -ne 0 ] || fail "exit 0 with nothing listening on port $port"
[ "$(grep -c "cannot connect" <<<"$out")" = 1 ] || fail "the connection error was repeated: $out"
bad() {  # expected-message args...
  local want=$1; shift
  out=$("$RUN" -n 2 --timeout 60 --no-verdict -- "$DRV" "$@" 2>&1); st=$?
  grep -q -- "$want" <<<"$out" || fail "message '$want' missing for: $* ($out)"
  [ "$st" -ne 0 ] || fail "exit 0 for: $*"
}
bad "port: 'abc' is not a whole number" driver.backend=redis redis.port=abc
bad "unknown redis setting 'colour'" redis.colour=red
bad "backend: 'mongo' is not store or redis" driver.backend=mongo
bad "kill the Redis primary with kv_inject" driver.backend=redis "driver.failures=target=random:1; when=time:1"
echo "ok: closed port and bad settings refused with their messages"

# 5. the harness's exit status and cleanup
# shellcheck disable=SC2016
"$HARNESS" --sentinels 1 -- bash -c "$REC"'exit 3' > "$T/exit.log" 2>&1
st=$?
[ "$st" = 3 ] || fail "the harness exited $st for a command that exited 3"
sleep 0.2
n=0
for p in $(cat "$T/pids"); do
  n=$((n + 1))
  if kill -0 "$p" 2>/dev/null && grep -q redis "/proc/$p/cmdline" 2>/dev/null; then fail "pid $p left running"; fi
done
for port in $(cat "$T/ports"); do
  if pgrep -f "redis-(server|sentinel) 127.0.0.1:$port( |$)" > /dev/null; then fail "a Redis process on port $port is left"; fi
done
[ "$n" -ge 12 ] || fail "only $n processes recorded (want 2+2+5+3)"
echo "ok: $n Redis processes started, none left running"

# 6. the Unix socket: the driver over the primary's socket passes; a path
#    with a space is refused
"$HARNESS" -- bash -c '"$RUN" -n 2 --timeout 60 -- "$DRV" driver.backend=redis redis.host="$REDIS_SOCKET" \
  redis.wait_replicas=1 workload.workload=a workload.duration_s=1 workload.records=2000 workload.operations=0 \
  driver.out="$T/sock"' > "$T/sock.log" 2>&1 || fail "the driver over the Unix socket: $(tail -2 "$T/sock.log")"
out=$("$DRV" driver.backend=redis "redis.host=/a b" 2>&1) && fail "a socket path with a space was taken"
grep -q "is not a Unix socket path" <<<"$out" || fail "a bad socket path: $out"
echo "ok: the driver over a Unix socket; a bad path refused"

# 7. bench_redis at a tiny size: the store and Redis over each transport,
#    each with its ceilings, side by side in the table
BENCH_OUT=$T/bench REDIS_REPS=1 REDIS_RANKS=2 REDIS_WORKLOADS=c REDIS_RUN_S=1 REDIS_FAILOVER_REPS=0 KV_ALLOW_LOAD=1 \
  bash "$ROOT/experiments/bench/bench_redis.sh" > "$T/bench.log" 2>&1 || fail "bench_redis: $(tail -3 "$T/bench.log")"
# col: the columns by name (NR == 1 names them)
col='NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }'
for sy in store redis; do for t in shm tcp; do
  awk -F, -v s="$sy" -v t="$t" "$col"' $c["system"] == s && $c["kind"] == "failure-free" && $c["status"] == "pass" &&
    $c["throughput_ops_per_s"] > 0 && $c["transport"] == t && $c["load_after"] != "" {f = 1} END {exit !f}' \
    "$T/bench/redis.csv" || fail "no passing $sy run over $t: $(cat "$T/bench/redis.csv")"
done; done
awk -F, "$col"' $c["system"] == "redis" && !($c["ceiling_ops_per_s"] > 0 && $c["pipelined_ops_per_s"] > 0) {bad = 1}
  END {exit bad}' "$T/bench/redis.csv" || fail "a Redis row without its ceilings: $(cat "$T/bench/redis.csv")"
out=$(python3 "$ROOT/experiments/bench/report.py" print redis --file "$T/bench/redis.csv")
grep -q '^| shm | C | 2 | .* | [0-9.]* | [0-9.]* | 0.[0-9]* / ' <<<"$out" && grep -q '^| tcp | C | 2 |' <<<"$out" ||
  fail "the redis table: $out"
echo "ok: bench_redis over shared memory and TCP, with the ceilings"
echo "PASS"
