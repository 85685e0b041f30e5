/*
 * store.c -- the driver's store backend: the workload against kvstore,
 * with the failure schedule carried out by the in-process injector.
 *
 * Open draws the failure schedule on rank 0 from every rank's pid and
 * host (and writes it to schedule.csv), publishes the pid table for the
 * external injector, opens the store and, for variant checkpoint-restart,
 * maps the acks file or restores the latest checkpoint (checkpoint.c).  A
 * spare rank waits in kv_spare_wait: it serves recoveries and either takes
 * a failed rank's place (then it only joins the result files) or is
 * released at close.  A process variant respawn started opens the store,
 * which makes it a failed rank's replacement at once; it takes that rank's
 * number (its own world is the newcomers) and joins the result files, its
 * pid published under that rank for the external injector.  An operation interrupted by a failure
 * (KV_ERR_INTERRUPTED: recovery already ran) is retried up to
 * DRV_RETRIES times and counted as retried.  The injector is ticked with
 * the operation count after every operation.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

#define DRV_RETRIES 10

typedef struct store_run {
    kvi_schedule sch;
    kvi_inproc *inj;
    char killlog[1100];
    int restored;           /* checkpoint-restart: reloaded instead of loading */
} store_run;

static void store_defaults(drv_settings *s) { kv_config_default(&s->store); }

static int store_set(drv_settings *s, const char *name, const char *value, char *err, size_t len) {
    return kv_config_set(&s->store, name, value, err, len) == KV_OK ? 0 : -1;
}

/* The store's limits against the workload's needs. */
static int check_fit(const drv_settings *s, int members, char *err, size_t len) {
    if (s->store.replicas > members) {
        snprintf(err, len, "store.replicas=%d but only %d ranks hold data", s->store.replicas, members);
        return -1;
    }
    if ((size_t)s->work.key_bytes > s->store.max_key) {
        snprintf(err, len, "workload.key_bytes=%d exceeds store.max_key=%zu", s->work.key_bytes,
                 s->store.max_key);
        return -1;
    }
    if ((size_t)s->work.value_max > s->store.max_value) {
        snprintf(err, len, "workload values up to %lld bytes exceed store.max_value=%zu",
                 (long long)s->work.value_max, s->store.max_value);
        return -1;
    }
    double copies = (double)s->work.records * (1.0 + s->work.proportion[WL_INSERT]) * s->store.replicas;
    if (copies > 0.9 * (double)s->store.slots_per_rank * members) {
        snprintf(err, len, "%.0f copies (records x replicas, with inserts) would fill %d ranks x %zu "
                 "slots beyond 90%%: raise store.slots_per_rank", copies, members, s->store.slots_per_rank);
        return -1;
    }
    return 0;
}

/* Checkpoints, durations and failures against the variant. */
static int check_run(const drv_settings *s, char *err, size_t len) {
    char sub[400];
    if ((s->checkpoint_s > 0 || s->restore) && s->store.variant != KV_VARIANT_CHECKPOINT) {
        snprintf(err, len, "driver.checkpoint_s and driver.restore need store.variant=checkpoint-restart");
        return -1;
    }
    if (s->checkpoint_s > 0 && s->work.duration_s <= 0) {
        snprintf(err, len, "driver.checkpoint_s needs workload.duration_s (checkpoints are timed)");
        return -1;
    }
    if (s->work.operations == 0 && s->work.duration_s <= 0) {
        snprintf(err, len, "workload needs operations or duration_s");
        return -1;
    }
    if (!s->failures[0]) return 0;
    kvi_spec spec;
    if (kvi_spec_parse(s->failures, &spec, sub, sizeof sub)) {
        snprintf(err, len, "driver.failures: %s", sub);
        return -1;
    }
    if (s->store.variant == KV_VARIANT_NONE) {
        snprintf(err, len, "variant none has no recovery: it cannot run with driver.failures");
        return -1;
    }
    return 0;
}

static int store_check(const drv_settings *s, int nranks, char *err, size_t len) {
    char sub[400];
    if (kv_config_check(&s->store, sub, sizeof sub)) { snprintf(err, len, "store: %s", sub); return -1; }
    if (nranks == 0) return 0;  /* a respawned process (kv_driver.c) */
    if (s->task.enabled) return ta_check_run(s, nranks, err, len);
    if (wl_params_check(&s->work, sub, sizeof sub) || wl_params_check_ranks(&s->work, nranks, sub, sizeof sub)) {
        snprintf(err, len, "workload: %s", sub);
        return -1;
    }
    return check_fit(s, nranks - s->store.spares, err, len) || check_run(s, err, len) ? -1 : 0;
}

/* Draw the schedule on rank 0 from every rank's pid, host and daemon; broadcast. */
static int make_schedule(const drv_settings *s, int rank, int size, kvi_schedule *out, char *err,
                         size_t len) {
    memset(out, 0, sizeof *out);
    kvi_rank_info me, *all = malloc(sizeof me * (size_t)size);
    kvi_self_info(rank, &me);  /* pid, host and daemon: a node loss kills them all */
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

/* The failure schedule and the pid table (collective over MPI_COMM_WORLD). */
static int open_failures(drv_ctx *x, store_run *st) {
    snprintf(st->killlog, sizeof st->killlog, "%s/kills.csv", x->s->out);
    if (x->s->failures[0]) {
        if (make_schedule(x->s, x->rank, x->size, &st->sch, x->err, sizeof x->err)) return -1;
        if (x->rank == 0) write_schedule(x->s, &st->sch);
    }
    char pids[1100];
    snprintf(pids, sizeof pids, "%s/pids", x->s->out);
    if (x->rank == 0) drv_mkdirs(pids);
    MPI_Barrier(MPI_COMM_WORLD);
    kvi_publish_pid(pids, x->rank);  /* for the external injector */
    return 0;
}

static int store_open(drv_ctx *x) {
    static store_run st;
    x->priv = &st;
    x->members = x->size - x->s->store.spares;
    x->variant = kv_variant_name(x->s->store.variant);
    x->window = kv_backend_name(x->s->store.backend);
    if (!x->respawned && open_failures(x, &st)) return -1;
    int rc = kv_open(MPI_COMM_WORLD, &x->s->store, &x->kv);
    if (rc == KV_OK && !kv_is_spare(x->kv))  /* variant checkpoint-restart only */
        rc = drv_ckpt_start(x->kv, x->s, x->m, &st.restored);
    if (rc) {
        snprintf(x->err, sizeof x->err, "%s", kv_strerror(rc));
        return -1;
    }
    if (x->respawned) {
        x->rank = kv_rank(x->kv);
        x->size = x->members = kv_size(x->kv);
        char pids[1100];
        snprintf(pids, sizeof pids, "%s/pids", x->s->out);
        kvi_publish_pid(pids, x->rank);
        return DRV_SAT_OUT;
    }
    if (!kv_is_spare(x->kv)) return DRV_RUN;
    kv_spare_wait(x->kv);  /* serves recoveries; returns when it took a role or at close */
    return kv_is_spare(x->kv) ? DRV_DONE : DRV_SAT_OUT;
}

static bool ok_rc(int rc) { return rc == KV_OK || rc == KV_WARN_DEGRADED; }

/* kv_put, retried while a failure interrupts it. */
static int put_retried(drv_ctx *x, const char *key, size_t klen, const unsigned char *val, size_t vlen) {
    int rc = kv_put(x->kv, key, klen, val, vlen);
    for (int i = 0; rc == KV_ERR_INTERRUPTED && i < DRV_RETRIES; i++) {
        x->m->retried_ops++;
        rc = kv_put(x->kv, key, klen, val, vlen);
    }
    return rc;
}

static int store_load(drv_ctx *x) {
    store_run *st = x->priv;
    const wl_params *w = &x->s->work;
    if (st->restored) return 0;
    unsigned char *val = malloc((size_t)w->value_max + 1);
    char key[WL_KEY_MAX + 1];
    if (!val) {
        snprintf(x->err, sizeof x->err, "%s", kv_strerror(KV_ERR_NOMEM));
        return -1;
    }
    int64_t t0 = kv_clock_ns();
    int rc = KV_OK;
    for (uint64_t r = wl_load_begin(w, x->rank, x->members); r < wl_load_end(w, x->rank, x->members); r++) {
        size_t vlen = wl_load_value_len(w, r);
        wl_make_value(x->g, r, 0, val, vlen);
        rc = put_retried(x, key, wl_key(w, r, key, sizeof key), val, vlen);
        if (!ok_rc(rc)) break;
    }
    x->m->load_s = (double)(kv_clock_ns() - t0) * 1e-9;
    free(val);
    if (ok_rc(rc)) return 0;
    snprintf(x->err, sizeof x->err, "%s", kv_strerror(rc));
    return -1;
}

static void store_barrier(drv_ctx *x) { kv_barrier(x->kv); }

static void store_begin(drv_ctx *x) {
    store_run *st = x->priv;
    /* The schedule's moments count from rank 0's start, on this host's clock. */
    int64_t off, unc;
    drv_clock_offset(&x->m->clocks, x->m->clocks.mine, &off, &unc);
    if (x->s->failures[0])
        st->inj = kvi_inproc_start(&st->sch, x->rank, (double)(x->m->run_start_wall_ns + off) * 1e-9, st->killlog);
}

static int store_get(drv_ctx *x, uint64_t rec, const char *key, size_t klen, unsigned char *buf,
                     size_t cap, size_t *got) {
    (void)rec;
    int rc = kv_get(x->kv, key, klen, buf, cap, got);
    for (int i = 0; rc == KV_ERR_INTERRUPTED && i < DRV_RETRIES; i++) {
        x->m->retried_ops++;
        rc = kv_get(x->kv, key, klen, buf, cap, got);
    }
    return rc == KV_OK ? DRV_FOUND : rc == KV_ERR_NOT_FOUND ? DRV_MISSING : DRV_FAILED;
}

static int store_put(drv_ctx *x, uint64_t rec, uint64_t ver, const char *key, size_t klen,
                     const unsigned char *val, size_t vlen) {
    (void)rec;
    (void)ver;
    return ok_rc(put_retried(x, key, klen, val, vlen)) ? 0 : DRV_FAILED;
}

/* While idle, keep serving failure detection: the others' recovery needs us. */
static void store_idle(drv_ctx *x) { kv_poll(x->kv); }

static void store_tick(drv_ctx *x, double t, int wrote) {
    store_run *st = x->priv;
    if (wrote) drv_ckpt_ack();
    drv_ckpt_tick(x->kv, x->s, x->m, t);
    if (st->inj) kvi_inproc_tick(st->inj, x->m->ops);
}

static int store_after_failure(const drv_ctx *x) { return kv_recovery_count(x->kv) > 0; }

static void store_note(const drv_ctx *x, char *buf, size_t len) {
    snprintf(buf, len, "recoveries %d", kv_recovery_count(x->kv));
}

static void store_end(drv_ctx *x) { drv_ckpt_finish(x->kv, x->s, x->m); }

static int store_close(drv_ctx *x, int bad) {
    store_run *st = x->priv;
    if (!kv_is_spare(x->kv)) {
        int me = kv_rank(x->kv);
        kv_close(x->kv);
        if (me == 0) drv_verdict(bad, "kv_driver", "verify errors");
    } else {
        kv_close(x->kv);
    }
    kvi_inproc_free(st->inj);
    kvi_schedule_free(&st->sch);
    return 0;
}

const drv_backend drv_store_backend = {
    .name = "store", .defaults = store_defaults, .set = store_set, .check = store_check,
    .open = store_open, .load = store_load, .barrier = store_barrier, .begin = store_begin,
    .get = store_get, .put = store_put, .idle = store_idle, .tick = store_tick,
    .after_failure = store_after_failure, .note = store_note, .end = store_end, .close = store_close,
};
