#!/usr/bin/env bash
# test_valgrind.sh -- valgrind memcheck on the failure-free code.
# Pass rules:
#  1. every cmocka unit test runs clean under memcheck: no invalid access,
#     no use of uninitialised memory, nothing definitely lost (in the test
#     process: the children some tests fork are killed on purpose, some
#     inside the code under test, and are not checked);
#  2. the store on 2 ranks (tests/mpi/store_resources ops N): no leak is
#     allocated by the store's own code, and the bytes definitely lost
#     (all inside Open MPI, which does not free everything at
#     MPI_Finalize) do not grow with the number of operations: 200 and
#     4000 operations per rank lose the same amount, within 1 KiB.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind not installed (make deps installs it)"; exit 77; }
[ -z "${KV_BUILD:-}" ] || case $B in *sanitize*) echo "skip: valgrind and ASan do not mix"; exit 77 ;; esac

for t in "$B"/tests/unit/test_*; do
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --child-silent-after-fork=yes "$t" > "$T/unit.log" 2>&1
  [ $? -ne 99 ] || fail "$(basename "$t") under memcheck: $(grep -m3 '==' "$T/unit.log")"
done
echo "ok: unit tests clean under memcheck"

lost() {  # N -> bytes definitely lost, summed over the 2 ranks; checks the allocation sites
  rm -f "$T"/vg.*
  "$ROOT/scripts/kvrun" -n 2 --timeout 300 -- valgrind --leak-check=full --show-leak-kinds=definite \
    --num-callers=12 --log-file="$T/vg.%p" "$B/tests/mpi/store_resources" ops "$1" > "$T/run.log" 2>&1 \
    || fail "store_resources ops $1 under valgrind: $(tail -1 "$T/run.log")"
  # The frame right after the allocator is where the block was allocated.
  ours=$(awk '/definitely lost in loss record/ {grab = 1; next}
              grab && /(malloc|calloc|realloc|posix_memalign|strdup)/ {next}
              grab {print; grab = 0}' "$T"/vg.* | grep -E ': (kv_|kvo_|kvr_|kvw_|kvs_|kvh_|kvc_)' || true)
  [ -z "$ours" ] || fail "leaks allocated by the store ($1 ops):"$'\n'"$ours"
  sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$T"/vg.* | tr -d , | awk '{s += $1} END {print s + 0}'
}
small=$(lost 200) || exit 1
large=$(lost 4000) || exit 1
echo "definitely lost (inside MPI): $small bytes after 200 operations per rank, $large after 4000"
[ $((large - small)) -le 1024 ] || fail "leaks grow with the operations: $small -> $large bytes"
echo "PASS: no leak from the store's code; MPI's own losses do not grow with operations"
