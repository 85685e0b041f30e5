#!/usr/bin/env bash
# test_checkpoint.sh -- checkpoint/restart across real job ends.
# Pass rules:
#  1. a job whose rank 1 is SIGKILLed halfway through writing checkpoint 2
#     ends (launched without --with-ft, a death ends the job) and leaves
#     LATEST naming checkpoint 1 and no complete file of rank 1 in 2;
#  2. a new job restores exactly checkpoint 1 (store_checkpoint verify);
#  3. damaged input is refused with the status that names it, never
#     loaded: a flipped byte in a file (CORRUPT), a restart with other
#     ranks (CONFIG), an empty directory (NOT_FOUND).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN=$ROOT/scripts/kvrun PROG=${KV_BUILD:-$ROOT/build}/tests/mpi/store_checkpoint
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$RUN" -n 3 --no-ft --timeout 60 -- "$PROG" crash "$D/ck" > "$D/crash.log" 2>&1
rc=$?
[ "$rc" -ne 0 ] || fail "the crash job passed; rank 1 should have died (log: $(tail -1 "$D/crash.log"))"
[ "$rc" -ne 3 ] || fail "the crash job hung instead of ending"
read -r latest nids < "$D/ck/LATEST" || fail "no LATEST after the crash"
[ "$latest" = 1 ] && [ "$nids" = 3 ] || fail "LATEST says '$latest $nids', wanted '1 3'"
[ ! -e "$D/ck/ckpt-000002/id-00001.kvc" ] || fail "rank 1's file of the interrupted checkpoint is complete"
echo "ok: the crash ended the job ($(tr -d '\000' < "$D/crash.log" | tail -1)); LATEST = 1"

"$RUN" -n 3 --timeout 60 -- "$PROG" verify "$D/ck" > "$D/verify.log" 2>&1 \
  || fail "restore after the crash: $(tr -d '\000' < "$D/verify.log" | grep -a 'rank\|kvrun' | tail -5)"
echo "ok: $(tr -d '\000' < "$D/verify.log" | grep -a 'restored checkpoint')"

"$RUN" -n 2 --timeout 60 -- "$PROG" expect-CONFIG "$D/ck" > "$D/config.log" 2>&1 \
  || fail "restart on 2 ranks of a 3-rank checkpoint was not refused with CONFIG"
echo "ok: other rank count refused ($(tr -d '\000' < "$D/config.log" | grep -a 'kv_restore:'))"

f=$D/ck/ckpt-000001/id-00002.kvc
size=$(stat -c %s "$f")
printf '\xff' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc status=none
"$RUN" -n 3 --timeout 60 -- "$PROG" expect-CORRUPT "$D/ck" > "$D/corrupt.log" 2>&1 \
  || fail "a flipped byte was not refused with CORRUPT"
echo "ok: flipped byte refused ($(tr -d '\000' < "$D/corrupt.log" | grep -a 'kv_restore:'))"

mkdir "$D/empty"
"$RUN" -n 3 --timeout 60 -- "$PROG" expect-NOT_FOUND "$D/empty" > "$D/empty.log" 2>&1 \
  || fail "an empty directory was not reported as NOT_FOUND"
echo "PASS: checkpoint survives a crash mid-write; restore exact; bad input refused"
