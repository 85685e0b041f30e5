# revtree.sh -- sourced by the benchmarks that compare revisions of the
# library side by side (bench_revisions.sh, bench_timeline.sh with
# TIMELINE_REVS): `rev_tree ROOT REV DIR TARGET...` copies the checkout at
# ROOT (its build and results left out) into DIR with REV's kvstore/ in
# place of its own, and makes TARGET... there against ROOT's MPI build.
# Only the library differs between the trees: the benchmark, the driver
# and the harness are the checkout's, the same for every revision.  REV
# `work` is the checkout as it is, edits included.  `rev_name REV` is the
# name a row carries: the short hash, or `work`.

rev_name() {
  if [ "$2" = work ]; then echo work; else git -C "$1" rev-parse --short "$2"; fi
}

rev_tree() {
  local root=$1 rev=$2 d=$3
  shift 3
  mkdir -p "$d/build"
  (cd "$root" && tar --exclude=./build --exclude=./results --exclude=./.git -cf - .) | tar -xf - -C "$d"
  if [ "$rev" != work ]; then
    rm -rf "$d/kvstore"
    git -C "$root" archive "$rev" kvstore | tar -xf - -C "$d" || return 1
  fi
  cp "$root"/build/mpi.mk "$root"/build/mpi.env "$d/build/" 2>/dev/null
  make -C "$d" -j2 "$@" > "$d/build.log" 2>&1 ||
    { echo "rev_tree: $rev does not build (see below)" >&2; tail -5 "$d/build.log" >&2; return 1; }
}
