#!/usr/bin/env bash
# profile_recovery.sh -- where re-replication's processor time goes.
#
# Recovery on this machine is processor work: its survivors outnumber
# the cores, so what bounds the wall time is the sum of what they
# compute.  Each repetition is one bench_recovery run (one kill) under
# `perf record -a` with DWARF call stacks; profile_parts.py charges every
# sample taken under kvr_rereplicate, on any survivor, to one part (the
# table scan, placement, the key hash, the check word, inserts, page
# faults, MPI, ...) and every other sample of that window, on any core, by
# its own stack (idle among them); each row says how many milliseconds of
# processor time per survivor that part took, beside the run's own wall
# time for re-replication (the maximum over the survivors).  At the end
# it prints report.py's table of the file.  Writes
#   OUT/recovery-profile.csv  variant,ranks,pairs,repetition,part,samples,cpu_ms,cpu_ms_per_survivor,share,rereplicate_us
# and its .meta.  VARIANT (recreate-inplace), RANKS (4), PAIRS (1000000),
# REPS (3), FREQ (2000 samples per second per core).  Needs perf (Debian's
# linux-perf) and root or perf_event_paranoid <= -1 for -a.
#   experiments/bench/profile_recovery.sh OUT
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: profile_recovery.sh OUT}
BIN=${KV_BUILD:-$ROOT/build}/bin
V=${VARIANT:-recreate-inplace} N=${RANKS:-4} P=${PAIRS:-1000000} REPS=${REPS:-3} FREQ=${FREQ:-2000}
command -v perf > /dev/null || { echo "profile_recovery.sh: no perf (apt install linux-perf)" >&2; exit 1; }
[ -x "$BIN/bench_recovery" ] || { echo "profile_recovery.sh: no $BIN/bench_recovery (make all)" >&2; exit 1; }
case $V in spare) np=$((N + 1)) sp=1 ;; *) np=$N sp=0 ;; esac
mkdir -p "$OUT"
f=$OUT/recovery-profile.csv
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
echo "variant,ranks,pairs,repetition,part,samples,cpu_ms,cpu_ms_per_survivor,share,rereplicate_us" > "$f"
"$ROOT/scripts/provenance" "VARIANT=$V RANKS=$N PAIRS=$P REPS=$REPS FREQ=$FREQ BENCH=recovery-profile make bench" > "${f%.csv}.meta"
failed=0
for rep in $(seq 1 "$REPS"); do
  rm -f "$T/row.csv"
  perf record -q -F "$FREQ" -a --call-graph dwarf,16384 -o "$T/perf.data" -- \
    "$ROOT/scripts/kvrun" -n "$np" --timeout 300 -- env KV_SPARES=$sp \
    "$BIN/bench_recovery" "$V" allocate "$P" "$rep" "$T/row.csv" > "$T/log" 2>&1
  st=$?
  wall=$(awk -F, 'END {print $11}' "$T/row.csv" 2>/dev/null)
  if [ $st -ne 0 ] || [ -z "$wall" ]; then
    echo "profile_recovery.sh: repetition $rep failed (status $st; 3: hung), no rows:" >&2
    tail -5 "$T/log" >&2
    failed=$((failed + 1))
    continue
  fi
  # survivors: the members left after the one kill (the spare replaces it)
  perf script -i "$T/perf.data" --comm bench_recovery 2> /dev/null |
    python3 "$ROOT/experiments/bench/profile_parts.py" "$FREQ" $((N - 1 + sp)) |
    tail -n +2 | sed "s/^/$V,$N,$P,$rep,/; s/\$/,$wall/" >> "$f"
done
python3 "$ROOT/experiments/bench/report.py" print recovery-profile --file "$f"
echo "wrote $f"
[ "$failed" -eq 0 ] || { echo "profile_recovery.sh: $failed of $REPS repetitions failed" >&2; exit 1; }
