#!/usr/bin/env bash
# test_deps.sh -- the set-up of a cluster user: `MPI_HOME=/path make deps`
# without root and without dpkg.
#
# Pass rules, each in a copy of scripts/deps.sh and patches/ owned by an
# unprivileged user (nobody), run as that user with a PATH that has no
# dpkg, dpkg-query, apt-get or apt-cache:
#  1. MPI_HOME naming this project's ULFM Open MPI: exit 0, build/mpi.mk
#     names it, and the output says the packages were not checked;
#  2. MPI_HOME naming an Open MPI without ULFM (a copy whose mpi-ext.h lacks
#     the ftmpi extension and whose ompi_info reports no fault tolerance):
#     non-zero exit, no mpi.mk, and the message names both missing pieces;
#  3. MPI_HOME naming an empty directory: non-zero, the message names the
#     missing mpicc, mpirun and ompi_info.
# Skipped (77) only when not run as root (it needs to become nobody).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "skip: needs root to run as nobody"; exit 77; }
. "$ROOT/build/mpi.env"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$T/co/scripts" "$T/co/patches" "$T/bin" "$T/home"
cp "$ROOT/scripts/deps.sh" "$T/co/scripts/"
cp -r "$ROOT/patches/openmpi" "$T/co/patches/"
# the commands deps.sh uses, and nothing of dpkg or apt
for c in bash env dirname mkdir date id grep awk sed mv cat readlink cut sha256sum flock rm ls tr head \
         sort printf basename mktemp uname; do
  p=$(command -v "$c") && ln -s "$p" "$T/bin/$c"
done
for c in dpkg dpkg-query apt-get apt-cache; do [ -e "$T/bin/$c" ] && fail "$c on the test PATH"; done
chown -R nobody "$T/co" "$T/home"
as_user() {  # MPI_HOME -> output of deps.sh run as nobody; status in $rc
  out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env -i PATH="$T/bin" HOME="$T/home" MPI_HOME="$1" KV_CACHE="$T/home/cache" \
        bash "$T/co/scripts/deps.sh" 2>&1); rc=$?
}

as_user "$MPI_HOME"
[ "$rc" -eq 0 ] || fail "deps.sh with MPI_HOME=$MPI_HOME exited $rc: $out"
grep -q "^MPI_HOME := $MPI_HOME\$" "$T/co/build/mpi.mk" 2>/dev/null || fail "build/mpi.mk does not name $MPI_HOME"
grep -q "no dpkg here, not checked" <<<"$out" || fail "no word about the unchecked packages: $out"
echo "ok: MPI_HOME with ULFM, as nobody, without dpkg"

# An Open MPI without ULFM: the same tree with the ftmpi extension gone.
F=$T/noulfm
mkdir -p "$F/bin" "$F/include"
for b in mpicc mpirun; do ln -s "$MPI_HOME/bin/$b" "$F/bin/$b"; done
grep -v 'OMPI_HAVE_MPI_EXT_FTMPI' "$MPI_HOME/include/mpi-ext.h" > "$F/include/mpi-ext.h"
printf '#!/bin/sh\n"%s/bin/ompi_info" "$@" | grep -v -i -e "FT MPI support" -e ftmpi -e ulfm -e "FT Checkpoint"\n' \
  "$MPI_HOME" > "$F/bin/ompi_info"
chmod 755 "$F/bin/ompi_info"
rm -rf "$T/co/build"
as_user "$F"
[ "$rc" -ne 0 ] || fail "an MPI without ULFM was accepted: $out"
[ ! -e "$T/co/build/mpi.mk" ] || fail "mpi.mk written for an MPI without ULFM"
grep -q "does not declare the ftmpi extension" <<<"$out" && grep -q "does not report fault tolerance" <<<"$out" ||
  fail "the message does not name what is missing: $out"
echo "ok: MPI without ULFM refused: $(tr '\n' ' ' <<<"$out" | cut -c1-200)"

mkdir -p "$T/empty"
as_user "$T/empty"
[ "$rc" -ne 0 ] && grep -q "no $T/empty/bin/mpicc" <<<"$out" && grep -q "no $T/empty/bin/mpirun" <<<"$out" &&
  grep -q "no $T/empty/bin/ompi_info" <<<"$out" || fail "an empty MPI_HOME: $out"
echo "ok: an empty MPI_HOME names the missing programs"
echo "PASS: deps without root and dpkg"
