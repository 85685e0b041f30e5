#!/usr/bin/env bash
# test_profile_parts.sh -- the profile of re-replication charges each perf
# sample to the right part.
#
# Pass rules: on a hand-made `perf script` stream (2 samples per ms),
# a page fault under a pack's append is a page fault, a hash under an
# insert is the key hash, a sample whose stack has only kvr_rereplicate
# is the table scan; the window runs from the first sample under
# kvr_rereplicate to the last, so a sample before it is not counted and
# one inside it on another stack is charged by that stack (tcp, idle),
# and perf's own samples in it are the profiler's, page faults or not;
# the per-survivor column divides by the survivors; a stream with no
# sample under kvr_rereplicate exits non-zero with a message.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P="python3 $ROOT/experiments/bench/profile_parts.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sample() {  # COMM TIME FRAME... (innermost first)
  echo "$1 100 [000] $2:     500000 cpu-clock:ppp: "
  shift 2
  for f in "$@"; do echo "	ffffffff81000000 $f+0x10 (/lib/x)"; done
  echo
}
{
  sample bench_recovery 10.000 kvh_hash kv_get main                       # before the window
  sample bench_recovery 10.100 clear_page_rep exc_page_fault kvr_stream_add pack_pair kvr_rereplicate kvr_recover
  sample bench_recovery 10.110 mix kvh_hash insert_at kvr_insert_all exchange kvr_rereplicate
  sample bench_recovery 10.120 kvr_rereplicate kvr_recover main
  sample bench_recovery 10.130 kvr_rereplicate kvr_recover main
  sample bench_recovery 10.140 copy_to_user tcp_recvmsg sock_recvmsg __sys_recvfrom opal_progress
  sample swapper        10.150 pv_native_safe_halt default_idle
  sample perf           10.160 clear_page_rep exc_page_fault perf_mmap__push
  sample bench_recovery 10.200 kvs_encode insert_at kvr_insert_all exchange kvr_rereplicate
  sample bench_recovery 10.300 kvh_hash kv_get main                       # after it
} > "$T/in"
$P 2000 2 < "$T/in" > "$T/out" || fail "profile_parts.py failed: $(cat "$T/out")"
row() { grep "^\"$1\"," "$T/out" | cut -d, -f2-4; }
[ "$(row 'page faults')" = "1,0.5,0.2" ] || fail "page fault under kvr_stream_add: $(row 'page faults')"
[ "$(row 'key hash')" = "1,0.5,0.2" ] || fail "hash under an insert: $(row 'key hash')"
[ "$(row 'table scan')" = "2,1.0,0.5" ] || fail "bare kvr_rereplicate: $(row 'table scan')"
[ "$(row 'check word')" = "1,0.5,0.2" ] || fail "encode: $(row 'check word')"
[ "$(row 'elsewhere: tcp sockets')" = "1,0.5,0.2" ] || fail "tcp in the window: $(row 'elsewhere: tcp sockets')"
[ "$(row 'idle')" = "1,0.5,0.2" ] || fail "idle in the window: $(row 'idle')"
[ "$(row 'profiler')" = "1,0.5,0.2" ] || fail "perf's own sample: $(row 'profiler')"
[ "$(row 'elsewhere: page faults')" = "0,0.0,0.0" ] || fail "perf's fault charged to the run: $(row 'elsewhere: page faults')"
[ "$(row 'elsewhere: other')" = "0,0.0,0.0" ] || fail "a sample outside the window counted: $(row 'elsewhere: other')"
grep -q '^"window (wall)",,100.0,,$' "$T/out" || fail "window: $(grep window "$T/out")"
sample bench_recovery 1.0 kvh_hash kv_get main > "$T/none"
$P 2000 2 < "$T/none" > "$T/o2" 2> "$T/e2" && fail "no sample under kvr_rereplicate accepted"
grep -q "no sample under kvr_rereplicate" "$T/e2" || fail "message: $(cat "$T/e2")"
$P 2000 < "$T/in" > /dev/null 2>&1 && fail "a missing argument accepted"
echo "PASS test_profile_parts"
