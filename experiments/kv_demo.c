/*
 * kv_demo.c -- the demonstration `make run` starts: a kill and a recovery.
 *
 * Every rank stores `pairs` pairs (r = 2); the victim rank writes the wall
 * clock to $KV_KILL_LOG and raises SIGKILL while the others read; the
 * survivors notice the failure, recover (revoke, shrink, agree, rebuild
 * windows, re-replicate), then read back every pair -- the victim's too --
 * and check each value.  Rank 0 prints the recovery phases and a verdict.
 * Usage: kv_demo [pairs] [victim] [variant] [backend]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvstore.h"
#include "../tests/mpi/kvtest.h"

static void value_of(char *v, size_t n, int r, int i) { snprintf(v, n, "value-%d-%d-%x", r, i, i * 40503u); }

static double read_kill_time(void) {
    const char *p = getenv("KV_KILL_LOG");
    FILE *f = p ? fopen(p, "r") : NULL;
    double t = 0;
    if (f) {
        if (fscanf(f, "%lf", &t) != 1) t = 0;
        fclose(f);
    }
    return t;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int pairs = argc > 1 ? atoi(argv[1]) : 20000;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int victim = argc > 2 ? atoi(argv[2]) : size - 1;
    kv_config c;
    kv_config_default(&c);
    c.slots_per_rank = (size_t)pairs * 2 * 2 + 1024;  /* r = 2 copies, load <= 1/2 */
    c.max_value = 64;
    c.max_key = 24;
    if (argc > 3) c.variant = kv_variant_from_name(argv[3]);
    if (argc > 4) c.backend = kv_backend_from_name(argv[4]);
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &c, &s);
    if (rc) {
        if (rank == 0) fprintf(stderr, "kv_open: %s\n", kv_strerror(rc));
        MPI_Finalize();
        return 1;
    }
    char key[32], val[64], got[64];
    double t0 = kvt_now();
    for (int i = 0; i < pairs; i++) {
        snprintf(key, sizeof key, "r%d-%d", rank, i);
        value_of(val, sizeof val, rank, i);
        KVT_CHECK_RC(kv_put(s, key, strlen(key), val, strlen(val)), KV_OK);
    }
    kv_barrier(s);
    if (rank == 0)
        printf("demo: %d ranks stored %d pairs each (r=2, variant %s, backend %s) in %.2f s\n", size,
               pairs, kv_variant_name(c.variant), kv_backend_name(c.backend), kvt_now() - t0);
    if (rank == victim) {
        FILE *f = fopen(getenv("KV_KILL_LOG") ? getenv("KV_KILL_LOG") : "/dev/null", "w");
        if (f) { fprintf(f, "%.6f\n", kv_wtime()); fclose(f); }
        raise(SIGKILL);
    }
    /* Survivors keep reading; the failure interrupts one of the reads. */
    int interrupted = 0;
    for (int i = 0; i < 200000 && !interrupted; i++) {
        int r = i % size;
        snprintf(key, sizeof key, "r%d-%d", r, i % pairs);
        rc = kv_get(s, key, strlen(key), got, sizeof got, NULL);
        if (rc == KV_ERR_INTERRUPTED) interrupted = 1;
    }
    rc = kv_barrier(s);  /* recovers here if this rank never noticed */
    KVT_CHECK(rc == KV_OK);
    /* Everything, the victim's pairs included, must read back exactly. */
    long bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = rank; i < pairs; i += kv_size(s)) {
            snprintf(key, sizeof key, "r%d-%d", r, i);
            value_of(val, sizeof val, r, i);
            size_t len = 0;
            rc = kv_get(s, key, strlen(key), got, sizeof got, &len);
            if (rc != KV_OK || len != strlen(val) || memcmp(got, val, len)) bad++;
        }
    KVT_CHECK(bad == 0);
    double kill_t = read_kill_time();
    kv_recovery_times rt = {0};
    kv_recovery_get(s, 0, &rt);
    double phases[7] = {rt.revoke_us, rt.shrink_us, rt.agree_us, rt.windows_us, rt.rereplicate_us,
                        rt.total_us, kill_t > 0 ? (rt.noticed_at - kill_t) * 1e6 : -1};
    double maxp[7];
    MPI_Reduce(phases, maxp, 7, MPI_DOUBLE, MPI_MAX, 0, kv_comm(s));
    long allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, kv_comm(s));
    long long pushed = rt.pairs_restored, allpushed = 0;
    MPI_Reduce(&pushed, &allpushed, 1, MPI_LONG_LONG, MPI_SUM, 0, kv_comm(s));
    if (kv_rank(s) == 0) {
        printf("demo: rank %d killed with SIGKILL; %d survivors recovered (epoch %d)\n", victim,
               kv_size(s), rt.epoch);
        printf("demo: recovery phases, slowest rank, microseconds:\n");
        printf("  %-22s %10.0f\n  %-22s %10.0f\n  %-22s %10.0f\n  %-22s %10.0f\n  %-22s %10.0f\n"
               "  %-22s %10.0f\n  %-22s %10.0f\n",
               "detect (kill->notice)", maxp[6], "revoke", maxp[0], "shrink", maxp[1], "agree", maxp[2],
               "windows", maxp[3], "re-replicate", maxp[4], "total (excl. detect)", maxp[5]);
        printf("demo: %lld copies restored; %ld of %d pairs wrong or missing after recovery\n",
               allpushed, allbad, pairs * size);
    }
    MPI_Comm keep;
    MPI_Comm_dup(kv_comm(s), &keep);
    kv_close(s);
    kvt_finish(keep, "demo");
    MPI_Finalize();
    return 0;
}
