/*
 * variant_recreate_inplace.c -- new windows over the same memory, no copy.
 *
 * MPI_Win_create exposes the existing table (whoever allocated it) on the
 * shrunken communicator; the old window is abandoned but its memory stays
 * in use.  The new window is always a "create" window (osc/rdma), whatever
 * the backend at open: that is the price of not copying, and the results
 * record it.
 */
#include "kv_internal.h"

static int inplace_make(kv_store *s, kvr_window *nw) {
    MPI_Info info;
    MPI_Info_create(&info);
    kvo_window_info(s, info);
    int rc = MPI_Win_create(s->base, (MPI_Aint)s->table_bytes, 1, info, s->comm, &nw->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    MPI_Win_set_errhandler(nw->win, MPI_ERRORS_RETURN);
    nw->base = s->base;  /* the same memory, whoever owns it */
    nw->malloced = s->base_malloced;
    return KV_OK;
}

const kvr_variant_ops kvr_recreate_inplace = {.detects = true, .retire = KVR_ABANDON, .make = inplace_make};
