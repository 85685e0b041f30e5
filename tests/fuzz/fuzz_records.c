/*
 * fuzz_records.c -- the record stream of re-replication (what peers send
 * in the exchange) inserted into a local table: malformed records are
 * refused, never read past, and inserted slots decode as LIVE or DELETED.
 */
#include "fuzz_store.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    kv_store *s = fuzz_store(64, 16, 48);
    unsigned char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    long long n = kvr_insert_all(s, buf, size);
    for (size_t i = 0; n > 0 && i < s->nslots; i++) {
        enum kvs_state st = kvs_decode(s->base + i * s->slot_size, s->slot_size, 16, 48);
        if (st == KVS_TORN || st == KVS_SHORT) abort();  /* an insert wrote a bad slot */
    }
    free(buf);
    fuzz_store_free(s);
    return 0;
}
