/*
 * store_lockbreak.c -- a writer killed while holding slot locks, mid-write.
 * Not in `make test` yet: run by hand with
 *   scripts/kvrun -n 4 --timeout 60 -- build/tests/mpi/store_lockbreak allocate recreate-copy
 * It passed 12 of 14 runs here; with other jobs loading the machine one run
 * hung and one failed (cause not yet found), too flaky for the suite.
 *
 * Rank 1 (the victim) writes "old" values for 32 keys, then, for each of
 * them that it does not hold a replica of, takes the slot locks at every replica the way a writer does, puts
 * a new value into the first replica only (and, for half the keys, only
 * the first half of the new slot image: a torn copy), and raises SIGKILL
 * with the locks held.  Pass rules: the survivors recover; every lock the
 * victim held is broken (a put of each key succeeds within the lock
 * timeout); before that put, a get of each key returns either the whole
 * old value or the whole new one -- never a torn or mixed value -- and
 * every survivor reads the same one; afterwards the new put is read back.
 */
#include <stdint.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

enum { NKEYS = 32 };

static void key_of(char *k, size_t n, int i) { snprintf(k, n, "lock-key-%d", i); }

/* What a writer does before it dies: lock home slots at every replica,
 * write (part of) a new image at the first one, keep the locks. */
static void die_mid_write(kv_store *s) {
    char key[32], val[64];
    for (int i = 0; i < NKEYS; i++) {
        key_of(key, sizeof key, i);
        uint64_t kh = kvh_hash(key, strlen(key), 0), me = (uint64_t)s->my_id + 1, zero = 0, got;
        uint32_t home = (uint32_t)(kh % s->nslots);
        int ids[2];
        kvh_place(kh, s->live_ids, s->size, 2, ids);
        /* A writer that holds a replica itself and dies while overwriting
         * the other one in place destroys both copies (KNOWN GAP: slots are
         * overwritten in place; double-buffered slots would fix it).  Only
         * keys the victim does not hold are written here. */
        if (ids[0] == s->my_id || ids[1] == s->my_id) continue;
        for (int r = 0; r < 2; r++)
            MPI_Compare_and_swap(&me, &zero, &got, MPI_UINT64_T, s->rank_of_id[ids[r]],
                                 (MPI_Aint)home * (MPI_Aint)s->slot_size, s->win);
        MPI_Win_flush_all(s->win);
        snprintf(val, sizeof val, "NEW-value-of-key-%d-NEW", i);
        unsigned char *img = calloc(1, s->slot_size);
        kvs_encode(img, 1000 + (uint64_t)i, key, (uint32_t)strlen(key), val, (uint32_t)strlen(val), false,
                   s->cfg.max_key);
        size_t len = KVS_HDR_SIZE + s->cfg.max_key + strlen(val);
        if (i % 2) len = KVS_HDR_SIZE + s->cfg.max_key / 2;  /* torn: header and half a key */
        /* The key's own slot: the home slot when it was inserted there. */
        MPI_Put(img + 8, (int)(len - 8), MPI_BYTE, s->rank_of_id[ids[0]],
                (MPI_Aint)home * (MPI_Aint)s->slot_size + 8, (int)(len - 8), MPI_BYTE, s->win);
        MPI_Win_flush_all(s->win);
        free(img);
    }
    raise(SIGKILL);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    kv_config c;
    kv_config_default(&c);
    c.slots_per_rank = 4096;
    c.max_value = 64;
    c.max_key = 32;
    c.backend = kv_backend_from_name(argc > 1 ? argv[1] : "allocate");
    c.variant = kv_variant_from_name(argc > 2 ? argv[2] : "recreate-copy");
    c.spares = c.variant == KV_VARIANT_SPARE ? 1 : 0;
    c.lock_timeout_ms = 5000;
    kv_store *s;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &s), KV_OK);
    char key[32], val[64], got[64];
    if (kv_is_spare(s)) {
        int rc = kv_spare_wait(s);
        KVT_CHECK(rc == KV_OK);
    } else {
        if (rank == 1)
            for (int i = 0; i < NKEYS; i++) {
                key_of(key, sizeof key, i);
                snprintf(val, sizeof val, "old-value-of-key-%d", i);
                KVT_CHECK_RC(kv_put(s, key, strlen(key), val, strlen(val)), KV_OK);
            }
        kv_barrier(s);
        if (rank == 1) die_mid_write(s);
    }
    int rc = kv_barrier(s);  /* the survivors recover here */
    KVT_CHECK(rc == KV_OK);
    KVT_CHECK(kv_recovery_count(s) >= 1);
    /* Each key reads as wholly old or wholly new, the same everywhere. */
    int mine[NKEYS];
    for (int i = 0; i < NKEYS; i++) {
        key_of(key, sizeof key, i);
        size_t len = 0;
        rc = kv_get(s, key, strlen(key), got, sizeof got - 1, &len);
        KVT_CHECK_RC(rc, KV_OK);
        got[rc == KV_OK ? len : 0] = 0;
        char old[64], nw[64];
        snprintf(old, sizeof old, "old-value-of-key-%d", i);
        snprintf(nw, sizeof nw, "NEW-value-of-key-%d-NEW", i);
        mine[i] = !strcmp(got, old) ? 0 : !strcmp(got, nw) ? 1 : -1;
        KVT_CHECK(mine[i] >= 0);
        if (mine[i] < 0) fprintf(stderr, "[rank %d] %s read '%s'\n", rank, key, got);
    }
    int lo[NKEYS], hi[NKEYS];
    MPI_Allreduce(mine, lo, NKEYS, MPI_INT, MPI_MIN, kv_comm(s));
    MPI_Allreduce(mine, hi, NKEYS, MPI_INT, MPI_MAX, kv_comm(s));
    for (int i = 0; i < NKEYS; i++) KVT_CHECK(lo[i] == hi[i]);
    kv_barrier(s);
    /* The dead writer's locks are gone: every key can be written again. */
    if (kv_rank(s) == 0)
        for (int i = 0; i < NKEYS; i++) {
            key_of(key, sizeof key, i);
            double t0 = kvt_now();
            KVT_CHECK_RC(kv_put(s, key, strlen(key), "after", 5), KV_OK);
            KVT_CHECK(kvt_now() - t0 < 1.0);
        }
    kv_barrier(s);
    for (int i = 0; i < NKEYS; i++) {
        key_of(key, sizeof key, i);
        size_t len = 0;
        KVT_CHECK_RC(kv_get(s, key, strlen(key), got, sizeof got, &len), KV_OK);
        KVT_CHECK(len == 5 && !memcmp(got, "after", 5));
    }
    kv_stats st;
    kv_get_stats(s, &st);
    printf("[rank %d] locks broken %lld\n", rank, st.locks_broken);
    MPI_Comm keep;
    MPI_Comm_dup(kv_comm(s), &keep);
    kv_close(s);
    kvt_finish(keep, "store_lockbreak");
    MPI_Finalize();
    return 0;
}
