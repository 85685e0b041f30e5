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
# the four, interleaved (cells.sh: each repetition in an order drawn from
# it, the load before and after each launch in its rows),
# each PROGRESS_ROUNDS (5) rounds of PROGRESS_OPS (2000) operations (a
# tenth while the target computes; fewer when they take over 1 s), the
# target computing PROGRESS_COMPUTE_US (1000) us between MPI_Tests.  Rows
# in results/bench/progress.csv (PROGRESS_CSV): setting, hosts, launch,
# then bench_progress's own columns and the loads; the command, revision
# and target in progress.meta.  A launch that did not pass is recorded in
# progress-failed.txt with kvrun's verdict, writes no rows and stays to
# do; the run goes on.  Resumes: launches already in the file are skipped
# when its .meta names the same code, build, machine and command
# (PROGRESS_FRESH=1 starts again; MINUTES=N: a chunk).  About 10 minutes
# here.  Needs root (namespaces): else it says so, writes nothing
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

mkdir -p "$(dirname "$OUT")"
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
[ "${PROGRESS_FRESH:-0}" = 1 ] && rm -f "$OUT"
cells_open "$OUT" "setting,hosts,launch,target,round,operation,ops,us" "$CMD"
cells_fresh "$OUT" && rm -f "${OUT%.csv}-failed.txt"
cells_target "$OUT" kv/ping-pong at most 3 "(a store read or write against the same launch's ping-pong, per launch) in every place, setting and target state"

export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrpg
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-progress.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
trap '"$VC" down >/dev/null 2>&1; rm -rf "$KV_CLUSTER_DIR"' EXIT
"$VC" up 2 --no-slurm >"$KV_CLUSTER_DIR/up.log" 2>&1 || { cat "$KV_CLUSTER_DIR/up.log" >&2; exit 1; }

launch_key() { echo "${1%/*},${1#*/},$2,"; }
launch() {  # SETTING/HOSTS LAUNCH: one launch, its rows on stdout
  local s=${1%/*} h=${1#*/} l=$2 where=() mca=() log=$KV_CLUSTER_DIR/run.log rows=$KV_CLUSTER_DIR/rows.csv st verdict
  [ "$h" = 2 ] && where=(--cluster --nodes 2 --ppn 1) || where=(-n 2)
  [ "$s" = tcp-thread ] && mca=(--mca btl_tcp_progress_thread 1)
  rm -f "$rows"
  "$KVRUN" "${where[@]}" "${mca[@]}" --timeout 300 -- "$BIN/bench_progress" \
    "setting=$s,hosts=$h,launch=$l" "$rows" "$OPS" "$ROUNDS" "$COMPUTE" "$BACKEND" >"$log" 2>&1
  st=$?
  verdict=$(tr -d '\0' <"$log" | tail -1)
  echo "bench_progress: $s hosts=$h launch $l: $verdict" >&2
  if [ $st -eq 0 ]; then tail -n +2 "$rows"; else echo "$s,$h,$l: $verdict" >> "${OUT%.csv}-failed.txt"; fi
}

combos=$(for h in 1 2; do for s in "${SETTINGS[@]}"; do echo "$s/$h"; done; done)
# shellcheck disable=SC2086  # a list of words
cells_each "$OUT" "$REPS" progress launch_key launch $combos || exit 0
echo "bench_progress: $OUT"
