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
#      MPI 5.x with ULFM; else Open MPI 5.0.7 is built from Debian 13's
#      source package into $KV_CACHE/openmpi-5.0.7-KEY, where KEY hashes the
#      version, the configure flags and every patch in patches/openmpi (a
#      change rebuilds); that needs root for the packages it builds from.
#   3. The choice is written to build/mpi.mk and build/mpi.env, which every
#      later make target and script reads.  With MPI_HOME, neither root nor
#      dpkg is needed.
# The machine's apt configuration is not touched: the trixie deb-src entry
# lives in a private apt directory, built from the mirror URI already in the
# machine's own sources, so no host name appears in this repository.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
KV_CACHE=${KV_CACHE:-/var/cache/kvstore-ulfm}
OMPI_VERSION=5.0.7
OUT=$ROOT/build
mkdir -p "$OUT"

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
  procps util-linux hostname iproute2 linux-perf
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

CONFIGURE_FLAGS=(
  --with-ft=ulfm --disable-mpi-fortran --disable-oshmem --disable-io-romio
  --without-ucx --without-ofi --without-psm2 --without-cuda
  --with-pmix=internal --with-prrte=internal --with-hwloc=internal
  --with-libevent=internal --disable-man-pages --disable-rsmi-support
  --enable-mpi-ext=ftmpi,shortfloat,affinity
)

build_key() {
  { echo "$OMPI_VERSION"; echo "${CONFIGURE_FLAGS[*]}";
    for p in "$ROOT"/patches/openmpi/*.patch; do [ -f "$p" ] && sha256sum < "$p"; done
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

fetch_source() {
  local work=$1 apt=$work/apt
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/sources.list.d"
  echo "deb-src $(mirror_uri) trixie main" > "$apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
              -o "APT::Sandbox::User=root")
  log "fetching the Open MPI $OMPI_VERSION source package (Debian 13)"
  apt-get "${opts[@]}" update -qq
  (cd "$work" && apt-get "${opts[@]}" source --download-only -qq "openmpi=$OMPI_VERSION-*" 2>/dev/null \
     || apt-get "${opts[@]}" source --download-only -qq openmpi/trixie)
}

build_openmpi() {
  local prefix=$1 work
  work=$(mktemp -d "${TMPDIR:-/tmp}/kv-ompi-build.XXXXXX")
  fetch_source "$work"
  local orig
  orig=$(ls "$work"/openmpi_*.orig.tar.* | head -1)
  [ -f "$orig" ] || die "source package has no upstream tarball"
  log "unpacking $(basename "$orig")"
  mkdir -p "$work/src" && tar -xf "$orig" -C "$work/src" --strip-components=1
  for p in "$ROOT"/patches/openmpi/*.patch; do
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
    || { tail -30 "$logf"; die "configure failed"; }
  log "make -j$(nproc) (5 to 24 minutes on 2 cores; a dot per 500 lines of output)"
  (cd "$work/obj" && make -j"$(nproc)" 2>&1 | tee -a "$logf" | awk 'NR%500==0 {printf "."; fflush()} END {print ""}'; exit "${PIPESTATUS[0]}") \
    || { tail -30 "$logf"; die "make failed"; }
  log "make install"
  (cd "$work/obj" && make install >>"$logf" 2>&1) || { tail -30 "$logf"; die "make install failed"; }
  cp "$logf" "$prefix/build.log"
  date -u +%FT%TZ > "$prefix/.kvstore-complete"
  rm -rf "$work"
}

choose_mpi() {
  if [ -n "${MPI_HOME:-}" ]; then
    local why
    why=$(probe_mpi "$MPI_HOME") ||
      die "MPI_HOME=$MPI_HOME is not an MPI with ULFM:"$'\n'"$(sed 's/^/  - /' <<<"$why")"
    echo "$MPI_HOME"; return
  fi
  local onpath
  onpath=$(command -v mpicc 2>/dev/null || true)
  if [ -n "$onpath" ] && probe_mpi "$(dirname "$(dirname "$(readlink -f "$onpath")")")" >/dev/null; then
    dirname "$(dirname "$(readlink -f "$onpath")")"; return
  fi
  # A distribution Open MPI 5.x carries ULFM by default (Debian 13 and later).
  local cand
  cand=$(apt-cache policy libopenmpi-dev 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -n "$cand" ] && dpkg --compare-versions "$cand" ge 5.0 2>/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then
      apt-get install -y -qq --no-install-recommends libopenmpi-dev openmpi-bin >&2
    fi
    probe_mpi /usr >/dev/null && { echo /usr; return; }
  fi
  [ "$(id -u)" -eq 0 ] || [ -f "$KV_CACHE/openmpi-$OMPI_VERSION-$(build_key)/.kvstore-complete" ] ||
    die "no MPI with ULFM found (MPI_HOME unset, none on PATH), and building Open MPI $OMPI_VERSION needs root for its build packages: set MPI_HOME to a ULFM Open MPI (e.g. after module load), or run make deps as root"
  local prefix=$KV_CACHE/openmpi-$OMPI_VERSION-$(build_key)
  mkdir -p "$KV_CACHE"
  # One build at a time per cache (two make runs may start together).
  exec 9>"$KV_CACHE/.lock"
  flock 9
  if ! { [ -f "$prefix/.kvstore-complete" ] && probe_mpi "$prefix" >/dev/null; }; then
    log "no ULFM MPI found: building Open MPI $OMPI_VERSION into $prefix" >&2
    build_openmpi "$prefix" >&2
    probe_mpi "$prefix" >&2 || die "the built Open MPI in $prefix has no ULFM"
  fi
  flock -u 9
  echo "$prefix"
}

write_choice() {
  local home=$1
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
  log "MPI: Open MPI $ver with ULFM at $home (recorded in build/mpi.mk)"
}

main() {
  install_packages
  local home
  home=$(choose_mpi)
  write_choice "$home"
}
main "$@"
