#!/usr/bin/env bash
# redis_harness.sh -- a throwaway Redis on loopback for one command.
#
#   experiments/bench/redis_harness.sh [--sentinels N] [--down-after-ms MS] [--keep DIR] -- COMMAND [ARGS]
#
# Starts a primary redis-server and one replica (replicaof), and with
# --sentinels N (3 for failover runs) N redis-sentinel processes monitoring
# the primary as "kvstore" with quorum min(2, N), down-after-milliseconds MS
# (default 1000) and a short failover-timeout; waits until the replica is in
# sync and every sentinel knows the replica and the other sentinels (else a
# kill could find no one to promote or no majority to elect a leader); then
# runs COMMAND with, in its environment:
#   REDIS_HOST (127.0.0.1), REDIS_PORT (primary), REDIS_SOCKET (the
#   primary's Unix socket, the same server), REDIS_REPLICA_PORT,
#   REDIS_SENTINEL_PORTS (comma-separated, "" without sentinels),
#   REDIS_MASTER_NAME, REDIS_PRIMARY_PID, REDIS_REPLICA_PID,
#   REDIS_PIDS (every process started here), REDIS_DIR (their files).
# Exits with COMMAND's status (1 when Redis did not come up).
#
# Why this shape: nothing may outlive a benchmark on a shared machine and no
# run may see another's data, so every run gets its own servers on ports
# picked free at start, data and logs in a temporary directory, no
# persistence (save "", appendonly no: a restarted or promoted server must
# not reload an old file), and an EXIT trap that stops every process it
# started, by pid (then their children: a full sync forks), whether
# COMMAND passed, failed or the harness was interrupted.  --keep DIR copies
# the servers' logs there before the directory is removed.
set -uo pipefail
SENTINELS=0; DOWN_MS=1000; KEEP=; NAME=kvstore
usage() { echo "usage: redis_harness.sh [--sentinels N] [--down-after-ms MS] [--keep DIR] -- COMMAND [ARGS]" >&2; exit 64; }
while [ $# -gt 0 ]; do
  case $1 in
    --sentinels) SENTINELS=$2; shift 2 ;;
    --down-after-ms) DOWN_MS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -ge 1 ] || usage
[[ $SENTINELS =~ ^[0-9]$ && $DOWN_MS =~ ^[0-9]+$ ]] || usage
for p in redis-server redis-cli; do
  command -v $p >/dev/null || { echo "redis_harness: $p not found (apt-get install redis-server; make deps)" >&2; exit 1; }
done
[ "$SENTINELS" = 0 ] || command -v redis-sentinel >/dev/null || {
  echo "redis_harness: redis-sentinel not found (apt-get install redis-sentinel)" >&2; exit 1; }

DIR=$(mktemp -d "${TMPDIR:-/tmp}/redis-harness.XXXXXX")
PIDS=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in "${PIDS[@]}"; do pkill -KILL -P "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp "$DIR"/*.log "$KEEP"/ 2>/dev/null; fi
  rm -rf "$DIR"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
die() { echo "redis_harness: $*" >&2; tail -n 5 "$DIR"/*.log >&2 2>/dev/null; exit 1; }

# Free loopback ports: bound together by the kernel, then released.
read -r -a PORTS < <(python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))' $((2 + SENTINELS))) || die "no free ports"
PP=${PORTS[0]} RP=${PORTS[1]} SPS=("${PORTS[@]:2}")

cli() { redis-cli -h 127.0.0.1 -p "$1" --raw "${@:2}" 2>/dev/null; }
is_up() { [ "$(cli "$1" ping)" = PONG ]; }
has() {  # port key value: INFO replication of port says key:value
  [ "$(cli "$1" info replication | tr -d '\r' | awk -F: -v k="$2" '$1 == k {print $2}')" = "$3" ]
}
wait_for() {  # seconds description command...: poll until the command succeeds
  local t=$1 what=$2; shift 2
  for _ in $(seq $((t * 20))); do "$@" && return 0; sleep 0.05; done
  die "$what not ready after ${t}s"
}

server() {  # name port [redis args]
  local name=$1 port=$2; shift 2
  mkdir -p "$DIR/$name"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$DIR/$name" \
    --logfile "$DIR/$name.log" --daemonize no --repl-diskless-sync-delay 0 "$@" &
  PIDS+=($!)
  disown $!  # a kill by the injector is expected: no "Killed" line from bash
}
server primary "$PP" --unixsocket "$DIR/primary.sock" --unixsocketperm 700
PRIMARY_PID=$!
wait_for 10 "primary on port $PP" is_up "$PP"
server replica "$RP" --replicaof 127.0.0.1 "$PP"
REPLICA_PID=$!
wait_for 20 "replica on port $RP" has "$RP" master_link_status up
wait_for 10 "replica registered at the primary" has "$PP" connected_slaves 1

QUORUM=$(( SENTINELS < 2 ? SENTINELS : 2 ))
for i in $(seq 0 $((SENTINELS - 1))); do
  sp=${SPS[$i]} conf=$DIR/sentinel-$i.conf
  cat > "$conf" <<EOF
port $sp
bind 127.0.0.1
daemonize no
dir $DIR
logfile $DIR/sentinel-$i.log
sentinel monitor $NAME 127.0.0.1 $PP $QUORUM
sentinel down-after-milliseconds $NAME $DOWN_MS
sentinel failover-timeout $NAME $((DOWN_MS * 3))
sentinel parallel-syncs $NAME 1
EOF
  redis-sentinel "$conf" &
  PIDS+=($!)
  disown $!
done
sentinel_ready() {  # every sentinel knows the replica and the others
  local sp
  for sp in "${SPS[@]}"; do
    local m; m=$(cli "$sp" sentinel master "$NAME" | tr -d '\r' | paste -sd' ')
    [[ " $m " == *" num-slaves 1 "* && " $m " == *" num-other-sentinels $((SENTINELS - 1)) "* ]] || return 1
  done
}
[ "$SENTINELS" = 0 ] || wait_for 30 "$SENTINELS sentinels" sentinel_ready

export REDIS_HOST=127.0.0.1 REDIS_PORT=$PP REDIS_SOCKET=$DIR/primary.sock REDIS_REPLICA_PORT=$RP REDIS_MASTER_NAME=$NAME \
  REDIS_PRIMARY_PID=$PRIMARY_PID REDIS_REPLICA_PID=$REPLICA_PID REDIS_DIR=$DIR
REDIS_SENTINEL_PORTS=$(IFS=,; echo "${SPS[*]}") REDIS_PIDS="${PIDS[*]}"
export REDIS_SENTINEL_PORTS REDIS_PIDS
"$@"
exit $?
