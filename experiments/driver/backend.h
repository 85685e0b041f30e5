/*
 * backend.h -- what the driver runs its workload against: one table of
 * functions per system (backends/store.c, backends/redis.c).
 *
 * kv_driver.c owns the order of a run: settings, open, load, the run
 * phase (run.c's one loop, the same for every backend: duration, open-loop
 * wait, latency histograms, timeline bins, progress line), the result
 * files (output.c) and close.  A backend supplies the operations and what
 * only it knows: how to connect, how failures show (recoveries of the
 * store, failovers of Redis), what it adds to meta.json and its verdict.
 * driver.backend=NAME picks the table by its name; NAME.x settings go to
 * the table of that name.
 */
#ifndef KV_DRIVER_BACKEND_H
#define KV_DRIVER_BACKEND_H

#include "driver.h"

/* What open() says this rank does. */
enum { DRV_RUN = 0,       /* load and run the workload */
       DRV_SAT_OUT = 1,   /* no workload (a spare that replaced a failed rank),
                             but it takes part in writing the results */
       DRV_DONE = 2 };    /* nothing more (a spare released at close) */

/* What get() found. */
enum { DRV_FOUND = 0, DRV_MISSING = 1, DRV_FAILED = -1 };

/* One rank's run, shared by the driver and its backend. */
typedef struct drv_ctx {
    drv_settings *s;
    drv_rank *m;
    const struct drv_backend *be;
    int rank, size;             /* in MPI_COMM_WORLD; a process the store spawned
                                 * (respawned): the rank it took and the store's
                                 * size, once the store is open */
    int respawned;              /* variant respawn started this process for a dead one */
    int members;                /* ranks that hold data and run the workload */
    kv_store *kv;               /* the store, for the store backend; NULL otherwise */
    const char *variant;        /* meta.json's "variant" and "backend" */
    const char *window;
    wl_gen *g;
    int stop;                   /* the backend gave up: no further operations here */
    char err[1024];             /* why open or load failed */
    void *priv;                 /* the backend's own state */
    /* Lines of meta.json and summary.txt a workload adds (meta: each line
     * ending in ","; summary: "[SECTION], Metric, value" lines, the shape
     * of YCSB's, also printed on stdout); NULL: none.  Called on the
     * writing rank. */
    void (*extra_meta)(FILE *f, const struct drv_ctx *x);
    void (*extra_summary)(FILE *f, const struct drv_ctx *x);
} drv_ctx;

typedef struct drv_backend {
    const char *name;
    /* Settings NAME.x: defaults, one setting (0 or -1 with err), the check
     * of the whole combination for nranks ranks. */
    void (*defaults)(drv_settings *s);
    int (*set)(drv_settings *s, const char *name, const char *value, char *err, size_t len);
    int (*check)(const drv_settings *s, int nranks, char *err, size_t len);
    /* Lines of meta.json of its own, each ending in ","; NULL: none. */
    void (*meta)(FILE *f, const drv_settings *s);
    /* Connect (collective over MPI_COMM_WORLD): DRV_RUN, DRV_SAT_OUT,
     * DRV_DONE, or < 0 (x->err says why, or is empty when the backend
     * printed its message itself). */
    int (*open)(drv_ctx *x);
    /* This rank's share of the records: 0, or -1 with x->err. */
    int (*load)(drv_ctx *x);
    /* Wait for every rank of the run (collective). */
    void (*barrier)(drv_ctx *x);
    /* The run phase starts now (x->m->run_start_* are set); NULL: nothing to do. */
    void (*begin)(drv_ctx *x);
    /* One read into buf (cap bytes), *got its length; DRV_FOUND, DRV_MISSING
     * or DRV_FAILED.  One write of record rec, version ver: 0 or DRV_FAILED.
     * Both count their retries in x->m->retried_ops. */
    int (*get)(drv_ctx *x, uint64_t rec, const char *key, size_t klen, unsigned char *buf, size_t cap,
               size_t *got);
    int (*put)(drv_ctx *x, uint64_t rec, uint64_t ver, const char *key, size_t klen,
               const unsigned char *val, size_t vlen);
    /* Called while the loop waits for an operation's intended start, every
     * 0.1 ms; NULL: the loop sleeps instead. */
    void (*idle)(drv_ctx *x);
    /* After each operation (t: seconds since this rank's run start; wrote:
     * a write that succeeded); NULL: none. */
    void (*tick)(drv_ctx *x, double t, int wrote);
    /* Has this rank seen a failure yet (latency phase after_failure)? */
    int (*after_failure)(const drv_ctx *x);
    /* The end of the progress line ("recoveries 1"). */
    void (*note)(const drv_ctx *x, char *buf, size_t len);
    /* The run phase ends (before run_s is taken); NULL: nothing to do. */
    void (*end)(drv_ctx *x);
    /* Judge, write the verdict, disconnect (collective); the exit status.
     * bad: the result files counted verification errors. */
    int (*close)(drv_ctx *x, int bad);
} drv_backend;

extern const drv_backend drv_store_backend, drv_redis_backend;

/* The backends by name (NULL when unknown), and their names for messages. */
const drv_backend *drv_backend_named(const char *name);
const char *drv_backend_names(void);

/* run.c: the run phase's common start (collective): the backend's barrier,
 * x->m->run_start_ns (this rank's kv_clock_ns) and run_start_wall_ns (rank
 * 0's kv_wall_ns, on every rank), then the backend's begin.  The run phase
 * on this rank (after drv_run_start). */
void drv_run_start(drv_ctx *x);
void drv_run(drv_ctx *x);
/* output.c: every result file (collective over drv_comm); 1 when verify
 * errors were counted.  The communicator of the run: the store's
 * survivors, or MPI_COMM_WORLD. */
int drv_write_results(drv_ctx *x, int64_t wall_begin_ns, int64_t wall_end_ns);
MPI_Comm drv_comm(const drv_ctx *x);
/* Write "PASS what" or "FAIL why" to $KVRUN_DONE (scripts/kvrun). */
void drv_verdict(int bad, const char *what, const char *why);

#endif
