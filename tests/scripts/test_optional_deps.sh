#!/usr/bin/env bash
# test_optional_deps.sh -- the library and the driver without libsde, PAPI
# or hiredis, as on a cluster that has none of them.
#
# Pass rules, on a build made with KV_WITHOUT="sde papi hiredis" into a
# directory of its own:
#  1. make says it builds without the three and what each costs, and
#     kv_features.h says 0 for each;
#  2. libkvstore.so needs no libsde (not in its NEEDED entries, no papi_sde
#     symbol), kv_driver needs neither libpapi nor libhiredis, and the
#     kvstore.pc that make install writes does not name -lsde;
#  3. a 2-rank store run of that driver finishes with every value read
#     back checked (no failed check), and its meta.json says the PAPI
#     counters are missing because it was built without PAPI (and names
#     kvrun's transport and binding, tcp and none);
#  4. driver.backend=redis is refused with exit 2 and a message saying the
#     driver was built without hiredis.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T" "$ROOT/$B"' EXIT
B=build/test-minimal-$$
fail() { echo "FAIL: $*"; exit 1; }
out=$(make -C "$ROOT" -j2 BUILD="$B" KV_WITHOUT="sde papi hiredis" "$B/lib/libkvstore.so" "$B/bin/kv_driver" 2>&1) ||
  fail "the build without optional libraries failed: $(tail -5 <<<"$out")"
grep -q "building without sde papi hiredis .*no SDE counters; no PAPI counters in the driver; no Redis backend in the driver;" \
  <<<"$out" || fail "make does not say what it builds without: $(head -3 <<<"$out")"
for f in SDE PAPI HIREDIS; do
  grep -qx "#define KV_HAVE_$f 0" "$ROOT/$B/gen/kv_features.h" || fail "kv_features.h: KV_HAVE_$f is not 0"
done
echo "ok: make names what it leaves out"

needed() { objdump -p "$1" | awk '/NEEDED/ {print $2}'; }
needed "$ROOT/$B/lib/libkvstore.so" | grep -q libsde && fail "libkvstore.so still needs libsde"
nm -D "$ROOT/$B/lib/libkvstore.so" | grep -q papi_sde && fail "libkvstore.so still calls papi_sde"
needed "$ROOT/$B/bin/kv_driver" | grep -Eq 'libpapi|libhiredis|libsde' &&
  fail "kv_driver still needs: $(needed "$ROOT/$B/bin/kv_driver" | grep -E 'papi|hiredis|sde' | tr '\n' ' ')"
make -s -C "$ROOT" BUILD="$B" KV_WITHOUT="sde papi hiredis" install PREFIX="$T/inst" > "$T/install.log" 2>&1 ||
  fail "make install: $(tail -3 "$T/install.log")"
grep -q -- '-lsde' "$T/inst/lib/pkgconfig/kvstore.pc" && fail "kvstore.pc names -lsde: $(grep Libs "$T/inst/lib/pkgconfig/kvstore.pc")"
grep -qx 'Libs.private: -lm' "$T/inst/lib/pkgconfig/kvstore.pc" || fail "kvstore.pc: $(grep Libs.private "$T/inst/lib/pkgconfig/kvstore.pc")"
echo "ok: no libsde, libpapi or libhiredis needed; kvstore.pc without -lsde"

"$ROOT/scripts/kvrun" -n 2 --timeout 90 -- "$ROOT/$B/bin/kv_driver" workload.workload=a \
  workload.records=2000 workload.operations=4000 workload.value_bytes=64 store.slots_per_rank=8192 \
  store.max_value=128 driver.progress=0 driver.out="$T/run" > "$T/run.log" 2>&1 ||
  fail "a store run of the minimal driver: $(tail -3 "$T/run.log")"
python3 - "$T/run/meta.json" <<'PY' || fail "meta.json of the minimal driver: $(head -c 600 "$T/run/meta.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["status"] == "finished", m["status"]
assert m["operations_done"] >= 4000 and m["verify_errors"] == 0 and m["failed_ops"] == 0, m
assert "built without PAPI" in m["papi_hw"], m["papi_hw"]
assert m["transport"] == "tcp" and m["binding"] == "none", (m["transport"], m["binding"])
PY
echo "ok: a store run finishes; meta.json: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["papi_hw"])' "$T/run/meta.json")"

out=$("$ROOT/scripts/kvrun" -n 2 --timeout 60 -- "$ROOT/$B/bin/kv_driver" driver.backend=redis \
      workload.operations=10 driver.out="$T/redis" 2>&1); rc=$?
grep -q "built without hiredis" <<<"$out" || fail "driver.backend=redis without hiredis (kvrun exit $rc): $(tail -5 <<<"$out")"
[ "$rc" -ne 0 ] || fail "driver.backend=redis without hiredis was accepted"
echo "ok: driver.backend=redis is refused: $(grep -o 'driver.backend=redis: [^(]*' <<<"$out" | head -1)"
echo "PASS: built and ran without libsde, PAPI and hiredis"
