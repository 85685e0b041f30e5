/*
 * run.c -- the run phase on one rank, the same loop for every backend,
 * and what it measures.
 *
 * The rank's operation stream comes from wl_next, closed loop or open loop
 * (an operation waits for its intended start, and its latency counts from
 * there: queueing is not hidden).  A read is checked against the value
 * wl_make_value gave its record; a scan is one read per record; a
 * read-modify-write is a read and a write.  The backend's get and put do
 * the rest (retries through a failure included); an operation that still
 * fails is counted as failed.  Latencies go to log-linear histograms per
 * kind, before and after the first failure the backend saw; completions go
 * to timeline bins.  Every time here is kv_clock_ns() (monotonic, integer
 * ns) from this rank's run start.  The loop stops at the workload's end,
 * after duration_s, or when the backend gives up.  A driver built without
 * PAPI (kv_features.h) records its counters as NA, and says why.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "kv_features.h"

#if KV_HAVE_PAPI
#include <papi.h>

static int papi_set = PAPI_NULL;

void drv_papi_init(drv_rank *m) {
    m->papi_reason[0] = 0;
    if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
        snprintf(m->papi_reason, sizeof m->papi_reason, "PAPI_library_init failed");
        return;
    }
    int hw = PAPI_num_cmp_hwctrs(0);
    if (hw <= 0 || PAPI_create_eventset(&papi_set) != PAPI_OK ||
        PAPI_add_event(papi_set, PAPI_TOT_INS) != PAPI_OK ||
        PAPI_add_event(papi_set, PAPI_TOT_CYC) != PAPI_OK) {
        snprintf(m->papi_reason, sizeof m->papi_reason,
                 "no hardware counters: PAPI reports %d for the CPU component "
                 "(perf_event disabled or no PMU on this machine)", hw);
        papi_set = PAPI_NULL;
    }
}

/* start=1: start counting; start=0: read the phase into out (or -1 = NA). */
void drv_papi_phase(drv_rank *m, long long out[2], int start) {
    (void)m;
    if (papi_set == PAPI_NULL) {
        out[0] = out[1] = -1;
        return;
    }
    if (start) {
        PAPI_start(papi_set);
        return;
    }
    if (PAPI_stop(papi_set, out) != PAPI_OK) out[0] = out[1] = -1;
}
#else /* !KV_HAVE_PAPI */
void drv_papi_init(drv_rank *m) {
    snprintf(m->papi_reason, sizeof m->papi_reason, "built without PAPI (no papi.h or -lpapi at make)");
}

void drv_papi_phase(drv_rank *m, long long out[2], int start) {
    (void)m;
    if (!start) out[0] = out[1] = -1;
}
#endif

/* Count one completed operation in the timeline bins. */
void drv_add_bin(drv_rank *m, double t, int kind, int failed, double bin_s) {
    int b = t < 0 ? 0 : (int)(t / bin_s);
    if (b >= m->cbins) {
        int n = m->cbins ? m->cbins : 1024;
        while (n <= b) n *= 2;
        drv_bin *nb = realloc(m->bins, (size_t)n * sizeof *nb);
        if (!nb) return;
        memset(nb + m->cbins, 0, (size_t)(n - m->cbins) * sizeof *nb);
        m->bins = nb;
        m->cbins = n;
    }
    if (b >= m->nbins) m->nbins = b + 1;
    m->bins[b].ops++;
    if (kind == WL_READ || kind == WL_SCAN) m->bins[b].reads++;
    else if (kind >= 0) m->bins[b].writes++;
    if (failed) m->bins[b].failed++;
}

/* One read of record rec, checked: 0, or -1 when it failed. */
static int do_read(drv_ctx *x, uint64_t rec, const char *key, size_t klen, unsigned char *val,
                   size_t cap) {
    size_t got = 0;
    int rc = x->be->get(x, rec, key, klen, val, cap, &got);
    if (rc == DRV_MISSING) x->m->not_found++;
    if (rc == DRV_FOUND && x->s->verify && wl_check_value(x->g, rec, val, got < cap ? got : cap, NULL) == 0)
        x->m->verify_errors++;
    return rc == DRV_FAILED ? -1 : 0;
}

/* One operation of the workload: 0, or -1 when it failed. */
static int do_op(drv_ctx *x, const wl_op *op, unsigned char *val, size_t cap) {
    char key[WL_KEY_MAX + 1];
    int rc = 0;
    switch (op->kind) {
    case WL_READ: return do_read(x, op->record, op->key, op->key_len, val, cap);
    case WL_SCAN:
        for (uint32_t i = 0; i < op->scan_len && rc == 0; i++)
            rc = do_read(x, op->record + i, key, wl_key(&x->s->work, op->record + i, key, sizeof key),
                         val, cap);
        return rc;
    case WL_RMW:
        if (do_read(x, op->record, op->key, op->key_len, val, cap)) return -1;
        /* write the new value */
        __attribute__((fallthrough));
    default:
        wl_make_value(x->g, op->record, op->seq + 1, val, op->value_len);
        return x->be->put(x, op->record, op->seq + 1, op->key, op->key_len, val, op->value_len);
    }
}

/* Wait for the monotonic clock to pass t_ns, serving the backend's failure
 * detection meanwhile (the store's survivors need every rank to join a
 * recovery), or asleep when the backend needs nothing. */
static void wait_until(drv_ctx *x, int64_t t_ns) {
    if (!x->be->idle) {
        int64_t d = t_ns - kv_clock_ns();
        if (d > 0) nanosleep(&(struct timespec){(time_t)(d / 1000000000), (long)(d % 1000000000)}, NULL);
        return;
    }
    int64_t last = 0;
    for (int64_t now = kv_clock_ns(); now < t_ns; now = kv_clock_ns())
        if (now - last > 100000) {   /* every 0.1 ms */
            x->be->idle(x);
            last = now;
        }
}

/* t: seconds since the run start. */
static void progress(const drv_ctx *x, double t, double *next) {
    if (t < *next) return;
    *next = t + 1.0;
    const drv_rank *m = x->m;
    char note[80];
    x->be->note(x, note, sizeof note);
    fprintf(stderr, "[run %s] %6.1f s  %lld ops on rank 0 (%.0f ops/s)  %s\n", x->s->run_id, t, m->ops,
            t > 0 ? m->ops / t : 0.0, note);
}

static int is_write(int kind) { return kind != WL_READ && kind != WL_SCAN; }

void drv_run_start(drv_ctx *x) {
    drv_rank *m = x->m;
    x->be->barrier(x);
    m->run_start_ns = kv_clock_ns();
    m->run_start_wall_ns = kv_wall_ns();
    MPI_Bcast(&m->run_start_wall_ns, 1, MPI_INT64_T, 0, drv_comm(x));
    if (x->be->begin) x->be->begin(x);
}

void drv_run(drv_ctx *x) {
    const drv_settings *s = x->s;
    drv_rank *m = x->m;
    size_t cap = (size_t)s->work.value_max + 1;
    unsigned char *val = malloc(cap);
    for (int k = 0; k < WL_NKINDS; k++)
        for (int p = 0; p < DRV_NPHASES; p++) hist_init(&m->lat[k][p]);
    double next_progress = x->rank == 0 && s->progress ? 1.0 : 1e300;
    int64_t t0 = m->run_start_ns, duration = (int64_t)(s->work.duration_s * 1e9);
    wl_op op;
    while (val && !x->stop && wl_next(x->g, &op)) {
        int64_t start = kv_clock_ns();
        if (duration > 0 && start - t0 >= duration) break;
        if (op.intended_s >= 0) {
            start = t0 + (int64_t)(op.intended_s * 1e9);  /* latency from the intended start */
            wait_until(x, start);
        }
        int failed = do_op(x, &op, val, cap) != 0;
        int64_t end = kv_clock_ns();
        int phase = x->be->after_failure(x) ? DRV_AFTER : DRV_BEFORE;
        double t = drv_run_time(m, end);
        m->ops++;
        m->failed_ops += failed;
        m->failed_kind[op.kind] += failed;
        hist_record(&m->lat[op.kind][phase], (uint64_t)(end - start));
        drv_add_bin(m, t, op.kind, failed, s->bin_s);
        if (x->be->tick) x->be->tick(x, t, !failed && is_write(op.kind));
        progress(x, t, &next_progress);
    }
    if (x->be->end) x->be->end(x);
    m->run_s = drv_run_time(m, kv_clock_ns());
    free(val);
}
