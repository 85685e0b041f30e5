#!/usr/bin/env bash
# run.sh -- `make fuzz`: run each libFuzzer target, built by the Makefile
# (clang, with ASan and UBSan, into build/fuzz/tests/fuzz/), for
# FUZZ_SECONDS (default 20) from its committed seed corpus
# tests/fuzz/corpus/TARGET/.  Inputs that once crashed a target live in
# tests/fuzz/regressions/TARGET/ and are replayed first, every run: a crash
# found becomes a regression input (copy the crash-* file there and fix the
# code).  New inputs the fuzzer finds go to a scratch directory, not into
# the committed corpus.  Campaign files, parsed in Python, get a mutation
# fuzzer of their own (fuzz_campaign.py).  Ends with "N targets, N failed".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${FUZZ_BUILD:-$ROOT/build/fuzz}
BIN=$OUT/tests/fuzz
SECS=${FUZZ_SECONDS:-20}
. "$ROOT/build/mpi.env"
fail=0; n=0
for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
  t=$(basename "$src" .c); n=$((n + 1))
  [ -x "$BIN/$t" ] || { echo "FAIL  $t: not built (make fuzz builds it)"; fail=$((fail + 1)); continue; }
  corpus=$ROOT/tests/fuzz/corpus/$t regress=$ROOT/tests/fuzz/regressions/$t scratch=$OUT/$t.corpus
  mkdir -p "$scratch"
  if [ -d "$regress" ] && compgen -G "$regress/*" >/dev/null; then
    if ! "$BIN/$t" "$regress"/* > "$OUT/$t.regress.log" 2>&1; then
      echo "FAIL  $t: a regression input crashes again (see $OUT/$t.regress.log)"; fail=$((fail + 1)); continue
    fi
  fi
  if "$BIN/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$OUT/$t-" "$scratch" "$corpus" > "$OUT/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$t.log")
    echo "ok    $t: ${runs:-?} inputs in ${SECS}s, no crash"
  else
    echo "FAIL  $t: crash, artifact in $OUT/$t-* (log $OUT/$t.log):"
    grep -m3 "ERROR\|runtime error" "$OUT/$t.log" | sed 's/^/      /'
    fail=$((fail + 1))
  fi
done
n=$((n + 1))
PYTHONPATH=$ROOT/experiments/campaign python3 "$ROOT/tests/fuzz/fuzz_campaign.py" "$SECS" > "$OUT/fuzz_campaign.log" 2>&1
tail -1 "$OUT/fuzz_campaign.log"
grep -q '^ok' "$OUT/fuzz_campaign.log" || fail=$((fail + 1))
echo "$n targets, $fail failed"
[ "$fail" -eq 0 ]
