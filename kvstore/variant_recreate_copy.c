/*
 * variant_recreate_copy.c -- fresh windows, local data copied in.
 *
 * The survivors allocate a new window (same backend) on the shrunken
 * communicator and copy their table into it.  The old window spans the
 * dead rank, so it can be neither used nor freed safely: it is abandoned
 * (kept allocated, counted in stats.windows_abandoned).  Cost: one table
 * copy per rank per recovery, and the abandoned memory.  Variants spare and
 * proposed make their windows the same way (kvr_make_copy); proposed then
 * frees the old one instead.
 */
#include "kv_internal.h"

int kvr_make_copy(kv_store *s, kvr_window *nw) {
    int rc = kvo_alloc_table(s, s->comm, s->table_bytes, &nw->base, &nw->win, &nw->malloced,
                             s->base == NULL);
    if (rc == KV_OK && s->base) memcpy(nw->base, s->base, s->table_bytes);
    return rc;
}

const kvr_variant_ops kvr_recreate_copy = {.detects = true, .retire = KVR_ABANDON, .make = kvr_make_copy};
