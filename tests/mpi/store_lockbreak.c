/*
 * store_lockbreak.c -- a writer killed while holding slot locks, mid-write.
 * run: 4 allocate recreate-copy
 * run: 4 allocate recreate-inplace
 * run: 4 allocate recreate-free
 * run: 5 allocate spare
 * run: 4 allocate proposed
 * run: 4 allocate online
 * run: 4 create online
 *
 * Rank 1 (the victim) writes "old" values for 32 keys, then takes the slot
 * locks of every key at every replica the way a writer does and, as ops.c
 * does, journals each new image at one replica before putting it into the
 * key's slot there: complete for every key but one, and torn (half a key)
 * for one key whose other replica is the victim itself -- the hard case,
 * where the old value dies with the victim.  Then it raises SIGKILL with
 * the locks held.  Pass rules: the survivors recover; before any new put,
 * each key reads as the whole old or the whole new value, never torn or
 * mixed, the same on every survivor (the torn key's new value comes back
 * from the journal); every lock is broken (a put of each key succeeds in
 * under a second), and so is a lock the dead writer's late operation
 * takes after the recovery; the new puts are read back.
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
    /* The torn key: one whose other replica is the victim itself, so that
     * its old value dies with the victim (the hard case).  A writer has one
     * write in flight: every other key gets a complete new image at one
     * replica only (the writer "died" before the second). */
    int torn = NKEYS - 1;
    for (int i = 0; i < NKEYS; i++) {
        key_of(key, sizeof key, i);
        int ids[2];
        kvh_replicas(s, kvh_hash(key, strlen(key), 0), ids);
        if (ids[0] == s->my_id || ids[1] == s->my_id) torn = i;
    }
    for (int n = 0; n <= NKEYS; n++) {
        int i = n < NKEYS ? n : torn;  /* the torn key last: its journal survives */
        if (n < NKEYS && n == torn) continue;
        key_of(key, sizeof key, i);
        uint64_t kh = kvh_hash(key, strlen(key), 0), me = KVS_LOCK_WORD(1, s->my_id), zero = 0, got;
        uint32_t home = (uint32_t)(kh % s->nslots);
        int ids[2];
        kvh_replicas(s, kh, ids);
        /* The replica written: for the torn key the one that is not the
         * victim, else the first by rank order (the order of ops.c). */
        int first = s->rank_of_id[ids[0]] < s->rank_of_id[ids[1]] ? ids[0] : ids[1];
        if (i == torn && first == s->my_id) first = ids[0] == s->my_id ? ids[1] : ids[0];
        for (int r = 0; r < 2; r++)
            MPI_Compare_and_swap(&me, &zero, &got, MPI_UINT64_T, s->rank_of_id[ids[r]],
                                 (MPI_Aint)home * (MPI_Aint)s->slot_size, s->win);
        MPI_Win_flush_all(s->win);
        snprintf(val, sizeof val, "NEW-value-of-key-%d-NEW", i);
        unsigned char *img = calloc(1, s->slot_size);
        kvs_encode(img, 1000 + (uint64_t)i, key, (uint32_t)strlen(key), val, (uint32_t)strlen(val), false,
                   s->cfg.max_key);
        size_t len = KVS_HDR_SIZE + s->cfg.max_key + strlen(val);
        if (i == torn) len = KVS_HDR_SIZE + s->cfg.max_key / 2;  /* torn: header and half a key */
        /* As ops.c does: the complete image into this writer's journal slot
         * at the target, then (part of) it into the key's slot -- the home
         * slot, where the key was inserted into an empty table. */
        size_t full = KVS_HDR_SIZE + s->cfg.max_key + strlen(val);
        ((kvs_hdr *)(void *)img)->lock = me;  /* the journal carries the write's lock word */
        MPI_Put(img, (int)full, MPI_BYTE, s->rank_of_id[first],
                (MPI_Aint)(s->nslots + (size_t)s->my_id) * (MPI_Aint)s->slot_size, (int)full,
                MPI_BYTE, s->win);
        MPI_Win_flush_all(s->win);
        MPI_Put(img + 8, (int)(len - 8), MPI_BYTE, s->rank_of_id[first],
                (MPI_Aint)home * (MPI_Aint)s->slot_size + 8, (int)(len - 8), MPI_BYTE, s->win);
        MPI_Win_flush_all(s->win);
        free(img);
    }
    raise(SIGKILL);
}

/* After the recovery, an operation of the dead carried out late (over TCP
 * a target applies an RMA operation when it next drives progress): the
 * dead writer's lock word back on the home slot of every key in this
 * member's table.  Nobody will release such a lock; the next writer must
 * break it. */
static void late_locks(kv_store *s) {
    int dead = 0;
    while (dead < s->nids && s->rank_of_id[dead] >= 0) dead++;
    if (dead >= s->nids) return;  /* spare: the spare took the dead's id */
    char key[32];
    for (int i = 0; i < NKEYS; i++) {
        key_of(key, sizeof key, i);
        uint32_t home = (uint32_t)(kvh_hash(key, strlen(key), 0) % s->nslots);
        kvs_hdr *h = (kvs_hdr *)(void *)(s->base + (size_t)home * s->slot_size);
        __atomic_store_n(&h->lock, KVS_LOCK_WORD(1 << 20, dead), __ATOMIC_RELEASE);
    }
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
        if (mine[i] < 0) kvt_dump_key(s, key);
    }
    int lo[NKEYS], hi[NKEYS];
    MPI_Allreduce(mine, lo, NKEYS, MPI_INT, MPI_MIN, kv_comm(s));
    MPI_Allreduce(mine, hi, NKEYS, MPI_INT, MPI_MAX, kv_comm(s));
    for (int i = 0; i < NKEYS; i++) KVT_CHECK(lo[i] == hi[i]);
    late_locks(s);
    kv_barrier(s);
    /* The dead writer's locks are gone, the late ones too: every key can
     * be written again, at once. */
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
    MPI_Comm keep = kvt_keep(kv_comm(s));
    kv_close(s);
    kvt_finish(keep, "store_lockbreak");
    MPI_Finalize();
    return 0;
}
