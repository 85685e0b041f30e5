#!/usr/bin/env bash
# bench.sh -- `make bench`: the benchmarks, results in results/bench/.
#
#   store-vs-raw.csv  kv_get / kv_put against the raw RMA they need (2 ranks,
#                     STORE_RAW_REPS launches)
#   hotpath.csv       the local steps of a read: hash, placement, slot decode
#   ycsb.csv          failure-free YCSB A, B, C per variant and ranks
#   ftcost.csv        the failure-free cost of fault tolerance: each workaround
#                     variant against none in the same run, turn by turn
#                     (bench_ftcost; YCSB B, 2 copies, 2/4/8 ranks)
#   recovery.csv      one kill per run: variants x ranks x pairs x reps
#   recovery-floor.csv  the same runs, each phase beside what recovery cannot
#                     avoid on the same ranks and sizes (window allocation,
#                     memcpy of the table, the raw exchange of the
#                     re-replicated bytes), and their ratio
#   firsttouch.csv    the first writes to fresh shared memory, new and reused
#                     (bench_firsttouch; what a new window's copy also pays)
#   checkpoint.csv    the checkpoint/restart baseline (bench_checkpoint.sh)
#   redis.csv         the store against Redis, failure-free and failover (bench_redis.sh)
#   taskapp.csv       a task-parallel application (N-Queens, UTS) through failures:
#                     resilience overhead, failure cost, ranks, checkpoint
#                     frequency, checkpoint/restart (bench_taskapp.sh)
#   proposed.csv      variant proposed (the patched Open MPI's fault-tolerant
#                     RMA) against the workarounds, one kill per run, side by
#                     side; proposed-overhead.csv its failure-free YCSB cost
#   nodeloss.csv      a node loss against a single-rank kill on the 3-host
#                     test cluster (bench_nodeloss.sh; needs root)
#   timeline.csv      throughput through one kill per variant in 10 ms bins:
#                     the worst bin against the failure-free rate, the time
#                     to full redundancy (bench_timeline.sh)
#   progress.csv      a store read and write across two hosts against the
#                     link's ping-pong, the target polling and computing,
#                     with and without the TCP BTL's progress thread
#                     (bench_progress.sh; needs root)
#   conformance.csv   the fault-tolerant RMA's conformance suite (win_ack,
#                     win_lock, win_ft) with the switch on and off, side by
#                     side (bench_conformance.sh)
#   multihost.csv     the store across the hosts of a test cluster, beside one
#                     host: store vs raw RMA, recovery per variant, the hang
#                     rate of single-kill runs (bench_multihost.sh; hours)
#   recovery-profile.csv  only with BENCH=recovery-profile: where re-replication's
#                     processor time goes, from perf (profile_recovery.sh)
#   revisions/        only with BENCH=revisions REVS='A B ...': the read path
#                     of those revisions' kvstore/ side by side, in turns
#                     (bench_revisions.sh; `work` is the checkout as it is)
# Each benchmark prints its table, and beside each file goes NAME.meta,
# what made it (scripts/provenance: revision, MPI and patches, date, host
# shape and load, the command; the target, where there is one; a line per
# chunk).  Every benchmark but the conformance and transport suites runs as
# cells.sh says: each cell once per repetition in a drawn order, the load
# before and after every run in its row, and the same command resumes it
# (MINUTES=N: a chunk of N minutes; BENCH=name runs just one).  Every cell
# is repeated at least 5 times by default (report.py prints each
# interval's coverage): REPS for recovery and proposed, YCSB_REPS,
# OVERHEAD_REPS, STORE_RAW_REPS, HOTPATH_REPS, TOUCH_REPS, and in their
# scripts CKPT_REPS, REDIS_REPS and the others.  The recovery matrix is
# sized by RANKS, PAIRS, REPS and VARIANTS, ycsb by YCSB_WORKLOADS,
# YCSB_RANKS, YCSB_REPS, YCSB_SECONDS; `make stale` says how long each file
# took to make.  BENCH_OUT writes the files elsewhere
# (tests/scripts/test_bench_small.sh runs the benchmarks at a tiny size
# that way); BENCH_NOTE='...' goes into the command line that NAME.meta
# records (a small run says so there).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${BENCH_OUT:-$ROOT/results/bench}  # BENCH_OUT: elsewhere (a trial at a small size)
BIN=${KV_BUILD:-$ROOT/build}/bin
mkdir -p "$OUT"
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"  # order, load, resume, chunks
want() { [ -z "${BENCH:-}" ] || [ "$BENCH" = "$1" ]; }
# BENCH names one of the benchmarks below: those this file runs under
# `if want NAME` or `if [ "${BENCH:-}" = NAME ]` (the one list of them).
if [ -n "${BENCH:-}" ]; then
  known=$(sed -n -e 's/^if want \([a-z0-9-]*\);.*/\1/p' -e 's/^if \[ "\${BENCH:-}" = \([a-z0-9-]*\) \].*/\1/p' "$0")
  grep -qxF -- "$BENCH" <<<"$known" ||
    { echo "bench: no benchmark BENCH=$BENCH (there are: $(paste -sd' ' <<<"$known"))" >&2; exit 2; }
fi
SIZES="RANKS='${RANKS:-}' PAIRS='${PAIRS:-}' REPS='${REPS:-}' VARIANTS='${VARIANTS:-}'"
# The recovery matrix (recovery and recovery-floor): sizes, ranks, variants.
REC_PAIRS=${PAIRS:-10000 100000 1000000}
REC_RANKS=${RANKS:-4 8 16}
REC_VARIANTS=${VARIANTS:-recreate-copy recreate-inplace recreate-free spare}

# YCSB_HEADER: the columns of ycsb.csv and proposed-overhead.csv.
YCSB_HEADER=workload,variant,backend,ranks,replicas,repetition,throughput_ops_per_s,p50_us,p99_us
# ycsb_point WORKLOAD VARIANT RANKS R: one failure-free driver run (closed
# loop, YCSB_SECONDS, 20,000 records, 64-byte values, R copies of each;
# one extra spare rank for spare); prints "throughput,read p50,read p99",
# NA for what the run did not write.
ycsb_point() {
  local w=$1 v=$2 n=$3 r=$4 sp=0 d tput p50 p99
  [ "$v" = spare ] && sp=1
  d=$(mktemp -d)
  "$ROOT/scripts/kvrun" -n $((n + sp)) --timeout 120 -- "$BIN/kv_driver" workload.workload=$w \
    workload.records=20000 workload.operations=0 workload.duration_s=${YCSB_SECONDS:-3} \
    workload.value_bytes=64 store.max_value=64 store.slots_per_rank=32768 store.variant=$v \
    store.replicas=$r store.spares=$sp driver.progress=0 driver.out="$d" > "$d/log" 2>&1
  tput=$(sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p' "$d/summary.txt" 2>/dev/null)
  p50=$(awk -F, '$1=="read" && $2=="all" {print $4}' "$d/latency.csv" 2>/dev/null)
  p99=$(awk -F, '$1=="read" && $2=="all" {print $6}' "$d/latency.csv" 2>/dev/null)
  rm -rf "$d"
  echo "${tput:-NA},${p50:-NA},${p99:-NA}"
}

# ycsb_row WORKLOAD VARIANT:R RANKS REP: ycsb_point's run as a row of
# YCSB_HEADER.
ycsb_row() {
  local v=${2%:*} r=${2#*:}
  echo "$1,$v,allocate,$3,$r,$4,$(ycsb_point "$1" "$v" "$3" "$r")"
}

# ycsb_key / ycsb_cell CELL REP: a cell WORKLOAD/RANKS/VARIANT:R for
# cells_each, its key and its row.
ycsb_key() { local w n vr; IFS=/ read -r w n vr <<<"$1"; echo "$w,${vr%:*},allocate,$n,${vr#*:},$2,"; }
ycsb_cell() { local w n vr; IFS=/ read -r w n vr <<<"$1"; ycsb_row "$w" "$vr" "$n" "$2"; }

# recovery_point VARIANT RANKS PAIRS REP FILE LINES [FLOOR]: one run of
# bench_recovery (one kill; it appends its row to FILE, and with FLOOR its
# phases beside their floor to FLOOR; variant spare gets one rank more,
# its spare); prints the last LINES lines of its output and returns
# kvrun's status (3: hung).
recovery_point() {
  local v=$1 n=$2 p=$3 rep=$4 f=$5 lines=$6 np=$2 sp=0 res st
  [ "$v" = spare ] && np=$((n + 1)) sp=1
  KV_KILL_LOG=$(mktemp); export KV_KILL_LOG
  res=$("$ROOT/scripts/kvrun" -n "$np" --timeout "${RECOVERY_TIMEOUT:-300}" -- \
        env KV_SPARES=$sp "$BIN/bench_recovery" "$v" allocate "$p" "$rep" "$f" ${7:+"$7"} 2>&1)
  st=$?
  grep -v '^\[rank\|^PASS' <<<"$res" | grep -v '^#' | tail -"$lines"
  rm -f "$KV_KILL_LOG"
  return $st
}

# store_raw_cell BACKEND:VARIANT REP: one bench_store_raw launch (2 ranks,
# OPS operations, the median of 9 rounds) as store-vs-raw.csv rows, get
# and put; store_raw_key its key.
store_raw_key() { echo "${1#*:},${1%:*},$2,"; }
store_raw_cell() {
  local rows; rows=$(mktemp)
  "$ROOT/scripts/kvrun" -n 2 --timeout 600 -- "$BIN/bench_store_raw" "${1%:*}" "$rows" "${OPS:-100000}" 9 "${1#*:}" \
    | grep -av '^\[rank\|^PASS' >&2
  awk -F, -v v="${1#*:}" -v rep="$2" '{print v "," $2 "," rep "," $1 "," $3 "," $4 "," $5 "," $6 "," $7}' "$rows"
  rm -f "$rows"
}

# hotpath_cell hotpath REP: one bench_hotpath launch as hotpath.csv rows
# (one cell, so the key is the repetition).
hotpath_key() { echo "$2,"; }
hotpath_cell() {
  local rows; rows=$(mktemp)
  "$BIN/bench_hotpath" "$rows" "${HOTPATH_ITERS:-10000000}" 9 >&2 || echo "bench: bench_hotpath failed" >&2
  sed "s/^/$2,/" "$rows"
  rm -f "$rows"
}

if want store-vs-raw; then
  # recreate-copy as the store runs by default; on osc/sm also none, the
  # same calls without the watchdog's tests; each launch a repetition.
  f=$OUT/store-vs-raw.csv
  cells_open "$f" "variant,backend,repetition,operation,ranks,value_bytes,store_us,raw_us,ratio" \
    "BENCH=store-vs-raw OPS=${OPS:-100000} STORE_RAW_REPS=${STORE_RAW_REPS:-5} make bench"
  cells_target "$f" ratio at most 3 "(store_us / raw_us, taken within each launch) in every operation, backend, variant and rank count"
  cells_each "$f" "${STORE_RAW_REPS:-5}" store-vs-raw store_raw_key store_raw_cell \
    allocate:recreate-copy allocate:none create:recreate-copy
  python3 "$ROOT/experiments/bench/report.py" print store-vs-raw --file "$f"
  echo "wrote $f"
fi

if want hotpath; then
  f=$OUT/hotpath.csv
  cells_open "$f" "repetition,step,ranks,replicas,value_bytes,ns_per_call,rounds" \
    "BENCH=hotpath HOTPATH_ITERS=${HOTPATH_ITERS:-10000000} HOTPATH_REPS=${HOTPATH_REPS:-5} make bench"
  cells_each "$f" "${HOTPATH_REPS:-5}" hotpath hotpath_key hotpath_cell hotpath
  python3 "$ROOT/experiments/bench/report.py" print hotpath --file "$f"
  echo "wrote $f"
fi

if want ycsb; then
  # Failure-free YCSB A, B, C per variant and ranks, closed loop.  Variant
  # none runs with one copy and with two: against none with two copies the
  # variants' throughput is the cost of fault tolerance (detection, the
  # journal's checks), and none's two against its one is the second copy's.
  # Repetitions outer, every cell once per repetition in an order drawn
  # from it (cells.sh).
  f=$OUT/ycsb.csv
  cells_open "$f" "$YCSB_HEADER" "BENCH=ycsb YCSB_REPS=${YCSB_REPS:-5} YCSB_WORKLOADS='${YCSB_WORKLOADS:-a b c}' YCSB_RANKS='${YCSB_RANKS:-2 4 8}' YCSB_SECONDS=${YCSB_SECONDS:-3} make bench"
  cells=$(for w in ${YCSB_WORKLOADS:-a b c}; do for n in ${YCSB_RANKS:-2 4 8}; do
            for vr in none:1 none:2 recreate-copy:2 recreate-inplace:2 recreate-free:2 spare:2; do
              echo "$w/$n/$vr"; done; done; done)
  # shellcheck disable=SC2086  # a list of words
  cells_each "$f" "${YCSB_REPS:-5}" ycsb ycsb_key ycsb_cell $cells
  python3 "$ROOT/experiments/bench/report.py" print ycsb --file "$f"
  echo "wrote $f"
fi

# ftcost_cell VARIANT/RANKS 1: one bench_ftcost job (none and the variant
# in alternating turns) as its ftcost.csv rows, a row per pair of turns
# (the turns are its repetitions, so a cell runs once); ftcost_key its key.
ftcost_key() { echo "${1%/*},b,${1#*/},"; }
ftcost_cell() {
  local rows v=${1%/*} n=${1#*/}; rows=$(mktemp)
  "$ROOT/scripts/kvrun" -n "$n" --timeout 300 -- "$BIN/bench_ftcost" "$v" "$rows" b "${FTCOST_ROUNDS:-30}" \
    "${FTCOST_MS:-200}" > /dev/null 2>&1 || echo "bench: bench_ftcost $v on $n ranks failed" >&2
  cat "$rows"; rm -f "$rows"
}

if want ftcost; then
  # Separate runs scatter more than the cost; bench_ftcost runs none and
  # the variant in one job, in alternating turns (its header).  Each job a
  # point of cells.sh (drawn order, loads, resume).
  f=$OUT/ftcost.csv
  cells_open "$f" "variant,workload,ranks,replicas,round,none_ops_per_s,variant_ops_per_s,cost" \
    "BENCH=ftcost FTCOST_ROUNDS=${FTCOST_ROUNDS:-30} FTCOST_MS=${FTCOST_MS:-200} YCSB_RANKS='${YCSB_RANKS:-2 4 8}' make bench"
  cells_target "$f" cost at most 0.1 "(none / variant - 1 per pair of turns: 10%) in every variant and rank count"
  cells=$(for n in ${YCSB_RANKS:-2 4 8}; do for v in $("$BIN/bench_ftcost" --variants); do echo "$v/$n"; done; done)
  # shellcheck disable=SC2086  # a list of words
  cells_each "$f" 1 ftcost ftcost_key ftcost_cell $cells
  python3 "$ROOT/experiments/bench/report.py" print ftcost --file "$f"
  echo "wrote $f"
fi

# firsttouch_cell firsttouch REP: one bench_firsttouch launch (TOUCH_ROUNDS
# rounds, the first on memory the machine may never have used) as rows
# with the repetition in front.
firsttouch_key() { echo "$2,"; }
firsttouch_cell() {
  local rows; rows=$(mktemp)
  "$BIN/bench_firsttouch" "${TOUCH_MB:-3000}" "${TOUCH_ROUNDS:-5}" "$rows" >&2 || echo "bench: bench_firsttouch failed" >&2
  sed "s/^/$2,/" "$rows"
  rm -f "$rows"
}

if want firsttouch; then
  f=$OUT/firsttouch.csv
  cells_open "$f" "repetition,round,megabytes,ms,gb_per_s" \
    "BENCH=firsttouch TOUCH_MB=${TOUCH_MB:-3000} TOUCH_ROUNDS=${TOUCH_ROUNDS:-5} TOUCH_REPS=${TOUCH_REPS:-5} make bench"
  cells_each "$f" "${TOUCH_REPS:-5}" firsttouch firsttouch_key firsttouch_cell firsttouch
  echo "wrote $f"
fi

if want checkpoint; then  # the checkpoint/restart baseline
  OUT=$OUT/checkpoint.csv bash "$ROOT/experiments/bench/bench_checkpoint.sh"
fi

RECOVERY_HEADER=variant,backend,ranks,pairs,repetition,detect_us,revoke_us,shrink_us,agree_us,windows_us,rereplicate_us,total_us,pairs_restored,lost,hang
FLOOR_HEADER=variant,backend,ranks,pairs,repetition,phase,recovery_us,floor_us,ratio,table_bytes,exchange_bytes,win_allocate_us,memcpy_us,alltoallv_us,memcpy_first_us,scan_us,exchange_us,insert_us

# recovery_rows WHAT PAIRS/RANKS/VARIANT REP: one bench_recovery run's rows
# on stdout (its progress on stderr): WHAT recovery, its recovery.csv row
# or, when it hung or failed without one, a row saying hang yes; WHAT
# floor, its three recovery-floor.csv rows (none when it hung).
# recovery_cell and floor_cell are its two forms for cells_each,
# recovery_key their key.
recovery_key() { local p n v; IFS=/ read -r p n v <<<"$1"; echo "$v,allocate,$n,$p,$2,"; }
recovery_cell() { recovery_rows recovery "$@"; }
floor_cell() { recovery_rows floor "$@"; }
recovery_rows() {
  local what=$1 rep=$3 p n v s fl st
  IFS=/ read -r p n v <<<"$2"
  s=$(mktemp) fl=$(mktemp)
  if [ "$what" = floor ]; then recovery_point "$v" "$n" "$p" "$rep" "$s" 2 "$fl" >&2
  else recovery_point "$v" "$n" "$p" "$rep" "$s" 2 >&2; fi
  st=$?
  if [ "$what" = floor ]; then
    cat "$fl"
    [ "$st" -eq 3 ] && echo "$v ranks=$n pairs=$p rep=$rep: HUNG (no rows)" >&2
  elif [ -s "$s" ]; then cat "$s"
  else
    echo "$v,allocate,$n,$p,$rep,,,,,,,,,,yes"
    echo "$v ranks=$n pairs=$p rep=$rep: HUNG or failed (exit $st)" >&2
  fi
  rm -f "$s" "$fl"
}

matrix() {  # PAIRS... -- RANKS... -- VARIANTS...: every PAIRS/RANKS/VARIANT
  local ps=() ns=() p n v
  while [ "$1" != -- ]; do ps+=("$1"); shift; done; shift
  while [ "$1" != -- ]; do ns+=("$1"); shift; done; shift
  for p in "${ps[@]}"; do for n in "${ns[@]}"; do for v in "$@"; do echo "$p/$n/$v"; done; done; done
}

if want recovery; then
  f=$OUT/recovery.csv
  cells_open "$f" "$RECOVERY_HEADER" "BENCH=recovery $SIZES make bench"
  cells_target "$f" total_us at most 50000 "(recovery, detection excluded: 50 ms) at the most pairs measured, in every variant and rank count"
  cells_target "$f" detect_us at most 10000 "(the kill to the last survivor's notice: 10 ms) in every variant, rank count and size"
  # shellcheck disable=SC2046,SC2086  # lists of words
  cells_each "$f" "${REPS:-5}" recovery recovery_key recovery_cell $(matrix $REC_PAIRS -- $REC_RANKS -- $REC_VARIANTS)
  echo "wrote $f"
fi

if want recovery-floor; then
  # The recovery matrix again, each run also timing on its survivors what
  # recovery cannot avoid (bench_recovery.c); the runs' recovery.csv rows
  # are not kept.  A run that hangs writes no rows (recovery.csv counts
  # hangs).
  f=$OUT/recovery-floor.csv
  cells_open "$f" "$FLOOR_HEADER" "BENCH=recovery-floor $SIZES make bench"
  cells_target "$f" ratio at most 3 "(recovery_us / floor_us of phase total, per run) at the most pairs measured, in every variant and rank count"
  # shellcheck disable=SC2046,SC2086
  cells_each "$f" "${REPS:-5}" floor recovery_key floor_cell $(matrix $REC_PAIRS -- $REC_RANKS -- $REC_VARIANTS)
  python3 "$ROOT/experiments/bench/report.py" print recovery-floor --file "$f"
  # time against pairs with the floor under it, and the slopes
  python3 "$ROOT/analysis/fig_recovery_floor.py" "$OUT" || echo "bench: fig_recovery_floor.py failed" >&2
  echo "wrote $f"
fi

if want proposed; then  # variant proposed against the workarounds
  # Failure-free: YCSB B and C throughput of none, recreate-copy and
  # proposed, every cell once per repetition in a drawn order.
  f=$OUT/proposed-overhead.csv  # OVERHEAD_REPS=0 keeps the file as it is
  if [ "${OVERHEAD_REPS:-5}" -gt 0 ]; then
    cells_open "$f" "$YCSB_HEADER" "BENCH=proposed OVERHEAD_REPS=${OVERHEAD_REPS:-5} OVERHEAD_RANKS='${OVERHEAD_RANKS:-2 4}' make bench"
    cells_target "$f" proposed/recreate-copy at least 0.95 "(throughput, each repetition's proposed run against its recreate-copy run) in every workload and rank count"
    cells=$(for w in b c; do for n in ${OVERHEAD_RANKS:-2 4}; do
              for vr in none:2 recreate-copy:2 proposed:2; do echo "$w/$n/$vr"; done; done; done)
    # shellcheck disable=SC2086
    cells_each "$f" "${OVERHEAD_REPS:-5}" overhead ycsb_key ycsb_cell $cells
    echo "wrote $f"
  fi
  # Recovery: one kill per run, the three variants that rebuild on
  # MPI_Win_allocate windows, every cell once per repetition.
  f=$OUT/proposed.csv
  cells_open "$f" "$RECOVERY_HEADER" "BENCH=proposed $SIZES make bench"
  # shellcheck disable=SC2046,SC2086
  cells_each "$f" "${REPS:-5}" recovery recovery_key recovery_cell \
    $(matrix ${PAIRS:-10000 100000 1000000} -- ${RANKS:-4 8} -- proposed recreate-copy recreate-free)
  echo "wrote $f"
  python3 "$ROOT/experiments/bench/report.py" print proposed loc --dir "$OUT"
  python3 "$ROOT/analysis/fig_proposed.py" "$OUT" "$OUT/figures" || echo "bench: no proposed figure (see above)"
fi

if want taskapp; then  # the task runtime: resilience and failures for an application
  bash "$ROOT/experiments/bench/bench_taskapp.sh"
fi

if want redis; then  # the store against Redis
  BENCH_OUT=$OUT bash "$ROOT/experiments/bench/bench_redis.sh"
fi

if want nodeloss; then  # a node loss against a single-rank kill, across hosts
  bash "$ROOT/experiments/bench/bench_nodeloss.sh"
fi

if want uct; then  # the suite's MPI cases over btl/uct (InfiniBand's transport under ULFM)
  bash "$ROOT/experiments/bench/bench_uct.sh"
fi

if want silentnode; then  # a node gone silent: noticed through the runtime's keepalive
  bash "$ROOT/experiments/bench/bench_silentnode.sh"
fi

if want mpiprobe; then  # what the project's and a stock Open MPI do when a rank or node dies
  bash "$ROOT/experiments/bench/bench_mpiprobe.sh"
fi

if want timeline; then  # throughput through one kill, per variant, 10 ms bins
  bash "$ROOT/experiments/bench/bench_timeline.sh"
fi

if want progress; then  # passive-target progress across hosts: the target polling or computing
  bash "$ROOT/experiments/bench/bench_progress.sh"
fi

if want conformance; then  # the fault-tolerant RMA's rules, switch on and off (Open MPI as released)
  bash "$ROOT/experiments/bench/bench_conformance.sh"
fi

if want multihost; then  # the store across hosts (a test cluster of its own)
  bash "$ROOT/experiments/bench/bench_multihost.sh"
fi

if [ "${BENCH:-}" = recovery-profile ]; then  # only when asked for: it needs perf and root
  bash "$ROOT/experiments/bench/profile_recovery.sh" "$OUT"
fi

if [ "${BENCH:-}" = revisions ]; then  # only when asked for: it needs REVS
  bash "$ROOT/experiments/bench/bench_revisions.sh" "$OUT/revisions" ${REVS:?BENCH=revisions needs REVS=\'REV ...\'}
fi
