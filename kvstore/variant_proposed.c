/*
 * variant_proposed.c -- recovery on the ULFM RMA features the standard
 * proposes, as implemented by patches/openmpi.
 *
 * Written as if MPIX_Win_revoke, MPIX_Win_get_failed and failure-reporting
 * RMA calls were standard.  No watchdog: a get, put, atomic or flush that
 * involves a failed rank returns MPIX_ERR_PROC_FAILED, which starts
 * recovery (ops.c, kvw_status); the first survivor in recovery revokes
 * the window (kvw_alarm), so every other member's next synchronisation
 * returns MPIX_ERR_REVOKED and it joins.  The rebuild is recreate-copy's
 * -- a new window on the survivors, the table copied in -- except that
 * the old window is then freed, not abandoned (kvr_windows): the patched MPI_Win_free
 * completes without the dead.  (Freeing first, as recreate-free must,
 * would cost a second copy of the table: the window's memory goes with it.)
 * That is on osc/sm; an osc/rdma window is abandoned as by the workarounds,
 * since an operation a peer gave up on may still arrive there later.
 *
 * The patched Open MPI keeps its stock behaviour unless the MCA parameter
 * osc_base_ft_rma is set; kv_open sets it for this variant through MPI_T,
 * before any window exists.  It is per process: an application mixing
 * this variant with others in one process gets fault-tolerant RMA on all
 * of its windows.
 */
#include "kv_internal.h"

#include <mpi-ext.h>

#ifdef OMPI_HAVE_MPIX_WIN_FT
/* For wait loops (a slot lock held by a dead writer, a barrier): has the
 * window a failed member, or was it revoked?  Both calls drive progress. */
bool kvr_proposed_window_failed(kv_store *s) {
    if (s->win == MPI_WIN_NULL) return false;
    s->st.polls++;
    int revoked = 0, n = 0;
    MPI_Group g;
    if (MPIX_Win_is_revoked(s->win, &revoked) != MPI_SUCCESS || revoked) return true;
    if (MPIX_Win_get_failed(s->win, &g) != MPI_SUCCESS) return true;
    MPI_Group_size(g, &n);
    MPI_Group_free(&g);
    return n > 0;
}

/* The alarm: every member's next RMA call on the window fails. */
void kvr_proposed_revoke_window(kv_store *s) {
    if (s->win != MPI_WIN_NULL) MPIX_Win_revoke(s->win);
}

/* recreate-copy's new window; the old one, revoked, is freed afterwards
 * (on osc/sm): the patched MPI_Win_free completes without the dead. */
const kvr_variant_ops kvr_proposed = {.detects = true, .retire = KVR_FREE_AFTER,
                                      .make = kvr_make_copy, .window_failed = kvr_proposed_window_failed,
                                      .revoke_window = kvr_proposed_revoke_window, .ft_rma = true};
#endif

int kvr_proposed_enable(void) {
    int provided, idx, count, on = 1, back = 0, rc;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return KV_ERR_UNSUPPORTED;
    rc = MPI_T_cvar_get_index("osc_base_ft_rma", &idx);
    if (rc == MPI_SUCCESS) {
        MPI_T_cvar_handle h;
        rc = MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
        if (rc == MPI_SUCCESS) {
            rc = MPI_T_cvar_write(h, &on);
            if (rc == MPI_SUCCESS) rc = MPI_T_cvar_read(h, &back);
            MPI_T_cvar_handle_free(&h);
        }
    }
    MPI_T_finalize();
    return rc == MPI_SUCCESS && back ? KV_OK : KV_ERR_UNSUPPORTED;
}
