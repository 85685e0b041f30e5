#!/usr/bin/env bash
# features.sh -- which optional libraries this machine's compiler can link,
# written as make variables (the Makefile keeps them in build/features.mk).
#
# Usage: features.sh CC
# Each optional part is one line of the table below: its name, the library
# that carries it, and a program that must compile and link against it.  A
# part that fails is built without (the Makefile says so on every run).
# Written: FEATURES := every name; for each, HAVE_name := 1 or 0,
# LIB_name := its link flag, LOST_name := what a build without it lacks.
set -uo pipefail
CC=${1:?usage: features.sh CC}
T=$(mktemp -d "${TMPDIR:-/tmp}/kv-features.XXXXXX"); trap 'rm -rf "$T"' EXIT

names=()
probe() {  # NAME LIB WHAT-IS-LOST-WITHOUT PROGRAM
  names+=("$1")
  printf 'LOST_%s := %s\n' "$1" "$3"
  printf '%s\n' "$4" > "$T/$1.c"
  if $CC "$T/$1.c" -o "$T/$1" "$2" >"$T/$1.log" 2>&1; then
    printf 'HAVE_%s := 1\nLIB_%s := %s\n' "$1" "$1" "$2"
  else
    printf 'HAVE_%s := 0\nLIB_%s :=\n' "$1" "$1"
  fi
}

echo "# Written by scripts/features.sh with $CC: optional libraries found."
probe sde -lsde 'no SDE counters' '#include <sde_lib.h>
int main(void) { return papi_sde_init("probe") == 0; }'
probe papi -lpapi 'no PAPI counters in the driver' '#include <papi.h>
int main(void) { return PAPI_library_init(PAPI_VER_CURRENT) < 0; }'
probe hiredis -lhiredis 'no Redis backend in the driver' '#include <hiredis/hiredis.h>
int main(void) { redisContext *c = redisConnect("127.0.0.1", 1); if (c) redisFree(c); return 0; }'
echo "FEATURES := ${names[*]}"
