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
# 4. The driver: a checkpointing run killed 2.5 s in ends the job; the
#    relaunched run restores (no load phase), verifies every value it reads
#    and reports the restored checkpoint and the writes lost after its cut.
DRV=${KV_BUILD:-$ROOT/build}/bin/kv_driver
COMMON="store.variant=checkpoint-restart store.replicas=1 store.checkpoint_dir=$D/dck store.slots_per_rank=16384
 store.max_value=128 workload.records=4000 workload.value_bytes=64 driver.progress=0 workload.workload=a
 workload.operations=0 workload.duration_s=3"
# shellcheck disable=SC2086
"$RUN" -n 3 --no-ft --timeout 60 -- "$DRV" $COMMON driver.checkpoint_s=1 \
  "driver.failures=target=ranks:2; when=time:2.5" driver.out="$D/r1" > "$D/d1.log" 2>&1 && fail "the killed driver run passed"
read -r n _ < "$D/dck/LATEST" || fail "the driver run left no checkpoint"
# shellcheck disable=SC2086
"$RUN" -n 3 --timeout 60 -- "$DRV" $COMMON driver.restore=1 driver.out="$D/r2" > "$D/d2.log" 2>&1 \
  || fail "the restarted driver run did not pass: $(tr -d '\000' < "$D/d2.log" | tail -3)"
IFS=, read -r _ _ _ _ from pairs _ lost < <(tail -1 "$D/r2/checkpoint.csv")
[ "$from" = "$n" ] && [ "$pairs" = 4000 ] || fail "restored checkpoint $from with $pairs pairs, wanted $n with 4000"
[ "$lost" -gt 0 ] || fail "no lost writes reported for a kill 0.5 s after a checkpoint"
grep -q '"verify_errors": 0' "$D/r2/meta.json" || fail "values read after the restore did not verify"
echo "ok: driver restart from checkpoint $from, $lost acknowledged writes lost after its cut"

echo "PASS: checkpoint survives a crash mid-write; restore exact; bad input refused"
