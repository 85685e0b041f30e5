/*
 * store_respawn.c -- variant respawn: the dead replaced, the store back at
 * its size with every pair's copies.
 * run: 4 allocate 1
 * run: 4 allocate 0
 * run: 5 allocate 1 3
 * run: 4 create 2
 *
 * Arguments: the backend, then the world ranks to kill (rank 0 may be
 * one).  Every rank puts PAIRS pairs (r = kills + 1) and meets the others; the
 * victims SIGKILL themselves; the survivors notice on their next
 * operations, and the store spawns as many new processes as died.  A
 * newcomer is this program again: its kv_open joins the survivors'
 * recovery and returns holding a dead member's id (kv_is_respawned).
 *
 * Pass rule: after the recovery the store has the old size on every
 * process, the newcomers as many as died, each holding one of the dead
 * members' ranks; every pair, the dead ranks' writes included, reads
 * back with its value at every process; the copies agree (kv_audit);
 * and a second round of puts and reads across old and new members works.
 */
#include "kvtest.h"

#include <mpi-ext.h>

#define PAIRS 200

static void value_for(char *buf, size_t n, int writer, int k, int round) {
    snprintf(buf, n, "v-%d-%d-%d", writer, k, round);
}

/* Every pair that writer wrote in round, read back here. */
static void check_pairs(kv_store *s, int writer, int round) {
    char key[32], want[32], got[64];
    for (int k = 0; k < PAIRS; k++) {
        snprintf(key, sizeof key, "k-%d-%d", writer, k);
        value_for(want, sizeof want, writer, k, round);
        size_t len = 0;
        int rc;
        while ((rc = kv_get(s, key, strlen(key), got, sizeof got, &len)) == KV_ERR_INTERRUPTED) {}
        KVT_CHECK_RC(rc, KV_OK);
        KVT_CHECK(rc != KV_OK || (len == strlen(want) && memcmp(got, want, len) == 0));
    }
}

static void put_pairs(kv_store *s, int writer, int round) {
    char key[32], val[32];
    for (int k = 0; k < PAIRS; k++) {
        snprintf(key, sizeof key, "k-%d-%d", writer, k);
        value_for(val, sizeof val, writer, k, round);
        int rc;
        while ((rc = kv_put(s, key, strlen(key), val, strlen(val))) == KV_ERR_INTERRUPTED) {}
        KVT_CHECK_RC(rc, KV_OK);
    }
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: store_respawn allocate|create RANK... (the ranks to kill)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kv_config cfg;
    kv_config_default(&cfg);
    char err[200];
    KVT_CHECK_RC(kv_config_set(&cfg, "variant", "respawn", err, sizeof err), KV_OK);
    KVT_CHECK_RC(kv_config_set(&cfg, "backend", argv[1], err, sizeof err), KV_OK);
    cfg.replicas = argc - 2 + 1;  /* every pair keeps a copy through the kills at once */
    cfg.slots_per_rank = 4096;
    int nkill = argc - 2;
    kv_store *s = NULL;
    int rc = kv_open(MPI_COMM_WORLD, &cfg, &s);
    KVT_CHECK_RC(rc, KV_OK);
    if (rc != KV_OK) {
        kvt_finish(MPI_COMM_NULL, "store_respawn");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int size = kv_size(s), me = kv_rank(s), joined = kv_is_respawned(s);
    if (!joined) {
        put_pairs(s, me, 0);
        KVT_CHECK_RC(kv_barrier(s), KV_OK);
        /* The victims die once every rank has left that barrier (a plain
         * barrier after it, whose error a survivor ignores): a victim that
         * left it while others were still inside would interrupt it, and a
         * newcomer would join a store whose barrier is still open, which
         * this program's newcomer branch does not expect. */
        MPI_Comm sync;
        MPI_Comm_dup(MPI_COMM_WORLD, &sync);
        MPI_Comm_set_errhandler(sync, MPI_ERRORS_RETURN);
        MPI_Barrier(sync);
        for (int i = 0; i < nkill; i++)
            if (atoi(argv[2 + i]) == me) raise(SIGKILL);
        /* the survivors notice on their operations (every pair, the dead's too) */
        for (int w = 0; w < size; w++) check_pairs(s, w, 0);
    } else {
        /* a newcomer holds a dead member's rank at the old size */
        int dead = 0;
        for (int i = 0; i < nkill; i++) dead |= atoi(argv[2 + i]) == me;
        KVT_CHECK(dead);
        for (int w = 0; w < size; w++) check_pairs(s, w, 0);
    }
    rc = kv_barrier(s);
    KVT_CHECK(rc == KV_OK);
    int world = 0, old = 0, newcomers = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);  /* a newcomer's world is the newcomers */
    if (joined) world = 0;
    KVT_CHECK_RC(MPI_Allreduce(&world, &old, 1, MPI_INT, MPI_MAX, kv_comm(s)), MPI_SUCCESS);
    KVT_CHECK(kv_size(s) == old);  /* the old size again */
    KVT_CHECK_RC(MPI_Allreduce(&joined, &newcomers, 1, MPI_INT, MPI_SUM, kv_comm(s)), MPI_SUCCESS);
    KVT_CHECK(newcomers == nkill);
    long long divergent = -1;
    KVT_CHECK_RC(kv_audit(s, &divergent), KV_OK);
    KVT_CHECK(divergent == 0);
    /* a second round across old and new members */
    put_pairs(s, kv_rank(s), 1);
    KVT_CHECK_RC(kv_barrier(s), KV_OK);
    for (int w = 0; w < kv_size(s); w++) check_pairs(s, w, 1);
    kv_stats st;
    kv_get_stats(s, &st);
    if (kv_rank(s) == 0)
        printf("[rank 0] respawned %lld, recoveries %lld, size %d\n", st.respawned, st.recoveries, kv_size(s));
    MPI_Comm keep = kvt_keep(kv_comm(s));
    KVT_CHECK_RC(kv_close(s), KV_OK);
    kvt_finish(keep, "store_respawn");
    MPI_Finalize();
    return 0;
}
