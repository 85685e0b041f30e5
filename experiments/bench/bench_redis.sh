#!/usr/bin/env bash
# bench_redis.sh -- the store against Redis; `BENCH=redis make bench`
# (experiments/bench/bench.sh) or directly.  Writes results/bench/redis.csv, prints
# a summary table and draws results/bench/figures/redis.png.
#
# 1. Failure-free, side by side over the same transport: YCSB A, B, C at
#    2 and 4 ranks, the store (variant recreate-copy, r = 2) and Redis (a
#    primary and one replica, WAIT 1 after every write: the same 2
#    copies), the same driver, workload, keys and values; transport shm
#    (the store's osc/sm windows, Redis's Unix socket) and tcp (the store's
#    osc/rdma windows over btl/tcp, Redis's loopback port).  Each Redis run
#    gets fresh servers (experiments/bench/redis_harness.sh) and, against
#    the same servers over the same transport right after the driver,
#    redis-benchmark with one client per rank in as many threads (GET and
#    SET of the same value size over the same keys), one request at a time
#    (the ceiling of a client like the driver's) and pipelined 16 deep (the
#    server's own).  REDIS_REPS (5) repetitions, every cell once per
#    repetition in an order drawn from it (cells.sh), so noise falls on all.
#    The machine must be idle: with more than KV_MAX_LOAD cores (half of
#    them) busy over 3 s the benchmark refuses to start, unless
#    KV_ALLOW_LOAD=1; a run waits for the cores to be idle (cells.sh), and
#    every row records the load before and after its run.  The file resumes where it stopped (MINUTES=N: a chunk).
# 2. Failover: REDIS_FAILOVER_REPS runs of YCSB A on REDIS_FAILOVER_RANKS
#    ranks against Redis with 3 sentinels (quorum 2, down-after 1000 ms);
#    kv_inject kills the primary (SIGKILL, by pid from the table the driver
#    publishes when its run phase starts) REDIS_KILL_AT seconds into the run.
#
# redis.csv, one row per run:
#   system              store | redis
#   kind                failure-free | failover
#   transport           shm or tcp (failover runs: tcp)
#   workload, ranks, repetition
#   throughput_ops_per_s  operations of all ranks / run time (with the outage for failover)
#   p50_us, p99_us      latency of all operations (histogram percentiles)
#   read_p50_us, read_p99_us, update_p50_us, update_p99_us   per operation (NA: none)
#   ops, failed_ops, retried_ops, verify_errors              from meta.json
#   failover_first_ms   kill (kv_inject's log, CLOCK_REALTIME) to the first
#                       acknowledged write after the failover, on the first
#                       rank to write again
#   failover_last_ms    the same on the last rank to write again
#   acked_lost          keys whose latest acknowledged write was not read back
#                       after the run (NA: not checked: the store rows)
#   degraded_writes     writes acknowledged by fewer replicas than asked (after a
#                       failover nobody restarts the old primary: the new one has none)
#   status              the driver's verdict through scripts/kvrun: pass, fail, crashed, hung
#   ceiling_get_per_s, ceiling_set_per_s   redis-benchmark's GET and SET rate in the
#                       same run, as many clients as ranks (NA for store rows)
#   ceiling_ops_per_s   the two mixed in the workload's read/update shares
#                       (1 / (read/GET + update/SET)); writes without WAIT, so an
#                       upper bound for the driver's Redis
#   pipelined_ops_per_s the same mix from redis-benchmark pipelined 16 deep (NA for store rows)
#   load_before, load_after, busy_before  the 1-minute load average right before and
#                       after the run, the cores busy in the second before it (cells.sh)
# Sizes (environment, REDIS_ so that bench.sh's RANKS is not taken):
# REDIS_RANKS ("2 4"), REDIS_WORKLOADS ("a b c"), REDIS_RUN_S (3),
# REDIS_RECORDS (20000), REDIS_REPS (5), REDIS_BENCH_REQUESTS (50000),
# REDIS_FAILOVER_REPS (5), REDIS_FAILOVER_RANKS (4), REDIS_FAILOVER_S (6),
# REDIS_KILL_AT (1.5); BENCH_OUT the directory (results/bench), with
# redis.meta beside the file.  About 12 minutes here.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KV_BUILD:-$ROOT/build}/bin
HARNESS=$ROOT/experiments/bench/redis_harness.sh
RUN_S=${REDIS_RUN_S:-3} RECORDS=${REDIS_RECORDS:-20000} KILL_AT=${REDIS_KILL_AT:-1.5}
FR=${REDIS_FAILOVER_RANKS:-4}
COMMON=(workload.records="$RECORDS" workload.operations=0 workload.value_bytes=64 driver.progress=0)

# Inside the harness (failover run): the injector next to the driver.
if [ "${1:-}" = --failover-run ]; then
  d=$2 np=$3
  "$BIN/kv_inject" --pids "$d/pids" --nranks 2 --max-simultaneous 1 --timeout 120 \
    --schedule "target=ranks:1; when=time:$KILL_AT" --log "$d/kills.csv" \
    --schedule-out "$d/schedule.csv" > "$d/inject.log" 2>&1 &
  inj=$!
  "$ROOT/scripts/kvrun" -n "$np" --timeout 120 -- "$BIN/kv_driver" driver.backend=redis \
    redis.port="$REDIS_PORT" redis.sentinel_port="$REDIS_SENTINEL_PORTS" \
    redis.master_name="$REDIS_MASTER_NAME" redis.wait_replicas=1 workload.workload=a \
    workload.duration_s="${REDIS_FAILOVER_S:-6}" "${COMMON[@]}" driver.out="$d"
  rc=$?
  kill "$inj" 2>/dev/null  # still waiting when the driver failed early
  wait "$inj" 2>/dev/null
  exit $rc
fi

# Inside the harness (failure-free Redis run): the driver over TRANSPORT
# (shm: the primary's Unix socket; tcp: loopback TCP), then redis-benchmark
# against the same servers over the same transport: as many clients as
# ranks in as many threads, one request at a time (the ceiling of a
# client like the driver's), and pipelined 16 deep (the server's own).
if [ "${1:-}" = --ceiling-run ]; then
  d=$2 np=$3 tr=$4; shift 4
  where=(redis.host=127.0.0.1 redis.port="$REDIS_PORT") bench=(-p "$REDIS_PORT")
  [ "$tr" = shm ] && where=(redis.host="$REDIS_SOCKET") bench=(-s "$REDIS_SOCKET")
  "$ROOT/scripts/kvrun" -n "$np" --timeout 120 -- "$BIN/kv_driver" driver.backend=redis "${where[@]}" \
    redis.wait_replicas=1 "$@" driver.out="$d"
  rc=$?
  for p in 1 16; do
    timeout 120 redis-benchmark "${bench[@]}" -c "$np" --threads "$np" -P "$p" -n "${REDIS_BENCH_REQUESTS:-50000}" \
      -d 64 -r "$RECORDS" -t get,set --csv > "$d/ceiling-P$p.csv" 2>"$d/ceiling-P$p.log"
  done
  exit $rc
fi

OUT=${BENCH_OUT:-$ROOT/results/bench}
f=$OUT/redis.csv
mkdir -p "$OUT"
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"  # order, loads, resume, chunks
MAXLOAD=${KV_MAX_LOAD:-$(awk -v n="$(nproc)" 'BEGIN { print n / 2 }')}
busy=$(BUSY_SAMPLE=3 busy1)
if awk -v l="$busy" -v m="$MAXLOAD" 'BEGIN { exit !(l > m) }'; then
  if [ "${KV_ALLOW_LOAD:-0}" != 1 ]; then
    echo "bench_redis: $busy of $(nproc) cores were busy over 3 s (over KV_MAX_LOAD=$MAXLOAD):" \
         "other work would share the cores with the servers and clients. Run it on an idle machine," \
         "or with KV_ALLOW_LOAD=1 to measure anyway (each row records its load)." >&2
    exit 3
  fi
  echo "bench_redis: WARNING: measuring with $busy of $(nproc) cores busy (KV_ALLOW_LOAD=1): the" \
       "numbers are not those of an idle machine; the loads in every row say how busy it was"
fi
for x in "$BIN/kv_driver" "$BIN/kv_inject"; do [ -x "$x" ] || { echo "bench_redis: $x missing: run make" >&2; exit 1; }; done
command -v redis-server >/dev/null || { echo "bench_redis: redis-server not installed (make deps)" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cells_open "$f" "system,kind,transport,workload,ranks,repetition,throughput_ops_per_s,p50_us,p99_us,read_p50_us,read_p99_us,update_p50_us,update_p99_us,ops,failed_ops,retried_ops,verify_errors,failover_first_ms,failover_last_ms,acked_lost,degraded_writes,status,ceiling_get_per_s,ceiling_set_per_s,ceiling_ops_per_s,pipelined_ops_per_s" \
  "BENCH=redis REDIS_REPS=${REDIS_REPS:-5} REDIS_RANKS='${REDIS_RANKS:-2 4}' REDIS_WORKLOADS='${REDIS_WORKLOADS:-a b c}' REDIS_RUN_S=$RUN_S REDIS_RECORDS=$RECORDS REDIS_FAILOVER_REPS=${REDIS_FAILOVER_REPS:-5} REDIS_FAILOVER_RANKS=$FR KV_ALLOW_LOAD=${KV_ALLOW_LOAD:-0} make bench"

na() { [ -n "$1" ] && echo "$1" || echo NA; }
# ceiling DIR P: "GET/s,SET/s,mixed/s" from redis-benchmark's CSV of
# pipeline depth P and the driver's read/update shares (meta.json), NA
# where missing.
ceiling() {
  local d=$1 get set rd up
  get=$(awk -F'"' '$2 == "GET" {print $4}' "$d/ceiling-P$2.csv" 2>/dev/null)
  set=$(awk -F'"' '$2 == "SET" {print $4}' "$d/ceiling-P$2.csv" 2>/dev/null)
  rd=$(sed -n 's/.*"read": \([0-9.e-]*\).*/\1/p' "$d/meta.json" 2>/dev/null)
  up=$(sed -n 's/.*"update": \([0-9.e-]*\).*/\1/p' "$d/meta.json" 2>/dev/null)
  awk -v g="${get:-}" -v s="${set:-}" -v r="${rd:-}" -v u="${up:-}" 'BEGIN {
    m = (g > 0 && s > 0 && r + u > 0) ? sprintf("%.1f", (r + u) / (r / g + u / s)) : "NA"
    printf "%s,%s,%s", (g == "" ? "NA" : g), (s == "" ? "NA" : s), m }'
}
row() {  # system kind transport workload ranks rep dir kvrun-status [ceiling pipelined]: a row on stdout
  local d=$7 st
  case $8 in 0) st=pass ;; 1) st=fail ;; 2) st=crashed ;; 3) st=hung ;; 4) st=aborted ;; *) st=error ;; esac
  lat() { na "$(awk -F, -v op="$1" -v c="$2" '$1 == op && $2 == "all" {print $c}' "$d/latency.csv" 2>/dev/null)"; }
  meta() { na "$(sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" "$d/meta.json" 2>/dev/null)"; }
  fo() { na "$(awk -F, -v c="$1" 'NR == 2 {print $c}' "$d/failover.csv" 2>/dev/null)"; }
  local tput; tput=$(na "$(sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p' "$d/summary.txt" 2>/dev/null)")
  echo "$1,$2,$3,$4,$5,$6,$tput,$(lat all 4),$(lat all 6),$(lat read 4),$(lat read 6),$(lat update 4),$(lat update 6),$(meta operations_done),$(meta failed_ops),$(meta retried_ops),$(meta verify_errors),$(fo 2),$(fo 3),$(fo 10),$(fo 7),$st,${9:-NA,NA,NA},${10:-NA}"
}

# The cells for cells_each: SYSTEM/TRANSPORT/WORKLOAD/RANKS failure-free,
# and failover.
redis_key() {
  local sy t w n
  if [ "$1" = failover ]; then echo "redis,failover,tcp,a,$FR,$2,"; return; fi
  IFS=/ read -r sy t w n <<<"$1"; echo "$sy,failure-free,$t,$w,$n,$2,"
}
redis_cell() {
  local sy t w n rep=$2 d b st
  if [ "$1" = failover ]; then
    d=$T/failover-$rep; mkdir -p "$d"
    "$HARNESS" --sentinels 3 --down-after-ms 1000 -- "$0" --failover-run "$d" "$FR" > "$T/log" 2>&1
    st=$?
    row redis failover tcp a "$FR" "$rep" "$d" $st
    [ -s "$d/kills.csv" ] || { echo "  (no kill logged: $(tail -1 "$d/inject.log" 2>/dev/null))"; tail -3 "$T/log"; } >&2
    return
  fi
  IFS=/ read -r sy t w n <<<"$1"
  d=$T/$sy-$t-$w-$n-$rep
  if [ "$sy" = store ]; then
    b=allocate; [ "$t" = tcp ] && b=create
    "$ROOT/scripts/kvrun" -n "$n" --timeout 120 -- "$BIN/kv_driver" workload.workload="$w" \
      workload.duration_s="$RUN_S" "${COMMON[@]}" store.max_value=64 store.slots_per_rank=32768 \
      store.variant=recreate-copy store.replicas=2 store.backend="$b" driver.out="$d" > "$T/log" 2>&1
    row store failure-free "$t" "$w" "$n" "$rep" "$d" $?
  else
    mkdir -p "$d"
    "$HARNESS" -- "$0" --ceiling-run "$d" "$n" "$t" workload.workload="$w" workload.duration_s="$RUN_S" \
      "${COMMON[@]}" > "$T/log" 2>&1
    st=$?
    row redis failure-free "$t" "$w" "$n" "$rep" "$d" $st "$(ceiling "$d" 1)" "$(ceiling "$d" 16 | cut -d, -f3)"
  fi
}

command -v redis-benchmark >/dev/null || { echo "bench_redis: redis-benchmark not installed (make deps)" >&2; exit 1; }
echo "== failure-free: the store (recreate-copy, r=2) and Redis (primary + replica, WAIT 1), ${RUN_S} s each," \
     "over shared memory (store osc/sm, Redis's Unix socket) and TCP (store osc/rdma, Redis's loopback port)," \
     "redis-benchmark against the same servers as the ceiling, ${REDIS_REPS:-5} repetitions in drawn orders"
cells=$(for w in ${REDIS_WORKLOADS:-a b c}; do for n in ${REDIS_RANKS:-2 4}; do for t in shm tcp; do
          for sy in store redis; do echo "$sy/$t/$w/$n"; done; done; done; done)
# shellcheck disable=SC2086  # a list of words
cells_each "$f" "${REDIS_REPS:-5}" redis redis_key redis_cell $cells || exit 0

echo "== failover: Redis with 3 sentinels, primary SIGKILLed at ${KILL_AT} s (kv_inject), YCSB A, $FR ranks"
cells_each "$f" "${REDIS_FAILOVER_REPS:-5}" failover redis_key redis_cell failover || exit 0

echo
echo "summary (throughput in ops/s, latency of all operations in us):"
python3 "$ROOT/experiments/bench/report.py" print redis --file "$f"
echo "wrote $f"
if python3 "$ROOT/analysis/fig_redis.py" "$f" "$OUT/figures"; then :; else echo "bench_redis: no figure (see above)"; fi
