/*
 * report.c -- a task run inside kv_driver: check its settings against the
 * store's, set up the runtime on a rank, run it, then find the answer and
 * report it.
 *
 * ta_workload replaces the YCSB load and run phases (kv_driver.c picks it
 * for workload.kind=taskapp); the driver's result files stay as they are,
 * with tasks in place of operations (timeline, summary throughput), and
 * this file adds what a task run knows: a "taskapp" object and a
 * top-level "correct" in meta.json, "[TASKAPP]" lines of YCSB's shape in
 * summary.txt, and task_failures.csv (one row per failure: the time it
 * cost).  Durations are on kv_clock_ns from this rank's run start; the
 * run's first start is rank 0's kv_wall_ns, the one clock that means the
 * same in a restarted job (the control key, ta_int.h).  The answer
 * is read from the store after the end: the sum over every head that no
 * other head adopted, compared with the application's published value.
 * Each rank counts the tasks it executed in a file mapped MAP_SHARED
 * (RUN/taskapp/rank.N), so a killed rank's count survives it: executed
 * minus counted is the work done again.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "inject.h"
#include "ta_int.h"

/* What rank 0 of the survivors reports (the meta and summary hooks). */
static struct ta_report {
    const ta_params *p;
    int known, correct, error, persist, nrec;
    int64_t want[2], res[2], counted;
    long long executed, redone;     /* -1: a rank's count file was unreadable */
    double run_s, solve_s, recover_s[TA_MAX_RECOVERIES];
    long long commits, loots_given, loots_taken, requests, reclaims, adoptions, checkpoints;
    double commit_s, idle_s;
} R;

static ta_counts *map_counts(const char *out, int rank, int create) {
    char p[1200];
    snprintf(p, sizeof p, "%s/taskapp", out);
    drv_mkdirs(p);
    snprintf(p, sizeof p, "%s/taskapp/rank.%d", out, rank);
    int fd = open(p, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0644);
    if (fd < 0) return NULL;
    if (create && ftruncate(fd, sizeof(ta_counts)) != 0) { close(fd); return NULL; }
    ta_counts *c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return c == MAP_FAILED ? NULL : c;
}

/* The store must hold a head and a useful loot in one value, keep r copies
 * on the ranks that hold data, and the failures must be survivable. */
int ta_check_run(const drv_settings *s, int nranks, char *err, size_t len) {
    char sub[400];
    const kv_config *c = &s->store;
    int members = nranks - c->spares;
    if (kv_config_check(c, sub, sizeof sub)) return kvu_fail(err, len, "store: %s", sub);
    if (ta_params_check(&s->task, sub, sizeof sub)) return kvu_fail(err, len, "workload: %s", sub);
    if (nranks > TA_MAX_IDS) return kvu_fail(err, len, "a task run has at most %d ranks", TA_MAX_IDS);
    /* its ranks are MPI_COMM_WORLD's (recover.c), which a respawned one is not in */
    if (c->variant == KV_VARIANT_RESPAWN)
        return kvu_fail(err, len, "variant respawn cannot run a task run yet (its replacements are not in MPI_COMM_WORLD)");
    if (c->replicas > members)
        return kvu_fail(err, len, "store.replicas=%d but only %d ranks hold data", c->replicas, members);
    if (c->max_value < ta_head_bytes(nranks) || c->max_value < 8 + 8 * TA_TASK_BYTES)
        return kvu_fail(err, len, "store.max_value=%zu is too small for a task run of %d ranks (at least %zu)",
                        c->max_value, nranks, ta_head_bytes(nranks) > 8 + 8 * TA_TASK_BYTES
                                                  ? ta_head_bytes(nranks) : 8 + 8 * TA_TASK_BYTES);
    /* driver.checkpoint_s is checkpoint-restart's own: other variants leave
     * it unused, so one campaign can sweep every variant */
    if (!s->failures[0]) return 0;
    kvi_spec spec;
    if (kvi_spec_parse(s->failures, &spec, sub, sizeof sub)) return kvu_fail(err, len, "driver.failures: %s", sub);
    if (c->variant == KV_VARIANT_NONE)
        return kvu_fail(err, len, "variant none has no recovery: it cannot run with driver.failures");
    if (s->task.checkpoint_ms <= 0 && c->variant != KV_VARIANT_CHECKPOINT)
        return kvu_fail(err, len, "workload.checkpoint_ms=0 keeps no state in the store: it cannot run "
                        "with driver.failures");
    return 0;
}

static int setup(ta_rt *rt, drv_ctx *x) {
    memset(rt, 0, sizeof *rt);
    rt->x = x;
    rt->kv = x->kv;
    rt->p = &x->s->task;
    rt->me = x->rank;
    rt->nids = x->size;
    rt->members = x->members;
    rt->ckpt_restart = x->s->store.variant == KV_VARIANT_CHECKPOINT;
    rt->point_only = rt->p->kill_point[0] && (rt->p->kill_rank < 0 || rt->p->kill_rank == rt->me);
    /* checkpoint-restart reloads the store: the queues must be in it */
    rt->persist = rt->p->checkpoint_ms > 0 || rt->ckpt_restart;
    size_t vmax = kv_get_config(x->kv)->max_value;
    rt->cap = (vmax - 8) / TA_TASK_BYTES;
    rt->buf = malloc(vmax + 64);
    static ta_counts scratch;  /* when the file cannot be mapped: counts unknown */
    rt->counts = map_counts(x->s->out, rt->me, !x->s->restore);
    if (!rt->counts) { rt->counts = &scratch; rt->counts->executed = -1; }
    kvu_rng_seed(&rt->rng, x->s->work.seed * 7919 + (uint64_t)rt->me);
    ta_nonce_init(rt);
    for (int i = 0; i < x->members; i++) rt->ever[i] = 1;
    ta_update_live(rt);
    ta_head_initial(&rt->head, rt->me, rt->nids);
    rt->last_commit = kv_clock_ns();
    if (!rt->buf) return ta_fatal(rt, "out of memory");
    /* driver.restore=1 and a checkpoint was there to reload (checkpoint.c) */
    rt->restored = x->m->restored_from > 0;
    if (rt->me == 0 && !rt->restored) {
        ta_task t;
        rt->p->app->root(rt->p, &t);
        if (ta_queue_push(&rt->q, &t)) return ta_fatal(rt, "out of memory");
    }
    return TA_OK;
}

/* A spare that joins late: the run's start, rank 0's wall clock then (the
 * control key), on this rank's monotonic clock, through this host's
 * measured offset from rank 0's (clocks.c); now when the key is absent. */
static void join_start(ta_rt *rt, drv_rank *m, const ta_ctl *c, int absent) {
    int64_t wall = drv_on_reference(&m->clocks, m->clocks.mine, kv_wall_ns()), mono = kv_clock_ns();
    m->run_start_wall_ns = absent ? wall : c->job_start_wall_ns;
    m->run_start_ns = mono - (wall - m->run_start_wall_ns);
    rt->first_start_wall_ns = absent ? wall : c->first_start_wall_ns;
}

/* The common start; variant checkpoint-restart takes checkpoint 1 at once
 * (so a restarted job always has one to reload). */
static int start(ta_rt *rt, drv_ctx *x, int joined) {
    drv_rank *m = x->m;
    if (joined) {  /* a spare that replaced a failed rank: the others are in recovery */
        ta_ctl c;
        size_t len;
        int rc;
        while ((rc = ta_kv_get(rt, &c, sizeof c, &len, TA_KEY_CTL)) == TA_RECOVER) {}
        join_start(rt, m, &c, rc != TA_OK);
        rt->recoveries = -1;  /* join the survivors' recovery first */
        return rc == TA_FATAL ? rc : TA_OK;
    }
    drv_run_start(x);
    rt->recoveries = kv_recovery_count(rt->kv);
    int first = !rt->restored;
    rt->first_start_wall_ns = m->run_start_wall_ns;
    if (rt->me == 0 && first) {
        int rc;
        while ((rc = ta_put_ctl(rt, rt->ckpt_restart ? 1 : 0, 0)) == TA_RECOVER) {}
        if (rc != TA_OK) return rc;
    }
    rt->next_ckpt = m->run_start_ns + (int64_t)(x->s->checkpoint_s * 1e9);
    if (!rt->ckpt_restart) return TA_OK;
    x->be->barrier(x);
    ta_ctl c;
    size_t len;
    if (ta_kv_get(rt, &c, sizeof c, &len, TA_KEY_CTL) != TA_OK) return ta_fatal(rt, "no control key");
    rt->ckpt_seen = first ? 0 : c.ckpt;
    /* the restored control key: the first job's start, on its rank 0's wall clock */
    if (!first) rt->first_start_wall_ns = c.first_start_wall_ns;
    if (first) { drv_ckpt_take(rt->kv, m); rt->ckpt_seen = 1; rt->st.checkpoints++; }
    return TA_OK;
}

/* The answer: every head read once the run is over (retried through a
 * late failure: heads no longer change). */
static int read_answer(ta_rt *rt, int64_t res[2], int64_t *counted) {
    static ta_head h[TA_MAX_IDS];
    uint8_t covered[TA_MAX_IDS] = {0};
    for (int id = 0; id < rt->nids; id++) {
        int rc;
        while ((rc = ta_head_read(rt, id, &h[id])) == TA_RECOVER) {}
        if (rc != TA_OK) return rc;
        for (int i = 0; i < rt->nids; i++) covered[i] |= h[id].adopted[i];
    }
    res[0] = res[1] = *counted = 0;
    for (int id = 0; id < rt->nids; id++) {
        if (!rt->ever[id] || covered[id]) continue;
        res[0] += h[id].res[0];
        res[1] += h[id].res[1];
        *counted += h[id].counted;
    }
    return TA_OK;
}

/* Executed tasks of the ranks that died (their count files), -1 unknown. */
static long long dead_executed(const ta_rt *rt, const drv_settings *s) {
    long long sum = 0;
    for (int id = 0; id < rt->nids; id++) {
        if (!rt->ever[id] || rt->live[id]) continue;
        ta_counts *c = map_counts(s->out, id, 0);
        if (!c || c->executed < 0) return -1;
        sum += c->executed;
        munmap(c, sizeof *c);
    }
    return sum;
}

static void gather(ta_rt *rt, drv_ctx *x, int error) {
    MPI_Comm comm = drv_comm(x);
    int me;
    MPI_Comm_rank(comm, &me);
    const ta_stats *st = &rt->st;
    long long mine[9] = {rt->counts->executed, st->commits, st->loots_given, st->loots_taken, st->requests,
                         st->reclaims, st->adoptions, error, rt->counts->executed < 0}, sum[9];
    MPI_Reduce(mine, sum, 9, MPI_LONG_LONG, MPI_SUM, 0, comm);
    double dm[2 + TA_MAX_RECOVERIES] = {st->commit_s, st->idle_s}, dmax[2 + TA_MAX_RECOVERIES];
    memcpy(dm + 2, st->recover_s, sizeof st->recover_s);
    MPI_Reduce(dm, dmax, 2 + TA_MAX_RECOVERIES, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&st->idle_s, &R.idle_s, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(&x->m->run_s, &R.run_s, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    /* From the run's first start to this rank's end: the run phase on the
     * monotonic clock, plus (a restarted job) the time between the first
     * job's start and this one's, both rank 0's wall clock (wall, because
     * it spans jobs; uncorrected if the two jobs' rank 0 had different hosts). */
    double solve = x->m->run_s + (double)(x->m->run_start_wall_ns - rt->first_start_wall_ns) * 1e-9;
    MPI_Reduce(&solve, &R.solve_s, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (me != 0) return;
    long long dead = dead_executed(rt, x->s);
    R.executed = sum[8] || dead < 0 ? -1 : sum[0] + dead;
    R.redone = R.executed < 0 ? -1 : R.executed - R.counted;
    R.commits = sum[1]; R.loots_given = sum[2]; R.loots_taken = sum[3]; R.requests = sum[4];
    R.reclaims = sum[5]; R.adoptions = sum[6]; R.error = sum[7] > 0;
    R.checkpoints = st->checkpoints;
    R.commit_s = dmax[0];
    memcpy(R.recover_s, dmax + 2, sizeof R.recover_s);
    R.nrec = kv_recovery_count(rt->kv);
    R.correct = R.known && !R.error && R.res[0] == R.want[0] && R.res[1] == R.want[1];
}

static void json_ll(FILE *f, const char *k, long long v) {
    if (v < 0) fprintf(f, "\"%s\": null, ", k);
    else fprintf(f, "\"%s\": %lld, ", k, v);
}

static void meta(FILE *f, const drv_ctx *x) {
    (void)x;
    fprintf(f, "  \"taskapp\": {\"app\": \"%s\", \"size\": \"%s\", \"split_depth\": %d, "
               "\"checkpoint_ms\": %g, \"resilient\": %s, \"answer\": [%lld, %lld], ",
            R.p->app->name, R.p->size, R.p->split, R.p->checkpoint_ms, R.persist ? "true" : "false",
            (long long)R.res[0], (long long)R.res[1]);
    if (R.known) fprintf(f, "\"expected\": [%lld, %lld], ", (long long)R.want[0], (long long)R.want[1]);
    else fprintf(f, "\"expected\": null, ");
    fprintf(f, "\"answer_names\": [\"%s\", \"%s\"], \"correct\": %s, \"error\": %s, ", R.p->app->res_names[0],
            R.p->app->res_names[1], R.correct ? "true" : "false", R.error ? "true" : "false");
    json_ll(f, "tasks_counted", R.counted);
    json_ll(f, "tasks_executed", R.executed);
    json_ll(f, "tasks_redone", R.redone);
    fprintf(f, "\"run_s\": %.6f, \"solve_s\": %.6f, ", R.run_s, R.solve_s);
    fprintf(f, "\"throughput_tasks_per_s\": %.1f, \"commits\": %lld, \"commit_s_max\": %.6f, "
               "\"idle_s_sum\": %.3f, \"loots_given\": %lld, \"loots_taken\": %lld, \"steal_requests\": %lld, "
               "\"reclaims\": %lld, \"adoptions\": %lld, \"checkpoints\": %lld, \"app_recovery_s\": [",
            R.run_s > 0 ? R.counted / R.run_s : 0.0, R.commits, R.commit_s, R.idle_s, R.loots_given,
            R.loots_taken, R.requests, R.reclaims, R.adoptions, R.checkpoints);
    for (int i = 0; i < R.nrec && i < TA_MAX_RECOVERIES; i++) fprintf(f, "%s%.6f", i ? ", " : "", R.recover_s[i]);
    fprintf(f, "]},\n  \"correct\": %s,\n", R.correct ? "true" : "false");
}

/* "[TASKAPP], Metric, value" lines, the shape of YCSB's own (summary.txt
 * holds nothing else); a count that is unknown is left out. */
static void summary_ll(FILE *o, const char *metric, long long v) {
    if (v >= 0) fprintf(o, "[TASKAPP], %s, %lld\n", metric, v);
}

static void summary(FILE *o, const drv_ctx *x) {
    (void)x;
    char name[64];
    for (int i = 0; i < 2; i++) {
        if (!R.p->app->res_names[i][0]) continue;
        snprintf(name, sizeof name, "Answer(%s)", R.p->app->res_names[i]);
        summary_ll(o, name, (long long)R.res[i]);
        snprintf(name, sizeof name, "Published(%s)", R.p->app->res_names[i]);
        if (R.known) summary_ll(o, name, (long long)R.want[i]);
    }
    summary_ll(o, "Correct", R.correct);
    summary_ll(o, "SolveTime(ms)", (long long)(R.solve_s * 1e3 + 0.5));
    fprintf(o, "[TASKAPP], Throughput(tasks/sec), %.3f\n", R.run_s > 0 ? R.counted / R.run_s : 0.0);
    summary_ll(o, "TasksCounted", (long long)R.counted);
    summary_ll(o, "TasksExecuted", R.executed);
    summary_ll(o, "TasksRedone", R.redone);
    summary_ll(o, "StealRequests", R.requests);
    summary_ll(o, "LootsTaken", R.loots_taken);
    summary_ll(o, "LootsTakenBack", R.reclaims);
    summary_ll(o, "Commits", R.commits);
    summary_ll(o, "Adoptions", R.adoptions);
    summary_ll(o, "Checkpoints", R.checkpoints);
}

void ta_workload(drv_ctx *x, int joined) {
    static ta_rt rt;
    int rc = setup(&rt, x);
    if (rc == TA_OK) rc = start(&rt, x, joined);
    if (rc == TA_OK) rc = ta_run(&rt);
    int error = rc == TA_FATAL;
    if (error) ta_put_ctl(&rt, rt.ckpt_seen, 2);  /* stop the others: the run cannot give a right answer */
    x->m->run_s = drv_run_time(x->m, kv_clock_ns());
    if (x->be->end) x->be->end(x);
    if (ta_finish(&rt) != TA_OK) error = 1;  /* every survivor, so all pass the same syncs */
    R.p = rt.p;
    R.persist = rt.persist;
    R.known = rt.p->app->expected(rt.p, R.want);
    if (read_answer(&rt, R.res, &R.counted) != TA_OK) error = 1;
    gather(&rt, x, error);
    int me;
    MPI_Comm_rank(drv_comm(x), &me);
    if (me == 0 && !R.correct) x->m->verify_errors++;  /* the driver's verdict: FAIL */
    double rate = R.run_s > 0 && x->members > 0 ? (double)R.counted / (R.run_s * x->members) : 0;
    MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, drv_comm(x));
    ta_failures(&rt, rate);
    x->extra_meta = meta;
    x->extra_summary = summary;
}
