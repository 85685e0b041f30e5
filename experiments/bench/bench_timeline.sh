#!/usr/bin/env bash
# bench_timeline.sh -- `BENCH=timeline make bench`: throughput through one
# failure, per variant, in 10 ms bins: how deep it falls, for how long, and
# how long until every pair has its copies again.
#
# Every run is the driver (kv_driver) on this machine: TIMELINE_RANKS (4)
# ranks (spare: one more, the spare), YCSB A on 20,000 records of 64 bytes
# with 2 copies, TIMELINE_SECONDS (4) s, timeline bins of 10 ms, one rank
# other than rank 0 killed at TIMELINE_KILL_AT (2) s (driver.failures:
# target=random:1; allow_rank0=0; when=time; seed=the repetition).  The
# variants run in turns, each repetition in an order drawn from it, the
# load before and after each run in its row (cells.sh), TIMELINE_REPS (5)
# repetitions.  One row per run in
# results/bench/timeline.csv (TIMELINE_CSV; columns: timeline_row.py
# --header, described in docs/formats.md), what made it in timeline.meta;
# the directories of runs that did not pass go to timeline-logs/; each
# run's bins around the kill, against its failure-free rate, to
# timeline-bins.csv (timeline_row.py --bins), which
# analysis/fig_timeline_bench.py draws into figures/timeline.png.  A file
# of the same code, build, machine and command is resumed (TIMELINE_FRESH=1 starts
# again; MINUTES=N: a chunk).  About 5 minutes here.
# TIMELINE_HOSTS=3 runs across the hosts of a test cluster of its own
# (scripts/vcluster, state and bridge of its own, torn down at the end;
# root), the ranks spread host by host, into timeline-3hosts.csv: there
# every window is osc/rdma, where a kill at a random instant hangs most
# runs of the workaround variants (the hangs-rdma soak), so only the
# variants on the fault-tolerant RMA run (proposed, online).
# TIMELINE_BACKEND=create makes the store's windows with MPI_Win_create
# (osc/rdma on one host too; variant online then keeps its window through
# the failure, as it does on osc/sm), into timeline[-Nhosts]-create.csv;
# there too only proposed and online run, osc/rdma being where the others
# hang.  TIMELINE_VARIANTS='A B' runs those variants only.
# TIMELINE_REVS='REV REV...' runs each variant with the library of each
# revision (experiments/bench/revtree.sh: that revision's kvstore/, this
# checkout's driver; `work` is the checkout as it is), all in turns, into
# timeline-revs.csv (beside the suffixes above), the variant column
# written VARIANT@REV: whether a change moved the timeline, measured in
# the same minutes rather than on two days.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DRV=${KV_BUILD:-$ROOT/build}/bin/kv_driver
HOSTS=${TIMELINE_HOSTS:-1}
BACKEND=${TIMELINE_BACKEND:-allocate}
case $BACKEND in allocate|create) ;; *) echo "bench_timeline: TIMELINE_BACKEND=$BACKEND: allocate or create" >&2; exit 2 ;; esac
NAME=timeline; [ "$HOSTS" -gt 1 ] && NAME=timeline-${HOSTS}hosts
[ "$BACKEND" = allocate ] || NAME=$NAME-$BACKEND
read -ra REVS <<<"${TIMELINE_REVS:-}"
[ ${#REVS[@]} -gt 0 ] && NAME=$NAME-revs
OUT=${TIMELINE_CSV:-$ROOT/results/bench/$NAME.csv}
REPS=${TIMELINE_REPS:-5} RANKS=${TIMELINE_RANKS:-4} SECS=${TIMELINE_SECONDS:-4} KILL_AT=${TIMELINE_KILL_AT:-2}
VARIANTS=(recreate-copy recreate-inplace recreate-free spare proposed online)
PY=$(python3 "$ROOT/analysis/pyfind.py")  # a python3 with matplotlib (analysis/common.py)
ROW=("$PY" "$ROOT/experiments/bench/timeline_row.py")
CMD="TIMELINE_REPS=$REPS TIMELINE_RANKS=$RANKS TIMELINE_SECONDS=$SECS TIMELINE_KILL_AT=$KILL_AT"
[ "$HOSTS" -gt 1 ] && CMD+=" TIMELINE_HOSTS=$HOSTS"
[ "$BACKEND" = allocate ] || CMD+=" TIMELINE_BACKEND=$BACKEND"
[ -n "${TIMELINE_VARIANTS:-}" ] && CMD+=" TIMELINE_VARIANTS='$TIMELINE_VARIANTS'"
[ ${#REVS[@]} -gt 0 ] && CMD+=" TIMELINE_REVS='${REVS[*]}'"
CMD+=" BENCH=timeline make bench"
[ -x "$DRV" ] || { echo "bench_timeline: not built: $DRV (run make)" >&2; exit 1; }
[ "$BACKEND" = create ] && VARIANTS=(proposed online)
WHERE=() TMPD=${TMPDIR:-/tmp}
if [ "$HOSTS" -gt 1 ]; then
  TMPD=$ROOT/build  # the hosts see the build directory (their /tmp is their own)
  VARIANTS=(proposed online)
  [ "$(id -u)" -eq 0 ] || { echo "bench_timeline: TIMELINE_HOSTS needs root (the test cluster's namespaces)" >&2; exit 1; }
  VC=$ROOT/scripts/vcluster
  export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrtl PRTE_MCA_rmaps_default_mapping_policy=node
  KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-timeline.XXXXXX)
  chmod 0755 "$KV_CLUSTER_DIR"
  trap '"$VC" down >/dev/null 2>&1; rm -rf "$KV_CLUSTER_DIR"' EXIT
  "$VC" up "$HOSTS" --no-slurm >"$KV_CLUSTER_DIR/up.log" 2>&1 || { cat "$KV_CLUSTER_DIR/up.log" >&2; exit 1; }
  WHERE=(--cluster)
fi
if [ -n "${TIMELINE_VARIANTS:-}" ]; then read -ra VARIANTS <<<"$TIMELINE_VARIANTS"; fi
# UNITS: what takes turns, VARIANT or VARIANT@REV; DRIVER[unit]: its driver.
declare -A DRIVER
UNITS=()
if [ ${#REVS[@]} -eq 0 ]; then
  for v in "${VARIANTS[@]}"; do UNITS+=("$v"); DRIVER[$v]=$DRV; done
else
  source "$ROOT/experiments/bench/revtree.sh"
  TREES=$(mktemp -d "$TMPD/timeline-revs.XXXXXX")
  trap '"${VC:-true}" down >/dev/null 2>&1; rm -rf "${KV_CLUSTER_DIR:-}" "$TREES"' EXIT
  for rev in "${REVS[@]}"; do
    name=$(rev_name "$ROOT" "$rev") || exit 1
    rev_tree "$ROOT" "$rev" "$TREES/$name" build/bin/kv_driver || exit 1
    for v in "${VARIANTS[@]}"; do UNITS+=("$v@$name"); DRIVER[$v@$name]=$TREES/$name/build/bin/kv_driver; done
  done
fi
mkdir -p "$(dirname "$OUT")"
BINS=${OUT%.csv}-bins.csv
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
[ "${TIMELINE_FRESH:-0}" = 1 ] || [ ! -s "$BINS" ] && rm -f "$OUT"
cells_open "$OUT" "$("${ROW[@]}" --header)" "$CMD"
cells_fresh "$OUT" && "${ROW[@]}" --bins-header > "$BINS"  # a fresh file: fresh bins

timeline_key() { echo "$1,$2,"; }
timeline_cell() {  # UNIT REP: one run as its row (its bins to BINS)
  local u=$1 rep=$2 v=${1%@*} sp=0 d rc
  [ "$v" = spare ] && sp=1
  d=$(mktemp -d "$TMPD/timeline.XXXXXX")
  "$ROOT/scripts/kvrun" -n $((RANKS + sp)) "${WHERE[@]}" --timeout 120 -- "${DRIVER[$u]}" workload.workload=a \
    workload.records=20000 workload.operations=0 workload.duration_s="$SECS" workload.value_bytes=64 \
    store.max_value=64 store.slots_per_rank=32768 store.replicas=2 store.spares=$sp store.variant="$v" store.backend="$BACKEND" \
    driver.progress=0 driver.bin_s=0.01 driver.out="$d" \
    driver.failures="target=random:1; allow_rank0=0; when=time:$KILL_AT; seed=$rep" > "$d/kvrun.log" 2>&1
  rc=$?
  "${ROW[@]}" --dir "$d" --variant "$u" --rep "$rep" --ranks "$RANKS" --rc "$rc" --bins "$BINS"
  if [ "$rc" -ne 0 ]; then  # keep the evidence
    mkdir -p "$(dirname "$OUT")/$NAME-logs"
    rm -rf "$(dirname "$OUT")/$NAME-logs/$u-rep$rep"
    mv "$d" "$(dirname "$OUT")/$NAME-logs/$u-rep$rep"
  else
    rm -rf "$d"
  fi
}

cells_each "$OUT" "$REPS" "$NAME" timeline_key timeline_cell "${UNITS[@]}" || exit 0
"$PY" "$ROOT/analysis/fig_timeline_bench.py" "$(dirname "$OUT")" "$(dirname "$OUT")/figures" \
  --name "$(basename "$OUT" .csv)" ||
  echo "bench_timeline: no figure (see above)"
echo "bench_timeline: $OUT"
