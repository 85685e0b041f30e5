#!/usr/bin/env bash
# test_uct.sh -- the store's scenarios and the proposed RMA features over
# btl/uct, the transport Open MPI uses for InfiniBand under ULFM.
#
# With the project's Open MPI built with UCX (build/mpi-ucx: KV_UCX=1 make
# deps), every MPI test of the suite whose name starts with store_ or
# win_ft runs again, built with that MPI into build/ucx, through `kvrun
# --transport uct` (btl uct,self, osc/ucx excluded) with the memory domains
# and transports UCX offers on this machine (btl_uct_memory_domains=all:
# shared memory and TCP here, no InfiniBand device).  Pass rule: the
# runner's last line says 0 failed, with at least one store_ and one win_ft
# case passed, and each launch of those cases named btl uct.  Skipped (77)
# without build/mpi-ucx.
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
export KV_MCA="${KV_MCA:+$KV_MCA }btl_uct_memory_domains=all"
total_pass=0
for pat in store_ win_ft; do
  out=$(TESTS=$pat bash "$ROOT/tests/run.sh" 2>&1)
  last=$(tail -1 <<<"$out")
  echo "$out" | grep -E '^  (FAIL|ok) ' | sed 's/^/  /'
  [[ $last =~ ^([0-9]+)\ passed,\ 0\ failed ]] || fail "$pat over btl/uct: $last"
  [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "$pat over btl/uct: no case ran"
  total_pass=$((total_pass + BASH_REMATCH[1]))
done
grep -L -- '--mca btl uct,self' "$KV_BUILD"/test-logs/store_*.log "$KV_BUILD"/test-logs/win_ft*.log | grep -q . &&
  fail "a launch without btl uct: $(grep -L -- '--mca btl uct,self' "$KV_BUILD"/test-logs/store_*.log | head -3)"
echo "PASS: $total_pass store and proposed-feature cases over btl/uct"
