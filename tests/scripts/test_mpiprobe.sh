#!/usr/bin/env bash
# test_mpiprobe.sh -- scripts/mpiprobe tells an MPI that survives node loss
# from one that cannot, across the test cluster's hosts, and a campaign on
# the one that cannot records its runs unsupported instead of measuring
# the MPI's hangs and aborts as the variants'.
#
# On a 3-host cluster of its own (own state directory and bridge):
#  1. the project's Open MPI (build/mpi.env): class "survives node loss",
#     rank loss survives, node loss survives, proposed RMA yes;
#  2. Open MPI 5.0.7 as released, built from the same tarball without the
#     patches (build/mpi-stock, which make deps makes as root): node loss
#     "ends the job", proposed RMA no, and so not "survives node loss"
#     (its rank loss across hosts is printed as found);
#  3. tests/fixtures/stock-nodeloss.campaign run on the stock build
#     (KV_MPI_ENV) with that probe: both runs (variant proposed, and
#     recreate-copy, with a node loss) are recorded "unsupported" with the
#     reason (the node-loss probe; for proposed also the RMA probe), none is
#     launched (no launcher.log), none counted hung or aborted, and runs.csv
#     says unsupported;
#  4. after `vcluster down` no process, link or namespace is left;
#  and `mpiprobe --says` (how benchmarks read a record) reads these
#  fields, and says which one a record lacks with exit 1.
# Part 2 and 3 are skipped (said so) when build/mpi-stock is missing.
# Exit 0 pass, 1 fail, 77 skip (not root, or no namespaces).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VC=$ROOT/scripts/vcluster PROBE=$ROOT/scripts/mpiprobe
why=$("$VC" can --no-slurm) || { echo "skip: $why"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrp
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-probe.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
T=$(mktemp -d)
cleanup() {
  local rc=$?
  trap - EXIT
  "$VC" down >/dev/null 2>&1 || { echo "FAIL: vcluster down failed"; rc=1; }
  ip link show "$KV_CLUSTER_BRIDGE" >/dev/null 2>&1 && { echo "FAIL: bridge $KV_CLUSTER_BRIDGE left"; rc=1; }
  rm -rf "$T" "$KV_CLUSTER_DIR"
  exit "$rc"
}
trap cleanup EXIT
"$VC" up 3 --no-slurm > "$T/up.log" 2>&1 || { cat "$T/up.log"; fail "vcluster up 3"; }

field() { "$PROBE" --says "$1" "$2"; }
"$PROBE" --cluster --out "$T/patched.json" > "$T/patched.log" 2>&1 || fail "mpiprobe: $(tail -3 "$T/patched.log")"
for want in "class:survives node loss" rank_loss:survives node_loss:survives proposed_rma:yes; do
  got=$(field "$T/patched.json" "${want%%:*}")
  [ "$got" = "${want#*:}" ] || fail "the project's Open MPI: ${want%%:*} is '$got', wanted '${want#*:}' ($(cat "$T/patched.json"))"
done
echo "ok: the project's Open MPI: $(tail -1 "$T/patched.log" | cut -d: -f2- | cut -d'>' -f1)"
if out=$("$PROBE" --says "$T/patched.json" no_such_field 2>&1); then fail "--says of a missing field: exit 0 ($out)"
elif ! grep -q "no no_such_field" <<<"$out"; then fail "--says of a missing field said: $out"
else echo "ok: --says of a missing field: $out"; fi

STOCK=$ROOT/build/mpi-stock/mpi.env
if [ ! -f "$STOCK" ]; then
  echo "skip (parts 2, 3): no build/mpi-stock (make deps makes it as root, or KV_STOCK=1)"
  echo "PASS: mpiprobe classifies the project's Open MPI"
  exit 0
fi
SHOME=$(. "$STOCK" && echo "$MPI_HOME")
grep -qx 'patches=none' "$SHOME/.kvstore-complete" || fail "$SHOME is not recorded as built without patches"
"$PROBE" --cluster --mpi "$SHOME" --out "$T/stock.json" > "$T/stock.log" 2>&1 || fail "mpiprobe stock: $(tail -3 "$T/stock.log")"
[ "$(field "$T/stock.json" node_loss)" = "ends the job" ] || fail "stock: node_loss $(field "$T/stock.json" node_loss)"
[ "$(field "$T/stock.json" proposed_rma)" = no ] || fail "stock: proposed_rma $(field "$T/stock.json" proposed_rma)"
[ "$(field "$T/stock.json" class)" != "survives node loss" ] || fail "stock classed as surviving node loss"
echo "ok: Open MPI 5.0.7 as released: $(tail -1 "$T/stock.log" | cut -d: -f2- | cut -d'>' -f1)"

# The campaign on the stock build, with that probe as its record.
export KV_RESULTS=$T/results
mkdir -p "$KV_RESULTS/stock-nodeloss"
cp "$T/stock.json" "$KV_RESULTS/stock-nodeloss/mpiprobe.json"
KV_MPI_ENV=$STOCK python3 "$ROOT/experiments/campaign/campaign.py" run "$ROOT/tests/fixtures/stock-nodeloss.campaign" \
  --cluster > "$T/camp.log" 2>&1
D=$KV_RESULTS/stock-nodeloss
python3 - "$D" <<'PY' || fail "campaign on the stock build: $(tail -5 "$T/camp.log")"
import csv, glob, json, os, sys
d = sys.argv[1]
metas = [json.load(open(m)) for m in glob.glob(os.path.join(d, "*", "meta.json"))]
assert len(metas) == 2, f"{len(metas)} runs recorded"
for m in metas:
    assert m["status"] == "unsupported", (m["run_id"], m["status"])
    assert "node losses" in m["reason"] and "node loss probe says 'ends the job'" in m["reason"], m["reason"]
    if m["variant"] == "proposed":
        assert "proposed RMA features" in m["reason"], m["reason"]
    assert not os.path.exists(os.path.join(d, m["run_id"], "launcher.log")), m["run_id"] + " was launched"
rows = list(csv.DictReader(open(os.path.join(d, "runs.csv"))))
assert [r["status"] for r in rows] == ["unsupported"] * 2, [r["status"] for r in rows]
PY
grep -q "hung 0, aborted 0, unsupported 2" "$T/camp.log" || fail "campaign counts: $(grep '^\[' "$T/camp.log")"
echo "ok: the stock build's campaign: 2 of 2 runs unsupported, none launched: $(python3 -c '
import glob, json, sys; print(json.load(open(sorted(glob.glob(sys.argv[1] + "/*/meta.json"))[0]))["reason"][:150])' "$D")"
echo "PASS: mpiprobe tells the patched Open MPI from the stock one; unsupported runs are marked, not run"
