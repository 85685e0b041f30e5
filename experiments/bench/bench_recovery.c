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
 * Usage: bench_recovery variant backend pairs repetition out.csv
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvstore.h"
#include "kvtest.h"

static void val_of(unsigned char *v, long i) {
    for (int j = 0; j < 64; j++) v[j] = (unsigned char)(i * 131 + j);
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    if (argc < 6) {
        fprintf(stderr, "usage: bench_recovery variant backend pairs repetition out.csv\n");
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
    double mine[6] = {rt.revoke_us, rt.shrink_us, rt.agree_us, rt.windows_us, rt.rereplicate_us,
                      rt.total_us}, mx[6];
    MPI_Reduce(mine, mx, 6, MPI_DOUBLE, MPI_MAX, 0, kv_comm(s));
    /* one host: every wall clock is the same, no offset to correct */
    MPI_Reduce(&rt.noticed_ns, &first, 1, MPI_INT64_T, MPI_MIN, 0, kv_comm(s));
    long long pushed = rt.pairs_restored, allpushed = 0;
    long alllost = 0;
    MPI_Reduce(&pushed, &allpushed, 1, MPI_LONG_LONG, MPI_SUM, 0, kv_comm(s));
    MPI_Reduce(&lost, &alllost, 1, MPI_LONG, MPI_SUM, 0, kv_comm(s));
    if (kv_rank(s) == 0) {
        double detect = kt > 0 ? (double)(first - kt) / 1e3 : -1;  /* first survivor to notice */
        FILE *f = fopen(argv[5], "a");
        if (f) {
            fprintf(f, "%s,%s,%d,%ld,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%lld,%ld,no\n", argv[1],
                    argv[2], members, pairs, argv[4], detect, mx[0], mx[1], mx[2], mx[3], mx[4], mx[5],
                    allpushed, alllost);
            fclose(f);
        }
        printf("%s %s ranks=%d pairs=%ld: detect %.0f us, recovery %.0f us (windows %.0f, "
               "re-replicate %.0f), %lld copies restored, %ld lost in sample\n",
               argv[1], argv[2], members, pairs, detect, mx[5], mx[3], mx[4], allpushed, alllost);
    }
    if (alllost) kvt_errors++;
    MPI_Comm keep;
    MPI_Comm_dup(kv_comm(s), &keep);
    kv_close(s);
    kvt_finish(keep, "bench_recovery");
    MPI_Finalize();
    return 0;
}
