#!/usr/bin/env bash
# test_provenance.sh -- when a result file may be resumed: scripts/provenance
# --matches, in a clone of its own (the checkout is never touched).
#
# Pass rules: a record matches the same command at the same revision and
# not another command; after a commit that changes only docs (results
# committed between two chunks) it still matches; after a commit that
# changes measured code (scripts/measured-paths), or with such an edit
# uncommitted, it does not; a record made on another machine (its host
# line) or with another MPI build does not.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
R=$T/r
git clone -q --shared "$ROOT" "$R" || fail "git clone"
# this checkout's provenance and its paths, committed in the clone
cp "$ROOT/scripts/provenance" "$ROOT/scripts/measured-paths" "$R/scripts/"
git -C "$R" -c user.name=t -c user.email=t@t commit -qam "this checkout's provenance" >/dev/null 2>&1 || true
P=$R/scripts/provenance
commit() { git -C "$R" -c user.name=t -c user.email=t@t commit -qam "$1" || fail "commit: $1"; }

"$P" BENCH=x make bench > "$T/x.meta"
grep -q "^revision: $(git -C "$R" rev-parse --short HEAD)$" "$T/x.meta" || fail "record: $(cat "$T/x.meta")"
"$P" --matches "$T/x.meta" BENCH=x make bench || fail "the same command at the same revision does not match"
"$P" --matches "$T/x.meta" BENCH=y make bench && fail "another command matches"
echo "ok: the same command matches, another does not"

echo "a line" >> "$R/docs/formats.md" && commit "docs only"
"$P" --matches "$T/x.meta" BENCH=x make bench || fail "a commit of docs only stops the file from resuming"
echo "ok: a commit of docs only keeps the file resumable"

echo "/* an edit */" >> "$R/kvstore/store.c"
"$P" --matches "$T/x.meta" BENCH=x make bench && fail "an uncommitted edit of measured code matches"
commit "measured code"
"$P" --matches "$T/x.meta" BENCH=x make bench && fail "a commit of measured code matches"
echo "ok: measured code changed, committed or not: no match"

"$P" BENCH=x make bench > "$T/now.meta"
sed 's/^host: .*/host: 64 cores, 256 GiB, Linux 5.14.0/' "$T/now.meta" > "$T/other-host.meta"
"$P" --matches "$T/other-host.meta" BENCH=x make bench && fail "a record of another machine matches"
sed 's/^mpi: .*/mpi: Open MPI 5.0.7 at \/elsewhere/' "$T/now.meta" > "$T/other-mpi.meta"
"$P" --matches "$T/other-mpi.meta" BENCH=x make bench && fail "a record of another MPI build matches"
"$P" --matches "$T/now.meta" BENCH=x make bench || fail "the new record does not match"
echo "ok: another machine or MPI build: no match"
echo "PASS"
