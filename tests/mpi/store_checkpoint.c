/*
 * store_checkpoint.c -- checkpoint/restart: a crash mid-checkpoint loses
 * nothing of the previous one, and a restart reloads exactly it.
 * run: 3 cycle
 *
 * Modes (argument 1; argument 2 is the checkpoint directory, default
 * $TMPDIR-based per launch for "cycle"):
 *   cycle   checkpoints twice; pass rules: LATEST names the second, the
 *           first is removed, a restore into a fresh store (same job)
 *           reads back exactly the second's pairs.
 *   crash   writes set A, checkpoint 1, then set B and overwrites of half
 *           of A, then checkpoint 2, in which rank 1 raises SIGKILL
 *           halfway through writing its file (fault point
 *           "checkpoint-write").  Run without --with-ft: the job ends.
 *   verify  after "crash", in a new job: kv_restore names checkpoint 1;
 *           every pair of A reads back with its first value, no pair of
 *           B exists, and the pair count is exactly A's.
 *   expect-ERR  kv_restore returns the status named (NOT_FOUND, CORRUPT,
 *           CONFIG): tests/scripts/test_checkpoint.sh damages the files.
 */
#include <signal.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

enum { NA = 200, NB = 100 };

static void kv_of(char *k, char *v, size_t n, char set, int rank, int i, int gen) {
    snprintf(k, n, "%c-%d-%d", set, rank, i);
    snprintf(v, n, "%c-%d-%d-gen%d-%0*d", set, rank, i, gen, 10 + i % 20, i);
}

static void die_halfway(const char *point) {
    if (!strcmp(point, "checkpoint-write")) raise(SIGKILL);
}

static kv_store *open_store(const char *dir) {
    kv_config c;
    kv_config_default(&c);
    c.variant = KV_VARIANT_CHECKPOINT;
    c.replicas = 1;
    c.slots_per_rank = 4096;
    c.max_value = 64;
    snprintf(c.checkpoint_dir, sizeof c.checkpoint_dir, "%s", dir);
    kv_store *s = NULL;
    KVT_CHECK_RC(kv_open(MPI_COMM_WORLD, &c, &s), KV_OK);
    return s;
}

static void put_set(kv_store *s, char set, int n, int gen, int step) {
    char k[64], v[64];
    for (int i = 0; i < n; i += step) {
        kv_of(k, v, sizeof k, set, kv_rank(s), i, gen);
        KVT_CHECK_RC(kv_put(s, k, strlen(k), v, strlen(v)), KV_OK);
    }
}

/* Every rank reads every rank's pairs of `set` and expects generation gen
 * (0: absent). */
static void check_set(kv_store *s, char set, int n, int gen) {
    char k[64], v[64], got[64];
    for (int r = 0; r < kv_size(s); r++)
        for (int i = 0; i < n; i++) {
            kv_of(k, v, sizeof k, set, r, i, gen);
            size_t len = 0;
            int rc = kv_get(s, k, strlen(k), got, sizeof got, &len);
            if (gen == 0) {
                KVT_CHECK_RC(rc, KV_ERR_NOT_FOUND);
            } else {
                KVT_CHECK_RC(rc, KV_OK);
                KVT_CHECK(rc == KV_OK && len == strlen(v) && !memcmp(got, v, len));
            }
        }
}

static int status_named(const char *name) {
    if (!strcmp(name, "NOT_FOUND")) return KV_ERR_NOT_FOUND;
    if (!strcmp(name, "CORRUPT")) return KV_ERR_CORRUPT;
    if (!strcmp(name, "CONFIG")) return KV_ERR_CONFIG;
    return 1;  /* never a status kv_restore returns */
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "cycle";
    char dir[256];
    if (argc > 2) {
        snprintf(dir, sizeof dir, "%s", argv[2]);
    } else {  /* one directory per launch, named by rank 0 */
        char tmpl[200];
        snprintf(tmpl, sizeof tmpl, "%s/kvckpt.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (kvt_rank_world == 0 && !mkdtemp(tmpl)) tmpl[0] = 0;
        MPI_Bcast(tmpl, sizeof tmpl, MPI_CHAR, 0, MPI_COMM_WORLD);
        snprintf(dir, sizeof dir, "%s", tmpl);
    }
    kv_store *s = open_store(dir);
    if (!s) { kvt_finish(MPI_COMM_WORLD, "store_checkpoint"); MPI_Finalize(); return 1; }
    kv_checkpoint_info ci = {0};
    if (!strcmp(mode, "cycle")) {
        put_set(s, 'A', NA, 1, 1);
        KVT_CHECK_RC(kv_checkpoint(s, &ci), KV_OK);
        KVT_CHECK(ci.number == 1 && ci.pairs == (long long)NA * kv_size(s));
        put_set(s, 'B', NB, 1, 1);
        KVT_CHECK_RC(kv_checkpoint(s, &ci), KV_OK);
        KVT_CHECK(ci.number == 2 && ci.pairs == (long long)(NA + NB) * kv_size(s));
        char p[400];
        snprintf(p, sizeof p, "%s/ckpt-000001", dir);
        KVT_CHECK(access(p, F_OK) != 0);  /* the older checkpoint is gone */
        kv_close(s);
        s = open_store(dir);
        kv_checkpoint_info ri = {0};
        KVT_CHECK_RC(kv_restore(s, &ri), KV_OK);
        KVT_CHECK(ri.number == 2 && ri.pairs == ci.pairs && ri.bytes == ci.bytes);
        check_set(s, 'A', NA, 1);
        check_set(s, 'B', NB, 1);
        kv_barrier(s);
        if (kvt_rank_world == 0) {
            snprintf(p, sizeof p, "rm -rf '%s'", dir);
            if (system(p) != 0) kvt_errors++;
        }
    } else if (!strcmp(mode, "crash")) {
        put_set(s, 'A', NA, 1, 1);
        KVT_CHECK_RC(kv_checkpoint(s, &ci), KV_OK);
        put_set(s, 'B', NB, 1, 1);
        put_set(s, 'A', NA, 2, 2);  /* overwrite every other pair of A */
        if (kvt_rank_world == 1) kvr_fault_hook = die_halfway;
        kv_checkpoint(s, &ci);  /* rank 1 dies inside; the job ends */
        KVT_CHECK(!"the job should have ended inside checkpoint 2");
    } else if (!strcmp(mode, "verify")) {
        kv_checkpoint_info ri = {0};
        KVT_CHECK_RC(kv_restore(s, &ri), KV_OK);
        KVT_CHECK(ri.number == 1 && ri.pairs == (long long)NA * kv_size(s));
        check_set(s, 'A', NA, 1);
        check_set(s, 'B', NB, 0);
        if (kvt_rank_world == 0)
            printf("restored checkpoint %lld: %lld pairs, %lld bytes in %.3f s\n", ri.number, ri.pairs,
                   ri.bytes, ri.seconds);
    } else if (!strncmp(mode, "expect-", 7)) {
        kv_checkpoint_info ri = {0};
        int rc = kv_restore(s, &ri);
        KVT_CHECK_RC(rc, status_named(mode + 7));
        if (kvt_rank_world == 0) printf("kv_restore: %s\n", kv_strerror(rc));
    } else {
        KVT_CHECK(!"unknown mode");
    }
    kv_barrier(s);
    kv_close(s);
    kvt_finish(MPI_COMM_WORLD, "store_checkpoint");
    MPI_Finalize();
    return 0;
}
