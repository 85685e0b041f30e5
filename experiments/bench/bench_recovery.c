/*
 * bench_recovery.c -- one kill, one recovery, every phase timed.
 *
 * The ranks load `pairs` pairs (r = 2, 64-byte values), then the last rank
 * takes a wall-clock timestamp (kv_wall_ns), writes it to $KV_KILL_LOG and raises
 * SIGKILL; the survivors wait in kv_poll(), which notices the failure and
 * runs recovery.  Detection is measured from the kill's timestamp to the
 * moment a survivor noticed (the first survivor, as recovery cannot start
 * before); phases are the maximum over survivors.  A sample of pairs
 * (every victim-held one included in the sample) is read back to check
 * that nothing was lost.  Rank 0 appends one CSV row:
 * variant,backend,ranks,pairs,repetition,detect_us,revoke_us,shrink_us,
 * agree_us,windows_us,rereplicate_us,total_us,pairs_restored,lost,hang
 * The ranks column counts the ranks holding data (spares excluded).
 *
 * With floor.csv, the survivors then time, on the same ranks and sizes,
 * what recovery cannot avoid (the floor), each the maximum over them:
 * allocating a window of the table's size with the store's own call
 * (kvo_alloc_table), a memcpy of the table each rank holds into it, and
 * one MPI_Alltoallv of as many bytes as re-replication sent (each rank's
 * records, spread evenly over the other survivors as rendezvous placement
 * spreads them).  The table is copied twice: the first copy also takes
 * the page faults of memory written for the first time, which on these
 * virtual machines cost from nothing to three times the copy depending
 * on whether the host had backed those pages before (bench_firsttouch);
 * the second, into the same pages, is the copy alone and is the floor.
 * Rank 0 appends three rows, phases windows (floor: allocation + memcpy),
 * rereplicate (floor: the exchange) and total (floor: all three):
 * variant,backend,ranks,pairs,repetition,phase,recovery_us,floor_us,ratio,
 * table_bytes,exchange_bytes,win_allocate_us,memcpy_us,alltoallv_us,
 * memcpy_first_us,scan_us,exchange_us,insert_us
 * (the last three the parts of re-replication, kv_recovery_times)
 * Usage: bench_recovery variant backend pairs repetition out.csv [floor.csv]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"

static void val_of(unsigned char *v, long i) {
    for (int j = 0; j < 64; j++) v[j] = (unsigned char)(i * 131 + j);
}

/* The floor on the survivors: out[0] allocation, out[1] memcpy into
 * pages already written, out[2] exchange of `sent` bytes from this rank,
 * out[3] the first memcpy (with its page faults), in us (the maximum over
 * the ranks, at rank 0). */
static void floor_times(kv_store *s, long long sent, double out[4]) {
    MPI_Comm comm = kv_comm(s);
    int n = kv_size(s), me = kv_rank(s);
    double mine[4] = {0, 0, 0, 0};
    unsigned char *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    bool malloced = false;
    MPI_Barrier(comm);
    int64_t t0 = kv_clock_ns();
    if (kvo_alloc_table(s, comm, s->table_bytes, &base, &win, &malloced, false) != KV_OK)
        MPI_Abort(MPI_COMM_WORLD, 4);
    int64_t t1 = kv_clock_ns();
    memcpy(base, s->base, s->table_bytes);
    int64_t t2 = kv_clock_ns();
    memcpy(base, s->base, s->table_bytes);
    int64_t t3 = kv_clock_ns();
    mine[0] = (double)(t1 - t0) / 1e3;
    mine[3] = (double)(t2 - t1) / 1e3;
    mine[1] = (double)(t3 - t2) / 1e3;
    MPI_Win_free(&win);
    if (malloced) free(base);
    int *sc = calloc((size_t)n, sizeof(int)), *sd = calloc((size_t)n, sizeof(int));
    int *rc = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    if (!sc || !sd || !rc || !rd) MPI_Abort(MPI_COMM_WORLD, 4);
    long long off = 0;
    for (int i = 0; i < n && n > 1; i++) {
        if (i == me) continue;
        int k = i < me ? i : i - 1;  /* i's place among the other n - 1 */
        sc[i] = (int)(sent / (n - 1) + (k < sent % (n - 1)));
        sd[i] = (int)off;
        off += sc[i];
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
    long long roff = 0;
    for (int i = 0; i < n; i++) {
        rd[i] = (int)roff;
        roff += rc[i];
    }
    unsigned char *sb = malloc((size_t)off + 1), *rb = malloc((size_t)roff + 1);
    if (!sb || !rb) MPI_Abort(MPI_COMM_WORLD, 4);
    memset(sb, 0x5A, (size_t)off + 1);
    memset(rb, 0, (size_t)roff + 1);
    MPI_Barrier(comm);
    t0 = kv_clock_ns();
    MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, comm);
    mine[2] = (double)(kv_clock_ns() - t0) / 1e3;
    free(sb); free(rb); free(sc); free(sd); free(rc); free(rd);
    MPI_Reduce(mine, out, 4, MPI_DOUBLE, MPI_MAX, 0, comm);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 6) {
        fprintf(stderr, "usage: bench_recovery variant backend pairs repetition out.csv [floor.csv]\n");
        return 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long pairs = atol(argv[3]);
    kv_config c;
    kv_config_default(&c);
    c.variant = kv_variant_from_name(argv[1]);
    c.backend = kv_backend_from_name(argv[2]);
    c.replicas = 2;
    c.max_key = 16;
    c.max_value = 64;
    char msg[256];
    if (kv_config_from_env(&c, msg, sizeof msg)) {  /* KV_SPARES=1 for variant spare */
        if (rank == 0) fprintf(stderr, "%s\n", msg);
        MPI_Finalize();
        return 2;
    }
    int members = size - c.spares;
    c.slots_per_rank = (size_t)(pairs * 2 * 3 / members) + 4096;  /* load <= 1/3, 1/2 after a loss */
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &c, &s);
    if (rc) {
        if (rank == 0) fprintf(stderr, "kv_open: %s\n", kv_strerror(rc));
        MPI_Finalize();
        return 1;
    }
    char key[24];
    unsigned char v[64], got[64];
    double t0 = kvt_now();
    int was_spare = kv_is_spare(s);
    if (was_spare) {
        rc = kv_spare_wait(s);  /* returns once it replaced the victim */
    } else for (long i = rank; i < pairs; i += members) {
        snprintf(key, sizeof key, "p%ld", i);
        val_of(v, i);
        if ((rc = kv_put(s, key, strlen(key), v, 64)) != KV_OK) {
            fprintf(stderr, "load: %s\n", kv_strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    if (!was_spare) kv_barrier(s);
    if (rank == 0) printf("# loaded %ld pairs on %d ranks in %.2f s\n", pairs, size, kvt_now() - t0);
    if (rank == members - 1) kvt_die_logged();
    /* Wait for the recovery (it may already have run inside kv_barrier, if
     * this rank was still in it when the victim died). */
    while (!kv_is_spare(s) && rank != members && kv_recovery_count(s) == 0 && kv_poll(s) == KV_OK) {}
    rc = kv_barrier(s);
    long lost = 0;
    for (long i = kv_rank(s); i < pairs; i += kv_size(s) * 7L) {  /* a sample */
        snprintf(key, sizeof key, "p%ld", i);
        val_of(v, i);
        size_t len = 0;
        if (kv_get(s, key, strlen(key), got, sizeof got, &len) != KV_OK || len != 64 || memcmp(got, v, 64))
            lost++;
    }
    kv_recovery_times rt = {0};
    kv_recovery_get(s, 0, &rt);
    int64_t kt = kvt_kill_time_ns(), first = 0;
    double mine[9] = {rt.revoke_us, rt.shrink_us, rt.agree_us, rt.windows_us, rt.rereplicate_us,
                      rt.total_us, rt.scan_us, rt.exchange_us, rt.insert_us}, mx[9];
    MPI_Reduce(mine, mx, 9, MPI_DOUBLE, MPI_MAX, 0, kv_comm(s));
    /* one host: every wall clock is the same, no offset to correct */
    MPI_Reduce(&rt.noticed_ns, &first, 1, MPI_INT64_T, MPI_MIN, 0, kv_comm(s));
    long long pushed = rt.pairs_restored, allpushed = 0;
    long alllost = 0;
    MPI_Reduce(&pushed, &allpushed, 1, MPI_LONG_LONG, MPI_SUM, 0, kv_comm(s));
    MPI_Reduce(&lost, &alllost, 1, MPI_LONG, MPI_SUM, 0, kv_comm(s));
    /* Records re-replication sent: every key ("p0" .. "p<pairs-1>") fits
     * the record size of the longest one. */
    snprintf(key, sizeof key, "p%ld", pairs - 1);
    long long sent = pushed * (long long)kvr_rec_size((uint32_t)strlen(key), 64), allsent = 0;
    double fl[4] = {0, 0, 0, 0};
    if (argc > 6) {
        MPI_Reduce(&sent, &allsent, 1, MPI_LONG_LONG, MPI_SUM, 0, kv_comm(s));
        floor_times(s, sent, fl);
    }
    if (kv_rank(s) == 0) {
        double detect = kt > 0 ? (double)(first - kt) / 1e3 : -1;  /* first survivor to notice */
        FILE *f = fopen(argv[5], "a");
        if (f) {
            fprintf(f, "%s,%s,%d,%ld,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%lld,%ld,no\n", argv[1],
                    argv[2], members, pairs, argv[4], detect, mx[0], mx[1], mx[2], mx[3], mx[4], mx[5],
                    allpushed, alllost);
            fclose(f);
        }
        FILE *g = argc > 6 ? fopen(argv[6], "a") : NULL;
        if (g) {
            const char *phase[3] = {"windows", "rereplicate", "total"};
            double rec[3] = {mx[3], mx[4], mx[5]}, flo[3] = {fl[0] + fl[1], fl[2], fl[0] + fl[1] + fl[2]};
            for (int i = 0; i < 3; i++)
                fprintf(g, "%s,%s,%d,%ld,%s,%s,%.0f,%.0f,%.3f,%zu,%lld,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
                        argv[1], argv[2], members, pairs, argv[4], phase[i], rec[i], flo[i],
                        flo[i] > 0 ? rec[i] / flo[i] : 0, s->table_bytes, allsent, fl[0], fl[1], fl[2], fl[3],
                        mx[6], mx[7], mx[8]);
            fclose(g);
            printf("floor: allocate %.0f us, memcpy %.0f us (first %.0f us), alltoallv of %lld bytes %.0f us; "
                   "recovery / floor %.2f\n", fl[0], fl[1], fl[3], allsent, fl[2], mx[5] / (fl[0] + fl[1] + fl[2]));
        }
        printf("%s %s ranks=%d pairs=%ld: detect %.0f us, recovery %.0f us (windows %.0f, "
               "re-replicate %.0f), %lld copies restored, %ld lost in sample\n",
               argv[1], argv[2], members, pairs, detect, mx[5], mx[3], mx[4], allpushed, alllost);
    }
    if (alllost) kvt_errors++;
    MPI_Comm keep = kvt_keep(kv_comm(s));
    kv_close(s);
    kvt_finish(keep, "bench_recovery");
    MPI_Finalize();
    return 0;
}
