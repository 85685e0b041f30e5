/*
 * kv_driver.c -- the benchmark driver: one MPI program, run on every rank.
 *
 * Reads its settings (settings.c), checks them on every rank (a bad
 * setting is a message and exit status 2 before anything starts), draws
 * the failure schedule on rank 0 and writes it out, opens the store, loads
 * the records, runs the workload with the in-process injector ticking,
 * waits out recoveries (kv_barrier), and writes every result file before
 * MPI_Finalize (which may hang after a failure; the launcher cuts it).
 * Usage: see drv_usage() or `kv_driver --help`.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

static int fail_early(int rank, const char *msg) {
    if (rank == 0) fprintf(stderr, "kv_driver: %s\n", msg);
    MPI_Finalize();
    return 2;
}

/* Draw the schedule on rank 0 from every rank's pid and host; broadcast. */
static int make_schedule(const drv_settings *s, int rank, int size, kvi_schedule *out, char *err,
                         size_t len) {
    memset(out, 0, sizeof *out);
    kvi_rank_info me = {rank, (int)getpid(), ""}, *all = malloc(sizeof me * (size_t)size);
    kvi_hostname(me.host, sizeof me.host);
    MPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, MPI_COMM_WORLD);
    int rc = 0, n = 0;
    if (rank == 0) {
        kvi_spec spec;
        rc = kvi_spec_parse(s->failures, &spec, err, len);
        /* What the store survives at once; under checkpoint-restart a loss
         * ends the job by design (the restarted job restores). */
        int can_lose = s->store.variant == KV_VARIANT_CHECKPOINT ? size - 1
                                                                 : s->store.replicas - 1 + s->store.spares;
        if (!rc) rc = kvi_schedule_build(&spec, all, size, can_lose, out, err, len);
        n = rc ? -1 : out->nevents;
    }
    free(all);
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(err, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (n < 0) return -1;
    if (rank != 0) { out->events = calloc((size_t)n + 1, sizeof(kvi_event)); out->nevents = n; }
    MPI_Bcast(out->events, n * (int)sizeof(kvi_event), MPI_BYTE, 0, MPI_COMM_WORLD);
    return 0;
}

static void write_schedule(const drv_settings *s, const kvi_schedule *sch) {
    char path[1200];
    snprintf(path, sizeof path, "%s/schedule.csv", s->out);
    FILE *f = fopen(path, "w");
    if (f) { kvi_schedule_write_csv(sch, f); fclose(f); }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        if (rank == 0) drv_usage(stdout);
        MPI_Finalize();
        return 0;
    }
    static drv_settings s;
    static drv_rank m;
    char err[600] = "";
    if (drv_parse(argc, argv, &s, err, sizeof err) || drv_check(&s, size, err, sizeof err))
        return fail_early(rank, err);
    if (rank == 0 && drv_mkdirs(s.out)) {
        snprintf(err, sizeof err, "cannot create the run directory %s", s.out);
    }
    MPI_Bcast(err, sizeof err, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (err[0]) return fail_early(rank, err);
    double t_begin = kv_wtime();
    if (s.redis.on) {  /* issue #9: the workload against Redis, no store (redis.c) */
        int st = drv_redis_main(&s, &m, t_begin);
        MPI_Finalize();
        return st;
    }
    kvi_schedule sch = {0};
    kvi_inproc *inj = NULL;
    char killlog[1100];
    snprintf(killlog, sizeof killlog, "%s/kills.csv", s.out);
    if (s.failures[0]) {
        if (make_schedule(&s, rank, size, &sch, err, sizeof err)) return fail_early(rank, err);
        if (rank == 0) write_schedule(&s, &sch);
    }
    char pids[1100];
    snprintf(pids, sizeof pids, "%s/pids", s.out);
    if (rank == 0) drv_mkdirs(pids);
    MPI_Barrier(MPI_COMM_WORLD);
    kvi_publish_pid(pids, rank);  /* for the external injector */

    kv_store *kv;
    int rc = kv_open(MPI_COMM_WORLD, &s.store, &kv);
    if (rc) return fail_early(rank, kv_strerror(rc));
    drv_papi_init(&m);
    if (!kv_is_spare(kv)) {
        int restored = 0;
        rc = drv_ckpt_start(kv, &s, &m, &restored);  /* variant checkpoint-restart only */
        if (rc) return fail_early(rank, kv_strerror(rc));
        drv_papi_phase(&m, m.papi_load, 1);
        if (!restored) rc = drv_load(kv, &s, &m);
        drv_papi_phase(&m, m.papi_load, 0);
        if (rc) fprintf(stderr, "kv_driver: rank %d: load failed: %s\n", rank, kv_strerror(rc));
        kv_get_stats(kv, &m.after_load);
        kv_barrier(kv);
        m.run_start = kv_wtime();
        MPI_Bcast(&m.run_start, 1, MPI_DOUBLE, 0, kv_comm(kv));
        if (s.failures[0]) inj = kvi_inproc_start(&sch, rank, m.run_start, killlog);
        drv_papi_phase(&m, m.papi_run, 1);
        drv_run(kv, &s, &m, inj);
        drv_papi_phase(&m, m.papi_run, 0);
    } else {
        m.papi_load[0] = m.papi_load[1] = m.papi_run[0] = m.papi_run[1] = -1;
        rc = kv_spare_wait(kv);  /* serves recoveries; returns when it took a role or at close */
    }
    if (!kv_is_spare(kv)) {
        kv_barrier(kv);
        kv_get_stats(kv, &m.after_run);
        int bad = drv_write_results(kv, &s, &m, size, t_begin, kv_wtime());
        int me = kv_rank(kv);
        MPI_Comm keep;
        MPI_Comm_dup(kv_comm(kv), &keep);
        kv_close(kv);
        if (me == 0 && getenv("KVRUN_DONE")) {
            FILE *f = fopen(getenv("KVRUN_DONE"), "w");
            if (f) { fprintf(f, bad ? "FAIL verify errors\n" : "PASS kv_driver\n"); fclose(f); }
        }
        MPI_Comm_free(&keep);
    } else {
        kv_close(kv);
    }
    kvi_inproc_free(inj);
    kvi_schedule_free(&sch);
    MPI_Finalize();
    return 0;
}
