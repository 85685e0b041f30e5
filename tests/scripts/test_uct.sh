#!/usr/bin/env bash
# test_uct.sh -- the store and the proposed RMA features over btl/uct, the
# transport Open MPI uses for InfiniBand under ULFM.
#
# With the project's Open MPI built with UCX (build/mpi-ucx: KV_UCX=1 make
# deps), the suite's MPI cases below run again, built with that MPI into
# build/ucx, through `kvrun --transport uct` (btl uct,self; osc/ucx
# excluded) on the UCT memory domains this machine has that work
# (btl_uct_memory_domains=posix,tcp; "all" adds cma, whose btl/uct
# endpoints crash here): the store without failures on MPI_Win_allocate
# windows (osc/sm, every other MPI message over btl/uct: store_basic,
# store_concurrent, store_replicas) and the window revocation of the
# proposed features (win_ft allocate revoke), none with a failure.
# Pass rule: the runner's last line says 0 failed, more than 0 passed, and
# every launch named btl uct.  What does not work over btl/uct here is
# measured by BENCH=uct make bench (results/bench/uct.csv) and explained
# in docs/cluster.md (InfiniBand's path): a survivor's send to a dead
# peer can crash inside btl/uct, and osc/rdma finds no RDMA in these UCT
# transports.  Skipped (77) without build/mpi-ucx.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ENV=$ROOT/build/mpi-ucx/mpi.env
[ -f "$ENV" ] || { echo "skip: no build/mpi-ucx (KV_UCX=1 make deps builds Open MPI with UCX)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
UHOME=$(. "$ENV" && echo "$MPI_HOME")
"$UHOME/bin/ompi_info" --parsable | grep -q '^mca:btl:uct:' || fail "$UHOME has no btl/uct"
make -s -C "$ROOT" BUILD=build/ucx MPI_HOME="$UHOME" MPICC="$UHOME/bin/mpicc" tests > "$ROOT/build/ucx-make.log" 2>&1 ||
  fail "build with $UHOME: $(tail -5 "$ROOT/build/ucx-make.log")"
export KV_BUILD=$ROOT/build/ucx KV_MPI_ENV=$ENV KV_TRANSPORT=uct
export KV_MCA="${KV_MCA:+$KV_MCA }btl_uct_memory_domains=posix,tcp"
out=$(TESTS="store_basic*allocate store_concurrent*allocate store_replicas*allocate win_ft-4-allocate-revoke" \
      bash "$ROOT/tests/run.sh" 2>&1)
last=$(tail -1 <<<"$out")
echo "$out" | grep -E '^  (FAIL|ok) ' | sed 's/^/  /'
[[ $last =~ ^([0-9]+)\ passed,\ 0\ failed ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "over btl/uct: $last"
logs=$(grep -l '^kvrun: launch' "$KV_BUILD"/test-logs/{store_basic,store_concurrent,store_replicas,win_ft}*.log)
bad=$(grep -L -- '--mca btl uct,self' $logs | head -3)
[ -z "$bad" ] || fail "launches without btl uct: $bad"
echo "PASS: ${BASH_REMATCH[1]} cases over btl/uct"
