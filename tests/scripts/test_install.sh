#!/usr/bin/env bash
# test_install.sh -- embedding the store: make install, pkg-config, a program.
# Pass rule: `make install PREFIX=tmp` puts kvstore.h, the libraries and
# kvstore.pc there; the README's example (tests/fixtures/embed_example.c)
# compiles with `pkg-config --cflags --libs kvstore` against that copy and,
# run on 2 ranks with --with-ft ulfm, reads back what it wrote.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
make -C "$ROOT" install PREFIX="$T/prefix" > "$T/install.log" 2>&1 || { tail "$T/install.log"; fail "make install"; }
for f in include/kvstore.h lib/libkvstore.a lib/libkvstore.so lib/pkgconfig/kvstore.pc; do
  [ -f "$T/prefix/$f" ] || fail "$f not installed"
done
# shellcheck disable=SC1091
. "$ROOT/build/mpi.env"
export PKG_CONFIG_PATH=$T/prefix/lib/pkgconfig
# shellcheck disable=SC2046
mpicc $(pkg-config --cflags kvstore) "$ROOT/tests/fixtures/embed_example.c" \
  $(pkg-config --libs --static kvstore) -o "$T/app" || fail "the example does not compile"
out=$("$ROOT/scripts/kvrun" --no-verdict -n 2 --timeout 60 -- "$T/app" 2>&1 | tr -d '\000')
[ "$(grep -c 'get: success, 5 bytes: done' <<<"$out")" -eq 2 ] || fail "example output: $out"
echo "PASS: installed, compiled with pkg-config, ran on 2 ranks"
