/*
 * kv_driver.c -- the benchmark driver: one MPI program, run on every rank.
 *
 * Reads its settings (settings.c) and checks them on every rank (a bad
 * setting is a message and exit status 2 before anything starts), reads
 * the source revision (provenance.c), finds the hosts and measures their
 * clock offsets (clocks.c), opens the backend (backend.h: the store, with
 * the failure schedule carried out by the in-process injector, or Redis),
 * loads the records, runs the workload (run.c), waits for every rank (the
 * store's barrier waits out recoveries), and writes every result file
 * before MPI_Finalize (which may hang after a failure; the launcher cuts
 * it).
 * Usage: see drv_usage() or `kv_driver --help`.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static int fail_early(int rank, const char *msg) {
    if (rank == 0 && msg[0]) fprintf(stderr, "kv_driver: %s\n", msg);
    MPI_Finalize();
    return 2;
}

/* Settings, checks and the run directory: "" or the message, on every rank. */
static void prepare(int argc, char **argv, drv_ctx *x, char *err, size_t len) {
    /* a respawned process's world is the newcomers: its rank counts were
     * checked when the run started (nranks 0 skips them) */
    if (drv_parse(argc, argv, x->s, err, len) || drv_check(x->s, x->respawned ? 0 : x->size, err, len)) return;
    if (x->rank == 0 && drv_mkdirs(x->s->out))
        snprintf(err, len, "cannot create the run directory %s", x->s->out);
    MPI_Bcast(err, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* Load, then the run phase from a common start on every rank. */
static void workload(drv_ctx *x) {
    drv_rank *m = x->m;
    x->g = wl_gen_new(&x->s->work, x->rank < x->members ? x->rank : x->rank % x->members, x->members);
    if (!x->g) {
        fprintf(stderr, "kv_driver: rank %d: out of memory for the workload\n", x->rank);
        x->stop = 1;
    }
    drv_papi_phase(m, m->papi_load, 1);
    if (x->g && x->be->load(x)) fprintf(stderr, "kv_driver: rank %d: load failed: %s\n", x->rank, x->err);
    drv_papi_phase(m, m->papi_load, 0);
    kv_get_stats(x->kv, &m->after_load);
    drv_run_start(x);
    drv_papi_phase(m, m->papi_run, 1);
    drv_run(x);
    drv_papi_phase(m, m->papi_run, 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    static drv_settings s;
    static drv_rank m;
    drv_ctx x = {.s = &s, .m = &m};
    MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x.size);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    x.respawned = parent != MPI_COMM_NULL;  /* the store's open takes the parent over */
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        if (x.rank == 0) drv_usage(stdout);
        MPI_Finalize();
        return 0;
    }
    char err[600] = "";
    prepare(argc, argv, &x, err, sizeof err);
    if (err[0]) return fail_early(x.rank, err);
    int64_t t_begin = kv_wall_ns();
    m.prov = drv_provenance_read();
    drv_hosts_init(&m.clocks);
    drv_clocks_measure(MPI_COMM_WORLD, &m.clocks, 0);
    x.be = s.backend;
    int role = x.be->open(&x);
    if (role < 0) return fail_early(x.rank, x.err);
    drv_papi_init(&m);
    if (role == DRV_RUN && s.task.enabled) ta_workload(&x, 0);
    else if (role == DRV_RUN) workload(&x);
    else if (role == DRV_SAT_OUT && s.task.enabled) ta_workload(&x, 1);  /* a replacement joins the task run */
    else m.papi_load[0] = m.papi_load[1] = m.papi_run[0] = m.papi_run[1] = -1;
    int bad = 0;
    if (role != DRV_DONE) {
        x.be->barrier(&x);
        kv_get_stats(x.kv, &m.after_run);
        bad = drv_write_results(&x, t_begin, kv_wall_ns());
    }
    int status = x.be->close(&x, bad);
    wl_gen_free(x.g);
    MPI_Finalize();
    return status;
}
