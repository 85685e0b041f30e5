#!/usr/bin/env bash
# bench_revisions.sh -- the read path of several revisions of the library,
# side by side: `BENCH=revisions REVS='A B' make bench`.
#
# A lever of the read path is a change to kvstore/; whether it pays is
# only visible against the revision before it, measured in the same
# minutes (the machine's load moves both alike).  So every revision's
# kvstore/ is built beside this checkout's benchmarks (bench_store_raw
# allocate on 2 ranks, bench_hotpath), the same benchmark sources for all,
# and the revisions take turns, RUNS times over, each run writing its
# medians; a row carries its revision (`work` is this checkout as it is,
# edits included) and its turn.  Writes, into OUT:
#   store-vs-raw-revs.csv  revision,run,operation,backend,ranks,value_bytes,store_us,raw_us,ratio
#   hotpath-revs.csv       revision,run,step,ranks,replicas,value_bytes,ns_per_call,rounds
# each with its .meta (scripts/provenance), and prints the median over
# the runs per revision.  RUNS (5), OPS (30000 per round), ITERS (2000000
# per round of bench_hotpath); each run has 9 rounds.
#   experiments/bench/bench_revisions.sh OUT REV...
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: bench_revisions.sh OUT REV...}
shift
[ $# -ge 1 ] || { echo "bench_revisions.sh: name at least one revision" >&2; exit 64; }
[ -f "$ROOT/build/mpi.mk" ] || { echo "bench_revisions.sh: no build/mpi.mk (make deps)" >&2; exit 1; }
RUNS=${RUNS:-5} OPS=${OPS:-30000} ITERS=${ITERS:-2000000}
mkdir -p "$OUT"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

source "$ROOT/experiments/bench/revtree.sh"

names=()
for rev in "$@"; do
  name=$(rev_name "$ROOT" "$rev") || exit 1
  rev_tree "$ROOT" "$rev" "$T/$name" build/bin/bench_store_raw build/bin/bench_hotpath || exit 1
  names+=("$name")
done

sr=$OUT/store-vs-raw-revs.csv hp=$OUT/hotpath-revs.csv
cmd="RUNS=$RUNS OPS=$OPS ITERS=$ITERS experiments/bench/bench_revisions.sh $OUT $*${BENCH_NOTE:+ # $BENCH_NOTE}"
echo "revision,run,operation,backend,ranks,value_bytes,store_us,raw_us,ratio" > "$sr"
echo "revision,run,step,ranks,replicas,value_bytes,ns_per_call,rounds" > "$hp"
"$ROOT/scripts/provenance" "$cmd" > "${sr%.csv}.meta"
"$ROOT/scripts/provenance" "$cmd" > "${hp%.csv}.meta"
for run in $(seq 1 "$RUNS"); do
  for name in "${names[@]}"; do
    b=$T/$name/build/bin
    rm -f "$T/sr.csv" "$T/hp.csv"
    "$ROOT/scripts/kvrun" -n 2 --timeout 300 -- "$b/bench_store_raw" allocate "$T/sr.csv" "$OPS" 9 > "$T/log" 2>&1 ||
      { echo "bench_revisions.sh: bench_store_raw of $name failed: $(tail -1 "$T/log")" >&2; exit 1; }
    "$b/bench_hotpath" "$T/hp.csv" "$ITERS" 9 > /dev/null || exit 1
    sed "s/^/$name,$run,/" "$T/sr.csv" >> "$sr"
    sed "s/^/$name,$run,/" "$T/hp.csv" >> "$hp"
  done
done
python3 - "$sr" "$hp" <<'EOF'
import csv, statistics, sys
med = lambda v: statistics.median(float(x) for x in v)
sr, hp = (list(csv.DictReader(open(f))) for f in sys.argv[1:])
revs = list(dict.fromkeys(x["revision"] for x in sr))
print("store against raw RMA (allocate, 2 ranks), medians over the runs:")
for rev in revs:
    for op in ("get", "put"):
        g = [x for x in sr if x["revision"] == rev and x["operation"] == op]
        print(f"  {rev:12s} {op}  store {med(x['store_us'] for x in g):.3f} us  raw {med(x['raw_us'] for x in g):.3f} us"
              f"  ratio {med(x['ratio'] for x in g):.2f}  ({len(g)} runs)")
print("local steps (ns per call), medians over the runs:")
steps = list(dict.fromkeys((x["step"], x["ranks"], x["replicas"]) for x in hp))
print("  " + " ".join(f"{'/'.join(filter(None, s)):>12s}" for s in steps))
for rev in revs:
    print("  " + " ".join(f"{med(x['ns_per_call'] for x in hp if x['revision'] == rev and (x['step'], x['ranks'], x['replicas']) == s):12.2f}"
                          for s in steps) + f"  {rev}")
EOF
echo "wrote $sr $hp"
