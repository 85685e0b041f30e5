#!/usr/bin/env bash
# bench_mpiprobe.sh -- `BENCH=mpiprobe make bench`: what the project's Open
# MPI and Open MPI 5.0.7 as released (build/mpi-stock, the same tarball
# without the patches) do across hosts when a rank or a node dies, by
# scripts/mpiprobe on a 3-host test cluster of its own (state
# /tmp/kvmpiprobe-bench, bridge kvbrmp), MPIPROBE_REPS (3) times each, the
# two builds in turns, each repetition in an order drawn from it
# (cells.sh: the loads before and after each probe in its row, resume).
# One row per probe in results/bench/mpiprobe.csv (build, patches,
# repetition, hosts, rank_loss, node_loss, proposed_rma, class, the loads;
# docs/formats.md), what made it in mpiprobe.meta; make report renders the table README.md and
# docs/setup.md show.  Needs root (the cluster's namespaces) and
# build/mpi-stock (make deps as root makes it): else it says so, writes
# nothing and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${MPIPROBE_CSV:-$ROOT/results/bench/mpiprobe.csv}
REPS=${MPIPROBE_REPS:-3}
[ "$(id -u)" -eq 0 ] || { echo "bench_mpiprobe: needs root (the test cluster's namespaces): skipped"; exit 0; }
STOCK=$ROOT/build/mpi-stock/mpi.env
[ -f "$STOCK" ] || { echo "bench_mpiprobe: no build/mpi-stock (make deps as root, or KV_STOCK=1): skipped"; exit 0; }
export KV_CLUSTER_DIR=/tmp/kvmpiprobe-bench KV_CLUSTER_BRIDGE=kvbrmp
VC=$ROOT/scripts/vcluster
T=$(mktemp -d)
trap '"$VC" down >/dev/null 2>&1; rm -rf "$T" "$KV_CLUSTER_DIR"' EXIT
mkdir -p "$KV_CLUSTER_DIR" && chmod 0755 "$KV_CLUSTER_DIR"
"$VC" up 3 --no-slurm > "$T/up.log" 2>&1 || { cat "$T/up.log"; echo "bench_mpiprobe: vcluster up 3 failed"; exit 1; }
declare -A HOME_OF=([project]="$(. "$ROOT/build/mpi.env" && echo "$MPI_HOME")" [stock]="$(. "$STOCK" && echo "$MPI_HOME")")
# shellcheck source=experiments/bench/cells.sh
source "$ROOT/experiments/bench/cells.sh"
cells_open "$OUT" "build,patches,repetition,hosts,rank_loss,node_loss,proposed_rma,class" \
  "MPIPROBE_REPS=$REPS BENCH=mpiprobe make bench"
cells_fresh "$OUT" && ! grep -q '^mpi-stock: ' "${OUT%.csv}.meta" && echo "mpi-stock: $(sed -n 's/^MPI_VERSION := //p' "$ROOT/build/mpi-stock/mpi.mk") at ${HOME_OF[stock]}, patches: none" \
  >> "${OUT%.csv}.meta"
patches_of() { sed -n 's/^patches=//p' "${HOME_OF[$1]}/.kvstore-complete" 2>/dev/null | sed 's/^none$//' | wc -w; }
probe_key() { echo "$1,$(patches_of "$1"),$2,"; }
probe() {  # BUILD REP: one probe of that build as its row
  local b=$1 rep=$2
  "$ROOT/scripts/mpiprobe" --cluster --mpi "${HOME_OF[$b]}" --out "$T/$b.json" > "$T/$b.log" 2>&1 ||
    { cat "$T/$b.log"; echo "bench_mpiprobe: mpiprobe failed for ${HOME_OF[$b]}"; return 0; } >&2
  python3 - "$T/$b.json" "$b" "$(patches_of "$b")" "$rep" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(",".join([sys.argv[2], sys.argv[3], sys.argv[4], str(r["hosts"])] +
               [r[k] for k in ("rank_loss", "node_loss", "proposed_rma", "class")]))
PY
  echo "bench_mpiprobe: $b, repetition $rep: $(tail -1 "$T/$b.log" | cut -d: -f2- | cut -d'>' -f1)" >&2
}
cells_each "$OUT" "$REPS" mpiprobe probe_key probe project stock || exit 0
echo "bench_mpiprobe: $OUT"
