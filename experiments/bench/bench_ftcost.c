/*
 * bench_ftcost.c -- the failure-free cost of fault tolerance, in one run.
 *
 * Separate YCSB runs on a shared 2-core machine scatter by about +-20%,
 * more than the cost to be measured.  So this opens two stores on the same
 * ranks, with the same tables and copies: variant none (no failure
 * detection, nothing to recover with) and the variant measured, loads the
 * same records into both, and runs YCSB (workload B by default) on them in
 * turns of ROUND_MS each, every rank on the same store at once, the order
 * swapped every round, so that both see the same machine.  A round's
 * throughput is the operations of all ranks over the slowest rank's time.
 * Rank 0 appends one CSV row per round pair (variant,workload,ranks,
 * replicas,round,none_ops_per_s,variant_ops_per_s,cost; cost =
 * none / variant - 1); report.py takes the median and its interval.
 * Only variants without a process-wide switch can share a run with none
 * (proposed turns on fault-tolerant RMA for every window of the process)
 * and only those without spare ranks: recreate-copy, recreate-inplace,
 * recreate-free, whose failure-free paths are the same code (they differ
 * in recovery only).  Every value read is checked against what was
 * written (wl_check_value); a wrong one aborts the run.  KV_<NAME>
 * variables set the rest of both stores' configuration (kv_config_from_env),
 * KV_POLL_US for one.
 * Usage: bench_ftcost VARIANT out.csv [workload] [rounds] [round_ms];
 * bench_ftcost --variants lists the variants it can measure (can_share),
 * which is the list bench.sh runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvstore.h"
#include "kv_internal.h"
#include "kvtest.h"
#include "workload.h"

enum { RECORDS = 20000, VBYTES = 64, REPLICAS = 2 };

/* The variants that can share a job with none (see above). */
static int can_share(int v) {
    return v == KV_VARIANT_RECREATE_COPY || v == KV_VARIANT_RECREATE_INPLACE || v == KV_VARIANT_RECREATE_FREE;
}

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_ftcost: %s: %s\n", what, kv_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static kv_store *open_store(const char *variant) {
    kv_config cfg;
    kv_config_default(&cfg);
    char msg[256];
    if (kv_config_from_env(&cfg, msg, sizeof msg) != KV_OK) {  /* KV_POLL_US=... */
        fprintf(stderr, "bench_ftcost: %s\n", msg);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    cfg.variant = kv_variant_from_name(variant);
    if (cfg.variant < 0) die(variant, KV_ERR_CONFIG);
    cfg.replicas = REPLICAS;
    cfg.max_value = VBYTES;
    cfg.slots_per_rank = 32768;
    kv_store *s;
    int rc = kv_open(MPI_COMM_WORLD, &cfg, &s);
    if (rc != KV_OK) die("kv_open", rc);
    return s;
}

static void load(kv_store *s, const wl_params *p, const wl_gen *g, int rank, int size) {
    unsigned char v[VBYTES];
    char key[WL_KEY_MAX + 1];
    for (uint64_t r = wl_load_begin(p, rank, size); r < wl_load_end(p, rank, size); r++) {
        size_t klen = wl_key(p, r, key, sizeof key);
        wl_make_value(g, r, 0, v, VBYTES);
        int rc = kv_put(s, key, klen, v, VBYTES);
        if (rc != KV_OK) die("load", rc);
    }
    kv_barrier(s);
}

/* One turn on s: this rank's operations for ms milliseconds; returns the
 * throughput of all ranks (ops/s over the slowest rank's time). */
static double turn(kv_store *s, wl_gen *g, int ms, uint64_t *version) {
    unsigned char v[VBYTES];
    kv_barrier(s);
    int64_t t0 = kv_clock_ns(), until = t0 + (int64_t)ms * 1000000, t = t0;
    long long ops = 0;
    wl_op op;
    while (t < until) {
        for (int i = 0; i < 64 && wl_next(g, &op); i++, ops++) {
            int rc;
            if (op.kind == WL_READ) {
                size_t n = 0;
                rc = kv_get(s, op.key, op.key_len, v, sizeof v, &n);
                if (rc == KV_OK && wl_check_value(g, op.record, v, n, NULL) != 1) die("a wrong value", KV_ERR_CORRUPT);
            } else {  /* update (and insert, rmw: written the same way) */
                wl_make_value(g, op.record, ++*version, v, VBYTES);
                rc = kv_put(s, op.key, op.key_len, v, VBYTES);
            }
            if (rc != KV_OK && rc != KV_ERR_NOT_FOUND) die("operation", rc);
        }
        t = kv_clock_ns();
    }
    double sec = (double)(t - t0) / 1e9, slowest = 0;
    long long all = 0;
    MPI_Allreduce(&sec, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&ops, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (double)all / slowest;
}

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--variants")) {  /* no MPI needed */
        for (int v = 0; v < KV_VARIANT_COUNT_; v++)
            if (can_share(v)) printf("%s\n", kv_variant_name((kv_variant)v));
        return 0;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: bench_ftcost VARIANT out.csv [workload] [rounds] [round_ms]\n");
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    const char *variant = argv[1], *wname = argc > 3 ? argv[3] : "b";
    int rounds = argc > 4 ? atoi(argv[4]) : 30, ms = argc > 5 ? atoi(argv[5]) : 200;
    int v = kv_variant_from_name(variant);
    if (!can_share(v)) {
        if (rank == 0)
            fprintf(stderr, "bench_ftcost: variant %s cannot share a job with none (bench_ftcost --variants "
                            "lists those that can)\n", variant);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    wl_params p;
    char err[256], records[24], vbytes[24];
    snprintf(records, sizeof records, "%d", RECORDS);
    snprintf(vbytes, sizeof vbytes, "%d", VBYTES);
    wl_params_default(&p);
    if (wl_preset(&p, wname, err, sizeof err) || wl_params_set(&p, "records", records, err, sizeof err) ||
        wl_params_set(&p, "value_bytes", vbytes, err, sizeof err) ||
        wl_params_set(&p, "operations", "0", err, sizeof err) ||
        wl_params_set(&p, "duration_s", "86400", err, sizeof err) ||  /* the turns end the run */
        wl_params_check(&p, err, sizeof err)) {
        if (rank == 0) fprintf(stderr, "bench_ftcost: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    if (rounds < 1 || ms < 1) {
        if (rank == 0) fprintf(stderr, "bench_ftcost: rounds and round_ms must be >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 64);
    }
    kv_store *none = open_store("none"), *ft = open_store(variant);
    /* One generator per store, the same stream: both see the same keys. */
    wl_gen *gn = wl_gen_new(&p, rank, size), *gf = wl_gen_new(&p, rank, size);
    if (!gn || !gf) die("wl_gen_new", KV_ERR_NOMEM);
    load(none, &p, gn, rank, size);
    load(ft, &p, gf, rank, size);
    FILE *csv = NULL;
    if (rank == 0 && !(csv = fopen(argv[2], "a"))) die(argv[2], KV_ERR_ARG);
    uint64_t vn = 0, vf = 0;
    turn(none, gn, ms, &vn);  /* warm-up, not counted */
    turn(ft, gf, ms, &vf);
    for (int i = 1; i <= rounds; i++) {
        double a, b;
        if (i % 2) {
            a = turn(none, gn, ms, &vn);
            b = turn(ft, gf, ms, &vf);
        } else {
            b = turn(ft, gf, ms, &vf);
            a = turn(none, gn, ms, &vn);
        }
        if (rank == 0) {
            fprintf(csv, "%s,%s,%d,%d,%d,%.0f,%.0f,%.4f\n", variant, wname, size, REPLICAS, i, a, b, a / b - 1);
            printf("%s %s ranks=%d round %d: none %.0f ops/s, %s %.0f ops/s, cost %+.1f%%\n", variant, wname,
                   size, i, a, variant, b, 100 * (a / b - 1));
        }
    }
    if (csv) fclose(csv);
    wl_gen_free(gn);
    wl_gen_free(gf);
    kv_close(ft);
    kv_close(none);
    kvt_finish(MPI_COMM_NULL, "bench_ftcost");
    MPI_Finalize();
    return 0;
}
