#!/usr/bin/env bash
# bench_uct.sh -- `BENCH=uct make bench`: which of the suite's MPI cases
# work over btl/uct (InfiniBand's transport under ULFM) on the UCT
# transports this machine has, and how the others fail.
#
# With build/mpi-ucx (KV_UCX=1 make deps), every case of tests/mpi whose
# name holds store_, win_ft or ulfm_shrink runs once through tests/run.sh
# as tests/scripts/test_uct.sh runs its failure-free few (build/ucx,
# `kvrun --transport uct`, btl_uct_memory_domains=posix,tcp), each under a
# UCT_TIMEOUT (30 s) limit.  One row per case in results/bench/uct.csv:
# case, backend (allocate: osc/sm windows; create: osc/rdma over btl/uct;
# none), outcome (pass, fail, crashed, hung), and the first line of the case's log that says what went wrong
# (a signal caught inside UCX or Open MPI, an Open MPI error, or kvrun's
# verdict); uct.meta what made it.  Without build/mpi-ucx it says so,
# writes nothing and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${UCT_CSV:-$ROOT/results/bench/uct.csv}
ENV=$ROOT/build/mpi-ucx/mpi.env
[ -f "$ENV" ] || { echo "bench_uct: no build/mpi-ucx (KV_UCX=1 make deps): skipped"; exit 0; }
UHOME=$(. "$ENV" && echo "$MPI_HOME")
make -s -C "$ROOT" BUILD=build/ucx MPI_HOME="$UHOME" MPICC="$UHOME/bin/mpicc" tests > /dev/null 2>&1 ||
  { echo "bench_uct: cannot build with $UHOME"; exit 1; }
export KV_BUILD=$ROOT/build/ucx KV_MPI_ENV=$ENV KV_TRANSPORT=uct
export KV_MCA="${KV_MCA:+$KV_MCA }btl_uct_memory_domains=posix,tcp"
rm -rf "$KV_BUILD/test-logs"
load=$(cut -d' ' -f1 /proc/loadavg)
MPI_TIMEOUT=${UCT_TIMEOUT:-30} TESTS="store_ win_ft ulfm_shrink-4 ulfm_shrink-5" bash "$ROOT/tests/run.sh" > "$KV_BUILD/uct-run.log" 2>&1
python3 "$ROOT/experiments/bench/caselogs.py" "$KV_BUILD/test-logs" store_ win_ft ulfm_shrink --skip=noft --header \
  --why 'Caught signal [0-9]+ \([^)]*\)|BTL is not compatible with active-message RDMA|UCX  ERROR .*|MPI_ERR_[A-Z_]+|errors=[0-9]+' \
  > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
{ "$ROOT/scripts/provenance" "UCT_TIMEOUT=${UCT_TIMEOUT:-30} BENCH=uct make bench"
  echo "mpi-ucx: $(sed -n 's/^MPI_VERSION := //p' "$ROOT/build/mpi-ucx/mpi.mk") at $UHOME, $(grep -c . <<<"$(sed -n 's/^patches=//p' "$UHOME/.kvstore-complete" | tr ' ' '\n')") patches, --with-ucx"
  echo "load before the cases: $load"; } > "${OUT%.csv}.meta"
echo "bench_uct: $(tail -1 "$KV_BUILD/uct-run.log"); $OUT"
