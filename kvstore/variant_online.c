/*
 * variant_online.c -- recovery that keeps serving: the window outlives its
 * dead, and the lost copies come back in the background.
 *
 * The workaround variants, and proposed, stop every survivor until each
 * pair has its r copies again.  This one stops them only for what cannot
 * be done otherwise (recover.c, kvr_attempt): the survivors agree on who
 * failed (revoke, shrink, agree: every member must compute placement from
 * the same list), acknowledge the failures on the window they already
 * have (MPIX_Win_ack_failed, after which the patched osc/sm and osc/rdma
 * serve every call that does not involve the dead as if nothing had
 * happened), settle
 * the writes the failure interrupted and make the copies of their keys
 * equal (kvr_reconcile: a few probe windows, not the table).  Then they
 * serve again, while each member scans its own table a share at a time
 * (kvr_background_step, from the hot path's poll) and copies every pair
 * whose replica set gained a member there, with the slot locks of a write
 * (kvo_push), so a copy and a concurrent write of the same key serialise
 * and the newer version wins.  Until every member's scan is done (a
 * non-blocking barrier on the watchdog's communicator, which carries
 * nothing else), a read keeps to the replicas that held every pair before
 * the failure (kvr_background_readable): a new replica may not have the
 * pair yet.  Writes go to the new replica set at once; their version is
 * decided over it, and the old holders in it have the newest version.
 *
 * Why reads stay right: a pair's replicas are the r live members with the
 * best scores, so a member that held it and lives holds it still, and a
 * write completes only at every replica of the writer's view, which
 * cannot include a dead member (the write would fail and recover first).
 * A second failure while the background runs starts a new recovery that
 * keeps the older placement as the basis, under which every pair was
 * complete; copies already made are made again only where older, and a
 * pair whose old holders all died is copied on by every member that holds
 * it (push_slot).
 *
 * The window is kept where the patched Open MPI can do it
 * (kvo_window_outlives): osc/sm, on one node (MPI_Win_allocate), and
 * osc/rdma over MPI_Win_create, whose puts, gets, atomics and flushes
 * towards live targets go on after a failure.  With MPI_Win_allocate
 * across nodes the windows phase makes a new window as proposed does
 * (a node's leader serves its ranks' memory there), and only
 * re-replication runs in the background.
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <stdlib.h>

#ifdef OMPI_HAVE_MPIX_WIN_ACK_FAILED

/* The share of a rank's time the background takes: it runs for half as
 * long as the operations before it since its last step (at most poll_us
 * of them), so the operations keep at least two thirds of the rank.  The
 * time is measured, not assumed: right after a recovery the watchdog is
 * tested every poll_interval operations, far more often than every
 * poll_us (kvw_pace lengthens the interval poll by poll), and a step of
 * poll_us / 2 at each of those polls took four fifths of the rank: a
 * millisecond-bin timeline showed the operations back at 0.2-0.45 of
 * their rate for 10-15 ms after the stop.  A rank that waits for the
 * others (kv_barrier) has nothing else to do: its steps are whole. */
#define KVR_BG_SHARE_DIV 2
/* How long the window may take to learn a failure the shrink reported. */
#define KVR_ACK_WAIT_MS 2000

typedef struct kvr_background {
    /* The placement under which every pair had all its copies: the
     * members before the first failure since the background last
     * completed. */
    int nprev;
    int *prev_ids, *prev_node;
    bool prev_by_node;
    size_t next;           /* the scan's next slot */
    MPI_Request done;      /* the members' barrier once this scan is done */
    int64_t t0;            /* when this background started (kv_clock_ns) */
    int64_t last;          /* when its last step ended (kv_clock_ns) */
    kv_recovery_times rt;  /* its recovery's record, kept when it ends */
} kvr_background;

/* Keep the window: acknowledge every failure on it, once it knows every
 * member that the shrink left out.  1 when the window cannot outlive its
 * dead. */
static int keep(kv_store *s) {
    if (!kvo_window_outlives(s)) return 1;
    int expect = s->nids - s->size, acked = 0;
    for (int n = 0; n < KVR_ACK_WAIT_MS * 1000 / KVW_DOZE_US; n++) {
        int rc = MPIX_Win_ack_failed(s->win, s->nids, &acked);
        if (rc != MPI_SUCCESS) return kvw_status(s, rc);
        if (acked >= expect) return KV_OK;
        kvw_doze();
    }
    KVR_TRACE(s, "window knows %d failures of %d", acked, expect);
    return KV_ERR_MPI;
}

/* A window it cannot keep (MPI_Win_allocate's osc/rdma across nodes) is
 * abandoned, not freed: an operation a peer
 * gave up on can still arrive at the old window after recovery, and the
 * transport then serves it from the window's memory (btl/tcp's emulated
 * RDMA).  Freed, that memory crashed a survivor in 1 of 100 node losses
 * across hosts (a segfault in am_rdma_respond). */
const kvr_variant_ops kvr_online = {.detects = true, .retire = KVR_ABANDON,
                                    .make = kvr_make_copy, .ft_rma = true, .keep = keep};

static bool has(const int *ids, int n, int id) {
    for (int i = 0; i < n; i++)
        if (ids[i] == id) return true;
    return false;
}

/* The replicas of key hash kh under the placement before the failures. */
static int prev_set(const kv_store *s, const kvr_background *b, uint64_t kh, int *out) {
    int n = s->cfg.replicas < b->nprev ? s->cfg.replicas : b->nprev;
    kvh_place(kh, b->prev_ids, b->nprev, n, b->prev_by_node ? b->prev_node : NULL, out);
    return n;
}

int kvr_background_readable(const kv_store *s, uint64_t kh, int *ids, int n) {
    int prev[16], np = prev_set(s, s->bg, kh, prev), m = 0;
    for (int i = 0; i < n; i++)
        if (has(prev, np, ids[i])) ids[m++] = ids[i];
    return m > 0 ? m : n;  /* no old holder lives: the pair is lost anyway */
}

/* The local pair in slot i, if its replica set gained members and this
 * member is its first old holder alive: copy it to them.  When no old
 * holder lives (a second failure took the rest before this background
 * copied the pair), the pair lives on only where a write or a copy since
 * put it, at members of an interim replica set: every member that holds it
 * copies it to the others of the current set, and the newest version wins
 * (kvo_copy writes only where older).  KV_OK, or KV_ERR_BUSY (try the slot
 * again later), or KV_ERR_INTERRUPTED. */
static int push_slot(kv_store *s, kvr_background *b, size_t i) {
    const unsigned char *slot = s->base + i * s->slot_size;
    /* A slot being overwritten now is torn: its writer writes the new
     * replica set itself, so that pair needs no copy from here.  A locked
     * slot is not skipped: a writer locks its key's home slot, which may
     * hold another key, whose copy would then be missed (kvo_push waits
     * for the lock). */
    if (kvs_hdr_of(slot)->version == 0) return KV_OK;
    enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    if (st != KVS_LIVE && st != KVS_DELETED) return KV_OK;
    uint32_t klen = KVS_KLEN(kvs_hdr_of(slot));
    unsigned char key[s->cfg.max_key];
    memcpy(key, kvs_key_of(slot), klen);
    uint64_t kh = kvh_hash(key, klen, 0);
    int prev[16], cur[16], to[16], nto = 0;
    int np = prev_set(s, b, kh, prev), nc = kvh_replicas(s, kh, cur);
    int first = -1;
    for (int j = 0; j < np && first < 0; j++)
        if (s->rank_of_id[prev[j]] >= 0) first = prev[j];
    if (first >= 0 && first != s->my_id) return KV_OK;
    for (int j = 0; j < nc; j++)
        if (!has(prev, np, cur[j]) && cur[j] != s->my_id) to[nto++] = cur[j];
    if (nto == 0) return KV_OK;
    return kvo_push(s, key, klen, to, nto, &b->rt.pairs_restored);
}

/* Scan until `until` (kv_clock_ns; 0: to the end). */
static int scan(kv_store *s, kvr_background *b, int64_t until) {
    while (b->next < s->nslots) {
        if (until && (b->next & 15) == 0 && kv_clock_ns() > until) return KV_OK;
        int rc = push_slot(s, b, b->next);
        if (rc == KV_ERR_BUSY) return KV_OK;  /* the same slot at the next step */
        if (rc) return rc;
        b->next++;
    }
    return KV_OK;
}

/* The recovery is recorded when its background ends (done, or cut short
 * by another failure), the background's time in its re-replication and
 * its total: a recovery counts (kv_recovery_count) once every pair has
 * its copies again, as under the other variants. */
static void account(kv_store *s, kvr_background *b) {
    double us = (double)(kv_clock_ns() - b->t0) / 1e3;
    b->rt.rereplicate_us += us;
    b->rt.total_us += us;
    kvr_record(s, &b->rt);
    KVR_TRACE(s, "background %s after %.0f us", b->next < s->nslots ? "cut short" : "done", us);
}

static void finish(kv_store *s) {
    kvr_background *b = s->bg;
    account(s, b);
    free(b->prev_ids);
    free(b->prev_node);
    free(b);
    s->bg = NULL;
}

/* One step: scan until the deadline, then start or test the barrier.
 * KV_OK (done or not), or the status of a failure. */
static int step(kv_store *s, int64_t until) {
    kvr_background *b = s->bg;
    if (b->next < s->nslots) {
        int rc = scan(s, b, until);
        if (rc || b->next < s->nslots) return rc;
        rc = MPI_Ibarrier(s->watch, &b->done);
        if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    }
    int flag = 0, rc = MPI_Test(&b->done, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return kvw_status(s, rc);
    if (flag) finish(s);
    return KV_OK;
}

void kvr_background_step(kv_store *s, bool idle) {
    int64_t now = kv_clock_ns(), whole = s->cfg.poll_us > 0 ? (int64_t)s->cfg.poll_us * 1000 : 1000000;
    int64_t since = idle || now - s->bg->last > whole ? whole : now - s->bg->last;
    step(s, now + since / KVR_BG_SHARE_DIV);
    if (s->bg) s->bg->last = kv_clock_ns();  /* step ends it when done */
}

int kvr_background_finish(kv_store *s) {
    while (s->bg) {
        int rc = s->failure_pending ? KV_ERR_INTERRUPTED : step(s, 0);
        if (rc == KV_ERR_INTERRUPTED) {
            rc = kvr_recover(s);
            if (rc != KV_OK && rc != KV_WARN_DEGRADED) return rc;
        } else if (rc) {
            return rc;
        } else if (s->bg && s->bg->next >= s->nslots) {
            if (kvw_test(s)) continue;
            /* Waiting for the others' scans, whose copies to this member
             * need its progress over TCP (docs/cluster.md): a short doze.
             * With poll_us naps one run across 3 hosts took 23 s. */
            kvw_doze();
        }
    }
    return KV_OK;
}

int kvr_background_start(kv_store *s, const kvr_ctx *c) {
    kvr_background *b = s->bg;
    if (!b) {
        b = calloc(1, sizeof *b);
        int *ids = malloc((size_t)c->nold * sizeof(int));
        int *node = malloc((size_t)s->nids * sizeof(int));
        if (!b || !ids || !node) {
            free(b);
            free(ids);
            free(node);
            return KV_ERR_NOMEM;
        }
        memcpy(ids, c->old_ids, (size_t)c->nold * sizeof(int));
        memcpy(node, c->old_node, (size_t)s->nids * sizeof(int));
        *b = (kvr_background){.nprev = c->nold, .prev_ids = ids, .prev_node = node,
                               .prev_by_node = c->old_by_node, .done = MPI_REQUEST_NULL};
        s->bg = b;
    }
    b->next = 0;
    b->done = MPI_REQUEST_NULL;
    b->t0 = b->last = kv_clock_ns();
    b->rt = c->rt;
    return KV_OK;
}

void kvr_background_drop(kv_store *s) {
    if (!s->bg) return;
    /* Its record says how far it got; the barrier, if started, is left
     * behind on the revoked communicator (as the watchdog's receive is). */
    kvr_background *b = s->bg;
    account(s, b);
    b->next = 0;
    b->done = MPI_REQUEST_NULL;
}

#else /* Open MPI without patches/openmpi: kv_open refuses the variant. */

void kvr_background_step(kv_store *s, bool idle) { (void)s; (void)idle; }
int kvr_background_finish(kv_store *s) { (void)s; return KV_OK; }
int kvr_background_start(kv_store *s, const kvr_ctx *c) {
    (void)s; (void)c;
    return KV_OK;
}
void kvr_background_drop(kv_store *s) { (void)s; }
int kvr_background_readable(const kv_store *s, uint64_t kh, int *ids, int n) {
    (void)s; (void)kh; (void)ids;
    return n;
}

#endif
