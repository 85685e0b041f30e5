#!/usr/bin/env bash
# run.sh -- the whole test suite; `make test` calls it.
#
# 1. cmocka unit tests (build/tests/unit/test_*), counted per test case
#    from their TAP output;
# 2. MPI tests (build/tests/mpi/NAME), one case per "run: NP ARGS" line at
#    the top of tests/mpi/NAME.c, each launched by scripts/kvrun under a
#    time limit (a hang is a failure);
# 3. negative checks: the ULFM test must NOT pass without --with-ft ulfm,
#    and a program that never finishes must be reported as hung.
# 4. script tests (tests/scripts/test_*.sh), each one case.
# Ends with the line "N passed, N failed[, N skipped]"; exit 1 on failure.
# TESTS='word ...' limits the run to cases whose name holds one of the
# words (a * in a word matches anything); KV_BUILD
# names another build directory (make test-sanitize).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${KV_BUILD:-$ROOT/build}  # make test-sanitize points this at build/sanitize
export KV_BUILD=$B
LOG=$B/test-logs
mkdir -p "$LOG"
PASS=0; FAIL=0; SKIP=0; FAILED=()
MPI_TIMEOUT=${MPI_TIMEOUT:-120}
want() {  # TESTS: words, a case runs when its name holds one of them (* a wildcard)
  [ -z "${TESTS:-}" ] && return 0
  local w
  for w in $TESTS; do
    # shellcheck disable=SC2053  # $w unquoted: its * match anything
    [[ $1 == *$w* ]] && return 0
  done
  return 1
}
record() {  # name status(pass|fail|skip) [detail]
  case $2 in
    pass) PASS=$((PASS+1)); printf '  ok    %s\n' "$1" ;;
    skip) SKIP=$((SKIP+1)); printf '  skip  %s (%s)\n' "$1" "${3:-}" ;;
    *) FAIL=$((FAIL+1)); FAILED+=("$1"); printf '  FAIL  %s %s\n' "$1" "${3:-}" ;;
  esac
}

echo "== unit tests (cmocka)"
for t in "$B"/tests/unit/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t"); want "$name" || continue
  out=$(CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=${KV_UNIT_ASAN_OPTIONS:-${ASAN_OPTIONS:-}} timeout 60 "$t" 2>&1); rc=$?
  echo "$out" > "$LOG/$name.log"
  n_ok=$(grep -c '^ok ' <<<"$out"); n_bad=$(grep -c '^not ok ' <<<"$out")
  while read -r line; do record "$name: ${line#ok [0-9]* - }" pass; done < <(grep '^ok ' <<<"$out")
  while read -r line; do record "$name: ${line#not ok [0-9]* - }" fail "(log: $LOG/$name.log)"; done < <(grep '^not ok ' <<<"$out")
  if [ "$rc" -ne 0 ] && [ "$n_bad" -eq 0 ]; then record "$name" fail "(exit $rc, $n_ok ok)"; fi
done

run_mpi() {  # label np timeout [kvrun options] -- prog args ; sets $out, $rc
  local label=$1 np=$2 to=$3; shift 3
  # a hung case leaves its processes' stacks beside its log
  KVRUN_STACKS=$LOG/$label.stacks "$ROOT/scripts/kvrun" -n "$np" --timeout "$to" "$@" > "$LOG/$label.log" 2>&1; rc=$?
  out=$(tr -d '\000' < "$LOG/$label.log")  # crash dumps may hold NUL bytes
}

echo "== MPI tests (each under a ${MPI_TIMEOUT}s limit)"
for src in "$ROOT"/tests/mpi/*.c; do
  name=$(basename "$src" .c)
  prog=$B/tests/mpi/$name
  while read -r np args; do
    label="$name-$np${args:+-${args// /-}}"
    want "$label" || continue
    [ -x "$prog" ] || { record "$label" fail "(not built)"; continue; }
    # shellcheck disable=SC2086
    run_mpi "$label" "$np" "$MPI_TIMEOUT" -- "$prog" $args
    if [ "$rc" -eq 0 ]; then record "$label" pass
    else record "$label" fail "($(tail -1 <<<"$out"); log: $LOG/$label.log)"; fi
  done < <(sed -n 's/^ \* run: *//p' "$src")
done

echo "== negative checks"
if want ulfm_shrink-noft; then
  run_mpi ulfm_shrink-noft 4 60 --no-ft -- "$B/tests/mpi/ulfm_shrink"
  if [ "$rc" -ne 0 ]; then record "ulfm_shrink without --with-ft ulfm does not pass" pass
  else record "ulfm_shrink without --with-ft ulfm does not pass" fail "(it passed)"; fi
fi
if want kvrun-hang; then
  export KVRUN_TAG=kvrun-hang-test-$$
  run_mpi kvrun-hang 2 5 -- sleep 600
  if [ "$rc" -eq 3 ] && grep -q 'HUNG' <<<"$out"; then record "kvrun reports a hang as HUNG within its limit" pass
  else record "kvrun reports a hang as HUNG within its limit" fail "(rc $rc)"; fi
  # The ranks of a hung run live in process groups of their own: none may
  # outlive the run.
  # (no pipeline: its other commands would carry the exported tag themselves)
  left=$(env -u KVRUN_TAG grep -lzxF "KVRUN_TAG=$KVRUN_TAG" /proc/[0-9]*/environ 2>/dev/null)
  left=$(grep -c . <<<"$left")
  if [ "$left" -eq 0 ]; then record "a hung run leaves no process behind" pass
  else record "a hung run leaves no process behind" fail "($left processes of the run remain)"; fi
  unset KVRUN_TAG
fi

if want kvrun-crash; then
  # Under --with-ft ulfm mpirun exits 0 although rank 1 died of SIGSEGV.
  run_mpi kvrun-crash 2 30 --no-verdict -- "$B/tests/mpi/mpi_crash"
  if [ "$rc" -eq 2 ] && grep -q 'CRASHED (a rank: Signal: Segmentation fault' <<<"$out"; then
    record "kvrun --no-verdict reports a rank's crash as CRASHED" pass
  else record "kvrun --no-verdict reports a rank's crash as CRASHED" fail "(rc $rc: $(tail -1 <<<"$out"))"; fi
fi

# The daemons a test may start (the runtime's, Slurm's, munge's): none that
# a script test started may outlive it.  Each test runs with KV_TEST_RUN
# set to a tag of its own, which every process it starts inherits, daemons
# included; one alive with the tag after the test (and a 5 s grace) fails
# that test, named, and is stopped so that it cannot make a later test fail
# instead.  Processes without the tag are never touched: another suite
# running on the same machine is not this one's business.
daemons() {  # "name:pid" of each live (not zombie) daemon that carries tag $1
  local n p
  for n in mpirun prterun prte prted slurmctld slurmd slurmstepd munged; do
    for p in $(pgrep -x "$n"); do
      grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null && continue
      grep -qzxF "KV_TEST_RUN=$1" "/proc/$p/environ" 2>/dev/null && echo "$n:$p"
    done
  done
}
left_behind() {  # tag: its daemons still alive after a 5 s grace, killed
  local i new
  for ((i = 0; i < 10; i++)); do
    new=$(daemons "$1")
    [ -z "$new" ] && return 0
    sleep 0.5
  done
  echo "$new" | tr '\n' ' '
  # shellcheck disable=SC2046  # one pid per word
  kill -KILL $(awk -F: '{print $2}' <<<"$new") 2>/dev/null
}

if compgen -G "$ROOT/tests/scripts/test_*.sh" >/dev/null; then
  echo "== script tests"
  for t in "$ROOT"/tests/scripts/test_*.sh; do
    name=$(basename "$t" .sh); want "$name" || continue
    tag="$name-$$-$RANDOM"
    out=$(KV_TEST_RUN=$tag timeout 1200 bash "$t" 2>&1); rc=$?
    left=$(left_behind "$tag")
    if [ -n "$left" ]; then
      out+=$'\n'"left behind (now killed): $left"
      case $rc in 0|77) rc=1 ;; esac
    fi
    echo "$out" > "$LOG/$name.log"
    if [ "$rc" -eq 0 ]; then record "$name" pass
    elif [ "$rc" -eq 77 ]; then record "$name" skip "$(tail -1 <<<"$out")"
    else record "$name" fail "($(tail -1 <<<"$out"); log: $LOG/$name.log)"; fi
  done
fi

echo
[ ${#FAILED[@]} -gt 0 ] && printf 'failed: %s\n' "${FAILED[@]}"
if [ "$SKIP" -gt 0 ]; then echo "$PASS passed, $FAIL failed, $SKIP skipped"
else echo "$PASS passed, $FAIL failed"; fi
[ "$FAIL" -eq 0 ]
