/*
 * bench_checkpoint.c -- what checkpoint/restart costs, for comparison with
 * the in-memory recovery variants (experiments/bench/bench_checkpoint.sh runs it).
 *
 *   cost DIR PAIRS         load PAIRS pairs per rank (64-byte values), then
 *                          three checkpoints; per checkpoint: time, bytes,
 *                          and the disk bandwidth this rank got, against a
 *                          plain write+fsync of the same bytes measured in
 *                          the same run (is the checkpoint disk-bound?).
 *   overhead DIR PAIRS INTERVAL SECONDS
 *                          closed loop of 50% gets, 50% puts for SECONDS;
 *                          a checkpoint every INTERVAL seconds (0: none).
 *                          Every rank takes checkpoint k once the shared
 *                          clock passes start + k*INTERVAL, and all take
 *                          those due before the end, so the collective
 *                          calls match.  Reports throughput.
 *   crash DIR PAIRS SECONDS  load, checkpoint, then the 50/50 loop with
 *                          two more checkpoints one second apart, and
 *                          SECONDS after the last one the last rank logs
 *                          the time and dies by SIGKILL (half the interval:
 *                          the mean loss of a failure at a random moment).
 *                          Every acknowledged put is counted in a file
 *                          mapped MAP_SHARED (ackfile.h: it outlives a
 *                          SIGKILL), with the count at each checkpoint's cut.
 *                          Launched without --with-ft, that ends the job.
 *   restart DIR PAIRS      the relaunched job: times job start (kill to
 *                          MPI_Init done), reload (kv_restore), resume
 *                          (first get and put done), counts the writes
 *                          lost (acknowledged after the restored cut).
 * Each mode appends one CSV row to $KV_BENCH_CSV:
 * mode,ranks,pairs_per_rank,interval_s,seconds,checkpoints,ckpt_s,bytes,
 * ckpt_mb_s,disk_mb_s,ops_per_s,job_start_s,reload_s,resume_s,lost_writes
 * (NA where a mode does not measure a column).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ackfile.h"
#include "kvstore.h"
#include "kvtest.h"

enum { VLEN = 64 };

static int rank, size;
static const char *dir;

/* A deadline the ranks share (rank 0's, broadcast): the wall clock. */
static double wall(void) { return kv_wtime(); }

static void key_val(char *k, unsigned char *v, long i, int owner, int gen) {
    snprintf(k, 32, "k%d-%ld", owner, i);
    for (int j = 0; j < VLEN; j++) v[j] = (unsigned char)(i * 31 + j + gen);
}

static void load(kv_store *s, long pairs) {
    char k[32];
    unsigned char v[VLEN];
    for (long i = 0; i < pairs; i++) {
        key_val(k, v, i, rank, 0);
        int rc = kv_put(s, k, strlen(k), v, VLEN);
        if (rc) { fprintf(stderr, "load: %s\n", kv_strerror(rc)); MPI_Abort(MPI_COMM_WORLD, 3); }
    }
}

static kv_store *open_store(long pairs) {
    kv_config c;
    kv_config_default(&c);
    c.variant = KV_VARIANT_CHECKPOINT;
    c.replicas = 1;
    c.max_key = 32;
    c.max_value = VLEN;
    c.slots_per_rank = (size_t)pairs * 2 + 1024;
    snprintf(c.checkpoint_dir, sizeof c.checkpoint_dir, "%s", dir);
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &c, &s);
    if (rc) { fprintf(stderr, "kv_open: %s\n", kv_strerror(rc)); MPI_Abort(MPI_COMM_WORLD, 2); }
    return s;
}

static void row(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void row(const char *fmt, ...) {
    if (rank != 0) return;
    const char *path = getenv("KV_BENCH_CSV");
    FILE *f = path ? fopen(path, "a") : stdout;
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    if (f != stdout) fclose(f);
}

/* MB/s of a plain write + fsync of `bytes` (the disk, as the store sees it). */
static double disk_mb_s(long long bytes) {
    char p[600];
    snprintf(p, sizeof p, "%s/disk-probe-%d", dir, rank);
    size_t chunk = 1 << 20;
    char *buf = malloc(chunk);
    memset(buf, 0x5a, chunk);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    double t = kvt_now();
    for (long long done = 0; fd >= 0 && done < bytes; done += (long long)chunk)
        if (write(fd, buf, chunk) < 0) break;
    if (fd >= 0) { fsync(fd); close(fd); }
    t = kvt_now() - t;
    unlink(p);
    free(buf);
    return bytes / 1e6 / t;
}

/* One operation of the 50/50 mix on a random key of a random rank. */
static int op(kv_store *s, long pairs, unsigned long long *rng, long long *acked) {
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    long i = (long)((*rng >> 33) % (unsigned long long)pairs);
    int owner = (int)((*rng >> 20) % (unsigned long long)size);
    char k[32];
    unsigned char v[VLEN], got[VLEN];
    if ((*rng >> 10) & 1) {
        key_val(k, v, i, owner, 1);
        int rc = kv_put(s, k, strlen(k), v, VLEN);
        if (rc == KV_OK && acked) (*acked)++;
        return rc;
    }
    key_val(k, v, i, owner, 0);
    size_t len;
    int rc = kv_get(s, k, strlen(k), got, VLEN, &len);
    return rc == KV_ERR_NOT_FOUND ? KV_OK : rc;
}

int main(int argc, char **argv) {
    kvt_init(&argc, &argv);
    int64_t t_init = kv_wall_ns();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0) fprintf(stderr, "usage: bench_checkpoint cost|overhead|crash|restart DIR PAIRS [...]\n");
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[1];
    dir = argv[2];
    long pairs = atol(argv[3]);
    kv_store *s = open_store(pairs);
    kv_checkpoint_info ci;
    unsigned long long rng = 0x9E3779B97F4A7C15ull * (unsigned)(rank + 1);
    if (!strcmp(mode, "cost")) {
        load(s, pairs);
        for (int n = 0; n < 3; n++) {
            int rc = kv_checkpoint(s, &ci);
            if (rc) { fprintf(stderr, "kv_checkpoint: %s\n", kv_strerror(rc)); kvt_errors++; break; }
            double mine = disk_mb_s(ci.bytes / size), disk = 0;
            MPI_Reduce(&mine, &disk, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
            row("cost,%d,%ld,NA,NA,%lld,%.6f,%lld,%.1f,%.1f,NA,NA,NA,NA,NA\n", size, pairs, ci.number,
                ci.seconds, ci.bytes, ci.bytes / 1e6 / ci.io_seconds_max, disk * size);
        }
    } else if (!strcmp(mode, "overhead") && argc > 5) {
        double interval = atof(argv[4]), secs = atof(argv[5]);
        load(s, pairs);
        kv_barrier(s);
        double start = wall();
        MPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        long long ops = 0, k = 1, nck = 0;
        double ck_s = 0;
        for (;;) {
            double now = wall();
            if (interval > 0 && now >= start + k * interval && start + k * interval < start + secs) {
                double t = kvt_now();
                if (kv_checkpoint(s, &ci) == KV_OK) nck++;
                ck_s += kvt_now() - t;
                k++;
                continue;
            }
            if (now >= start + secs) break;
            if (op(s, pairs, &rng, NULL) == KV_OK) ops++;
        }
        while (interval > 0 && start + k * interval < start + secs) {  /* those due before the end */
            if (kv_checkpoint(s, &ci) == KV_OK) nck++;
            k++;
        }
        long long all = 0;
        MPI_Reduce(&ops, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        row("overhead,%d,%ld,%g,%g,%lld,%.6f,NA,NA,NA,%.0f,NA,NA,NA,NA\n", size, pairs, interval, secs,
            nck, nck ? ck_s / (double)nck : 0, all / secs);
    } else if (!strcmp(mode, "crash") && argc > 4) {
        double secs = atof(argv[4]);
        kv_acks *a = acks_map(dir, rank, 1);
        if (!a) { fprintf(stderr, "cannot map the acks file in %s\n", dir); MPI_Abort(MPI_COMM_WORLD, 2); }
        load(s, pairs);
        a->acked = pairs;
        long long at = a->acked;
        if (kv_checkpoint(s, &ci) == KV_OK) acks_cut(a, ci.number, at);
        for (int k = 0; k < 3; k++) {  /* loop 1 s, checkpoint; twice; then SECONDS */
            double start = wall();
            MPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            double until = start + (k < 2 ? 1.0 : secs);
            while (wall() < until) op(s, pairs, &rng, &a->acked);
            if (k == 2) break;
            at = a->acked;
            if (kv_checkpoint(s, &ci) == KV_OK) acks_cut(a, ci.number, at);
        }
        if (rank == size - 1) kvt_die_logged();
        for (;;) pause();  /* the runtime ends the job */
    } else if (!strcmp(mode, "restart")) {
        int64_t init_max = 0;
        MPI_Reduce(&t_init, &init_max, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
        double t0 = kvt_now();
        int rc = kv_restore(s, &ci);
        double reload = kvt_now() - t0;
        if (rc) { fprintf(stderr, "kv_restore: %s\n", kv_strerror(rc)); MPI_Abort(MPI_COMM_WORLD, 4); }
        t0 = kvt_now();
        long long dummy = 0;
        int r1 = op(s, pairs, &rng, &dummy), r2;
        rng ^= 1 << 10;  /* the other kind next */
        r2 = op(s, pairs, &rng, &dummy);
        if (r1 || r2) kvt_errors++;
        kv_barrier(s);
        double resume = kvt_now() - t0;
        long long lost = acks_lost(acks_map(dir, rank, 0), ci.number), all = 0;
        MPI_Reduce(&lost, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        int64_t kill = kvt_kill_time_ns();
        char js[32] = "NA";
        if (kill > 0) snprintf(js, sizeof js, "%.3f", (double)(init_max - kill) * 1e-9);
        row("restart,%d,%ld,1,NA,%lld,NA,%lld,NA,NA,NA,%s,%.6f,%.6f,%lld\n", size, pairs, ci.number,
            ci.bytes, js, reload, resume, all);
        if (rank == 0)
            printf("restart: job start %s s after the kill, reload %.3f s, resume %.3f s, "
                   "%lld acknowledged writes lost (after checkpoint %lld)\n", js, reload, resume, all,
                   ci.number);
    } else {
        if (rank == 0) fprintf(stderr, "bench_checkpoint: unknown mode or missing arguments\n");
        kvt_errors++;
    }
    kv_barrier(s);
    kv_close(s);
    kvt_finish(MPI_COMM_WORLD, "bench_checkpoint");
    MPI_Finalize();
    return 0;
}
