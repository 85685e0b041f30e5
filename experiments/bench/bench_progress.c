/*
 * bench_progress.c -- a remote read and write of the store against the
 * link's round trip, with the target polling and with it computing.
 *
 * Passive-target RMA over btl/tcp (and over btl/uct's TCP and shared
 * memory transports) is carried by active messages: the target's MPI
 * library must run to answer, which it does only inside an MPI call
 * unless a progress thread answers for it.  Two ranks, rank 0 the origin,
 * rank 1 the target (on another host when launched so).  Each round times,
 * in an order rotated round by round so that no operation always comes
 * first, these 64-byte operations, OPS each (a tenth of that while the
 * target computes), or as many as fit in BUDGET_MS (1000) when fewer do:
 *   pingpong  MPI_Send + MPI_Recv of the echo (the round trip of the link
 *             with both sides inside MPI; only with the target polling)
 *   get, put  MPI_Get or MPI_Put + MPI_Win_flush on the store's window
 *   kv_get, kv_put  the store's calls on a key whose one replica (r = 1)
 *             is rank 1's
 * and each RMA operation twice: with the target `polling` (MPI_Test in a
 * loop) and `computing` (COMPUTE_US microseconds of work without MPI, then
 * one MPI_Test, and again).  One CSV row per round, target and operation:
 *   TAGS...,target,round,operation,ops,us
 * us the mean microseconds per operation of the round's ops; TAGS the
 * name=value pairs of the first argument (the caller's setting, hosts,
 * repetition, load), which also name the header's first columns, written
 * when the file is empty.
 * Usage: bench_progress TAGS out.csv [ops] [rounds] [compute_us] [backend] [variant]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

enum { VBYTES = 64, BUDGET_MS = 1000, TAG_OP = 0, TAG_STOP = 1 };
enum op { PINGPONG, GET, PUT, KV_GET, KV_PUT, NOPS };
static const char *const OP_NAME[NOPS] = {"pingpong", "get", "put", "kv_get", "kv_put"};
enum target { POLLING, COMPUTING, NTARGETS };
static const char *const TARGET_NAME[NTARGETS] = {"polling", "computing"};

typedef struct {
    kv_store *s;
    char key[32];
    MPI_Aint disp;  /* a slot beside the key's, for the raw operations */
    unsigned char buf[VBYTES];
    int compute_us;
} bench;

/* A key whose only replica (r = 1) is rank 1. */
static void remote_key(bench *b) {
    int ids[2] = {0, 1}, out[1];
    for (int i = 0;; i++) {
        snprintf(b->key, sizeof b->key, "progress-key-%d", i);
        kvh_place(kvh_hash(b->key, strlen(b->key), 0), ids, 2, 1, NULL, out);
        if (out[0] == 1) break;
    }
    size_t klen = strlen(b->key);
    b->disp = (MPI_Aint)((kvh_hash(b->key, klen, 0) + 1) % b->s->nslots) * (MPI_Aint)b->s->slot_size;
}

/* Rank 1's side of an RMA phase: answer until rank 0 enters the barrier. */
static void serve(enum target t, int compute_us) {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    volatile double sink = 0;
    for (int done = 0; !done;) {
        if (t == COMPUTING)
            for (int64_t end = kv_clock_ns() + compute_us * 1000LL; kv_clock_ns() < end;) sink += 1.0;
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

/* One operation on rank 0; false on an error. */
static bool once(bench *b, enum op o, int i) {
    size_t klen = strlen(b->key);
    b->buf[0] = (unsigned char)i;
    switch (o) {
    case PINGPONG:
        return MPI_Send(b->buf, VBYTES, MPI_BYTE, 1, TAG_OP, MPI_COMM_WORLD) == MPI_SUCCESS &&
               MPI_Recv(b->buf, VBYTES, MPI_BYTE, 1, TAG_OP, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS;
    case GET:
        return MPI_Get(b->buf, VBYTES, MPI_BYTE, 1, b->disp, VBYTES, MPI_BYTE, b->s->win) == MPI_SUCCESS &&
               MPI_Win_flush(1, b->s->win) == MPI_SUCCESS;
    case PUT:
        return MPI_Put(b->buf, VBYTES, MPI_BYTE, 1, b->disp, VBYTES, MPI_BYTE, b->s->win) == MPI_SUCCESS &&
               MPI_Win_flush(1, b->s->win) == MPI_SUCCESS;
    case KV_GET:
        return kv_get(b->s, b->key, klen, b->buf, sizeof b->buf, NULL) == KV_OK;
    case KV_PUT:
        return kv_put(b->s, b->key, klen, b->buf, sizeof b->buf) == KV_OK;
    default:
        return false;
    }
}

/* Times up to n operations o with the target t, as many as fit in
 * BUDGET_MS; both ranks call it.  Returns rank 0's microseconds per
 * operation (-1 on an error) and sets *done to the operations made; 0 on
 * rank 1. */
static double phase(bench *b, enum op o, enum target t, int n, int *done) {
    int rank = kv_rank(b->s);
    if (o == PINGPONG && rank == 1) {  /* echo until rank 0 says stop */
        for (MPI_Status st;;) {
            MPI_Recv(b->buf, VBYTES, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_STOP) return 0;
            MPI_Send(b->buf, VBYTES, MPI_BYTE, 0, TAG_OP, MPI_COMM_WORLD);
        }
    }
    if (rank == 1) {
        serve(t, b->compute_us);
        return 0;
    }
    bool ok = true;
    int64_t t0 = kv_clock_ns(), end = t0 + BUDGET_MS * 1000000LL, t1 = t0;
    int i = 0;
    for (; i < n && ok && (i & 7 || (t1 = kv_clock_ns()) < end); i++) ok = once(b, o, i);
    t1 = kv_clock_ns();
    *done = i;
    if (o == PINGPONG) {
        MPI_Send(b->buf, VBYTES, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
    } else {  /* releases serve(); a blocking barrier would not match its Ibarrier */
        MPI_Request req;
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    return ok ? (double)(t1 - t0) / i / 1e3 : -1;
}

/* The header (TAGS' names, then the fixed columns) and the row prefix
 * (TAGS' values) from "k=v,k=v". */
static void split_tags(char *tags, char *names, char *values, size_t n) {
    names[0] = values[0] = '\0';
    for (char *save, *kv = strtok_r(tags, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        strncat(names, kv, n - strlen(names) - 2);
        strcat(names, ",");
        strncat(values, eq + 1, n - strlen(values) - 2);
        strcat(values, ",");
    }
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: bench_progress TAGS out.csv [ops] [rounds] [compute_us] [backend] [variant]"
                            " (2 ranks; %d given)\n", size);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    int ops = argc > 3 ? atoi(argv[3]) : 2000, rounds = argc > 4 ? atoi(argv[4]) : 5;
    kv_config cfg;
    kv_config_default(&cfg);
    cfg.backend = kv_backend_from_name(argc > 6 ? argv[6] : "allocate");
    cfg.variant = kv_variant_from_name(argc > 7 ? argv[7] : "recreate-copy");
    if (ops < 10 || rounds < 1 || cfg.variant < 0 || (int)cfg.backend < 0) {
        if (rank == 0) fprintf(stderr, "bench_progress: bad ops, rounds, backend or variant\n");
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    cfg.replicas = 1;
    cfg.slots_per_rank = 4096;
    cfg.max_key = 32;
    cfg.max_value = 1024;
    bench b = {.compute_us = argc > 5 ? atoi(argv[5]) : 1000};
    if (kv_open(MPI_COMM_WORLD, &cfg, &b.s) != KV_OK) MPI_Abort(MPI_COMM_WORLD, 2);
    remote_key(&b);
    memset(b.buf, 7, sizeof b.buf);
    if (rank == 0 && kv_put(b.s, b.key, strlen(b.key), b.buf, sizeof b.buf) != KV_OK) MPI_Abort(MPI_COMM_WORLD, 3);
    kv_barrier(b.s);

    FILE *csv = NULL;
    char names[512], values[512];
    split_tags(argv[1], names, values, sizeof names);
    if (rank == 0) {
        if (!(csv = fopen(argv[2], "a"))) MPI_Abort(MPI_COMM_WORLD, 1);
        if (ftell(csv) == 0) fprintf(csv, "%starget,round,operation,ops,us\n", names);
    }
    int done;
    for (int o = PINGPONG; o < NOPS; o++) phase(&b, o, POLLING, ops / 10, &done);  /* warm-up */
    for (int round = 0; round < rounds; round++)
        for (int k = 0; k < NOPS * NTARGETS; k++) {
            int slot = (k + round) % (NOPS * NTARGETS);
            enum op o = slot % NOPS;
            enum target t = slot / NOPS;
            if (o == PINGPONG && t == COMPUTING) continue;  /* an echo needs the target in MPI */
            int n = t == POLLING ? ops : ops / 10;
            double us = phase(&b, o, t, n, &done);
            KVT_CHECK(rank == 1 || us >= 0);
            if (rank == 0)
                fprintf(csv, "%s%s,%d,%s,%d,%.3f\n", values, TARGET_NAME[t], round + 1, OP_NAME[o], done, us);
        }
    if (csv) fclose(csv);
    kv_close(b.s);
    kvt_finish(MPI_COMM_WORLD, "bench_progress");
    MPI_Finalize();
    return 0;
}
