/*
 * fuzz_store.h -- a store without MPI, for fuzz targets of the code that
 * reads bytes other processes or disks wrote (slot images, re-replication
 * records, checkpoint files).  Only the fields that code touches are set:
 * limits, a zeroed local table, the member id.  Header-only.
 */
#ifndef FUZZ_STORE_H
#define FUZZ_STORE_H

#include <stdlib.h>

#include "kv_internal.h"

static kv_store *fuzz_store(size_t nslots, size_t max_key, size_t max_value) {
    kv_store *s = calloc(1, sizeof *s);
    kv_config_default(&s->cfg);
    s->cfg.max_key = max_key;
    s->cfg.max_value = max_value;
    s->cfg.max_probe = 8;
    s->nslots = nslots;
    s->slot_size = kvs_slot_size(max_key, max_value);
    s->base = calloc(nslots, s->slot_size);
    s->my_id = 0;
    s->nids = 1;
    return s;
}

static void fuzz_store_free(kv_store *s) {
    free(s->base);
    free(s);
}

#endif
