/*
 * variant_spare.c -- spare ranks take the place of failed ones.
 *
 * kv_open holds the highest `spares` ranks back; they hold no data and
 * wait in kv_spare_wait(), testing the watchdog every poll_us.  In recovery each failed
 * member id goes to one spare (recover.c), so placement, which is over ids,
 * does not change: only the copies the dead rank held move, to its
 * replacement.  Survivors copy their table into the new window as in
 * recreate-copy (kvr_make_copy); a replacement starts from an empty table.  When the spares
 * are used up, the variant carries on like recreate-copy.  At close, member
 * 0 sends each idle spare a message on the watchdog, which ends its wait.
 */
#include "kv_internal.h"

#include <stdlib.h>
#include <time.h>

/* A replacement has no table yet: kvr_make_copy gives it an empty one. */
const kvr_variant_ops kvr_spare = {.detects = true, .retire = KVR_ABANDON, .make = kvr_make_copy, .takes_over = true};

int kv_spare_wait(kv_store *s) {
    if (!s) return KV_ERR_ARG;
    while (s->spare) {
        if (s->watch_req == MPI_REQUEST_NULL && !s->failure_pending) return KV_ERR_CLOSED;
        if (kvw_test(s)) {
            int rc = kvr_recover(s);
            if (rc != KV_OK && rc != KV_WARN_DEGRADED) return rc;
            continue;
        }
        if (s->watch_req == MPI_REQUEST_NULL) return KV_ERR_CLOSED;
        kvw_nap(s);  /* an idle spare must not take a core from the members */
    }
    return KV_OK;
}

/* Member side of close: wake every idle spare with a message. */
void kvr_release_spares(kv_store *s) {
    if (s->rank != 0) return;
    int msg = 1;
    for (int i = 0; i < s->all_size; i++)
        if (s->all_ids[i] < 0) MPI_Send(&msg, 1, MPI_INT, i, 4242, s->watch);
}
