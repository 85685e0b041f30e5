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
    unsigned char *save = malloc(s->table_bytes ? s->table_bytes : 1);
    if (!save) return KV_ERR_NOMEM;
    memcpy(save, s->base, s->table_bytes);
    MPI_Win_free(&s->win);  /* may hang: see above */
    if (s->base_malloced) free(s->base);
    s->base = NULL;
    s->win = MPI_WIN_NULL;
    int rc = kvo_alloc_table(s, s->comm, s->table_bytes, &s->base, &s->win, &s->base_malloced, false);
    if (rc == KV_OK) memcpy(s->base, save, s->table_bytes);
    free(save);
    return rc;
}

const kvr_variant_ops kvr_recreate_free = {"recreate-free", true, free_rebuild, NULL, NULL};
