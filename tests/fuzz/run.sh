#!/usr/bin/env bash
# run.sh -- `make fuzz`: build the libFuzzer targets (clang, with ASan and
# UBSan) and run each for FUZZ_SECONDS (default 20) from its committed seed
# corpus tests/fuzz/corpus/TARGET/.  Inputs that once crashed a target live
# in tests/fuzz/regressions/TARGET/ and are replayed first, every run: a
# crash found becomes a regression input (copy the crash-* file there and
# fix the code).  New inputs the fuzzer finds go to a scratch directory,
# not into the committed corpus.  Ends with "N targets, N failed".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/build/mpi.env"
OUT=${FUZZ_BUILD:-$ROOT/build/fuzz}
SECS=${FUZZ_SECONDS:-20}
mkdir -p "$OUT"
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "run.sh: $CC not found (make deps installs clang)"; exit 1; }
FLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$ROOT/kvstore" -I"$ROOT/experiments/driver" -I"$ROOT/experiments/driver/backends" -I"$ROOT/injectors" -I"$ROOT/tests/fuzz"
       -I"$MPI_HOME/include")
KV_SRC=("$ROOT"/kvstore/*.c)
LIBS=(-L"$MPI_HOME/lib" -Wl,-rpath,"$MPI_HOME/lib" -lmpi -lsde -lm)
INJ_SRC="$(ls "$ROOT"/injectors/*.c | grep -v kv_inject.c | tr '\n' ' ')"
declare -A EXTRA=(
  [fuzz_cfgfile]="$ROOT/experiments/driver/cfgfile.c"
  [fuzz_inject_spec]="$INJ_SRC"
  [fuzz_pidtable]="$INJ_SRC"
  [fuzz_driver_config]="$(ls "$ROOT"/experiments/driver/*.c "$ROOT"/experiments/driver/backends/*.c | grep -v kv_driver | tr '\n' ' ') $INJ_SRC"
)
fail=0; n=0
for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
  t=$(basename "$src" .c); n=$((n + 1))
  # shellcheck disable=SC2206
  extra=(${EXTRA[$t]:-})
  srcs=("$src")
  case $t in fuzz_cfgfile|fuzz_inject_spec|fuzz_pidtable) ;; *) srcs+=("${KV_SRC[@]}") ;; esac
  libs=("${LIBS[@]}")
  [ "$t" = fuzz_driver_config ] && libs+=(-lpapi -lhiredis)
  if ! "$CC" "${FLAGS[@]}" -DKV_GIT_REVISION='"fuzz"' "${srcs[@]}" "${extra[@]}" -o "$OUT/$t" "${libs[@]}" 2> "$OUT/$t.build.log"; then
    echo "FAIL  $t: does not build (see $OUT/$t.build.log)"; fail=$((fail + 1)); continue
  fi
  corpus=$ROOT/tests/fuzz/corpus/$t regress=$ROOT/tests/fuzz/regressions/$t scratch=$OUT/$t.corpus
  mkdir -p "$scratch"
  if [ -d "$regress" ] && compgen -G "$regress/*" >/dev/null; then
    if ! "$OUT/$t" "$regress"/* > "$OUT/$t.regress.log" 2>&1; then
      echo "FAIL  $t: a regression input crashes again (see $OUT/$t.regress.log)"; fail=$((fail + 1)); continue
    fi
  fi
  if "$OUT/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$OUT/$t-" "$scratch" "$corpus" > "$OUT/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$t.log")
    echo "ok    $t: ${runs:-?} inputs in ${SECS}s, no crash"
  else
    echo "FAIL  $t: crash, artifact in $OUT/$t-* (log $OUT/$t.log):"
    grep -m3 "ERROR\|runtime error" "$OUT/$t.log" | sed 's/^/      /'
    fail=$((fail + 1))
  fi
done
n=$((n + 1))  # campaign files are parsed in Python: a mutation fuzzer of its own
/usr/bin/python3 "$ROOT/tests/fuzz/fuzz_campaign.py" "$SECS" > "$OUT/fuzz_campaign.log" 2>&1
tail -1 "$OUT/fuzz_campaign.log"
grep -q '^ok' "$OUT/fuzz_campaign.log" || fail=$((fail + 1))
echo "$n targets, $fail failed"
[ "$fail" -eq 0 ]
