/*
 * variant_recreate_free.c -- free the old windows first, then recreate.
 *
 * The tidy way, and the one the standard would like: MPI_Win_free the old
 * window, then allocate a new one.  MPI_Win_free is collective over a group
 * that includes the dead rank, so in Open MPI 5.0.7 it may block forever;
 * nothing inside the process can bound it.  The harness's deadline does,
 * and counts such runs as hangs: measuring that rate is this variant's
 * purpose.  The local table is saved before the free, since a window made
 * by MPI_Win_allocate takes its memory with it.
 */
#include "kv_internal.h"

#include <stdlib.h>

static int free_rebuild(kv_store *s) {
    if (s->win != MPI_WIN_NULL) {
        unsigned char *save = malloc(s->table_bytes ? s->table_bytes : 1);
        if (!save) return KV_ERR_NOMEM;
        memcpy(save, s->base, s->table_bytes);
        MPI_Win_free(&s->win);  /* may hang: see above */
        if (s->base_malloced) free(s->base);
        /* Until a new window exists, the saved copy is the table: a
         * failure during the allocation below restarts recovery, which
         * breaks locks in it and rebuilds from it. */
        s->base = save;
        s->base_malloced = true;
        s->win = MPI_WIN_NULL;
    }
    unsigned char *nb;
    MPI_Win nw;
    bool mal;
    int rc = kvo_alloc_table(s, s->comm, s->table_bytes, &nb, &nw, &mal, false);
    if (rc) return rc;
    memcpy(nb, s->base, s->table_bytes);
    free(s->base);
    s->base = nb;
    s->win = nw;
    s->base_malloced = mal;
    return KV_OK;
}

const kvr_variant_ops kvr_recreate_free = {true, free_rebuild, NULL, NULL};
