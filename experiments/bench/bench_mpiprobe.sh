#!/usr/bin/env bash
# bench_mpiprobe.sh -- `BENCH=mpiprobe make bench`: what the project's Open
# MPI and Open MPI 5.0.7 as released (build/mpi-stock, the same tarball
# without the patches) do across hosts when a rank or a node dies, by
# scripts/mpiprobe on a 3-host test cluster of its own (state
# /tmp/kvmpiprobe-bench, bridge kvbrmp), MPIPROBE_REPS (3) times each, the
# two builds in turns.  One row per probe in results/bench/mpiprobe.csv
# (build, patches, repetition, hosts, load_1min when it started,
# rank_loss, node_loss, proposed_rma, class; docs/formats.md), what made
# it in mpiprobe.meta; make report renders the table README.md and
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
echo "build,patches,repetition,hosts,load_1min,rank_loss,node_loss,proposed_rma,class" > "$OUT.tmp"
for rep in $(seq "$REPS"); do
  for b in project stock; do
    home=${HOME_OF[$b]}
    patches=$(sed -n 's/^patches=//p' "$home/.kvstore-complete" 2>/dev/null | sed 's/^none$//' | wc -w)
    load=$(cut -d' ' -f1 /proc/loadavg)   # when this probe started
    "$ROOT/scripts/mpiprobe" --cluster --mpi "$home" --out "$T/$b.json" > "$T/$b.log" 2>&1 ||
      { cat "$T/$b.log"; echo "bench_mpiprobe: mpiprobe failed for $home"; exit 1; }
    python3 - "$T/$b.json" "$b" "$patches" "$rep" "$load" >> "$OUT.tmp" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(",".join([sys.argv[2], sys.argv[3], sys.argv[4], str(r["hosts"]), sys.argv[5]] +
               [r[k] for k in ("rank_loss", "node_loss", "proposed_rma", "class")]))
PY
    echo "bench_mpiprobe: $b, repetition $rep: $(tail -1 "$T/$b.log" | cut -d: -f2- | cut -d'>' -f1)"
  done
done
mv "$OUT.tmp" "$OUT"
"$ROOT/scripts/provenance" "MPIPROBE_REPS=$REPS BENCH=mpiprobe make bench" > "${OUT%.csv}.meta"
echo "mpi-stock: $(sed -n 's/^MPI_VERSION := //p' "$ROOT/build/mpi-stock/mpi.mk") at ${HOME_OF[stock]}, patches: none" \
  >> "${OUT%.csv}.meta"
echo "bench_mpiprobe: $OUT"
