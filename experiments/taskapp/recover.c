/*
 * recover.c -- after the store recovered from a failure: find the dead
 * ranks' work in the store and give it to survivors, exactly once.
 *
 * Every survivor gets KV_ERR_INTERRUPTED from some kv_ call once the store
 * has recovered (the store's recovery is collective, so each has stopped
 * what it did; an interrupted commit was settled by state.c).  Then:
 *   1. live set: the store's communicator, translated to MPI_COMM_WORLD
 *      ranks (the ids); requests to dead victims are dropped, so a thief
 *      never claims loot from a rank it knows is dead;
 *   2. kv_barrier: every survivor has done 1, so no head changes but by
 *      steps 3-4, and dead heads never change again;
 *   3. each survivor takes back its loot in transit to a dead thief
 *      (given[T] > the dead head's claimed[me]);
 *   4. each dead rank no head has adopted yet is adopted by the first live
 *      rank after it (cyclically): its committed queue, its results, its
 *      adopted set, and its loot in transit to any thief that has not
 *      claimed it; the adopter marks it adopted in the same commit.
 * A dead rank's uncommitted work is lost and done again by its adopter;
 * its committed work is counted once, through the adopter's head.  A
 * failure during any step starts the whole sequence again (each step only
 * reads dead heads, which are frozen, and the survivor's own).  Variant
 * checkpoint-restart has no survivors: a restarted job (ta_restart) treats
 * every rank of the job that died as dead-and-reborn under the same id.
 */
#include <stdlib.h>
#include <string.h>

#include "ta_int.h"

static ta_head heads[TA_MAX_IDS];  /* one rank's view of every head, during a recovery */

void ta_update_live(ta_rt *rt) {
    MPI_Group g, w;
    MPI_Comm_group(kv_comm(rt->kv), &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    int n;
    MPI_Group_size(g, &n);
    int *in = malloc(sizeof(int) * (size_t)n * 2 + 1), *out = in + n;
    for (int i = 0; i < n; i++) in[i] = i;
    MPI_Group_translate_ranks(g, n, in, w, out);
    memset(rt->live, 0, sizeof rt->live);
    for (int i = 0; i < n; i++)
        if (out[i] >= 0 && out[i] < rt->nids) rt->live[out[i]] = rt->ever[out[i]] = 1;
    free(in);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    for (int v = 0; v < rt->nids; v++)
        if (!rt->live[v]) rt->pend[v] = 0;
}

static int adopter_of(const ta_rt *rt, int dead) {
    for (int i = 1; i <= rt->nids; i++)
        if (rt->live[(dead + i) % rt->nids]) return (dead + i) % rt->nids;
    return -1;
}

static int read_heads(ta_rt *rt) {
    for (int id = 0; id < rt->nids; id++) {
        int rc = id == rt->me ? (heads[id] = rt->head, TA_OK) : ta_head_read(rt, id, &heads[id]);
        if (rc != TA_OK) return rc;
    }
    return TA_OK;
}

/* What this survivor adds to its state in this recovery. */
typedef struct gain {
    ta_queue q;
    int64_t res[2], counted;
    int changed, adopted;
} gain;

/* Take over dead rank d's committed state into h and g. */
static int adopt(ta_rt *rt, int d, ta_head *h, gain *g) {
    const ta_head *hd = &heads[d];
    int rc = ta_queue_read(rt, hd, &g->q);
    for (int t = 0; rc == TA_OK && t < rt->nids; t++)
        if (hd->given[t] > heads[t].claimed[d]) {  /* in transit from the dead victim: back */
            rc = ta_loot_read(rt, d, t, hd->given[t], &g->q);
            rt->st.reclaims++;
        }
    if (rc != TA_OK) return rc;
    for (int i = 0; i < 2; i++) g->res[i] += hd->res[i];
    g->counted += hd->counted;
    for (int i = 0; i < rt->nids; i++) h->adopted[i] |= hd->adopted[i];
    h->adopted[d] = 1;
    g->changed = g->adopted = 1;
    return TA_OK;
}

/* Steps 3 and 4 into h and g. */
static int take_over(ta_rt *rt, ta_head *h, gain *g) {
    uint8_t covered[TA_MAX_IDS] = {0};
    for (int id = 0; id < rt->nids; id++)
        for (int i = 0; i < rt->nids; i++) covered[i] |= heads[id].adopted[i];
    for (int t = 0; t < rt->nids; t++) {
        if (rt->live[t] || !rt->ever[t] || h->given[t] <= heads[t].claimed[rt->me]) continue;
        int rc = ta_loot_read(rt, rt->me, t, h->given[t], &g->q);
        if (rc != TA_OK) return rc;
        h->given[t] = heads[t].claimed[rt->me];  /* the dead thief will never claim it */
        g->changed = 1;
        rt->st.reclaims++;
    }
    for (int d = 0; d < rt->nids; d++) {
        if (rt->live[d] || !rt->ever[d] || covered[d] || adopter_of(rt, d) != rt->me) continue;
        int rc = adopt(rt, d, h, g);
        if (rc != TA_OK) return rc;
        rt->st.adoptions++;
    }
    return TA_OK;
}

/* Commit what g adds; on success it becomes the local state too. */
static int commit_gain(ta_rt *rt, ta_head *h, gain *g) {
    if (!g->changed) return TA_OK;
    if (g->adopted) ta_point(rt, TA_POINT_ADOPT);
    for (int i = 0; i < 2; i++) h->res[i] = rt->res[i] + g->res[i];
    h->counted = rt->counted + g->counted;
    h->flags = rt->q.n + g->q.n ? 0 : TA_IDLE;
    int committed;
    int rc = ta_commit(rt, h, rt->q.t, rt->q.n, g->q.t, g->q.n, &committed);
    if (committed) {
        if (ta_queue_append(&rt->q, g->q.t, g->q.n)) return ta_fatal(rt, "out of memory");
        for (int i = 0; i < 2; i++) rt->res[i] += g->res[i];
        rt->counted += g->counted;
        /* the head says what it says now: a rank idle before that adopted
         * work must commit idle again when it has done it, or the leader
         * waits for it for ever */
        rt->idle_committed = (h->flags & TA_IDLE) != 0;
    }
    return rc;
}

/* Step 2: kv_barrier until no failure came during one.  Every survivor
 * passes the same syncs (in recovery, or at the end: ta_finish), so a
 * survivor that was already done pairs its barriers with the others'. */
static int sync_live(ta_rt *rt) {
    for (int i = 0; i < 64; i++) {
        int seen = kv_recovery_count(rt->kv);
        ta_update_live(rt);
        int rc = ta_kv_status(rt, kv_barrier(rt->kv), "kv_barrier");
        if (rc != TA_OK || kv_recovery_count(rt->kv) == seen) return rc;
    }
    return ta_fatal(rt, "64 failures during one recovery");
}

/* Steps 3 and 4, after a sync. */
static int take_over_all(ta_rt *rt) {
    int rc = read_heads(rt);
    if (rc != TA_OK) return rc;
    ta_head h = rt->head;
    gain g = {{0}, {0, 0}, 0, 0, 0};
    rc = take_over(rt, &h, &g);
    if (rc == TA_OK) rc = commit_gain(rt, &h, &g);
    ta_queue_free(&g.q);
    return rc;
}

static int round_once(ta_rt *rt) {
    int rc = sync_live(rt);
    return rc == TA_OK ? take_over_all(rt) : rc;
}

/* At the end (after done): a failure that came after this survivor left
 * the worker loop is handled here, with the same syncs as in ta_recover
 * (its dead ranks were idle: adopting them only moves their results). */
int ta_finish(ta_rt *rt) {
    for (int i = 0; i < 64; i++) {
        int rc = sync_live(rt);
        if (rc != TA_OK) return rc;
        if (rt->recoveries == kv_recovery_count(rt->kv)) return TA_OK;
        rt->recoveries = kv_recovery_count(rt->kv);
        if ((rc = take_over_all(rt)) == TA_FATAL) return rc;
    }
    return ta_fatal(rt, "64 failures at the end");
}

int ta_recover(ta_rt *rt) {
    int64_t t0 = kv_clock_ns();
    int rc = TA_RECOVER;
    for (int attempt = 0; rc == TA_RECOVER && attempt < 64; attempt++) rc = round_once(rt);
    if (rc == TA_RECOVER) rc = ta_fatal(rt, "recovery was interrupted 64 times");
    rt->recoveries = kv_recovery_count(rt->kv);
    int i = rt->recoveries - 1;
    if (i >= 0 && i < TA_MAX_RECOVERIES) rt->st.recover_s[i] += (double)(kv_clock_ns() - t0) * 1e-9;
    if (rt->recoveries > rt->st.nrecover) rt->st.nrecover = rt->recoveries;
    return rc;
}

/* A restarted job (checkpoint-restart): every rank takes its own head back
 * from the restored checkpoint, ignores the requests it had not answered,
 * then (after a barrier, when no head changes but by this step) takes back
 * its loot in transit: the thieves' open requests died with the old job. */
int ta_restart(ta_rt *rt) {
    int rc = ta_head_read(rt, rt->me, &rt->head);
    if (rc == TA_OK) {
        rt->q.n = 0;
        rc = ta_queue_read(rt, &rt->head, &rt->q);
    }
    memcpy(rt->res, rt->head.res, sizeof rt->res);
    rt->counted = rt->head.counted;
    rt->idle_committed = 0;
    for (int t = 0; rc == TA_OK && t < rt->nids; t++) {
        struct { uint32_t k, pad; uint64_t nonce; } r;
        size_t len;
        rc = ta_kv_get(rt, &r, sizeof r, &len, TA_KEY_REQ, rt->me, t);
        if (rc == TA_ABSENT) rc = TA_OK;
        else if (rc == TA_OK) rt->answered[t] = r.nonce;
    }
    if (rc == TA_OK) rc = ta_kv_status(rt, kv_barrier(rt->kv), "kv_barrier");
    if (rc == TA_OK) rc = read_heads(rt);
    ta_head h = rt->head;
    gain g = {{0}, {0, 0}, 0, 0, 0};
    for (int t = 0; rc == TA_OK && t < rt->nids; t++)
        if (t != rt->me && h.given[t] > heads[t].claimed[rt->me]) {
            struct { uint32_t k, status; uint64_t nonce; } none = {0, 0, 0};
            rc = ta_loot_read(rt, rt->me, t, h.given[t], &g.q);
            if (rc == TA_OK) rc = ta_kv_put(rt, &none, sizeof none, TA_KEY_ANS, rt->me, t);  /* no stale LOOT */
            h.given[t] = heads[t].claimed[rt->me];
            g.changed = 1;
            rt->st.reclaims++;
        }
    if (rc == TA_OK) rc = commit_gain(rt, &h, &g);
    ta_queue_free(&g.q);
    if (rc == TA_OK) rc = ta_kv_status(rt, kv_barrier(rt->kv), "kv_barrier");
    return rc == TA_RECOVER ? ta_fatal(rt, "a failure during a restart (no recovery in this variant)") : rc;
}
