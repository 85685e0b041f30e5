#!/usr/bin/env bash
# test_deps.sh -- the set-up of a cluster user: `make deps` without root and
# without dpkg or apt, with the site's MPI or with Open MPI built from a
# release tarball.
#
# Pass rules, each in a copy of scripts/deps.sh and patches/ owned by an
# unprivileged user, run as that user with a PATH that has no dpkg,
# dpkg-query, apt-get or apt-cache:
#  1. MPI_HOME naming this project's ULFM Open MPI: exit 0, build/mpi.mk
#     names it, and the output says the packages were not checked;
#  2. MPI_HOME naming an Open MPI without ULFM (a copy whose mpi-ext.h lacks
#     the ftmpi extension and whose ompi_info reports no fault tolerance):
#     non-zero exit, no mpi.mk, and the message names both missing pieces;
#  3. MPI_HOME naming an empty directory: non-zero, the message names the
#     missing mpicc, mpirun and ompi_info;
#  4. the tarball build: `make deps` built the patched Open MPI as user
#     kvbuild from the upstream tarball of Debian's source package, with no
#     apt or dpkg on its PATH (scripts/deps.sh does so on every fresh
#     set-up).  Run again as kvbuild with OMPI_TARBALL naming that tarball
#     (and another ULFM Open MPI's mpicc on PATH: the stock build, as a
#     site module would put it there) it takes that build from the cache:
#     exit 0, mpi.mk names it; its
#     record says kvbuild, no apt on the PATH, and the tarball's sha256, and
#     every file of the install belongs to kvbuild (none was written as
#     root);
#  5. no MPI and no tarball: non-zero, the message says to set
#     OMPI_TARBALL, and names the per-user cache under $HOME/.cache;
#  6. a tarball of another Open MPI version: refused, naming both versions;
#  7. a PATH without compiler, make, perl or patch: refused, naming each.
# Skipped (77) only when not run as root (it needs to become other users);
# rule 4 is skipped when build/mpi.mk names an MPI other than the
# project's own build (MPI_HOME given to make deps).
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
# as USER PATH VAR=VALUE... -> output of deps.sh, no MPI_HOME; status in $rc
as() {
  local u=$1 path=$2; shift 2
  out=$(setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups \
        env -i PATH="$path" HOME="$T/home" "$@" bash "$T/co/scripts/deps.sh" 2>&1); rc=$?
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

# 4. The tarball build that make deps made as kvbuild, found again as kvbuild.
NOAPT=$T/noapt; mkdir -p "$NOAPT"
for p in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
  for f in "$p"/*; do
    case ${f##*/} in apt|apt-*|dpkg|dpkg-*|aptitude*|mpi*|ompi*|orte*|prte*) continue ;; esac
    [ -e "$NOAPT/${f##*/}" ] || ln -s "$f" "$NOAPT/${f##*/}"
  done
done
for c in dpkg dpkg-query apt-get apt-cache mpicc; do [ -e "$NOAPT/$c" ] && fail "$c on the no-apt PATH"; done
CACHE=$(dirname "$MPI_HOME")
TARBALL=$(ls "$CACHE"/src/openmpi_5.0.7.orig.tar.* "$CACHE"/src/openmpi-5.0.7.tar.* 2>/dev/null | head -1)
if [ -f "$MPI_HOME/.kvstore-complete" ] && [ -n "$TARBALL" ] && id kvbuild >/dev/null 2>&1; then
  rm -rf "$T/co/build"; chown -R kvbuild "$T/co" "$T/home"
  # another ULFM Open MPI on PATH (the stock build, when there is one), as a
  # site module would put it: the tarball named wins
  P4=$NOAPT
  [ -f "$ROOT/build/mpi-stock/mpi.env" ] && P4="$(. "$ROOT/build/mpi-stock/mpi.env" && echo "$MPI_HOME")/bin:$NOAPT"
  as kvbuild "$P4" KV_CACHE="$CACHE" OMPI_TARBALL="$TARBALL"
  [ "$rc" -eq 0 ] || fail "deps.sh as kvbuild with the tarball exited $rc: $out"
  grep -q "^MPI_HOME := $MPI_HOME\$" "$T/co/build/mpi.mk" 2>/dev/null || fail "mpi.mk does not name the cached $MPI_HOME: $out"
  grep -q "building Open MPI" <<<"$out" && fail "the cached build was built again: $out"
  rec=$MPI_HOME/.kvstore-complete
  grep -qx "user=kvbuild uid=$(id -u kvbuild)" "$rec" || fail "the build record does not name kvbuild: $(cat "$rec")"
  grep -qx "apt_on_path=no" "$rec" || fail "the build had apt or dpkg on its PATH: $(cat "$rec")"
  grep -qx "source=$(basename "$TARBALL") sha256=$(sha256sum < "$TARBALL" | cut -c1-64)" "$rec" ||
    fail "the build record does not name the tarball's sha256: $(cat "$rec")"
  grep -qx "key=${MPI_HOME##*-}" "$rec" || fail "the build record's key is not its directory's: $(cat "$rec")"
  other=$(find "$MPI_HOME" ! -user kvbuild | head -3)
  [ -z "$other" ] || fail "files of the install not written by kvbuild: $other"
  echo "ok: the patched Open MPI was built by kvbuild from $(basename "$TARBALL") without apt, and is found again"
  chown -R nobody "$T/co" "$T/home"
else
  echo "skip (rule 4): $MPI_HOME is not a tarball build of make deps"
fi

# 5. No MPI, no tarball, as nobody: the per-user cache and OMPI_TARBALL named.
rm -rf "$T/co/build" "$T/home/.cache"
as nobody "$NOAPT"
[ "$rc" -ne 0 ] && grep -q "OMPI_TARBALL=" <<<"$out" && grep -q "$T/home/.cache/kvstore-ulfm" <<<"$out" ||
  fail "no MPI and no tarball: $out"
echo "ok: without an MPI or a tarball the message says what to do"

# 6. A tarball of another version.
mkdir -p "$T/old/openmpi-4.1.6"
printf 'major=4\nminor=1\nrelease=6\ngreek=\n' > "$T/old/openmpi-4.1.6/VERSION"
tar -cjf "$T/old.tar.bz2" -C "$T/old" openmpi-4.1.6; chmod 644 "$T/old.tar.bz2"
as nobody "$NOAPT" OMPI_TARBALL="$T/old.tar.bz2"
[ "$rc" -ne 0 ] && grep -q "holds Open MPI 4.1.6; the patches are for 5.0.7" <<<"$out" ||
  fail "a 4.1.6 tarball: $out"
echo "ok: a tarball of another version is refused"

# 7. No compiler, make, perl or patch.
[ -n "$TARBALL" ] || TARBALL=$T/old.tar.bz2
as nobody "$T/bin" OMPI_TARBALL="$TARBALL"
[ "$rc" -ne 0 ] || fail "a PATH without build tools was accepted: $out"
for c in cc make perl patch; do
  grep -q "needs what is missing here:.* $c\b" <<<"${out/here:/here: }" || fail "the message does not name $c: $out"
done
echo "ok: missing build tools named: $(grep -o 'missing here:.*' <<<"$out" | cut -c1-120)"
echo "PASS: deps without root, dpkg or apt"
