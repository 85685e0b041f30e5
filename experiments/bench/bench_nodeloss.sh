#!/usr/bin/env bash
# bench_nodeloss.sh -- `BENCH=nodeloss make bench`: the loss of a node
# against the kill of a single rank, on the 3-host test cluster, RUNS runs
# per variant, interleaved run by run in an order drawn from the run
# (cells.sh: the loads before and after each run in its row, resume,
# MINUTES=N chunks; a bench cut short stays balanced).
#
# Every run is the driver (kv_driver) under `scripts/kvrun --cluster --ppn
# PPN` (3 x PPN ranks on 3 hosts): YCSB A on RECORDS records for SECONDS
# seconds, store variant STORE_VARIANT with r = 2, and one failure of
# driver.failures (the in-process injector) at KILL_AT seconds:
#   node   target=node:random; seed=REP: a node other than rank 0's, with
#          its ranks and its Open MPI daemon
#   rank   target=random:1; allow_rank0=0; seed=REP: one rank
# Settings, from the environment: NODELOSS_RUNS (20), NODELOSS_PPN (2),
# NODELOSS_RECORDS (600), NODELOSS_SECONDS (8), NODELOSS_KILL_AT (3),
# NODELOSS_STORE_VARIANT (proposed: across hosts every window is osc/rdma,
# where the workaround variants hang on a kill at a random instant), NODELOSS_TIMEOUT (180, per run),
# NODELOSS_VARIANTS ("node rank"), NODELOSS_CSV (results/bench/nodeloss.csv).
# Each run's directory becomes one row of the CSV file (nodeloss_row.py;
# columns in docs/formats.md); what made it goes to nodeloss.meta next to
# it, the directories of the runs that did not pass to nodeloss-logs/.
# Before the runs, scripts/mpiprobe classifies the MPI on the cluster (its
# record beside the CSV, nodeloss.mpiprobe.json): runs of a kind it cannot
# survive (node: its node_loss probe; rank: rank_loss) are not run, and
# their rows say `unsupported`, with the probe's answer.  With the Open
# MPI that make deps builds (its patches) the job goes on after a node
# loss; a stock one ends it (its rows would say `aborted`).
# The cluster is one of its own (state /tmp/kvnodeloss-bench, bridge
# kvbrnb), up for the runs and down after them.  Needs root (namespaces): else it says so, writes
# nothing and exits 0 (the rest of make bench goes on).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${NODELOSS_CSV:-$ROOT/results/bench/nodeloss.csv}
RUNS=${NODELOSS_RUNS:-20} PPN=${NODELOSS_PPN:-2} RECORDS=${NODELOSS_RECORDS:-600}
SECS=${NODELOSS_SECONDS:-8} KILL_AT=${NODELOSS_KILL_AT:-3} TIMEOUT=${NODELOSS_TIMEOUT:-180}
STORE_VARIANT=${NODELOSS_STORE_VARIANT:-proposed} VARIANTS=${NODELOSS_VARIANTS:-node rank}
ROW=(python3 "$ROOT/experiments/bench/nodeloss_row.py")
DRV=${KV_BUILD:-$ROOT/build}/bin/kv_driver
LOGS=$(dirname "$OUT")/nodeloss-logs
CMD="NODELOSS_RUNS=$RUNS NODELOSS_PPN=$PPN NODELOSS_RECORDS=$RECORDS NODELOSS_SECONDS=$SECS"
CMD+=" NODELOSS_KILL_AT=$KILL_AT NODELOSS_STORE_VARIANT=$STORE_VARIANT NODELOSS_VARIANTS='$VARIANTS'"
CMD+=" BENCH=nodeloss make bench"
[ "$(id -u)" -eq 0 ] || { echo "bench_nodeloss: needs root (the test cluster's namespaces): skipped"; exit 0; }
export KV_CLUSTER_DIR=/tmp/kvnodeloss-bench KV_CLUSTER_BRIDGE=kvbrnb
VC=$ROOT/scripts/vcluster
trap '"$VC" down >/dev/null 2>&1' EXIT
"$VC" up 3 --no-slurm >/dev/null 2>&1 || { echo "bench_nodeloss: the test cluster did not come up" >&2; exit 1; }

spec() {  # VARIANT SEED: the failure spec
  case $1 in
    node) echo "target=node:random; when=time:$KILL_AT; seed=$2" ;;
    rank) echo "target=random:1; allow_rank0=0; when=time:$KILL_AT; seed=$2" ;;
    *) echo "bench_nodeloss: unknown variant '$1' (node, rank)" >&2; return 1 ;;
  esac
}

PROBE=${OUT%.csv}.mpiprobe.json
"$ROOT/scripts/mpiprobe" --cluster --out "$PROBE" || { echo "bench_nodeloss: the MPI probe failed" >&2; exit 1; }

# one VARIANT REP: a run, its row on stdout; one_key its key
one_key() { echo "$1,$2,"; }
one() {
  local v=$1 rep=$2 d f rc t0 ms last need says
  f=$(spec "$v" "$rep") || exit 2
  need=rank_loss; [ "$v" = node ] && need=node_loss
  says=$("$ROOT/scripts/mpiprobe" --says "$PROBE" "$need") || exit 1
  if [ "$says" != survives ]; then
    "${ROW[@]}" --variant "$v" --rep "$rep" --seed "$rep" --ranks $((3 * PPN)) --nodes 3 \
      --unsupported "not run: the MPI's $need probe says '$says' (${PROBE##*/})"
    return
  fi
  d=$(mktemp -d "$ROOT/build/nodeloss.XXXXXX")   # the hosts see the build directory
  t0=$(date +%s%N)
  nice -n 10 "$ROOT/scripts/kvrun" --cluster --ppn "$PPN" --timeout "$TIMEOUT" --out "$d/ranks" -- "$DRV" \
    workload.workload=a workload.records="$RECORDS" workload.operations=0 workload.duration_s="$SECS" \
    workload.value_bytes=32 store.max_value=64 store.slots_per_rank=4096 store.replicas=2 \
    store.variant="$STORE_VARIANT" driver.progress=0 driver.failures="$f" driver.out="$d" \
    driver.campaign=nodeloss driver.run_id="$v-rep$rep" > "$d/kvrun.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  last=$(tr -d '\000' < "$d/kvrun.log" | grep '^kvrun: [A-Z]' | tail -1)
  "${ROW[@]}" --dir "$d" --variant "$v" --rep "$rep" --seed "$rep" --ranks $((3 * PPN)) --nodes 3 \
    --rc "$rc" --seconds "$((ms / 1000)).$(printf %03d $((ms % 1000)))" --kvrun "$last"
  if [ "$rc" -ne 0 ]; then   # keep the evidence
    mkdir -p "$LOGS"
    rm -rf "${LOGS:?}/$v-rep$rep"
    mv "$d" "$LOGS/$v-rep$rep"
  else
    rm -rf "$d"
  fi
}

mkdir -p "$(dirname "$OUT")"
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
cells_open "$OUT" "$("${ROW[@]}" --header)" "$CMD"
# shellcheck disable=SC2086  # a list of words
cells_each "$OUT" "$RUNS" nodeloss one_key one $VARIANTS || exit 0
echo "wrote $OUT"
python3 "$ROOT/analysis/fig_nodeloss.py" "$(dirname "$OUT")" "$(dirname "$OUT")/figures" ||
  echo "bench_nodeloss: no figure (see above)"
