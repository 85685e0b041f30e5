/*
 * bench_store_raw.c -- the store against raw RMA on the same slots.
 *
 * Rank 0 times, side by side in alternating rounds so that machine noise
 * hits both alike: (a) kv_get of a 64-byte value held only by rank 1
 * (r = 1) against a raw MPI_Get + MPI_Win_flush of that slot's bytes;
 * (b) kv_put with r = 2 (replicas on ranks 0 and 1) against the raw RMA
 * the write protocol needs per replica: a compare-and-swap to lock, a put
 * of the slot, a compare-and-swap to unlock, each flushed.  Reports the median
 * round, in microseconds per operation, and appends CSV rows
 * (operation,backend,ranks,value_bytes,store_us,raw_us,ratio).  The key's
 * length is taken once, outside the timed loops; on osc/sm windows
 * (allocate, one node), whose RMA needs nothing of the target, the other
 * ranks wait for rank 0 without spinning (a barrier tested every half
 * millisecond): on a machine of few cores a rank spinning in MPI_Barrier
 * takes a core from the one being timed.  Elsewhere a target serves RMA
 * only while it polls, and they spin.
 * The store runs variant VARIANT (recreate-copy by default, whose
 * watchdog is tested now and then, see detect.c); variant none, which
 * detects nothing, shows the store's own cost without that test.
 * Usage: bench_store_raw backend out.csv [ops_per_round] [rounds] [variant]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"
#include "benchstat.h"

enum { VBYTES = 64 };

/* A key whose replica set (r, over ids 0..size-1) is exactly `want`. */
static void find_key(kv_store *s, int r, int want_mask, char *key, size_t n) {
    int ids[64], out[16];
    for (int i = 0; i < kv_size(s); i++) ids[i] = i;
    for (int i = 0;; i++) {
        snprintf(key, n, "bench-key-%d", i);
        kvh_place(kvh_hash(key, strlen(key), 0), ids, kv_size(s), r, NULL, out);
        int mask = 0;
        for (int j = 0; j < r; j++) mask |= 1 << out[j];
        if (mask == want_mask) return;
    }
}

typedef struct {
    kv_store *s;
    const char *key;
    size_t klen;
    MPI_Win win;
    MPI_Aint disp;
    size_t bytes;
    unsigned char *buf;
} bench_ctx;

static double time_store_get(bench_ctx *c, int ops) {
    unsigned char v[VBYTES];
    int64_t t = kv_clock_ns();
    for (int i = 0; i < ops; i++)
        if (kv_get(c->s, c->key, c->klen, v, sizeof v, NULL) != KV_OK) return -1;
    return (double)(kv_clock_ns() - t) / ops / 1e3;  /* us per operation */
}

static double time_raw_get(bench_ctx *c, int ops) {
    int64_t t = kv_clock_ns();
    for (int i = 0; i < ops; i++) {
        MPI_Get(c->buf, (int)c->bytes, MPI_BYTE, 1, c->disp, (int)c->bytes, MPI_BYTE, c->win);
        MPI_Win_flush(1, c->win);
    }
    return (double)(kv_clock_ns() - t) / ops / 1e3;  /* us per operation */
}

static double time_store_put(bench_ctx *c, int ops) {
    unsigned char v[VBYTES] = {1};
    int64_t t = kv_clock_ns();
    for (int i = 0; i < ops; i++) {
        v[0] = (unsigned char)i;
        if (kv_put(c->s, c->key, c->klen, v, sizeof v) != KV_OK) return -1;
    }
    return (double)(kv_clock_ns() - t) / ops / 1e3;  /* us per operation */
}

/* Per replica: CAS lock, put the slot, CAS unlock; all flushed. */
static double time_raw_put(bench_ctx *c, int ops) {
    uint64_t one = 1, zero = 0, got, was[2];
    int64_t t = kv_clock_ns();
    for (int i = 0; i < ops; i++) {
        for (int t_rank = 0; t_rank < 2; t_rank++) {
            MPI_Compare_and_swap(&one, &zero, &got, MPI_UINT64_T, t_rank, c->disp, c->win);
            MPI_Win_flush(t_rank, c->win);
            MPI_Put(c->buf + 8, (int)c->bytes - 8, MPI_BYTE, t_rank, c->disp + 8, (int)c->bytes - 8,
                    MPI_BYTE, c->win);
            MPI_Win_flush(t_rank, c->win);
        }
        for (int t_rank = 0; t_rank < 2; t_rank++)
            MPI_Compare_and_swap(&zero, &one, &was[t_rank], MPI_UINT64_T, t_rank, c->disp, c->win);
        MPI_Win_flush_all(c->win);
    }
    return (double)(kv_clock_ns() - t) / ops / 1e3;  /* us per operation */
}

/* A barrier that, where `sleepy`, waits without spinning. */
static void idle_barrier(MPI_Comm comm, bool sleepy) {
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    if (!sleepy) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    struct timespec nap = {0, 500000};
    for (int done = 0; !done; nanosleep(&nap, NULL)) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
}

static void compare(const char *op, kv_config *cfg, int r, int mask, int ops, int rounds,
                    double (*st)(bench_ctx *, int), double (*raw)(bench_ctx *, int), FILE *csv) {
    cfg->replicas = r;
    kv_store *s;
    if (kv_open(MPI_COMM_WORLD, cfg, &s) != KV_OK) MPI_Abort(MPI_COMM_WORLD, 2);
    char key[32];
    find_key(s, r, mask, key, sizeof key);
    unsigned char v[VBYTES];
    memset(v, 7, sizeof v);
    if (kv_rank(s) == 0 && kv_put(s, key, strlen(key), v, sizeof v) != KV_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    bench_ctx c = {s, key, strlen(key), s->win, 0, KVS_HDR_SIZE + strlen(key) + VBYTES, NULL};
    c.buf = calloc(1, s->slot_size);
    c.disp = (MPI_Aint)(kvh_hash(key, strlen(key), 0) % s->nslots) * (MPI_Aint)s->slot_size;
    kv_barrier(s);
    if (kv_rank(s) == 0) {
        double a[64], b[64];
        st(&c, ops / 10);
        raw(&c, ops / 10);  /* warm-up, not counted */
        for (int i = 0; i < rounds; i++) {
            a[i] = st(&c, ops);
            b[i] = raw(&c, ops);
        }
        double ms = benchstat_median(a, rounds), mr = benchstat_median(b, rounds);
        printf("%-6s %-9s %6d %12d %12.3f %12.3f %8.2f\n", op, kv_backend_name(cfg->backend), kv_size(s),
               VBYTES, ms, mr, ms / mr);
        fprintf(csv, "%s,%s,%d,%d,%.4f,%.4f,%.3f\n", op, kv_backend_name(cfg->backend), kv_size(s),
                VBYTES, ms, mr, ms / mr);
    }
    idle_barrier(MPI_COMM_WORLD, kv_rank(s) != 0 && cfg->backend == KV_BACKEND_ALLOCATE && s->one_node);
    free(c.buf);
    kv_close(s);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    kv_config cfg;
    kv_config_default(&cfg);
    cfg.backend = kv_backend_from_name(argc > 1 ? argv[1] : "allocate");
    cfg.variant = kv_variant_from_name(argc > 5 ? argv[5] : "recreate-copy");
    if (cfg.variant < 0) {
        if (rank == 0) fprintf(stderr, "bench_store_raw: unknown variant %s\n", argv[5]);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    cfg.slots_per_rank = 4096;
    cfg.max_key = 32;
    cfg.max_value = 1024;
    int ops = argc > 3 ? atoi(argv[3]) : 100000, rounds = argc > 4 ? atoi(argv[4]) : 9;
    if (rounds > 64) rounds = 64;
    FILE *csv = stdout;
    if (rank == 0) {
        csv = fopen(argc > 2 ? argv[2] : "/dev/null", "a");
        if (!csv) MPI_Abort(MPI_COMM_WORLD, 1);
        printf("# store (variant %s) vs raw RMA, backend %s (%s), one lock_all epoch, flush per operation\n",
               kv_variant_name(cfg.variant), kv_backend_name(cfg.backend),
               cfg.backend ? "MPI_Win_create" : "MPI_Win_allocate");
        printf("# %d ops per round, median of %d rounds, store and raw alternating\n", ops, rounds);
        printf("%-6s %-9s %6s %12s %12s %12s %8s\n", "# op", "backend", "ranks", "value_bytes",
               "store_us", "raw_us", "ratio");
    }
    compare("get", &cfg, 1, 1 << 1, ops, rounds, time_store_get, time_raw_get, csv);
    compare("put", &cfg, 2, 3, ops, rounds, time_store_put, time_raw_put, csv);
    if (rank == 0 && csv != stdout) fclose(csv);
    kvt_finish(MPI_COMM_NULL, "bench_store_raw");
    MPI_Finalize();
    return 0;
}
