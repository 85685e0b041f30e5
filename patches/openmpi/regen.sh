#!/usr/bin/env bash
# regen.sh ORIG NEW -- rewrite the patch series from two Open MPI trees.
#
# ORIG is the unpacked openmpi-5.0.7 tarball, NEW the same with the series
# applied and edited.  Each patch file takes the paths listed for it below;
# a changed file that no patch lists is an error, so nothing is lost.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: regen.sh ORIG NEW" >&2; exit 64; }
HERE=$(cd "$(dirname "$0")" && pwd)
ORIG=$(cd "$1" && pwd); NEW=$(cd "$2" && pwd)
declare -A SERIES=(
  [0001-osc-base-ft-rma-switch]="ompi/mca/osc/base/base.h ompi/mca/osc/base/osc_base_frame.c ompi/win/win.h ompi/win/win.c"
  [0002-ftmpi-win-revoke]="ompi/mpiext/ftmpi/c/Makefile.am ompi/mpiext/ftmpi/c/Makefile.in ompi/mpiext/ftmpi/c/mpiext_ftmpi_c.h ompi/mpiext/ftmpi/c/win_ft.c ompi/mpiext/ftmpi/c/profile/Makefile.am ompi/mpiext/ftmpi/c/profile/Makefile.in"
  [0003-osc-sm-ft]="ompi/mca/osc/sm/osc_sm.h ompi/mca/osc/sm/osc_sm_active_target.c ompi/mca/osc/sm/osc_sm_comm.c ompi/mca/osc/sm/osc_sm_component.c ompi/mca/osc/sm/osc_sm_passive_target.c"
  [0004-osc-rdma-ft]="ompi/mca/osc/rdma/osc_rdma.h ompi/mca/osc/rdma/osc_rdma_accumulate.c ompi/mca/osc/rdma/osc_rdma_active_target.c ompi/mca/osc/rdma/osc_rdma_btl_comm.c ompi/mca/osc/rdma/osc_rdma_btl_comm.h ompi/mca/osc/rdma/osc_rdma_comm.c ompi/mca/osc/rdma/osc_rdma_component.c ompi/mca/osc/rdma/osc_rdma_dynamic.c ompi/mca/osc/rdma/osc_rdma_frag.h ompi/mca/osc/rdma/osc_rdma_lock.h ompi/mca/osc/rdma/osc_rdma_module.c ompi/mca/osc/rdma/osc_rdma_passive_target.c ompi/mca/osc/rdma/osc_rdma_peer.c ompi/mca/osc/rdma/osc_rdma_types.h"
  [0005-prrte-lost-daemon]="3rd-party/prrte/src/mca/errmgr/dvm/errmgr_dvm.c"
  [0006-ftmpi-failure-notices]="ompi/communicator/ft/comm_ft.c ompi/errhandler/errhandler.c opal/util/proc.c opal/util/proc.h"
  [0007-btl-tcp-no-sigpipe]="opal/mca/btl/tcp/btl_tcp.c opal/mca/btl/tcp/btl_tcp_endpoint.c opal/mca/btl/tcp/btl_tcp_frag.c"
  [0008-prrte-fence-without-dead-nodes]="3rd-party/prrte/src/mca/grpcomm/base/grpcomm_base_stubs.c"
  [0009-comm-cid-after-failure]="ompi/communicator/comm_cid.c ompi/communicator/comm_init.c ompi/communicator/communicator.h"
  [0010-coll-han-off-under-ft]="ompi/mca/coll/han/coll_han_module.c"
  [0011-prrte-free-dead-slots]="3rd-party/prrte/src/util/attr.h 3rd-party/prrte/src/mca/state/base/base.h 3rd-party/prrte/src/mca/state/base/state_base_fns.c 3rd-party/prrte/src/mca/state/dvm/state_dvm.c"
  [0012-prrte-connect-release-info]="3rd-party/prrte/src/prted/pmix/pmix_server_dyn.c"
  [0013-pmix-deregister-lost-client]="3rd-party/openpmix/src/mca/ptl/base/ptl_base_sendrecv.c 3rd-party/openpmix/src/server/pmix_server.c"
)
listed=" "
for name in "${!SERIES[@]}"; do listed+="${SERIES[$name]} "; done
changed=$(cd "$NEW" && diff -rq "$ORIG" "$NEW" 2>/dev/null | sed -n "s|^Files $ORIG/\(.*\) and .* differ$|\1|p; s|^Only in $NEW/\(.*\): \(.*\)$|\1/\2|p" || true)
for f in $changed; do
  case $listed in *" $f "*) ;; *) echo "regen.sh: $f changed but no patch lists it" >&2; exit 1 ;; esac
done
for name in $(printf '%s\n' "${!SERIES[@]}" | sort); do
  out=$HERE/$name.patch; : > "$out"
  for f in ${SERIES[$name]}; do
    a=$ORIG/$f; [ -e "$a" ] || a=/dev/null
    (cd / && diff -uN --label "a/$f" --label "b/$f" "$a" "$NEW/$f") >> "$out" || true
  done
  echo "wrote $out ($(grep -c '^+' "$out") added lines)"
done
