/*
 * inproc.c -- the in-process form: a rank kills itself at its scheduled point.
 *
 * kvi_inproc_start keeps only this rank's events, split into an ops queue
 * and a time queue, each in firing order.  The handle caches the next ops
 * threshold and the next absolute wall-clock time, so kvi_inproc_tick costs
 * one compare on the operation count and one on a countdown when nothing is
 * due; it reads the clock every TIME_CHECK_EVERY ticks, or more often when
 * operations are slow (the interval halves while reads are more than
 * LATE_S apart, and doubles back while they are less than half of it),
 * which bounds a time event's lateness to 64 fast operations or about two
 * slow ones (time events are exact in the external form, kv_inject, which
 * sleeps on the clock).
 * A rank carries out the events whose by_rank it is: its own death, or a
 * whole node loss (the node's daemon processes and other ranks, whose
 * pids the schedule got from the rank table).  The events of one failure
 * event fire together through kvi_kill_group (one logged write, then
 * consecutive kill(2) calls), this process last: with SIGKILL the call
 * never returns; with SIGSTOP it returns when someone sends SIGCONT.  A
 * straggler's stop (resume_s > 0) is that someone: a /bin/sh started with
 * posix_spawn before the signals sleeps resume_s and continues every
 * victim (posix_spawn, not fork: a forked copy of a rank would share its
 * pages copy-on-write, which breaks memory registered with an InfiniBand
 * NIC); the CONT lines are logged when this process runs again.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_int.h"

/* Clock reads are ~20-50 ns (vDSO); one every 64 operations keeps a tick
 * well under a nanosecond on average.  Slow operations (across hosts:
 * milliseconds each) get a read every one or two of them. */
#define TIME_CHECK_EVERY 64
#define LATE_S 1e-3

struct kvi_inproc {
    kvi_event *ops_ev, *time_ev;   /* this rank's events, in firing order */
    int nops, ntime, next_op, next_time;
    long long next_ops;            /* LLONG_MAX when none left */
    double next_abs;               /* wall clock; HUGE_VAL when none left */
    int countdown;                 /* ticks until the next clock read */
    int every;                     /* ticks between clock reads */
    double last_read;              /* wall clock at the last read */
    double start;
    char host[KVI_HOST_MAX];
    char *log_path;
};

static void refresh(kvi_inproc *p) {
    p->next_ops = p->next_op < p->nops ? p->ops_ev[p->next_op].at_ops : LLONG_MAX;
    p->next_abs = p->next_time < p->ntime ? p->start + p->time_ev[p->next_time].at_time_s
                                          : HUGE_VAL;
    /* No time event: the countdown never reaches the clock read again. */
    p->countdown = isinf(p->next_abs) ? INT_MAX : p->every;
}

/* After a clock read at now: twice as many ticks to the next read while
 * they take under LATE_S/2, half as many once they take over LATE_S. */
static void pace(kvi_inproc *p, double now) {
    double took = now - p->last_read;
    if (took < LATE_S / 2 && p->every < TIME_CHECK_EVERY) p->every *= 2;
    else if (took > LATE_S && p->every > 1) p->every /= 2;
    p->last_read = now;
}

static int split_events(kvi_inproc *p, const kvi_schedule *s, int my_rank) {
    int n = 0;
    for (int i = 0; i < s->nevents; i++) n += s->events[i].by_rank == my_rank;
    p->ops_ev = calloc((size_t)n + 1, sizeof *p->ops_ev);
    p->time_ev = calloc((size_t)n + 1, sizeof *p->time_ev);
    if (!p->ops_ev || !p->time_ev) return -1;
    /* Schedules are in firing order per kind already (moments accumulate). */
    for (int i = 0; i < s->nevents; i++) {
        const kvi_event *e = &s->events[i];
        if (e->by_rank != my_rank) continue;
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
    p->every = 1;   /* the first ticks measure how long an operation takes */
    p->last_read = kvi_now();
    if (kvi_hostname(p->host, sizeof p->host) != 0) p->host[0] = '\0';
    if (split_events(p, s, my_rank) != 0 || (log_path && !(p->log_path = strdup(log_path)))) {
        kvi_inproc_free(p);
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < p->nops + p->ntime; i++) {   /* a link is cut from outside */
        const kvi_event *e = i < p->nops ? &p->ops_ev[i] : &p->time_ev[i - p->nops];
        if (kvi__is_link(e->signal)) {
            kvi_inproc_free(p);
            errno = ENOTSUP;
            return NULL;
        }
    }
    refresh(p);
    return p;
}

extern char **environ;

/* A straggler's end: "sleep S; kill -CONT PIDS" in a shell of its own. */
static int spawn_resumer(const kvi_event *g, int k) {
    enum { MAXPIDS = 256 };
    char cmd[64 + 12 * MAXPIDS];   /* " PID" is 12 characters at most */
    if (k > MAXPIDS) {
        errno = E2BIG;
        return -1;
    }
    int n = snprintf(cmd, sizeof cmd, "sleep %.6f; exec kill -CONT", g[0].resume_s);
    for (int i = 0; i < k; i++)
        if (g[i].pid > 0) n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %d", g[i].pid);
    char *argv[] = {"sh", "-c", cmd, NULL};
    pid_t pid;
    return posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) == 0 ? 0 : -1;
}

/* The n events of one failure event: the others first, this process last. */
static void fire(kvi_inproc *p, const kvi_event *evs, int n) {
    kvi_event *g = malloc((size_t)n * sizeof *g);
    int *err = calloc((size_t)n, sizeof *err), k = 0, self = -1;
    if (!g || !err) {   /* no memory for the group: at least this process dies */
        kill(getpid(), evs[0].signal);
        free(g);
        free(err);
        return;
    }
    for (int i = 0; i < n; i++) {
        int me = evs[i].role == KVI_ROLE_RANK && evs[i].rank == evs[i].by_rank;
        if (me) self = i;
        else g[k++] = evs[i];
    }
    if (self >= 0) {
        g[k] = evs[self];
        g[k].pid = (int)getpid();   /* the table may not know it (pid 0) */
        if (!g[k].host[0]) snprintf(g[k].host, sizeof g[k].host, "%s", p->host);
        k++;
    }
    for (int i = 0; i < k; i++)   /* before the kills: afterwards this rank may be gone */
        if (g[i].pid <= 0)
            fprintf(stderr, "kvi_inproc: event %d: no pid for %s %d on %s: not killed\n",
                    g[i].index, kvi_role_name(g[i].role), g[i].rank, g[i].host);
    int resume = g[0].end_signal == SIGCONT;   /* a straggler (vanish is refused here) */
    if (resume && spawn_resumer(g, k) != 0) {   /* nobody would continue them: no stop */
        fprintf(stderr, "kvi_inproc: event %d: cannot start the process that would continue "
                "the stopped (%s): not stopped\n", g[0].index, strerror(errno));
        free(g);
        free(err);
        return;
    }
    /* All on this node: the schedule gave this rank its own node's kills. */
    if (kvi__kill_group(g, k, p->log_path, err, NULL, 1) < 0 && p->log_path) {
        fprintf(stderr, "kvi_inproc: rank %d: cannot log the kill to %s (%s); killing anyway\n",
                g[k - 1].by_rank, p->log_path, strerror(errno));
        kvi__kill_group(g, k, NULL, err, NULL, 1);
    }
    if (resume && self >= 0 && p->log_path) {   /* running again: the stop is over */
        for (int i = 0; i < k; i++) {
            g[i].signal = g[i].end_signal;
            err[i] = !err[i];   /* now: stopped, so continued */
        }
        if (kvi__log_lines(p->log_path, g, k, err, NULL) != 0)
            fprintf(stderr, "kvi_inproc: cannot log the end of a stop to %s: %s\n", p->log_path,
                    strerror(errno));
    }
    free(g);
    free(err);
}

/* The due events q[*next..] of one failure event (they are adjacent). */
static void fire_due_run(kvi_inproc *p, const kvi_event *q, int nq, int *next) {
    int i = *next, j = i + 1;
    while (j < nq && q[j].index == q[i].index) j++;
    *next = j;   /* before firing: a SIGSTOP'ed rank goes on after the group */
    fire(p, &q[i], j - i);
}

static void fire_ops(kvi_inproc *p, long long ops_done) {
    while (p->next_op < p->nops && p->ops_ev[p->next_op].at_ops <= ops_done)
        fire_due_run(p, p->ops_ev, p->nops, &p->next_op);
    refresh(p);
}

static void check_time(kvi_inproc *p) {
    pace(p, kvi_now());
    while (p->next_time < p->ntime && kvi_now() >= p->next_abs) {
        fire_due_run(p, p->time_ev, p->ntime, &p->next_time);
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
