/*
 * store_concurrent.c -- concurrent writers and readers of the same keys.
 * run: 2 allocate
 * run: 4 allocate
 * run: 8 allocate
 * run: 4 create
 * run: 8 create
 *
 * Pass rules: every rank overwrites the same 4 hot keys 400 times with
 * values whose every byte encodes (writer, iteration) and reads them in
 * between; no read ever returns a value with mixed bytes or a wrong length
 * (a torn or mixed copy); after a barrier all ranks read the same final
 * value for each key; a shared counter hit by everyone is exact.
 */
#include <stdint.h>

#include "kvstore.h"
#include "kvtest.h"

enum { NHOT = 4, ITERS = 400, VLEN = 200 };

static void fill(unsigned char *v, int rank, int it) {
    for (int i = 0; i < VLEN; i++) v[i] = (unsigned char)(rank * 31 + it);
    memcpy(v, &rank, sizeof rank);
    memcpy(v + 4, &it, sizeof it);
}

static int consistent(const unsigned char *v, size_t len) {
    if (len != VLEN) return 0;
    int rank, it;
    memcpy(&rank, v, 4);
    memcpy(&it, v + 4, 4);
    for (int i = 8; i < VLEN; i++)
        if (v[i] != (unsigned char)(rank * 31 + it)) return 0;
    return 1;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kv_config c;
    kv_config_default(&c);
    c.slots_per_rank = 1024;
    c.max_value = 256;
    c.backend = kv_backend_from_name(argc > 1 ? argv[1] : "allocate");
    kv_store *s;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &s), KV_OK);
    unsigned char v[256];
    char key[16];
    int bad = 0, busy = 0;
    for (int it = 0; it < ITERS; it++) {
        snprintf(key, sizeof key, "hot%d", it % NHOT);
        fill(v, rank, it);
        int rc = kv_put(s, key, strlen(key), v, VLEN);
        if (rc == KV_ERR_BUSY) busy++;
        else KVT_CHECK_RC(rc, KV_OK);
        snprintf(key, sizeof key, "hot%d", (it + rank) % NHOT);
        size_t len = 0;
        rc = kv_get(s, key, strlen(key), v, sizeof v, &len);
        if (rc == KV_OK && !consistent(v, len)) bad++;
        KVT_CHECK(rc == KV_OK || rc == KV_ERR_NOT_FOUND);
        KVT_CHECK_RC(kv_fetch_add(s, "ctr", 3, 2, NULL), KV_OK);
    }
    KVT_CHECK(bad == 0);
    KVT_CHECK(busy == 0);
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    for (int k = 0; k < NHOT; k++) {
        snprintf(key, sizeof key, "hot%d", k);
        size_t len = 0;
        KVT_CHECK_RC(kv_get(s, key, strlen(key), v, sizeof v, &len), KV_OK);
        KVT_CHECK(consistent(v, len));
        int who[2];
        memcpy(&who[0], v, 4);
        memcpy(&who[1], v + 4, 4);
        int all[2 * 64];
        MPI_Gather(who, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int r = 1; r < size; r++) KVT_CHECK(all[2 * r] == all[0] && all[2 * r + 1] == all[1]);
    }
    int64_t ctr = 0;
    KVT_CHECK_RC(kv_fetch_add(s, "ctr", 3, 0, &ctr), KV_OK);
    KVT_CHECK(ctr == 2LL * ITERS * size);
    kv_stats st;
    kv_get_stats(s, &st);
    printf("[rank %d] lock waits %lld, read retries %lld\n", rank, st.lock_waits, st.read_retries);
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    KVT_CHECK_RC(kv_close(s), KV_OK);
    kvt_finish(MPI_COMM_WORLD, "store_concurrent");
    MPI_Finalize();
    return 0;
}
