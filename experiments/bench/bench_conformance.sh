#!/usr/bin/env bash
# bench_conformance.sh -- `BENCH=conformance make bench`: the conformance
# suite of the fault-tolerant RMA, on the patched build and on what Open
# MPI does as released, side by side.
#
# The suite is the programs SUITE names (tests/mpi/): one small program
# per rule of the proposal (per-target failures, acknowledgement, locks
# held or half taken by the dead, revoke, free, a window's collectives
# after MPIX_Win_shrink_comm), a victim killed by
# SIGKILL, on osc/sm (allocate) and osc/rdma (create).  Every case of theirs
# that make test runs with the switch on runs here twice through
# tests/run.sh, each under CONFORMANCE_TIMEOUT (20 s): with the switch
# osc_base_ft_rma on, as make test runs it, and off (KVT_FT_RMA=off: the
# programs leave it unset, so this same build behaves as Open MPI as
# released: patches 0001-0004 change nothing then), judged by the same
# rules.  Then, where this machine can make a test cluster (root, network
# namespaces), the suite's cases across its 3 hosts, osc/rdma over TCP
# between them (tests/scripts/test_multihost.sh's win_ cases: CASES=win_),
# on and off the same way.  One row per case, hosts and switch in
# results/bench/conformance.csv:
#   case,backend,hosts,switch,outcome,signature
# outcome pass, fail, crashed or hung (kvrun's verdict); signature the
# first check that failed, or kvrun's verdict; conformance.meta what made
# it.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${CONFORMANCE_CSV:-${BENCH_OUT:-$ROOT/results/bench}/conformance.csv}
B=${KV_BUILD:-$ROOT/build}
TIMEOUT=${CONFORMANCE_TIMEOUT:-20}
SUITE="win_ack win_lock win_ft win_shrink win_leader"  # win_leader: across hosts only (a node leader)
# the cases with the switch on (the stock records of the programs, "off"
# and "stock", are the switch-off rules themselves: left out)
CASES="win_ack-4-allocate-on win_ack-4-create-on win_lock win_ft win_shrink"
for p in $SUITE; do
  [ -x "$B/tests/mpi/$p" ] || { echo "bench_conformance: not built: $B/tests/mpi/$p (run make)" >&2; exit 1; }
done
load=$(cut -d' ' -f1 /proc/loadavg)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
for sw in on off; do
  rm -rf "$B/test-logs"
  if [ "$sw" = off ]; then export KVT_FT_RMA=off; else unset KVT_FT_RMA; fi
  MPI_TIMEOUT=$TIMEOUT TESTS=$CASES bash "$ROOT/tests/run.sh" > "$W/run-$sw.log" 2>&1
  mkdir -p "$W/$sw" && cp "$B"/test-logs/*.log "$W/$sw/" 2>/dev/null
done
unset KVT_FT_RMA
HOSTS=1
if "$ROOT/scripts/vcluster" can --no-slurm > /dev/null 2>&1; then
  HOSTS="1 3"
  for sw in on off; do
    if [ "$sw" = off ]; then export KVT_FT_RMA=off; else unset KVT_FT_RMA; fi
    MULTIHOST_LOGS=$W/mh-$sw CASES=win_ CASE_TIMEOUT=$TIMEOUT bash "$ROOT/tests/scripts/test_multihost.sh" \
      > "$W/mh-run-$sw.log" 2>&1
  done
  unset KVT_FT_RMA
fi
why='check failed: .*|returned -?[0-9]+ \([^)]*\), wanted .*|came back from .*'
{ echo "case,backend,hosts,switch,outcome,signature"
  for h in $HOSTS; do
    for sw in on off; do
      d=$W/$sw; [ "$h" = 1 ] || d=$W/mh-$sw
      python3 "$ROOT/experiments/bench/caselogs.py" "$d" $SUITE --skip=-off,-stock \
        --why "$why" --column "hosts=$h" --column "switch=$sw"
    done
  done; } > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
{ "$ROOT/scripts/provenance" "CONFORMANCE_TIMEOUT=$TIMEOUT BENCH=conformance make bench"
  echo "load before the cases: $load"; } > "${OUT%.csv}.meta"
echo "bench_conformance: on: $(tail -1 "$W/run-on.log"); off: $(tail -1 "$W/run-off.log"); $OUT"
[ "$HOSTS" = 1 ] && echo "bench_conformance: no test cluster here ($("$ROOT/scripts/vcluster" can --no-slurm 2>&1)): one host only"
