/*
 * runtime.c -- the worker loop of one rank, polling, and termination.
 *
 * A rank with tasks runs them 16 at a time (depth first: pop, run, push
 * the children), and between batches, at most every millisecond, polls:
 * the store's failure detection (kv_poll), its bell (steal.c answers
 * thieves) and the control key (the end; checkpoints of variant
 * checkpoint-restart).  Every checkpoint_ms it commits its state
 * (state.c).  A rank without tasks commits itself idle, steals, and sleeps
 * 100 us between rounds (the ranks may share cores).  The leader (the
 * lowest live rank) detects the end when idle: two scans of every head
 * that find the same commits, every undead head idle, no loot in transit
 * and no dead rank unadopted.  Heads change only by their owner's commits,
 * so equal commit numbers in both scans mean that at the instant between
 * them no rank had work and none was in transit: work only comes from
 * work, so none can appear again; the leader writes done to the control
 * key.  Any kv_ call interrupted by a failure sends the loop to recover.c
 * before it goes on.
 */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "ta_int.h"

#define TA_POLL_NS 1000000LL   /* poll at most every 1 ms */
#define TA_TERM_NS 5000000LL   /* the leader's test for the end at most every 5 ms */
#define TA_BATCH 16


static const char *const point_names[] = {
#define TA_POINT_NAME_(id, name, what) name,
    TA_POINTS(TA_POINT_NAME_)
#undef TA_POINT_NAME_
};

int ta_fatal(ta_rt *rt, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "taskapp: rank %d: %s\n", rt->me, msg);
    return TA_FATAL;
}

/* A scheduled victim with workload.kill_point=NAME dies here (the injector
 * is ticked only at that point, with the tasks done so far). */
void ta_point(ta_rt *rt, enum ta_point pt) {
    if (!rt->point_only || strcmp(rt->p->kill_point, point_names[pt]) || !rt->x->be->tick) return;
    /* NAME:RANK: RANK dies the first time it gets here, whatever its task
     * count (its event counts tasks; the offset makes any count due). */
    long long far = rt->p->kill_rank >= 0 ? 1000000000LL : 0;
    rt->x->m->ops += far;
    rt->x->be->tick(rt->x, drv_run_time(rt->x->m, kv_clock_ns()), 0);
    rt->x->m->ops -= far;
}

int ta_leader(const ta_rt *rt) {
    for (int i = 0; i < rt->nids; i++)
        if (rt->live[i]) return i == rt->me;
    return 0;
}

int ta_put_ctl(ta_rt *rt, int64_t ckpt, int64_t done) {
    ta_ctl c = {ckpt, done, rt->first_start_wall_ns, rt->x->m->run_start_wall_ns};
    return ta_kv_put(rt, &c, sizeof c, TA_KEY_CTL);
}

/* Checkpoint-restart: commit the current state, then the collective
 * checkpoint, so its cut holds every rank's state as it entered. */
static int checkpoint(ta_rt *rt) {
    int rc = ta_commit_now(rt, rt->q.n == 0);
    if (rc != TA_OK) return rc;
    drv_ckpt_take(rt->kv, rt->x->m);
    rt->ckpt_seen++;
    rt->st.checkpoints++;
    return TA_OK;
}

/* The control key: the end, and (checkpoint-restart) checkpoints.  The
 * leader announces checkpoint c before it enters kv_checkpoint, and the
 * end only between checkpoints, so every rank takes the same ones.  now:
 * kv_clock_ns(). */
static int control(ta_rt *rt, int64_t now) {
    ta_ctl c;
    size_t len;
    int rc = ta_kv_get(rt, &c, sizeof c, &len, TA_KEY_CTL);
    if (rc == TA_ABSENT) return TA_OK;
    if (rc != TA_OK) return rc;
    if (c.done) return TA_DONE;
    if (!rt->ckpt_restart) return TA_OK;
    if (c.ckpt > rt->ckpt_seen) return checkpoint(rt);
    double every = rt->x->s->checkpoint_s;
    if (ta_leader(rt) && every > 0 && now >= rt->next_ckpt) {
        rt->next_ckpt = now + (int64_t)(every * 1e9);
        if ((rc = ta_put_ctl(rt, rt->ckpt_seen + 1, 0)) != TA_OK) return rc;
        return checkpoint(rt);
    }
    return TA_OK;
}

int ta_poll(ta_rt *rt) {
    int rc = ta_kv_status(rt, kv_poll(rt->kv), "kv_poll");
    if (rc == TA_OK) rc = ta_serve(rt);
    if (rc == TA_OK) rc = control(rt, kv_clock_ns());
    return rc;
}

static int work(ta_rt *rt) {
    drv_ctx *x = rt->x;
    for (int i = 0; i < TA_BATCH; i++) {
        ta_task t;
        if (!ta_queue_pop(&rt->q, &t)) break;
        if (rt->p->app->run(rt->p, &t, &rt->q, rt->res)) return ta_fatal(rt, "out of memory");
        rt->counted++;
        rt->counts->executed++;
        x->m->ops++;
        double at = drv_run_time(x->m, kv_clock_ns());
        drv_add_bin(x->m, at, -1, 0, x->s->bin_s);
        if (!rt->point_only && x->be->tick) x->be->tick(x, at, 0);
    }
    int64_t now = kv_clock_ns();
    int rc = TA_OK;
    if (now >= rt->next_poll) {
        rt->next_poll = now + TA_POLL_NS;
        if ((rc = ta_poll(rt)) != TA_OK) return rc;
    }
    if (rt->p->checkpoint_ms > 0 && now - rt->last_commit >= (int64_t)(rt->p->checkpoint_ms * 1e6))
        rc = ta_commit_now(rt, 0);
    return rc;
}

static int scan(ta_rt *rt, ta_head *h) {
    for (int id = 0; id < rt->nids; id++) {
        int rc = ta_head_read(rt, id, &h[id]);
        if (rc != TA_OK) return rc;
    }
    return TA_OK;
}

/* The leader's test for the end (see the top of this file). */
static int finished(ta_rt *rt) {
    static ta_head a[TA_MAX_IDS], b[TA_MAX_IDS];
    int rc = scan(rt, a);
    if (rc == TA_OK) rc = scan(rt, b);
    if (rc != TA_OK) return rc;
    uint8_t covered[TA_MAX_IDS] = {0};
    for (int id = 0; id < rt->nids; id++) {
        if (a[id].seq != b[id].seq) return TA_OK;
        for (int i = 0; i < rt->nids; i++) covered[i] |= b[id].adopted[i];
    }
    for (int id = 0; id < rt->nids; id++) {
        if (!rt->ever[id] || covered[id]) continue;
        if (!rt->live[id] || !(b[id].flags & TA_IDLE)) return TA_OK;
        for (int t = 0; t < rt->nids; t++) {
            if (b[t].claimed[id] > b[id].given[t])  /* a loot claimed that was never given */
                return ta_fatal(rt, "rank %d claimed loot %u from rank %d, which gave %u", t, b[t].claimed[id],
                                id, b[id].given[t]);
            if (b[id].given[t] != b[t].claimed[id]) return TA_OK;
        }
    }
    rc = ta_put_ctl(rt, rt->ckpt_seen, 1);
    return rc == TA_OK ? TA_DONE : rc;
}

static int idle(ta_rt *rt) {
    int64_t now = kv_clock_ns();
    if (!rt->idle_since) rt->idle_since = now;
    if (!rt->point_only && rt->x->be->tick)  /* time events */
        rt->x->be->tick(rt->x, drv_run_time(rt->x->m, now), 0);
    int rc = rt->idle_committed ? TA_OK : ta_commit_now(rt, 1);
    if (rc == TA_OK) rc = ta_poll(rt);
    if (rc == TA_OK) rc = ta_steal(rt);
    if (rc == TA_OK && rt->q.n == 0 && ta_leader(rt) && now >= rt->next_term) {
        rt->next_term = now + TA_TERM_NS;
        rc = finished(rt);
    }
    if (rt->q.n > 0 || rc != TA_OK) {
        rt->st.idle_s += (double)(kv_clock_ns() - rt->idle_since) * 1e-9;
        rt->idle_since = 0;
        return rc;
    }
    nanosleep(&(struct timespec){0, 100000}, NULL);
    return TA_OK;
}

int ta_run(ta_rt *rt) {
    int rc = rt->recoveries < kv_recovery_count(rt->kv) ? TA_RECOVER : TA_OK;
    if (rt->restored && (rc = ta_restart(rt)) != TA_OK) return rc;  /* checkpoint-restart */
    while (rc != TA_DONE && rc != TA_FATAL) {
        if (rc == TA_RECOVER || rt->recoveries != kv_recovery_count(rt->kv)) {
            if ((rc = ta_recover(rt)) != TA_OK) continue;
        }
        rc = rt->q.n ? work(rt) : idle(rt);
    }
    if (rt->idle_since) rt->st.idle_s += (double)(kv_clock_ns() - rt->idle_since) * 1e-9;
    return rc;
}
