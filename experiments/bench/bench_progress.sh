#!/usr/bin/env bash
# bench_progress.sh -- `BENCH=progress make bench`: a store read and write
# against the link's round trip, across hosts, with the target polling and
# with it computing, over btl/tcp with and without its progress thread.
#
# bench_progress (2 ranks) runs on this machine alone (hosts 1: loopback;
# the default backend allocate is osc/sm there, whose RMA needs nothing of
# the target) and on two hosts of a test cluster of its own (hosts 2:
# scripts/vcluster up 2 --no-slurm, own state directory and bridge, torn
# down at the end whatever happens; osc/rdma over btl/tcp's active
# messages), each with setting `tcp` (btl tcp,self as kvrun gives it) and
# `tcp-thread` (the same with btl_tcp_progress_thread 1: a thread of the
# TCP BTL answers for the target).  PROGRESS_REPS (9) launches of each of
# the four, interleaved (the order of the four rotated launch by launch),
# each PROGRESS_ROUNDS (5) rounds of PROGRESS_OPS (2000) operations (a
# tenth while the target computes; fewer when they take over 1 s), the
# target computing PROGRESS_COMPUTE_US (1000) us between MPI_Tests.  Rows
# in results/bench/progress.csv (PROGRESS_CSV): setting, hosts, launch,
# load_1min (at the launch), then bench_progress's own columns; the
# command and revision in progress.meta.  A launch that did not pass is
# recorded in progress-failed.txt with kvrun's verdict and the run goes on.
# Resumes: launches already in the file are skipped when its .meta names
# the same code, build, machine and command (PROGRESS_FRESH=1 starts again).  About 10
# minutes here.  Needs root (namespaces): else it says so, writes nothing
# and exits 0.
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${KV_BUILD:-$ROOT/build}/bin VC=$ROOT/scripts/vcluster KVRUN=$ROOT/scripts/kvrun
OUT=${PROGRESS_CSV:-$ROOT/results/bench/progress.csv}
REPS=${PROGRESS_REPS:-9} ROUNDS=${PROGRESS_ROUNDS:-5} OPS=${PROGRESS_OPS:-2000}
COMPUTE=${PROGRESS_COMPUTE_US:-1000} BACKEND=${PROGRESS_BACKEND:-allocate}
CMD="PROGRESS_REPS=$REPS PROGRESS_ROUNDS=$ROUNDS PROGRESS_OPS=$OPS PROGRESS_COMPUTE_US=$COMPUTE PROGRESS_BACKEND=$BACKEND BENCH=progress make bench"
SETTINGS=(tcp tcp-thread)
[ "$(id -u)" -eq 0 ] || { echo "bench_progress: needs root (the test cluster's namespaces): skipped"; exit 0; }
[ -x "$BIN/bench_progress" ] || { echo "bench_progress: not built: $BIN/bench_progress (run make)" >&2; exit 1; }

meta=${OUT%.csv}.meta
mkdir -p "$(dirname "$OUT")"
if [ "${PROGRESS_FRESH:-0}" = 1 ] || [ ! -s "$OUT" ] || ! "$ROOT/scripts/provenance" --matches "$meta" "$CMD"; then
  rm -f "$OUT" "${OUT%.csv}-failed.txt"
  "$ROOT/scripts/provenance" "$CMD" > "$meta"
  # shellcheck source=experiments/bench/cells.sh
  source "$ROOT/experiments/bench/cells.sh"  # the target, in the record before the first launch
  cells_target "$OUT" kv/ping-pong at most 3 "(a store read or write against the same launch's ping-pong, per launch) in every place, setting and target state"
else
  echo "bench_progress: resuming $OUT ($(grep -c . "$OUT") lines)"
fi

export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrpg
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-progress.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
trap '"$VC" down >/dev/null 2>&1; rm -rf "$KV_CLUSTER_DIR"' EXIT
"$VC" up 2 --no-slurm >"$KV_CLUSTER_DIR/up.log" 2>&1 || { cat "$KV_CLUSTER_DIR/up.log" >&2; exit 1; }

done_already() {  # SETTING HOSTS LAUNCH: its rows are in the file
  [ -s "$OUT" ] && awk -F, -v s="$1" -v h="$2" -v l="$3" '$1 == s && $2 == h && $3 == l { f = 1 } END { exit !f }' "$OUT"
}
launch() {  # SETTING HOSTS LAUNCH
  local where=() mca=() load log=$KV_CLUSTER_DIR/run.log
  [ "$2" = 2 ] && where=(--cluster --nodes 2 --ppn 1) || where=(-n 2)
  [ "$1" = tcp-thread ] && mca=(--mca btl_tcp_progress_thread 1)
  load=$(cut -d' ' -f1 /proc/loadavg)
  "$KVRUN" "${where[@]}" "${mca[@]}" --timeout 300 -- "$BIN/bench_progress" \
    "setting=$1,hosts=$2,launch=$3,load_1min=$load" "$OUT" "$OPS" "$ROUNDS" "$COMPUTE" "$BACKEND" >"$log" 2>&1
  local st=$?
  local verdict
  verdict=$(tr -d '\0' <"$log" | tail -1)
  echo "bench_progress: $1 hosts=$2 launch $3 (load $load): $verdict"
  [ $st -eq 0 ] || echo "$1,$2,$3: $verdict" >> "${OUT%.csv}-failed.txt"
}

for rep in $(seq "$REPS"); do
  combos=()
  for h in 1 2; do for s in "${SETTINGS[@]}"; do combos+=("$s $h"); done; done
  n=${#combos[@]}
  for k in $(seq 0 $((n - 1))); do
    read -r s h <<<"${combos[$(( (k + rep) % n ))]}"
    done_already "$s" "$h" "$rep" || launch "$s" "$h" "$rep"
  done
done
echo "bench_progress: $OUT"
