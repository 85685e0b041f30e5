/*
 * schedule.c -- drawing a kill schedule from a spec, and writing it as CSV.
 *
 * The draws come from our own xoshiro256** generator seeded through
 * splitmix64, so a seed gives the same victims on every machine (times go
 * through libm's log/pow/tgamma; with %.6f output they print the same).
 * Victims are drawn first (a partial Fisher-Yates shuffle of the eligible
 * ranks), then the moments: inter-failure times by inverse CDF,
 * -MTBF*ln(U) for exponential and scale*(-ln U)^(1/shape) for Weibull with
 * scale = MTBF / Gamma(1 + 1/shape), accumulated over the events.  A node
 * target draws nodes instead (the distinct hosts of the rank table, in the
 * order of their lowest rank), one per event, and lists for each the
 * node's daemon processes, then its ranks.  Before anything is returned
 * the schedule is checked against what the store can survive
 * (max_simultaneous at once, nranks-1 in total) unless forced.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject_int.h"

/* ---- PRNG ----------------------------------------------------------------- */

/* Top 53 bits, centred in their interval: never 0, never 1 (ln stays finite). */
double kvi__rng_open01(kvi_rng *r) {
    return ((double)(kvu_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Rejecting the 2^64 mod n lowest values (computed as (2^64 - n) % n)
 * leaves a whole number of copies of [0, n): x % n is exactly uniform. */
uint64_t kvi__rng_below(kvi_rng *r, uint64_t n) {
    uint64_t reject = (0 - n) % n, x;
    do x = kvu_rng_next(r); while (x < reject);
    return x % n;
}

/* ---- victims -------------------------------------------------------------- */

/* idx[r] = position of rank r in ranks[]; each rank 0..n-1 exactly once. */
static int index_ranks(const kvi_rank_info *ranks, int n, int *idx, char *err, size_t len) {
    for (int r = 0; r < n; r++) idx[r] = -1;
    for (int i = 0; i < n; i++) {
        int r = ranks[i].rank;
        if (r < 0 || r >= n || idx[r] >= 0)
            return kvu_fail(err, len, "ranks: the rank table must hold ranks 0..%d once "
                             "each (entry %d is rank %d)", n - 1, i, r);
        idx[r] = i;
    }
    return 0;
}

static int check_rank0(const kvi_spec *s, const int *victims, int n, char *err, size_t len) {
    for (int i = 0; i < n && !s->allow_rank0; i++)
        if (victims[i] == 0)
            return kvu_fail(err, len, "target: rank 0 would be killed, but rank 0 coordinates "
                             "the driver's output; set allow_rank0=1 to allow it");
    return 0;
}

/* target=ranks: or target=host:  -> victims[], *n. */
static int pick_fixed(const kvi_spec *s, const kvi_rank_info *ranks, int nranks,
                      const int *idx, int *victims, int *n, char *err, size_t len) {
    *n = 0;
    if (s->target == KVI_TARGET_RANKS) {
        for (int i = 0; i < s->nlisted; i++) {
            if (s->listed[i] >= nranks)
                return kvu_fail(err, len, "target: rank %d does not exist (%d ranks)",
                                 s->listed[i], nranks);
            victims[(*n)++] = s->listed[i];
        }
    } else {
        for (int r = 0; r < nranks; r++)
            if (strcmp(ranks[idx[r]].host, s->host) == 0) victims[(*n)++] = r;
        if (*n == 0)
            return kvu_fail(err, len, "target: no rank runs on host '%s' (rank 0 is on '%s')",
                             s->host, ranks[idx[0]].host);
    }
    return check_rank0(s, victims, *n, err, len);
}

/* target=random:K -> count*K distinct victims, rank 0 only if allowed. */
static int pick_random(const kvi_spec *s, kvi_rng *rng, int nranks, int *victims, int *n,
                       char *err, size_t len) {
    int first = s->allow_rank0 ? 0 : 1, m = nranks - first;
    long long need = (long long)s->random_k * s->count;
    if (need > m)
        return kvu_fail(err, len, "target: random:%d x count=%d needs %lld distinct victims "
                         "but only %d ranks are eligible%s", s->random_k, s->count, need, m,
                         first ? " (rank 0 is never drawn unless allow_rank0=1)" : "");
    int *pool = malloc((size_t)m * sizeof *pool);
    if (!pool) return kvu_fail(err, len, "schedule: out of memory");
    for (int i = 0; i < m; i++) pool[i] = first + i;
    for (int i = 0; i < need; i++) {
        int j = i + (int)kvi__rng_below(rng, (uint64_t)(m - i));
        int t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        victims[i] = pool[i];
    }
    free(pool);
    *n = (int)need;
    return 0;
}

/* What the store survives, unless force=1 (a straggler, for=, loses
 * nothing: no limit). */
static int check_limits(const kvi_spec *s, int at_once, int total, int nranks, int max_sim,
                        char *err, size_t len) {
    if (s->force || kvi__straggler(s)) return 0;
    if (at_once > max_sim)
        return kvu_fail(err, len, "target: %d ranks would die at once but the store survives "
                         "at most %d simultaneous losses (max_simultaneous); set force=1 to "
                         "run it anyway, or spread=spread", at_once, max_sim);
    if (total > nranks - 1)
        return kvu_fail(err, len, "target: %d victims of %d ranks would leave no survivor; "
                         "set force=1 to run it anyway", total, nranks);
    return 0;
}

/* ---- moments -------------------------------------------------------------- */

double kvi__draw_gap(const kvi_spec *s, kvi_rng *rng) {
    double u = kvi__rng_open01(rng);
    if (s->when == KVI_WHEN_EXP) return -s->mtbf_s * log(u);
    double scale = s->mtbf_s / tgamma(1.0 + 1.0 / s->shape);
    return scale * pow(-log(u), 1.0 / s->shape);
}

/* Moment of failure event e (0-based); *t accumulates the drawn times
 * (for a trace the caller sets it to the event's time). */
void kvi__set_moment(const kvi_spec *s, kvi_rng *rng, int e, double *t, kvi_event *ev) {
    memset(ev, 0, sizeof *ev);   /* whole, padding too: equal schedules compare equal */
    ev->at_ops = -1;
    ev->at_time_s = -1;
    ev->resume_s = kvi__can_end(s->signal) ? s->for_s : 0;
    ev->end_signal = ev->resume_s > 0 ? kvi__end_signal(s->signal, KVI_ROLE_RANK) : 0;
    if (s->when == KVI_WHEN_OPS) {
        ev->kind = KVI_AT_OPS;
        ev->at_ops = (long long)(e + 1) * s->ops;
        return;
    }
    ev->kind = KVI_AT_TIME;
    if (e > 0 && s->cascade_s > 0) *t += s->cascade_s;   /* a cascade: the gap is fixed */
    else if (s->when == KVI_WHEN_TIME) *t = (e + 1) * s->time_s;
    else if (s->when != KVI_WHEN_TRACE) *t += kvi__draw_gap(s, rng);
    ev->at_time_s = *t;
}

static int fill_events(const kvi_spec *s, kvi_rng *rng, const kvi_rank_info *ranks,
                       const int *idx, const int *victims, int total, int per_event,
                       kvi_schedule *out, char *err, size_t len) {
    int at_once = s->spread ? 1 : per_event, nev = total / at_once;
    if (s->when == KVI_WHEN_OPS && s->ops > 0 && nev > LLONG_MAX / s->ops)
        return kvu_fail(err, len, "when: ops:%lld x %d events overflows", s->ops, nev);
    out->events = calloc((size_t)total, sizeof *out->events);
    if (!out->events) return kvu_fail(err, len, "schedule: out of memory");
    double t = 0;
    for (int e = 0; e < nev; e++) {
        kvi_event moment;
        kvi__set_moment(s, rng, e, &t, &moment);
        for (int j = 0; j < at_once; j++) {
            kvi_event *ev = &out->events[e * at_once + j];
            const kvi_rank_info *ri = &ranks[idx[victims[e * at_once + j]]];
            *ev = moment;
            ev->index = e;
            ev->rank = ri->rank;
            ev->pid = ri->pid;
            ev->role = KVI_ROLE_RANK;
            ev->by_rank = ri->rank;
            snprintf(ev->host, sizeof ev->host, "%s", ri->host);
            ev->signal = s->signal;
        }
    }
    out->nevents = total;
    return 0;
}

static int per_event_victims(const kvi_spec *s, const kvi_rank_info *ranks, int nranks,
                             const int *idx) {
    if (s->target == KVI_TARGET_RANDOM) return s->random_k;
    if (s->target == KVI_TARGET_RANKS) return s->nlisted;
    int n = 0;
    for (int r = 0; r < nranks; r++) n += strcmp(ranks[idx[r]].host, s->host) == 0;
    return n;
}

/* A spec built by hand, not by kvi_spec_parse, gets the parser's limits here. */
static int check_spec(const kvi_spec *s, char *err, size_t len) {
    int node_only = s->signal == KVI_LINK_DOWN || s->signal == KVI_VANISH || s->signal == KVI_LINK_SLOW;
    if (strcmp(kvi_signal_name(s->signal), "?") == 0 || s->signal == SIGCONT ||
        s->signal == KVI_LINK_UP || (node_only && (s->target != KVI_TARGET_NODE || s->daemon_only)))
        return kvu_fail(err, len, "signal: %d is not KILL, TERM, SEGV, STOP, or LINK or VANISH "
                        "(a node target's)", s->signal);
    if (!(s->for_s >= 0) || (s->for_s > 0 && !kvi__can_end(s->signal)) ||
        (s->signal == KVI_VANISH && !(s->for_s > 0)))
        return kvu_fail(err, len, "for: %g is invalid (a fault's length, with signal=STOP, "
                        "LINK or VANISH only; VANISH needs one)", s->for_s);
    if ((s->target == KVI_TARGET_RANKS && (s->nlisted < 1 || s->nlisted > KVI_MAX_LISTED)) ||
        (s->target == KVI_TARGET_RANDOM && s->random_k < 1) ||
        (s->target == KVI_TARGET_HOST && !kvi__valid_host(s->host)) ||
        (s->target == KVI_TARGET_NODE && !s->node_random && !kvi__valid_host(s->host)) ||
        (s->daemon_only && s->target != KVI_TARGET_NODE) ||
        s->node_k < 1 || (s->node_k > 1 && !(s->target == KVI_TARGET_NODE && s->node_random)) ||
        (unsigned)s->target > KVI_TARGET_NODE)
        return kvu_fail(err, len, "target: invalid in the spec structure");
    if ((s->when == KVI_WHEN_OPS && s->ops < 0) ||
        (s->when == KVI_WHEN_TIME && !(s->time_s >= 0)) ||
        ((s->when == KVI_WHEN_EXP || s->when == KVI_WHEN_WEIBULL) && !(s->mtbf_s > 0)) ||
        (s->when == KVI_WHEN_WEIBULL && !(s->shape >= 0.1 && s->shape <= 100)) ||
        (s->when == KVI_WHEN_TRACE && (!s->trace[0] || !(s->scale > 0) || s->target != KVI_TARGET_NODE ||
                                       !s->node_random)) ||
        !(s->cascade_s >= 0) || (s->cascade_s > 0 && s->when == KVI_WHEN_OPS) ||
        (unsigned)s->when > KVI_WHEN_TRACE)
        return kvu_fail(err, len, "when: invalid in the spec structure");
    int drawn = s->target == KVI_TARGET_RANDOM || (s->target == KVI_TARGET_NODE && s->node_random);
    if (s->count < (s->when == KVI_WHEN_TRACE ? 0 : 1) || (s->count > 1 && !drawn))
        return kvu_fail(err, len, "count: %d is invalid for this target", s->count);
    return 0;
}

static int build(const kvi_spec *s, const kvi_rank_info *ranks, int nranks, int max_sim,
                 int *idx, int *victims, kvi_schedule *out, char *err, size_t len) {
    kvi_rng rng;
    int total = 0;
    kvu_rng_seed(&rng, s->seed);
    if (check_spec(s, err, len) || index_ranks(ranks, nranks, idx, err, len)) return -1;
    if (s->target == KVI_TARGET_NODE)
        return kvi__build_node_loss(s, &rng, ranks, nranks, idx, max_sim, out, err, len);
    int rc = s->target == KVI_TARGET_RANDOM
                 ? pick_random(s, &rng, nranks, victims, &total, err, len)
                 : pick_fixed(s, ranks, nranks, idx, victims, &total, err, len);
    if (rc) return -1;
    int per_event = per_event_victims(s, ranks, nranks, idx);
    if (check_limits(s, s->spread ? 1 : per_event, total, nranks, max_sim, err, len))
        return -1;
    return fill_events(s, &rng, ranks, idx, victims, total, per_event, out, err, len);
}

int kvi_schedule_build(const kvi_spec *spec, const kvi_rank_info *ranks, int nranks,
                       int max_simultaneous, kvi_schedule *out, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!out) return kvu_fail(err, errlen, "schedule: no output");
    memset(out, 0, sizeof *out);
    if (!spec || !ranks || nranks < 1)
        return kvu_fail(err, errlen, "ranks: need a spec and a table of at least one rank");
    if (max_simultaneous < 0)
        return kvu_fail(err, errlen, "max_simultaneous: %d is negative", max_simultaneous);
    out->seed = spec->seed;
    /* victims: at most nranks (they are distinct ranks). */
    int *idx = malloc((size_t)nranks * sizeof *idx);
    int *victims = malloc((size_t)nranks * sizeof *victims);
    int rc = idx && victims ? build(spec, ranks, nranks, max_simultaneous, idx, victims, out,
                                    err, errlen)
                            : kvu_fail(err, errlen, "schedule: out of memory");
    free(idx);
    free(victims);
    if (rc) kvi_schedule_free(out);
    return rc;
}

/* ---- output --------------------------------------------------------------- */

int kvi_schedule_write_csv(const kvi_schedule *s, FILE *f) {
    if (!s || !f) return -1;
    fprintf(f, "event,target_rank,pid,host,signal,when_kind,at_ops,at_time_s,role,for_s\n");
    for (int i = 0; i < s->nevents; i++) {
        const kvi_event *e = &s->events[i];
        fprintf(f, "%d,%d,%d,%s,%s,", e->index, e->rank, e->pid, e->host,
                kvi_signal_name(e->signal));
        if (e->kind == KVI_AT_OPS) fprintf(f, "ops,%lld,", e->at_ops);
        else fprintf(f, "time,,%.6f", e->at_time_s);
        fprintf(f, ",%s,", kvi_role_name(e->role));
        if (e->resume_s > 0) fprintf(f, "%.6f", e->resume_s);
        fprintf(f, "\n");
    }
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

void kvi_schedule_free(kvi_schedule *s) {
    if (!s) return;
    free(s->events);
    s->events = NULL;
    s->nevents = 0;
}
