/*
 * variant_recreate_copy.c -- fresh windows, local data copied in.
 *
 * The survivors allocate a new window (same backend) on the shrunken
 * communicator and copy their table into it.  The old window spans the
 * dead rank, so it can be neither used nor freed safely: it is abandoned
 * (kept allocated, counted in stats.windows_abandoned).  Cost: one table
 * copy per rank per recovery, and the abandoned memory.  Variant proposed
 * rebuilds the same way but frees the old window (kvr_rebuild_copy_then).
 */
#include "kv_internal.h"

#include <stdlib.h>

int kvr_rebuild_copy_then(kv_store *s, bool free_old) {
    unsigned char *nb;
    MPI_Win nw;
    bool mal;
    int rc = kvo_alloc_table(s, s->comm, s->table_bytes, &nb, &nw, &mal, s->base == NULL);
    if (rc) return rc;
    if (s->base) memcpy(nb, s->base, s->table_bytes);
    if (s->win != MPI_WIN_NULL && !free_old) {
        kvo_abandon(s, s->win, s->base_malloced ? s->base : NULL);
    } else if (s->win != MPI_WIN_NULL) {
        MPI_Win_free(&s->win);
        if (s->base_malloced) free(s->base);
    }
    s->win = nw;
    s->base = nb;
    s->base_malloced = mal;
    return KV_OK;
}

int kvr_rebuild_copy(kv_store *s) { return kvr_rebuild_copy_then(s, false); }

const kvr_variant_ops kvr_recreate_copy = {true, kvr_rebuild_copy, NULL, NULL};
