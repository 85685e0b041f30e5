/*
 * inproc.c -- the in-process form: a rank kills itself at its scheduled point.
 *
 * kvi_inproc_start keeps only this rank's events, split into an ops queue
 * and a time queue, each in firing order.  The handle caches the next ops
 * threshold and the next absolute wall-clock time, so kvi_inproc_tick costs
 * one compare on the operation count and one on a countdown when nothing is
 * due; it reads the clock only every TIME_CHECK_EVERY ticks, which bounds a
 * time event's lateness to that many operations (time events are exact in
 * the external form, kv_inject, which sleeps on the clock instead).
 * Firing = kvi_log_kill, then kill(getpid(), signal): with SIGKILL the call
 * never returns; with SIGSTOP it returns when someone sends SIGCONT.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_int.h"

/* Clock reads are ~20-50 ns (vDSO); one every 64 operations keeps a tick
 * well under a nanosecond on average. */
#define TIME_CHECK_EVERY 64

struct kvi_inproc {
    kvi_event *ops_ev, *time_ev;   /* this rank's events, in firing order */
    int nops, ntime, next_op, next_time;
    long long next_ops;            /* LLONG_MAX when none left */
    double next_abs;               /* wall clock; HUGE_VAL when none left */
    int countdown;                 /* ticks until the next clock read */
    double start;
    char host[KVI_HOST_MAX];
    char *log_path;
};

static void refresh(kvi_inproc *p) {
    p->next_ops = p->next_op < p->nops ? p->ops_ev[p->next_op].at_ops : LLONG_MAX;
    p->next_abs = p->next_time < p->ntime ? p->start + p->time_ev[p->next_time].at_time_s
                                          : HUGE_VAL;
    /* No time event: the countdown never reaches the clock read again. */
    p->countdown = isinf(p->next_abs) ? INT_MAX : TIME_CHECK_EVERY;
}

static int split_events(kvi_inproc *p, const kvi_schedule *s, int my_rank) {
    int n = 0;
    for (int i = 0; i < s->nevents; i++) n += s->events[i].rank == my_rank;
    p->ops_ev = calloc((size_t)n + 1, sizeof *p->ops_ev);
    p->time_ev = calloc((size_t)n + 1, sizeof *p->time_ev);
    if (!p->ops_ev || !p->time_ev) return -1;
    /* Schedules are in firing order per kind already (moments accumulate). */
    for (int i = 0; i < s->nevents; i++) {
        const kvi_event *e = &s->events[i];
        if (e->rank != my_rank) continue;
        if (e->kind == KVI_AT_OPS) p->ops_ev[p->nops++] = *e;
        else p->time_ev[p->ntime++] = *e;
    }
    return 0;
}

kvi_inproc *kvi_inproc_start(const kvi_schedule *s, int my_rank, double run_start_wallclock,
                             const char *log_path) {
    if (!s || (s->nevents > 0 && !s->events) || my_rank < 0) {
        errno = EINVAL;
        return NULL;
    }
    kvi_inproc *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->start = run_start_wallclock;
    if (kvi_hostname(p->host, sizeof p->host) != 0) p->host[0] = '\0';
    if (split_events(p, s, my_rank) != 0 || (log_path && !(p->log_path = strdup(log_path)))) {
        kvi_inproc_free(p);
        errno = ENOMEM;
        return NULL;
    }
    refresh(p);
    return p;
}

static void fire(kvi_inproc *p, const kvi_event *ev) {
    int pid = (int)getpid();
    if (p->log_path && kvi_log_kill(p->log_path, ev, pid, p->host, NULL) != 0)
        fprintf(stderr, "kvi_inproc: rank %d: cannot log the kill to %s (%s); killing anyway\n",
                ev->rank, p->log_path, strerror(errno));
    kill(pid, ev->signal);
}

static void fire_ops(kvi_inproc *p, long long ops_done) {
    while (p->next_op < p->nops && p->ops_ev[p->next_op].at_ops <= ops_done)
        fire(p, &p->ops_ev[p->next_op++]);
    refresh(p);
}

static void check_time(kvi_inproc *p) {
    while (p->next_time < p->ntime && kvi_now() >= p->next_abs) {
        fire(p, &p->time_ev[p->next_time++]);
        refresh(p);
    }
    refresh(p);
}

void kvi_inproc_tick(kvi_inproc *p, long long ops_done) {
    if (!p) return;
    if (ops_done >= p->next_ops) fire_ops(p, ops_done);
    if (--p->countdown <= 0) check_time(p);
}

int kvi_inproc_pending(const kvi_inproc *p) {
    return p ? (p->nops - p->next_op) + (p->ntime - p->next_time) : 0;
}

void kvi_inproc_free(kvi_inproc *p) {
    if (!p) return;
    free(p->ops_ev);
    free(p->time_ev);
    free(p->log_path);
    free(p);
}
