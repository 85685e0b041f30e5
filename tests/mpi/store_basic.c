/*
 * store_basic.c -- failure-free semantics of the store on one backend.
 * run: 2 allocate
 * run: 4 allocate
 * run: 8 allocate
 * run: 2 create
 * run: 4 create
 * run: 8 create
 *
 * Pass rules: 300 pairs written by each rank are read back with their
 * exact values on every rank; overwrites are seen everywhere; deleted keys
 * are not found; a counter incremented 100 times by every rank ends at
 * 100 x ranks; a key over max_key, a value over max_value, a short buffer,
 * and r above the rank count each get their own status; a full table says
 * KV_ERR_FULL and loses nothing already stored.
 */
#include <stdint.h>

#include "kvstore.h"
#include "kvtest.h"

static void value_of(char *buf, size_t n, int rank, int i, int gen) {
    snprintf(buf, n, "value-of-%d-%d-gen%d-%0*d", rank, i, gen, (i * 7) % 90 + 1, i);
}

static kv_config config(const char *backend) {
    kv_config c;
    kv_config_default(&c);
    c.slots_per_rank = 4096;
    c.max_key = 32;
    c.max_value = 256;
    c.backend = kv_backend_from_name(backend);
    return c;
}

static void check_all(kv_store *s, int size, int gen, int nkeys) {
    char key[32], want[256], got[256];
    for (int r = 0; r < size; r++)
        for (int i = 0; i < nkeys; i++) {
            snprintf(key, sizeof key, "k%d-%d", r, i);
            value_of(want, sizeof want, r, i, gen);
            size_t len = 0;
            int rc = kv_get(s, key, strlen(key), got, sizeof got, &len);
            KVT_CHECK_RC(rc, KV_OK);
            KVT_CHECK(rc != KV_OK || (len == strlen(want) && memcmp(got, want, len) == 0));
        }
}

static void test_errors(kv_store *s, int size) {
    char big[300], key[64];
    memset(big, 'v', sizeof big);
    memset(key, 'k', sizeof key);
    KVT_CHECK_RC(kv_put(s, key, 33, "x", 1), KV_ERR_KEY_TOO_LONG);
    KVT_CHECK_RC(kv_put(s, "ok", 2, big, 257), KV_ERR_VALUE_TOO_LARGE);
    KVT_CHECK_RC(kv_put(s, "", 0, "x", 1), KV_ERR_ARG);
    KVT_CHECK_RC(kv_get(s, "missing-key", 11, big, sizeof big, NULL), KV_ERR_NOT_FOUND);
    size_t len = 0;
    KVT_CHECK_RC(kv_get(s, "k0-1", 4, big, 3, &len), KV_ERR_BUFFER_TOO_SMALL);
    KVT_CHECK(len > 3);
    KVT_CHECK_RC(kv_fetch_add(s, "k0-1", 4, 1, NULL), KV_ERR_NOT_COUNTER);
    /* r above the rank count: every rank gets the error, no store. */
    kv_config c = *kv_get_config(s);
    c.replicas = size + 1;
    kv_store *t = (kv_store *)1;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &t), size + 1 > 16 ? KV_ERR_CONFIG : KV_ERR_TOO_FEW_RANKS);
    KVT_CHECK(t == NULL);
}

static void test_full(const char *backend, int rank) {
    kv_config c = config(backend);
    c.slots_per_rank = 16;
    c.max_probe = 16;
    c.replicas = 1;
    kv_store *s;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &s), KV_OK);
    int stored = 0, rc = KV_OK;
    char key[32], val[32];
    if (rank == 0) {
        for (int i = 0; i < 100000 && rc == KV_OK; i++) {
            snprintf(key, sizeof key, "full-%d", i);
            rc = kv_put(s, key, strlen(key), key, strlen(key));
            if (rc == KV_OK) stored++;
        }
        KVT_CHECK_RC(rc, KV_ERR_FULL);
        for (int i = 0; i < 100000 && stored; i++) {  /* every stored pair is intact */
            snprintf(key, sizeof key, "full-%d", i);
            size_t len;
            rc = kv_get(s, key, strlen(key), val, sizeof val, &len);
            if (i < stored + 1 && rc == KV_OK) KVT_CHECK(len == strlen(key) && !memcmp(val, key, len));
            if (rc == KV_OK) stored--;
        }
        KVT_CHECK(stored == 0);
    }
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    KVT_CHECK_RC(kv_close(s), KV_OK);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    const char *backend = argc > 1 ? argv[1] : "allocate";
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kv_config c = config(backend);
    kv_store *s = NULL;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &s), KV_OK);
    if (!s) { kvt_finish(MPI_COMM_WORLD, "store_basic"); MPI_Finalize(); return 1; }

    const int nkeys = 300;
    char key[32], val[256];
    for (int gen = 0; gen < 2; gen++) {
        for (int i = 0; i < nkeys; i++) {
            snprintf(key, sizeof key, "k%d-%d", rank, i);
            value_of(val, sizeof val, rank, i, gen);
            KVT_CHECK_RC(kv_put(s, key, strlen(key), val, strlen(val)), KV_OK);
        }
        KVT_CHECK_RC(kv_barrier(s), KV_OK);
        check_all(s, size, gen, nkeys);
        KVT_CHECK_RC(kv_barrier(s), KV_OK);
    }
    for (int i = 0; i < nkeys; i += 3) {
        snprintf(key, sizeof key, "k%d-%d", rank, i);
        KVT_CHECK_RC(kv_delete(s, key, strlen(key)), KV_OK);
        KVT_CHECK_RC(kv_delete(s, key, strlen(key)), KV_ERR_NOT_FOUND);
    }
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < nkeys; i++) {
            snprintf(key, sizeof key, "k%d-%d", r, i);
            int rc = kv_get(s, key, strlen(key), val, sizeof val, NULL);
            KVT_CHECK_RC(rc, i % 3 == 0 ? KV_ERR_NOT_FOUND : KV_OK);
            if (rc != (i % 3 == 0 ? KV_ERR_NOT_FOUND : KV_OK)) fprintf(stderr, "  key %s\n", key);
        }
    KVT_CHECK_RC(kv_barrier(s), KV_OK);  /* everyone checked before keys come back */
    /* re-insert after delete reuses the tombstone */
    snprintf(key, sizeof key, "k%d-%d", rank, 0);
    KVT_CHECK_RC(kv_put(s, key, strlen(key), "again", 5), KV_OK);
    KVT_CHECK_RC(kv_get(s, key, strlen(key), val, sizeof val, NULL), KV_OK);
    KVT_CHECK(memcmp(val, "again", 5) == 0);

    for (int i = 0; i < 100; i++) KVT_CHECK_RC(kv_fetch_add(s, "counter", 7, 1, NULL), KV_OK);
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    int64_t now = -1;
    KVT_CHECK_RC(kv_fetch_add(s, "counter", 7, 0, &now), KV_OK);
    KVT_CHECK(now == 100 * size);

    test_errors(s, size);
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    KVT_CHECK_RC(kv_close(s), KV_OK);
    test_full(backend, rank);
    kvt_finish(MPI_COMM_WORLD, "store_basic");
    MPI_Finalize();
    return 0;
}
