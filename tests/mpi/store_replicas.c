/*
 * store_replicas.c -- readers agree when replicas do not, and kv_audit
 * tells when they do not.
 * run: 3 allocate
 * run: 3 create
 *
 * Arguments: backend.  r = 2.  Every rank puts its own 40 keys; kv_audit
 * must find 0 divergent pairs.  Then each rank drops the copy it holds of
 * some keys whose first replica is another rank (as when re-replication
 * found no room for a copy: stats.restore_full), and overwrites the value
 * of another set of keys with a different version (a stale copy).  Pass
 * rules: kv_audit counts exactly the keys damaged, the same on every
 * rank; every rank still reads every dropped key with its value (a miss
 * at one replica is confirmed at the others); no read returns a value
 * that was never written.
 */
#include <stdint.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

enum { NKEYS = 40 };

static void key_of(char *k, size_t n, int rank, int i) { snprintf(k, n, "rep-%d-%d", rank, i); }
static void val_of(char *v, size_t n, int rank, int i) { snprintf(v, n, "value-%d-%d", rank, i); }

/* This rank's slot holding key, or NULL. */
static unsigned char *local_slot(kv_store *s, const char *key) {
    for (size_t i = 0; i < s->nslots; i++) {
        unsigned char *sl = s->base + i * s->slot_size;
        enum kvs_state st = kvs_decode(sl, s->slot_size, s->cfg.max_key, s->cfg.max_value);
        if (st == KVS_LIVE && kvs_key_is(sl, key, strlen(key))) return sl;
    }
    return NULL;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kv_config c;
    kv_config_default(&c);
    c.backend = kv_backend_from_name(argc > 1 ? argv[1] : "allocate");
    c.variant = KV_VARIANT_RECREATE_COPY;
    c.replicas = 2;
    c.slots_per_rank = 1024;
    c.max_key = 24;
    c.max_value = 32;
    kv_store *s;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &s), KV_OK);
    char key[32], val[32], got[32];
    for (int i = 0; i < NKEYS; i++) {
        key_of(key, sizeof key, rank, i);
        val_of(val, sizeof val, rank, i);
        KVT_CHECK_RC(kv_put(s, key, strlen(key), val, strlen(val)), KV_OK);
    }
    kv_barrier(s);
    long long div = -1;
    KVT_CHECK_RC(kv_audit(s, &div), KV_OK);
    KVT_CHECK(div == 0);
    kv_barrier(s);
    /* Damage: drop the local copy of some keys (this rank not their first
     * replica), give others a different version here. */
    long long damaged = 0;
    for (int w = 0; w < size; w++)
        for (int i = 0; i < NKEYS; i++) {
            key_of(key, sizeof key, w, i);
            int ids[2];
            kvh_replicas(s, kvh_hash(key, strlen(key), 0), ids);
            unsigned char *sl = local_slot(s, key);
            if (!sl || ids[0] == s->my_id || i % 4 == 3) continue;
            if (i % 4 == 0) {
                memset(sl, 0, s->slot_size);  /* lost for lack of room */
                /* keep the probe chain of other keys intact: a placeholder */
                kvs_encode(sl, 0, "", 1, NULL, 0, true, s->cfg.max_key);
            } else if (i % 4 == 1) {
                const kvs_hdr *h = kvs_hdr_of(sl);
                char v[32];
                uint32_t vl = h->vlen;
                memcpy(v, kvs_val_of(sl, s->cfg.max_key), vl);
                kvs_encode(sl, h->version + 7, key, (uint32_t)strlen(key), v, vl, false, s->cfg.max_key);
            } else {
                continue;
            }
            damaged++;
        }
    long long all_damaged = 0;
    MPI_Allreduce(&damaged, &all_damaged, 1, MPI_LONG_LONG, MPI_SUM, kv_comm(s));
    kv_barrier(s);
    KVT_CHECK_RC(kv_audit(s, &div), KV_OK);
    KVT_CHECK(div == all_damaged);
    if (div != all_damaged) fprintf(stderr, "[rank %d] audit %lld, damaged %lld\n", rank, div, all_damaged);
    KVT_CHECK(all_damaged > 0);
    /* Every reader finds every key, with a value that was written. */
    for (int w = 0; w < size; w++)
        for (int i = 0; i < NKEYS; i++) {
            key_of(key, sizeof key, w, i);
            val_of(val, sizeof val, w, i);
            size_t len = 0;
            int rc = kv_get(s, key, strlen(key), got, sizeof got - 1, &len);
            KVT_CHECK_RC(rc, KV_OK);
            if (rc == KV_OK) {
                got[len] = 0;
                KVT_CHECK(strcmp(got, val) == 0);
            }
        }
    MPI_Comm keep = kvt_keep(kv_comm(s));
    kv_close(s);
    kvt_finish(keep, "store_replicas");
    MPI_Finalize();
    return 0;
}
