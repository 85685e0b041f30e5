/*
 * run.c -- load and run phases on one rank, and what they measure.
 *
 * Load: this rank's share of the records (wl_load_begin..end), each with
 * the value wl_make_value gives, so any reader can check it.  Run: the
 * rank's operation stream from wl_next, closed loop or open loop (an
 * operation waits for its intended start, and its latency counts from
 * there: queueing is not hidden).  An operation interrupted by a failure
 * (KV_ERR_INTERRUPTED: recovery already ran) is retried and counted as
 * retried; one that still fails is counted as failed.  Latencies go to
 * log-linear histograms per kind, before and after the first recovery;
 * completions go to timeline bins.  The in-process injector is ticked
 * with the operation count after every operation.
 */
#include <papi.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define DRV_RETRIES 10

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

static int with_retry(kv_store *kv, drv_rank *m, int (*fn)(kv_store *, void *), void *arg) {
    int rc = fn(kv, arg);
    for (int i = 0; rc == KV_ERR_INTERRUPTED && i < DRV_RETRIES; i++) {
        m->retried_ops++;
        rc = fn(kv, arg);
    }
    return rc;
}

typedef struct drv_call {
    const char *key;
    size_t klen;
    unsigned char *val;
    size_t vlen, cap;
    size_t got;
} drv_call;

static int call_put(kv_store *kv, void *a) {
    drv_call *c = a;
    return kv_put(kv, c->key, c->klen, c->val, c->vlen);
}

static int call_get(kv_store *kv, void *a) {
    drv_call *c = a;
    return kv_get(kv, c->key, c->klen, c->val, c->cap, &c->got);
}

static bool ok_rc(int rc) { return rc == KV_OK || rc == KV_WARN_DEGRADED; }

int drv_load(kv_store *kv, const drv_settings *s, drv_rank *m) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int members = size - s->store.spares;
    wl_gen *g = wl_gen_new(&s->work, rank, members);
    unsigned char *val = malloc((size_t)s->work.value_max + 1);
    char key[WL_KEY_MAX + 1];
    if (!g || !val) return KV_ERR_NOMEM;
    double t0 = kv_wtime();
    int rc = KV_OK;
    for (uint64_t r = wl_load_begin(&s->work, rank, members); r < wl_load_end(&s->work, rank, members); r++) {
        drv_call c = {key, wl_key(&s->work, r, key, sizeof key), val, wl_load_value_len(&s->work, r), 0, 0};
        wl_make_value(g, r, 0, val, c.vlen);
        rc = with_retry(kv, m, call_put, &c);
        if (!ok_rc(rc)) break;
    }
    m->load_s = kv_wtime() - t0;
    free(val);
    wl_gen_free(g);
    return ok_rc(rc) ? KV_OK : rc;
}

void drv_add_bin(drv_rank *m, double t, int kind, bool failed, double bin_s) {  /* also redis.c */
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
    else m->bins[b].writes++;
    if (failed) m->bins[b].failed++;
}

/* One get, checked; returns the status. */
static int do_read(kv_store *kv, const drv_settings *s, drv_rank *m, wl_gen *g, uint64_t rec,
                   drv_call *c) {
    int rc = with_retry(kv, m, call_get, c);
    if (rc == KV_ERR_NOT_FOUND) m->not_found++;
    if (rc == KV_OK && s->verify && wl_check_value(g, rec, c->val, c->got, NULL) == 0) m->verify_errors++;
    return rc == KV_ERR_NOT_FOUND ? KV_OK : rc;
}

static int do_op(kv_store *kv, const drv_settings *s, drv_rank *m, wl_gen *g, const wl_op *op,
                 unsigned char *val, size_t cap) {
    char key[WL_KEY_MAX + 1];
    drv_call c = {op->key, op->key_len, val, op->value_len, cap, 0};
    int rc = KV_OK;
    switch (op->kind) {
    case WL_READ: return do_read(kv, s, m, g, op->record, &c);
    case WL_SCAN:
        for (uint32_t i = 0; i < op->scan_len && ok_rc(rc); i++) {
            c.key = key;
            c.klen = wl_key(&s->work, op->record + i, key, sizeof key);
            rc = do_read(kv, s, m, g, op->record + i, &c);
        }
        return rc;
    case WL_RMW:
        rc = do_read(kv, s, m, g, op->record, &c);
        if (!ok_rc(rc)) return rc;
        c.vlen = op->value_len;
        /* write the new value */
        __attribute__((fallthrough));
    default:
        wl_make_value(g, op->record, op->seq + 1, val, op->value_len);
        return with_retry(kv, m, call_put, &c);
    }
}

static void wait_until(kv_store *kv, double t) {
    double last = 0;
    for (double now = kv_wtime(); now < t; now = kv_wtime())
        if (now - last > 1e-4) {  /* keep serving failure detection while idle */
            kv_poll(kv);
            last = now;
        }
}

static void progress(const drv_settings *s, drv_rank *m, kv_store *kv, double now, double *next) {
    if (!s->progress || now < *next) return;
    *next = now + 1.0;
    double t = now - m->run_start;
    fprintf(stderr, "[run %s] %6.1f s  %lld ops on rank 0 (%.0f ops/s)  recoveries %d\n", s->run_id, t,
            m->ops, t > 0 ? m->ops / t : 0.0, kv_recovery_count(kv));
}

int drv_run(kv_store *kv, const drv_settings *s, drv_rank *m, kvi_inproc *inj) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int members = size - s->store.spares;
    wl_gen *g = wl_gen_new(&s->work, rank < members ? rank : rank % members, members);
    size_t cap = (size_t)s->work.value_max + 1;
    unsigned char *val = malloc(cap);
    if (!g || !val) return KV_ERR_NOMEM;
    for (int k = 0; k < WL_NKINDS; k++)
        for (int p = 0; p < DRV_NPHASES; p++) hist_init(&m->lat[k][p]);
    double next_progress = rank == 0 ? m->run_start + 1.0 : 1e300;
    wl_op op;
    while (wl_next(g, &op)) {
        double start = kv_wtime();
        if (s->work.duration_s > 0 && start - m->run_start >= s->work.duration_s) break;
        if (op.intended_s >= 0) {
            wait_until(kv, m->run_start + op.intended_s);
            start = m->run_start + op.intended_s;  /* latency from the intended start */
        }
        int rc = do_op(kv, s, m, g, &op, val, cap);
        double end = kv_wtime();
        if (ok_rc(rc) && op.kind != WL_READ && op.kind != WL_SCAN) drv_ckpt_ack();
        drv_ckpt_tick(kv, s, m, end);
        int phase = kv_recovery_count(kv) > 0 ? DRV_AFTER : DRV_BEFORE;
        bool failed = !ok_rc(rc);
        m->ops++;
        m->failed_ops += failed;
        hist_record(&m->lat[op.kind][phase], (uint64_t)((end - start) * 1e9));
        drv_add_bin(m, end - m->run_start, op.kind, failed, s->bin_s);
        if (inj) kvi_inproc_tick(inj, m->ops);
        progress(s, m, kv, end, &next_progress);
    }
    drv_ckpt_finish(kv, s, m);
    m->run_s = kv_wtime() - m->run_start;
    free(val);
    wl_gen_free(g);
    return KV_OK;
}
