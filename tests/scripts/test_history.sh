#!/usr/bin/env bash
# test_history.sh -- recorded runs with ranks SIGKILLed from outside at
# random instants, judged by the history checker (tests/history).
# Pass rule: every run below ends "pass": its history is linearizable, the
# survivors' final reads hold every acknowledged write and delete, kv_audit
# finds the replicas in agreement, no run hangs (40-s deadline), and no
# process of any run is left afterwards.  The scenarios cover every
# variant, rank 0 among the victims, two kills at once and 25 ms apart,
# kills one after another, a kill inside re-replication, and variants
# proposed and online on osc/rdma; a rank that dies of SIGSEGV must be called
# crashed, not passed.  A straggler (a rank stopped for 200-800 ms, then
# continued) must pass with no recovery run by anyone (it is not taken for
# dead), on both backends; one taken for dead by ULFM's heartbeat detector
# at a 0.2 s timeout must not pass.  `make soak` runs the same over a thousand seeds.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
fails=0 n=0
run() {  # variant backend scenario r spares seed [signal [outcome]]
  local line
  line=$(bash "$ROOT/tests/history/run.sh" --variant "$1" --backend "$2" --scenario "$3" --r "$4" \
         --spares "$5" --seed "$6" --seconds 1.5 --signal "${7:-KILL}" --out "$W/$1-$2-$3")
  n=$((n + 1))
  echo "$line"
  if ! grep -q "outcome=${8:-pass} .*orphans=0 " <<<"$line"; then
    fails=$((fails + 1))
    sed 's/^/    /' "$W/$1-$2-$3/check.log" | head -40
    tail -5 "$W/$1-$2-$3/kvrun.log" | sed 's/^/    /'
  fi
}
run recreate-copy    allocate none      2 0 1
run recreate-copy    allocate single    2 0 2
run recreate-copy    allocate rank0     2 0 3
run recreate-inplace allocate single    2 0 4
run recreate-free    allocate staggered 3 0 5
run recreate-free    allocate seq       2 0 6
run spare            allocate single    2 1 7
run recreate-copy    allocate double    3 0 8
run spare            allocate rerep     3 1 9
run proposed         allocate single    2 0 10
run proposed         create   rank0     2 0 11
run proposed         create   double    3 0 12
run online           allocate single    2 0 20
run online           allocate rerep     3 0 24
run online           create   rank0     2 0 26
run online           allocate stop      2 0 27
run recreate-copy    create   stop      2 0 28
# A rank that crashes (SIGSEGV) is not a pass, even where the job outlives it.
run recreate-copy    allocate single    2 0 13 SEGV crashed
# A straggler that the runtime takes for dead (heartbeats every 50 ms, a
# 0.2 s timeout) is not a pass: it is told it died and aborts.
OMPI_MCA_mpi_ft_detector=1 OMPI_MCA_mpi_ft_detector_period=0.05 OMPI_MCA_mpi_ft_detector_timeout=0.2 \
  run online         allocate stop      2 0 3 KILL crashed
[ "$fails" -eq 0 ] || { echo "FAIL: $fails of $n recorded runs did not pass"; exit 1; }
echo "PASS: $n recorded runs with external kills, linearizable, nothing lost, replicas agree, no orphan"
