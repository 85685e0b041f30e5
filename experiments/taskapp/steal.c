/*
 * steal.c -- load balancing: random work stealing, every message through
 * the store.
 *
 * Why stealing and not lifelines: at the tens of ranks this artifact runs
 * on, a random victim has work within a few tries, and one way for work to
 * move (a thief asks, the victim gives) means one transfer protocol to make
 * failure-proof; lifelines (GLB) save steal traffic at thousands of ranks
 * and would add a second path (the victim pushes) with its own failure
 * cases.  Messages go through the store, not MPI, so a message outlives
 * its sender and its receiver, and is under the store's recovery.
 * Thief T, victim V, k = T's claimed[V] + 1 (loots from V to T are numbered):
 *   T: put rq/V/T = {k, nonce}; fetch_add bell/V      request (a lost one is asked again)
 *   V, when bell/V changed, for each live thief's new request:
 *     given[T] >= k:   put an/V/T = {k, LOOT}          answered before: again
 *     >= 2 tasks:      put L/V/T = {k, tasks}; commit h/V (given[T] = k, queue without
 *                      them); put an/V/T = {k, LOOT}
 *     else:            put an/V/T = {k, NONE}
 *   T, on {k, LOOT} with its nonce: read L/V/T; commit h/T (claimed[V] = k, queue
 *                      with them)
 * Loot k is owned by V until V's commit, by T from T's commit, and in
 * between (given_V[T] = k > claimed_T[V]) it is in transit:
 *   in transit --T commits-->              T's
 *   in transit --V dies-->                 V's adopter takes it back (a thief never
 *                                          claims from a victim it knows is dead)
 *   in transit --T dies-->                 V takes it back (a dead head never changes)
 *   in transit --both die-->               V's adopter takes it back
 * so each loot ends in exactly one committed queue (recover.c).
 */
#include <string.h>
#include <time.h>

#include "kv_util.h"
#include "ta_int.h"

typedef struct ta_req { uint32_t k, pad; uint64_t nonce; } ta_req;
typedef struct ta_ans { uint32_t k, status; uint64_t nonce; } ta_ans;
enum { LOOT_HDR = 8 };
#define REASK_NS 50000000LL  /* ask again after 50 ms without an answer (the bell may be lost) */

/* Nonces count up from the job's start in microseconds: unique across the
 * jobs of a checkpoint-restart run, so no job takes another's answer.  The
 * wall clock, because a later job must start above every nonce an earlier
 * one used (a monotonic clock has no meaning across jobs and hosts); its
 * low 48 bits of microseconds wrap every 8.9 years, and the low 16 bits
 * count the requests of one job. */
void ta_nonce_init(ta_rt *rt) {
    rt->nonce = ((uint64_t)(kv_wall_ns() / 1000) & ((1ULL << 48) - 1)) << 16;
}

/* Append loot k from victim to thief to `into`: TA_OK, or TA_FATAL when the
 * store holds another (the protocol forbids it). */
int ta_loot_read(ta_rt *rt, int victim, int thief, uint32_t k, ta_queue *into) {
    size_t len = 0;
    int rc = ta_kv_get(rt, rt->buf, LOOT_HDR + rt->cap * TA_TASK_BYTES, &len, TA_KEY_LOOT, victim, thief);
    if (rc == TA_RECOVER || rc == TA_FATAL) return rc;
    uint32_t hdr[2] = {0, 0};
    if (rc == TA_OK && len >= LOOT_HDR) memcpy(hdr, rt->buf, LOOT_HDR);
    if (rc != TA_OK || hdr[0] != k || len != LOOT_HDR + (size_t)hdr[1] * TA_TASK_BYTES)
        return ta_fatal(rt, "loot %u from rank %d to rank %d is not in the store", k, victim, thief);
    return ta_queue_append(into, (const ta_task *)(rt->buf + LOOT_HDR), hdr[1]) ? ta_fatal(rt, "out of memory")
                                                                               : TA_OK;
}

static int put_answer(ta_rt *rt, int thief, uint32_t k, uint32_t status, uint64_t nonce) {
    ta_ans a = {k, status, nonce};
    return ta_kv_put(rt, &a, sizeof a, TA_KEY_ANS, rt->me, thief);
}

/* Victim: give loot k to thief (half of the queue, the oldest tasks). */
static int give(ta_rt *rt, int thief, uint32_t k, uint64_t nonce) {
    size_t n = rt->q.n / 2 < rt->cap ? rt->q.n / 2 : rt->cap;
    uint32_t hdr[2] = {k, (uint32_t)n};
    memcpy(rt->buf, hdr, LOOT_HDR);
    memcpy(rt->buf + LOOT_HDR, rt->q.t, n * TA_TASK_BYTES);
    int rc = ta_kv_put(rt, rt->buf, LOOT_HDR + n * TA_TASK_BYTES, TA_KEY_LOOT, rt->me, thief);
    if (rc != TA_OK) return rc;
    ta_point(rt, TA_POINT_GIVE_LOOT);
    ta_head h = ta_head_now(rt, 0);
    h.given[thief] = k;
    int committed;
    rc = ta_commit(rt, &h, rt->q.t + n, rt->q.n - n, NULL, 0, &committed);
    if (committed) {
        ta_queue_drop_bottom(&rt->q, n);
        rt->st.loots_given++;
    }
    if (rc != TA_OK) return rc;  /* the thief asks again; the answer is then LOOT k */
    ta_point(rt, TA_POINT_GIVE_COMMIT);
    return put_answer(rt, thief, k, TA_LOOT, nonce);
}

static int answer(ta_rt *rt, int thief, const ta_req *r) {
    int rc;
    if (rt->head.given[thief] >= r->k) rc = put_answer(rt, thief, r->k, TA_LOOT, r->nonce);
    else if (r->k == rt->head.given[thief] + 1 && rt->q.n >= 2) rc = give(rt, thief, r->k, r->nonce);
    else rc = put_answer(rt, thief, r->k, TA_NONE, r->nonce);
    if (rc == TA_OK) rt->answered[thief] = r->nonce;
    return rc;
}

/* Victim side: answer the live thieves' new requests once the bell rang. */
int ta_serve(ta_rt *rt) {
    int64_t bell = 0;
    size_t len;
    int rc = ta_kv_get(rt, &bell, sizeof bell, &len, TA_KEY_BELL, rt->me);
    if (rc == TA_ABSENT) return TA_OK;
    if (rc != TA_OK || bell == rt->bell_seen) return rc;
    rt->bell_seen = bell;
    for (int t = 0; t < rt->nids; t++) {
        if (t == rt->me || !rt->live[t]) continue;  /* a dead thief's request is never answered */
        ta_req r;
        rc = ta_kv_get(rt, &r, sizeof r, &len, TA_KEY_REQ, rt->me, t);
        if (rc == TA_ABSENT) continue;
        if (rc != TA_OK) return rc;
        if (r.nonce != rt->answered[t] && (rc = answer(rt, t, &r)) != TA_OK) return rc;
    }
    return TA_OK;
}

static int ask(ta_rt *rt, int v) {
    ta_req r = {rt->head.claimed[v] + 1, 0, ++rt->nonce};
    rt->pend[v] = r.nonce;
    rt->pend_at[v] = kv_clock_ns();
    rt->st.requests++;
    int rc = ta_kv_put(rt, &r, sizeof r, TA_KEY_REQ, v, rt->me);
    if (rc != TA_OK) return rc;
    char key[32];
    int kl = snprintf(key, sizeof key, TA_KEY_BELL, v);
    return ta_kv_status(rt, kv_fetch_add(rt->kv, key, (size_t)kl, 1, NULL), key);
}

/* Thief: take loot k from v (its answer said LOOT k). */
static int claim(ta_rt *rt, int v, uint32_t k) {
    ta_queue loot = {0};
    int rc = ta_loot_read(rt, v, rt->me, k, &loot);
    if (rc != TA_OK) { ta_queue_free(&loot); return rc; }
    ta_point(rt, TA_POINT_CLAIM_READ);
    ta_head h = ta_head_now(rt, 0);
    h.claimed[v] = k;
    int committed;
    rc = ta_commit(rt, &h, rt->q.t, rt->q.n, loot.t, loot.n, &committed);
    if (committed) {
        if (ta_queue_append(&rt->q, loot.t, loot.n)) rc = ta_fatal(rt, "out of memory");
        rt->pend[v] = 0;
        rt->idle_committed = 0;
        rt->st.loots_taken++;
    }
    ta_queue_free(&loot);
    if (rc == TA_OK) ta_point(rt, TA_POINT_CLAIM_COMMIT);
    return rc;
}

/* Thief: look at the open requests' answers, claim loot, ask someone new. */
int ta_steal(ta_rt *rt) {
    int64_t now = kv_clock_ns();
    int open = 0;
    for (int v = 0; v < rt->nids; v++) {
        if (!rt->pend[v]) continue;
        if (!rt->live[v]) { rt->pend[v] = 0; continue; }
        ta_ans a;
        size_t len;
        int rc = ta_kv_get(rt, &a, sizeof a, &len, TA_KEY_ANS, v, rt->me);
        if (rc == TA_RECOVER || rc == TA_FATAL) return rc;
        /* Only the answer to this request counts: an older one may be from a
         * job before a restart, whose loot its victim has taken back. */
        if (rc == TA_OK && a.nonce == rt->pend[v] && a.status == TA_LOOT && a.k == rt->head.claimed[v] + 1)
            return claim(rt, v, a.k);
        if (rc == TA_OK && a.nonce == rt->pend[v] && a.status == TA_NONE) { rt->pend[v] = 0; continue; }
        if (now - rt->pend_at[v] > REASK_NS && (rc = ask(rt, v)) != TA_OK) return rc;  /* new nonce */
        open++;
    }
    if (open > 0) return TA_OK;  /* one request at a time: wait for its answer */
    int start = (int)(kvu_rng_next(&rt->rng) % (uint64_t)rt->nids);
    for (int i = 0; i < rt->nids; i++) {
        int v = (start + i) % rt->nids;
        if (v != rt->me && rt->live[v]) return ask(rt, v);
    }
    return TA_OK;
}
