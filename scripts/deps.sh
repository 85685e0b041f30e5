#!/usr/bin/env bash
# deps.sh -- install what the project needs and find (or build) a ULFM MPI.
#
# Idempotent; `make deps` calls it.  Steps:
#   1. Debian packages (skipped when all are already installed).  Not root,
#      or no dpkg (a cluster's login node): only a report of what is
#      missing, and the set-up goes on.
#   2. A ULFM-enabled MPI: MPI_HOME, or mpicc on PATH, is taken when a probe
#      proves fault tolerance (mpi-ext.h declares the ftmpi extension and
#      ompi_info says "FT MPI support: yes"); an MPI_HOME that fails it is
#      an error naming each check that failed.  Else a distribution Open
#      MPI 5.x with ULFM; else Open MPI 5.0.7 with the project's patches is
#      built into $KV_CACHE/openmpi-5.0.7-KEY, where KEY hashes the version,
#      the configure flags and every patch in patches/openmpi (a change
#      rebuilds).  The build needs neither root nor apt: only a release
#      tarball (OMPI_TARBALL, or the copy kept in $KV_CACHE/src), a C
#      compiler, make, perl, patch and tar.  As root the tarball is taken
#      from Debian 13's source package when none is named, and the build
#      itself runs as the unprivileged user kvbuild with no apt or dpkg on
#      its PATH: the path a cluster user takes is the one every fresh set-up
#      here takes.
#   3. The choice is written to build/mpi.mk and build/mpi.env, which every
#      later make target and script reads.
# KV_CACHE defaults to /var/cache/kvstore-ulfm for root and to
# ${XDG_CACHE_HOME:-~/.cache}/kvstore-ulfm for anyone else.  Two settings
# make other builds (each its own KEY, so all can sit in the cache):
#   WITH_UCX=1          with UCX (UCX_HOME, else the system's), so btl/uct
#                       carries MPI and RMA over InfiniBand (kvrun
#                       --transport uct); as root Debian's libucx-dev.
#   OMPI_PATCHES=none   Open MPI 5.0.7 as released, without the project's
#                       patches: what a site's stock build does (mpiprobe).
# As root (the test machine) the stock build is made too, after the
# project's, and recorded in build/mpi-stock/ (mpi.mk, mpi.env): the tests
# compare the two (tests/scripts/test_mpiprobe.sh).  KV_STOCK=0 skips it,
# KV_STOCK=1 makes it without root as well.  KV_UCX=1 makes, besides, the
# project's patched build with UCX (WITH_UCX=1) and records it in
# build/mpi-ucx/, for the scenarios over btl/uct (tests/scripts/test_uct.sh).
# The machine's apt configuration is not touched: the trixie deb-src entry
# lives in a private apt directory, built from the mirror URI already in the
# machine's own sources, so no host name appears in this repository.
set -euo pipefail
shopt -s inherit_errexit  # a die inside $(...) ends the script too

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -eq 0 ]; then KV_CACHE=${KV_CACHE:-/var/cache/kvstore-ulfm}
else KV_CACHE=${KV_CACHE:-${XDG_CACHE_HOME:-${HOME:?HOME or KV_CACHE must be set}/.cache}/kvstore-ulfm}; fi
OMPI_VERSION=5.0.7
BUILD_USER=kvbuild
OUT=$ROOT/build

log() { printf '[deps %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf '[deps] error: %s\n' "$*" >&2; exit 1; }

APT_PACKAGES=(
  build-essential pkg-config dpkg-dev bzip2 xz-utils patch perl python3 ca-certificates
  libcmocka-dev libpapi-dev papi-tools libsde1
  gnuplot-nox python3-matplotlib python3-numpy python3-scipy python3-pandas
  slurm-wlm slurm-client munge
  redis-server redis-sentinel libhiredis-dev
  libssl-dev
  clang libclang-rt-14-dev valgrind
  procps util-linux hostname iproute2 nftables linux-perf
)

install_packages() {
  local missing=()
  if ! command -v dpkg-query >/dev/null; then
    log "Debian packages: no dpkg here, not checked (the project uses: ${APT_PACKAGES[*]})"
    return
  fi
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then log "Debian packages: all present"; return; fi
  if [ "$(id -u)" -ne 0 ]; then
    log "Debian packages missing, not installed (not root): ${missing[*]}"
    log "  (install them, or their site modules, for what needs them: tests, figures, Slurm, Redis)"
    return
  fi
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The slurm and munge packages start daemons on install; the tests start
  # their own with a generated configuration, so leave none running.
  for s in slurmctld slurmd munge; do
    (command -v systemctl >/dev/null && systemctl stop "$s" 2>/dev/null) || true
  done
}

# probe_mpi DIR: true when DIR/bin/mpicc builds against an MPI with ULFM;
# otherwise every check that failed is on stdout, one per line.
probe_mpi() {
  local d=$1 bad=0 f
  for f in bin/mpicc bin/mpirun bin/ompi_info; do
    [ -x "$d/$f" ] || { echo "no $d/$f"; bad=1; }
  done
  [ -x "$d/bin/ompi_info" ] || return 1
  grep -rqs 'OMPI_HAVE_MPI_EXT_FTMPI 1' "$d/include/mpi-ext.h" "$d/include/openmpi/mpi-ext.h" 2>/dev/null \
    || { echo "mpi-ext.h in $d/include does not declare the ftmpi extension (OMPI_HAVE_MPI_EXT_FTMPI 1): built without --with-ft=ulfm"; bad=1; }
  "$d/bin/ompi_info" 2>/dev/null | grep -Eq 'FT MPI support: yes|FT Checkpoint support.*yes|ULFM.*yes' \
    || "$d/bin/ompi_info" --parsable 2>/dev/null | grep -q 'ftmpi' \
    || { echo "$d/bin/ompi_info does not report fault tolerance (\"FT MPI support: yes\")"; bad=1; }
  return $bad
}

UCX_FLAG=--without-ucx
[ "${WITH_UCX:-0}" = 1 ] && UCX_FLAG=--with-ucx${UCX_HOME:+=$UCX_HOME}
case ${OMPI_PATCHES:-project} in
  project) PATCHES=("$ROOT"/patches/openmpi/*.patch) ;;
  none) PATCHES=() ;;
  *) die "OMPI_PATCHES=${OMPI_PATCHES}: 'none' (Open MPI as released) or unset (the project's patches)" ;;
esac
[ "${WITH_UCX:-0}" = 1 ] || [ "${KV_UCX:-0}" = 1 ] && APT_PACKAGES+=(libucx-dev)
CONFIGURE_FLAGS=(
  --with-ft=ulfm --disable-mpi-fortran --disable-oshmem --disable-io-romio
  "$UCX_FLAG" --without-ofi --without-psm2 --without-cuda
  --with-pmix=internal --with-prrte=internal --with-hwloc=internal
  --with-libevent=internal --disable-man-pages --disable-rsmi-support
  --enable-mpi-ext=ftmpi,shortfloat,affinity
)

build_key() {
  { echo "$OMPI_VERSION"; echo "${CONFIGURE_FLAGS[*]}";
    for p in "${PATCHES[@]}"; do [ -f "$p" ] && sha256sum < "$p"; done
  } | sha256sum | cut -c1-12
}

# The mirror URI of the machine's Debian archive, from its own sources.
mirror_uri() {
  local f uri=
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/ {print $2}' "$f" | grep -v security | head -1)
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || die "no Debian mirror found in the apt sources"
  echo "$uri"
}

# fetch_source DIR: Debian 13's Open MPI source package into DIR (root, apt);
# prints the path of its upstream tarball.
fetch_source() {
  local work=$1 apt=$1/apt
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/sources.list.d"
  echo "deb-src $(mirror_uri) trixie main" > "$apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
              -o "APT::Sandbox::User=root")
  log "fetching the Open MPI $OMPI_VERSION source package (Debian 13)" >&2
  apt-get "${opts[@]}" update -qq >&2
  (cd "$work" && apt-get "${opts[@]}" source --download-only -qq "openmpi=$OMPI_VERSION-*" 2>/dev/null \
     || apt-get "${opts[@]}" source --download-only -qq openmpi/trixie) >&2
  rm -rf "$apt" "$work"/openmpi_"$OMPI_VERSION"-*.debian.tar.* "$work"/openmpi_"$OMPI_VERSION"-*.dsc
  ls "$work"/openmpi_"$OMPI_VERSION".orig.tar.* 2>/dev/null | head -1
}

# find_tarball: the release tarball to build from, on stdout: OMPI_TARBALL,
# else the one kept in $KV_CACHE/src, else (root with apt) the upstream
# tarball of Debian's source package, fetched into $KV_CACHE/src.
find_tarball() {
  if [ -n "${OMPI_TARBALL:-}" ]; then
    [ -f "$OMPI_TARBALL" ] || die "OMPI_TARBALL=$OMPI_TARBALL: no such file"
    readlink -f "$OMPI_TARBALL"; return
  fi
  local t
  t=$(ls "$KV_CACHE/src/openmpi-$OMPI_VERSION".tar.* "$KV_CACHE/src/openmpi_$OMPI_VERSION".orig.tar.* \
      2>/dev/null | head -1 || true)
  [ -n "$t" ] && { echo "$t"; return; }
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    mkdir -p "$KV_CACHE/src"
    t=$(fetch_source "$KV_CACHE/src")
    [ -n "$t" ] || die "Debian's source package has no upstream tarball"
    chmod a+r "$t"; echo "$t"; return
  fi
  die "no MPI with ULFM found (MPI_HOME unset, none on PATH), and no Open MPI $OMPI_VERSION tarball to build one from: download openmpi-$OMPI_VERSION.tar.bz2 from the Open MPI release page and run OMPI_TARBALL=/path/to/it make deps (it builds into $KV_CACHE without root), or set MPI_HOME to a ULFM Open MPI"
}

# tarball_version TARBALL: major.minor.release from its VERSION file.
tarball_version() {
  { tar -xOf "$1" --wildcards --no-wildcards-match-slash '*/VERSION' 2>/dev/null || true; } \
    | awk -F= '$1=="major"{M=$2} $1=="minor"{m=$2} $1=="release"{r=$2} END {if (M != "") print M"."m"."r}'
}

# check_build_tools TARBALL: every program the build needs that is missing,
# named at once; a compiler that cannot link a program is one of them.
check_build_tools() {
  local missing=() c cc=${CC:-cc} z
  case $1 in *.xz) z=xz ;; *.bz2) z=bzip2 ;; *.gz) z=gzip ;; *) z= ;; esac
  for c in "$cc" make perl patch tar sed awk grep $z; do
    command -v "$c" >/dev/null || missing+=("$c")
  done
  if command -v "$cc" >/dev/null; then
    local t; t=$(mktemp -d "${TMPDIR:-/tmp}/kv-cc.XXXXXX")
    printf '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n' > "$t/a.c"
    "$cc" "$t/a.c" -o "$t/a" >/dev/null 2>&1 && "$t/a" >/dev/null ||
      missing+=("a C compiler that links a program ($cc fails on hello world: C library headers?)")
    if [ "${WITH_UCX:-0}" = 1 ]; then
      printf '#include <uct/api/uct.h>\nint main(void) { return 0; }\n' > "$t/u.c"
      "$cc" ${UCX_HOME:+-I"$UCX_HOME/include"} "$t/u.c" -o "$t/u" >/dev/null 2>&1 ||
        missing+=("UCX's development files (uct/api/uct.h: Debian libucx-dev, RHEL ucx-devel, or UCX_HOME)")
    fi
    rm -rf "$t"
  fi
  [ ${#missing[@]} -eq 0 ] || die "building Open MPI $OMPI_VERSION needs what is missing here: ${missing[*]}"
}

# build_openmpi PREFIX TARBALL: unpack, patch, configure, make, install.
build_openmpi() {
  local prefix=$1 tarball=$2 work
  work=$(mktemp -d "${TMPDIR:-/tmp}/kv-ompi-build.XXXXXX")
  log "unpacking $(basename "$tarball")"
  mkdir -p "$work/src" && tar -xf "$tarball" -C "$work/src" --strip-components=1
  for p in "${PATCHES[@]}"; do
    [ -f "$p" ] || continue
    log "applying $(basename "$p")"
    patch -d "$work/src" -p1 --forward --quiet < "$p" || die "patch $(basename "$p") does not apply"
  done
  # A patch that adds a source file changes Makefile.am and Makefile.in
  # alike; make must not see the .am as newer and call automake, which the
  # tarball build does not need (nor has).
  find "$work/src" -name Makefile.in -exec touch {} +
  mkdir -p "$work/obj"
  local logf=$work/build.log
  log "configure (full log: $logf)"
  # Configured for its final place (paths are compiled in); the stamp file
  # written last marks a complete install, so an interrupted one is redone.
  rm -rf "$prefix"
  (cd "$work/obj" && ../src/configure --prefix="$prefix" "${CONFIGURE_FLAGS[@]}" >"$logf" 2>&1) \
    || { tail -30 "$logf"; die "configure failed (its last lines are above; the full log: $logf)"; }
  log "make -j$(nproc) (5 to 24 minutes on 2 cores; a dot per 500 lines of output)"
  (cd "$work/obj" && make -j"$(nproc)" 2>&1 | tee -a "$logf" | awk 'NR%500==0 {printf "."; fflush()} END {print ""}'; exit "${PIPESTATUS[0]}") \
    || { tail -30 "$logf"; die "make failed"; }
  log "make install"
  (cd "$work/obj" && make install >>"$logf" 2>&1) || { tail -30 "$logf"; die "make install failed"; }
  cp "$logf" "$prefix/build.log"
  # The record of how it was built; tests/scripts/test_deps.sh reads it.
  { echo "built=$(date -u +%FT%TZ)"
    echo "user=$(id -un) uid=$(id -u)"
    echo "source=$(basename "$tarball") sha256=$(sha256sum < "$tarball" | cut -c1-64)"
    echo "apt_on_path=$(command -v apt-get >/dev/null || command -v dpkg >/dev/null && echo yes || echo no)"
    echo "key=$(build_key)"
    local names=("${PATCHES[@]##*/}")
    echo "patches=${names[*]:-none}"
    echo "ucx=$UCX_FLAG"
  } > "$prefix/.kvstore-complete.tmp"
  mv "$prefix/.kvstore-complete.tmp" "$prefix/.kvstore-complete"
  rm -rf "$work"
}

# path_without_apt DIR: fill DIR with links to every program on the
# system's PATH but apt's and dpkg's, for a build that shows it needs none.
path_without_apt() {
  local d=$1 p f
  mkdir -p "$d"
  for p in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
    for f in "$p"/*; do
      case ${f##*/} in apt|apt-*|dpkg|dpkg-*|aptitude*) continue ;; esac
      [ -e "$d/${f##*/}" ] || ln -s "$f" "$d/${f##*/}"
    done
  done
}

# build_as_user PREFIX TARBALL: as root, build as $BUILD_USER (created when
# missing) in a clean environment with no apt on PATH, through this same
# script's unprivileged path (--build-only).
build_as_user() {
  local prefix=$1 tarball=$2 noapt
  id "$BUILD_USER" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir "$KV_CACHE" --shell /usr/sbin/nologin "$BUILD_USER"
  chown "$BUILD_USER:" "$KV_CACHE"
  [ ! -e "$KV_CACHE/.lock" ] || chown "$BUILD_USER:" "$KV_CACHE/.lock"
  noapt=$(mktemp -d "${TMPDIR:-/tmp}/kv-noapt.XXXXXX"); chmod 755 "$noapt"
  path_without_apt "$noapt"
  log "building as $BUILD_USER (not root), apt and dpkg off its PATH"
  setpriv --reuid="$BUILD_USER" --regid="$BUILD_USER" --clear-groups \
    env -i PATH="$noapt" HOME="$KV_CACHE" KV_CACHE="$KV_CACHE" OMPI_TARBALL="$tarball" \
    WITH_UCX="${WITH_UCX:-0}" ${UCX_HOME:+UCX_HOME="$UCX_HOME"} OMPI_PATCHES="${OMPI_PATCHES:-project}" \
    bash "$ROOT/scripts/deps.sh" --build-only || { rm -rf "$noapt"; die "the build as $BUILD_USER failed"; }
  rm -rf "$noapt"
}

# cached_or_build: the prefix of this key's build, made when missing.
cached_or_build() {
  local prefix=$KV_CACHE/openmpi-$OMPI_VERSION-$(build_key)
  if [ -f "$prefix/.kvstore-complete" ] && probe_mpi "$prefix" >/dev/null; then
    echo "$prefix"; return
  fi
  mkdir -p "$KV_CACHE"
  local tarball ver
  tarball=$(find_tarball)
  [ "$(id -u)" -eq 0 ] || check_build_tools "$tarball"
  ver=$(tarball_version "$tarball")
  [ "$ver" = "$OMPI_VERSION" ] ||
    die "$tarball holds Open MPI ${ver:-(no VERSION file: not an Open MPI release tarball)}; the patches are for $OMPI_VERSION"
  if [ "$(id -u)" -eq 0 ]; then
    build_as_user "$prefix" "$tarball" >&2
  else
    # One build at a time per cache (two make runs may start together).
    exec 9>"$KV_CACHE/.lock"
    flock 9
    if ! { [ -f "$prefix/.kvstore-complete" ] && probe_mpi "$prefix" >/dev/null; }; then
      log "no ULFM MPI found: building Open MPI $OMPI_VERSION from $(basename "$tarball") into $prefix" >&2
      build_openmpi "$prefix" "$tarball" >&2
      probe_mpi "$prefix" >&2 || die "the built Open MPI in $prefix has no ULFM"
    fi
    flock -u 9
    mkdir -p "$KV_CACHE/src"
    case $tarball in "$KV_CACHE"/src/*) ;; *) cp "$tarball" "$KV_CACHE/src/" ;; esac
  fi
  echo "$prefix"
}

# need_ulfm DIR WHAT: die, naming every check that failed, unless DIR is
# an MPI with ULFM (WHAT names it in the message).
need_ulfm() {
  local why
  why=$(probe_mpi "$1") || die "$2 is not an MPI with ULFM:"$'\n'"$(sed 's/^/  - /' <<<"$why")"
}

choose_mpi() {
  if [ -n "${MPI_HOME:-}" ]; then
    need_ulfm "$MPI_HOME" "MPI_HOME=$MPI_HOME"
    echo "$MPI_HOME"; return
  fi
  # A tarball named means: build that one, whatever MPI a module put on PATH.
  [ -n "${OMPI_TARBALL:-}" ] && { cached_or_build; return; }
  local onpath
  onpath=$(command -v mpicc 2>/dev/null || true)
  if [ -n "$onpath" ] && probe_mpi "$(dirname "$(dirname "$(readlink -f "$onpath")")")" >/dev/null; then
    dirname "$(dirname "$(readlink -f "$onpath")")"; return
  fi
  # A distribution Open MPI 5.x carries ULFM by default (Debian 13 and later).
  local cand
  cand=$(apt-cache policy libopenmpi-dev 2>/dev/null | awk '/Candidate:/ {print $2}' || true)
  if [ -n "$cand" ] && dpkg --compare-versions "$cand" ge 5.0 2>/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then
      apt-get install -y -qq --no-install-recommends libopenmpi-dev openmpi-bin >&2
    fi
    probe_mpi /usr >/dev/null && { echo /usr; return; }
  fi
  cached_or_build
}

write_choice() {
  local home=$1
  mkdir -p "$OUT"
  local ver
  ver=$("$home/bin/ompi_info" --parsable 2>/dev/null | awk -F: '/^ompi:version:full:/ {print $4}')
  cat > "$OUT/mpi.mk.tmp" <<MK
# Written by scripts/deps.sh: the MPI every target uses.
MPI_HOME := $home
MPICC    := $home/bin/mpicc
MPIRUN   := $home/bin/mpirun
MPI_VERSION := Open MPI $ver
MK
  cat > "$OUT/mpi.env.tmp" <<ENV
# Written by scripts/deps.sh: source this to use the project's MPI.
export MPI_HOME='$home'
export PATH='$home/bin':"\$PATH"
export LD_LIBRARY_PATH='$home/lib'"\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
# hwloc's ROCm/OpenCL plugins print noise on every start: keep them off.
export HWLOC_COMPONENTS=-rsmi,-opencl,-levelzero,-nvml,-cuda
export OMPI_MCA_hwloc_base_use_hwthreads_as_cpus=1
ENV
  mv "$OUT/mpi.mk.tmp" "$OUT/mpi.mk"
  mv "$OUT/mpi.env.tmp" "$OUT/mpi.env"
  log "MPI: Open MPI $ver with ULFM at $home (recorded in ${OUT#"$ROOT"/}/mpi.mk)"
}

main() {
  # --build-only [--print]: the build of this key, made when missing (its
  # prefix printed with --print); no packages, no record.
  if [ "${1:-}" = --build-only ]; then
    if [ "${2:-}" = --print ]; then cached_or_build; else cached_or_build >/dev/null; fi
    return
  fi
  # --record DIR OUT: mpi.mk and mpi.env for the MPI in DIR, into OUT
  # (scripts/mpiprobe builds and runs its programs with another MPI so).
  if [ "${1:-}" = --record ]; then
    need_ulfm "${2:?--record DIR OUT}" "$2"
    OUT=${3:?--record DIR OUT}; write_choice "$2"; return
  fi
  install_packages
  local home
  home=$(choose_mpi)
  write_choice "$home"
  if [ "${KV_STOCK:-$([ "$(id -u)" -eq 0 ] && echo 1 || echo 0)}" = 1 ] && [ -z "${MPI_HOME:-}" ] &&
     [ -z "${OMPI_PATCHES:-}" ]; then
    side_build mpi-stock "as released, for comparison" OMPI_PATCHES=none
  fi
  if [ "${KV_UCX:-0}" = 1 ] && [ -z "${MPI_HOME:-}" ]; then
    side_build mpi-ucx "with the project's patches and UCX" WITH_UCX=1
  fi
}

# side_build NAME WHAT VAR=VALUE: the build those settings make, beside the
# project's MPI (made when missing), recorded in build/NAME/.
side_build() {
  log "Open MPI $OMPI_VERSION $2 (build/$1)"
  local home
  home=$(env "$3" bash "$0" --build-only --print)
  OUT=$OUT/$1 write_choice "$home"
}
main "$@"
