/*
 * detect.c -- the failure watchdog.
 *
 * RMA in Open MPI 5.0.7 never reports a failed target (docs/facts.md), so the
 * store keeps a communicator that carries no data, with one receive from
 * MPI_ANY_SOURCE posted on it.  ULFM completes that receive with
 * MPIX_ERR_PROC_FAILED_PENDING when any member dies, or MPIX_ERR_REVOKED
 * once a survivor revoked it; MPI_Test on it also drives the progress
 * engine, which osc/sm's RMA calls never do.  The hot path tests it every
 * so many operations (kvw_maybe) and every wait loop tests it on each
 * turn past its first few spins (ops.c).  A message that arrives
 * successfully is the close signal for spares (see recover.c).
 *
 * How many: a test drives the whole progress engine, which on 4 ranks
 * sharing 2 cores cost as much as several store operations on osc/sm
 * (with a test every 64 operations bench_ftcost found YCSB B 10-12% slower
 * than without any at 4 ranks, 14-19% at 8), while over TCP one operation
 * costs more than a test.
 * So the interval is kept in time, not in operations: kvw_pace measures
 * how long the last interval took and sets the next to about poll_us of
 * operations at that pace (at most twice the last, so that a burst of
 * fast operations after a slow stretch does not postpone the test, and
 * between 1 and KVW_MAX_EVERY operations).  The time is the rank's own
 * running time (its thread's CPU clock), not the wall clock: with more
 * ranks than cores a rank waiting for the core does no operations, and
 * wall time made it test several times per poll_us of work, each test
 * yielding the core again (Open MPI yields in every idle progress call
 * when oversubscribed).  With 8 ranks on 2 cores that cost YCSB B about
 * 6-12 points of throughput in bench_ftcost; where each rank has a core
 * the two clocks agree.  A failure is then noticed at most about poll_us
 * of running time after the news arrives while the rank keeps operating
 * (a few poll_us of wall time on an oversubscribed node), and at once by
 * a rank that waits.  poll_us = 0 keeps the fixed poll_interval.
 *
 * Variant proposed needs none of this: with Open MPI's fault-tolerant RMA
 * (patches/openmpi) the RMA calls themselves return MPIX_ERR_PROC_FAILED
 * or MPIX_ERR_REVOKED, the hot path polls nothing, wait loops ask the
 * window (MPIX_Win_get_failed, MPIX_Win_is_revoked), and the alarm revokes
 * the window (variant_proposed.c).
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <time.h>

bool kvw_is_ft_error(int rc) {
    if (rc == MPI_SUCCESS) return false;
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED
#ifdef MPIX_ERR_PROC_FAILED_PENDING
           || cls == MPIX_ERR_PROC_FAILED_PENDING
#endif
        ;
}

/* Any failure known here, on the store's communicators: a failed process
 * in `all`, or `all` revoked. */
static bool kvw_failure_known(kv_store *s) {
    if (s->all == MPI_COMM_NULL) return false;
    int revoked = 0, n = 0;
    MPIX_Comm_is_revoked(s->all, &revoked);
    if (revoked) return true;
    MPI_Group g;
    if (MPIX_Comm_get_failed(s->all, &g) != MPI_SUCCESS) return false;
    MPI_Group_size(g, &n);
    MPI_Group_free(&g);
    return n > 0;
}

static bool kvw_failure_now(kv_store *s, int rc) {
    return kvw_is_ft_error(rc) || kvw_failure_known(s) || kvw_test(s);
}

/* What an MPI error means for the store.  A process failure is reported as
 * MPIX_ERR_PROC_FAILED or _REVOKED, but not always, and not always after
 * ULFM has heard of it: a non-blocking collective whose schedule a dead
 * peer aborted completes with MPI_ERR_OTHER; a window allocation that a
 * failure cut short can fail with MPI_ERR_INTERN at one member while
 * another already got MPIX_ERR_PROC_FAILED; on stock osc/rdma a put to a
 * rank that just died fails with MPI_ERR_INTERN (the transport lost the
 * peer) before the failure is known.  So any error counts as an
 * interruption when a failure is known, or becomes known within
 * failure_wait_ms (asked each millisecond; the detector test drives
 * progress).  How soon it becomes known is the MPI's detection: on the
 * test cluster a killed node was once reported 8 s late (PRRTE's
 * keepalive), and a wait of 2 s turned two interrupted writes, some of
 * whose copies were written, into KV_ERR_MPI answers; on a site whose
 * runtime detects later the wait must be set longer.  Only a genuine MPI
 * error pays the wait. */
int kvw_status(kv_store *s, int rc) {
    if (rc == MPI_SUCCESS) return KV_OK;
    struct timespec nap = {0, 1000000};
    int64_t until = kv_clock_ns() + (int64_t)(s->cfg.failure_wait_ms * 1e6);
    do {
        if (kvw_failure_now(s, rc)) {
            s->failure_pending = true;
            return KV_ERR_INTERRUPTED;
        }
        nanosleep(&nap, NULL);
    } while (kv_clock_ns() < until);
    return KV_ERR_MPI;
}

void kvw_nap(const kv_store *s) {
    long us = s->cfg.poll_us > 0 ? s->cfg.poll_us : 50;
    struct timespec nap = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&nap, NULL);
}

void kvw_doze(void) {
    struct timespec nap = {0, KVW_DOZE_US * 1000};
    nanosleep(&nap, NULL);
}

int kvw_wait(kv_store *s, MPI_Request *req) {
    for (;;) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return kvw_status(s, rc);
        kvw_doze();
    }
}

#define KVW_MAX_EVERY 65536

/* The calling thread's running time: the pace's clock (see the top). */
static int64_t kvw_run_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void kvw_pace(kv_store *s) {
    if (s->cfg.poll_us <= 0) {
        s->poll_every = (unsigned)s->cfg.poll_interval;
        return;
    }
    int64_t now = kvw_run_ns(), took = now - s->poll_ns;
    s->poll_ns = now;
    uint64_t next = took > 0 ? (uint64_t)s->poll_every * (uint64_t)s->cfg.poll_us * 1000 / (uint64_t)took
                             : 2 * (uint64_t)s->poll_every;
    if (next > 2 * (uint64_t)s->poll_every) next = 2 * (uint64_t)s->poll_every;
    if (next > KVW_MAX_EVERY) next = KVW_MAX_EVERY;
    s->poll_every = next > 0 ? (unsigned)next : 1;
}

int kvw_start(kv_store *s) {
    if (s->vt->window_failed) return KV_OK;  /* the window is the detector */
    s->poll_every = (unsigned)s->cfg.poll_interval;
    s->poll_ns = kvw_run_ns();
    s->ops_since_poll = 0;
    /* The dup is a collective over s->all: a failure inside it (a second
     * one during recovery) is an interruption like any other. */
    if (s->watch == MPI_COMM_NULL) {
        int rc = kvw_status(s, MPI_Comm_dup(s->all, &s->watch));
        if (rc) return rc;
        MPI_Comm_set_errhandler(s->watch, MPI_ERRORS_RETURN);
    }
    return kvw_status(s, MPI_Irecv(&s->watch_buf, 1, MPI_INT, MPI_ANY_SOURCE, KVW_TAG, s->watch,
                                   &s->watch_req));
}

void kvw_stop(kv_store *s) {
    if (s->watch_req != MPI_REQUEST_NULL) {
        /* After a failure the receive is left behind, not freed or
         * cancelled: both can raise errors on MPI_COMM_WORLD's fatal handler
         * for a request on a revoked communicator.  One request per
         * recovery is leaked. */
        if (!s->failure_pending) {
            MPI_Cancel(&s->watch_req);
            MPI_Wait(&s->watch_req, MPI_STATUS_IGNORE);
        }
        s->watch_req = MPI_REQUEST_NULL;
    }
    if (s->watch != MPI_COMM_NULL) MPI_Comm_free(&s->watch);
}

bool kvw_test(kv_store *s) {
    if (s->failure_pending) return true;
    if (s->vt->window_failed) return s->failure_pending = s->vt->window_failed(s);
    if (!s->vt->detects || s->watch_req == MPI_REQUEST_NULL) return false;
    s->st.polls++;
    int flag = 0;
    MPI_Status st;
    int rc = MPI_Test(&s->watch_req, &flag, &st);
    if (rc != MPI_SUCCESS) {
        s->failure_pending = true;
    } else if (flag) {
        /* A real message: only spares get one (the close signal). */
        s->watch_req = MPI_REQUEST_NULL;
        if (!s->spare) s->failure_pending = true;
    }
    return s->failure_pending;
}

/* Tell everybody: revoke the watchdog so every pending receive fails (or,
 * variant proposed, the window, so that every RMA call fails). */
void kvw_alarm(kv_store *s) {
    if (s->watch != MPI_COMM_NULL) MPIX_Comm_revoke(s->watch);
    if (s->vt->revoke_window) s->vt->revoke_window(s);
}
