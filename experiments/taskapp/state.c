/*
 * state.c -- a rank's state in the store: its head and its queue chunks,
 * committed together by one put.
 *
 * A rank r owns the key h/r (its head: results, tasks counted, loot
 * counters, adopted ranks, where its queue is) and two sets of chunk keys
 * q/r/0/C and q/r/1/C (its queue in chunks C, max_value bytes a chunk).  A commit
 * writes the queue into the set the head does not point to, then puts the
 * head pointing to it: the head put is the commit point, so the store
 * always holds one complete state per rank, the old or the new.  A head
 * put interrupted by a failure has taken effect or not at every survivor
 * (the store settles it during recovery); the owner reads its head back to
 * learn which, and only then changes its local state.  A rank that never
 * committed has no head: its state is the initial one (rank 0 holds the
 * root task, every other rank nothing).
 *
 *   task t:  in r's queue (local) --commit of r-->  owned by r (in h/r's queue)
 *            owned by r --r runs it, commit-->      done (in h/r's results)
 *            owned by r --r dies-->                 owned by r's adopter (recover.c)
 *            owned by r --loot to thief s-->        see steal.c
 * The answer is the sum of the results of every head no other head adopted.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ta_int.h"

static size_t keyf(char *key, size_t n, const char *fmt, va_list ap) {
    int len = vsnprintf(key, n, fmt, ap);
    return len < 0 ? 0 : (size_t)len;
}

/* A kv_ status as the runtime's; DEGRADED is success. */
int ta_kv_status(ta_rt *rt, int rc, const char *what) {
    if (rc == KV_OK || rc == KV_WARN_DEGRADED) return TA_OK;
    if (rc == KV_ERR_NOT_FOUND) return TA_ABSENT;
    if (rc == KV_ERR_INTERRUPTED) return TA_RECOVER;
    return ta_fatal(rt, "%s: %s", what, kv_strerror(rc));
}

int ta_kv_get(ta_rt *rt, void *buf, size_t cap, size_t *len, const char *fmt, ...) {
    char key[64];
    va_list ap;
    va_start(ap, fmt);
    size_t kl = keyf(key, sizeof key, fmt, ap);
    va_end(ap);
    return ta_kv_status(rt, kv_get(rt->kv, key, kl, buf, cap, len), key);
}

int ta_kv_put(ta_rt *rt, const void *val, size_t len, const char *fmt, ...) {
    char key[64];
    va_list ap;
    va_start(ap, fmt);
    size_t kl = keyf(key, sizeof key, fmt, ap);
    va_end(ap);
    return ta_kv_status(rt, kv_put(rt->kv, key, kl, val, len), key);
}

enum { HEAD_FIXED = 8 + 4 + 4 + 16 + 8 + 4 + 4 + 4 };

size_t ta_head_bytes(int nids) { return HEAD_FIXED + (size_t)nids * 9; }

void ta_head_initial(ta_head *h, int owner, int nids) {
    memset(h, 0, sizeof *h);
    h->owner = owner;
    h->nids = nids;
    h->flags = owner == 0 ? 0 : TA_IDLE;  /* rank 0 starts with the root task */
}

static size_t encode(const ta_head *h, unsigned char *b) {
    unsigned char *p = b;
#define PUT_(v) (memcpy(p, &(v), sizeof(v)), p += sizeof(v))
    PUT_(h->seq); PUT_(h->owner); PUT_(h->flags); PUT_(h->res); PUT_(h->counted);
    PUT_(h->nqueue); PUT_(h->qbuf); PUT_(h->nids);
#undef PUT_
    size_t n = (size_t)h->nids;
    memcpy(p, h->given, 4 * n); p += 4 * n;
    memcpy(p, h->claimed, 4 * n); p += 4 * n;
    memcpy(p, h->adopted, n); p += n;
    return (size_t)(p - b);
}

static int decode(const unsigned char *b, size_t len, ta_head *h) {
    const unsigned char *p = b;
    if (len < HEAD_FIXED) return -1;
    memset(h, 0, sizeof *h);
#define GET_(v) (memcpy(&(v), p, sizeof(v)), p += sizeof(v))
    GET_(h->seq); GET_(h->owner); GET_(h->flags); GET_(h->res); GET_(h->counted);
    GET_(h->nqueue); GET_(h->qbuf); GET_(h->nids);
#undef GET_
    if (h->nids < 1 || h->nids > TA_MAX_IDS || len != ta_head_bytes(h->nids)) return -1;
    size_t n = (size_t)h->nids;
    memcpy(h->given, p, 4 * n); p += 4 * n;
    memcpy(h->claimed, p, 4 * n); p += 4 * n;
    memcpy(h->adopted, p, n);
    return 0;
}

int ta_head_read(ta_rt *rt, int id, ta_head *h) {
    size_t len = 0;
    int rc = ta_kv_get(rt, rt->buf, ta_head_bytes(rt->nids), &len, TA_KEY_HEAD, id);
    if (rc == TA_ABSENT) {
        ta_head_initial(h, id, rt->nids);
        return TA_OK;
    }
    if (rc != TA_OK) return rc;
    if (decode(rt->buf, len, h) || h->owner != id) return ta_fatal(rt, "the head of rank %d is damaged", id);
    return TA_OK;
}

/* Append the queue of head h (its chunks, or the root task) to out. */
int ta_queue_read(ta_rt *rt, const ta_head *h, ta_queue *out) {
    if (h->seq == 0) {
        if (h->owner != 0) return TA_OK;
        ta_task t;
        rt->p->app->root(rt->p, &t);
        return ta_queue_push(out, &t) ? ta_fatal(rt, "out of memory") : TA_OK;
    }
    for (uint32_t c = 0; c * rt->cap < h->nqueue; c++) {
        size_t want = h->nqueue - c * rt->cap < rt->cap ? h->nqueue - c * rt->cap : rt->cap, len = 0;
        int rc = ta_kv_get(rt, rt->buf, rt->cap * TA_TASK_BYTES, &len, TA_KEY_CHUNK, h->owner, h->qbuf, c);
        if (rc == TA_ABSENT || (rc == TA_OK && len != want * TA_TASK_BYTES))
            return ta_fatal(rt, "chunk %u of rank %d's queue is missing or short", c, h->owner);
        if (rc != TA_OK) return rc;
        if (ta_queue_append(out, (const ta_task *)rt->buf, want)) return ta_fatal(rt, "out of memory");
    }
    return TA_OK;
}

/* The chunks of a queue a[0..na) b[0..nb) into set `set`. */
static int write_chunks(ta_rt *rt, unsigned set, const ta_task *a, size_t na, const ta_task *b, size_t nb) {
    size_t n = na + nb;
    for (size_t c = 0; c * rt->cap < n; c++) {
        size_t lo = c * rt->cap, hi = lo + rt->cap < n ? lo + rt->cap : n;
        for (size_t i = lo; i < hi; i++)
            memcpy(rt->buf + (i - lo) * TA_TASK_BYTES, i < na ? &a[i] : &b[i - na], TA_TASK_BYTES);
        int rc = ta_kv_put(rt, rt->buf, (hi - lo) * TA_TASK_BYTES, TA_KEY_CHUNK, rt->me, set, (unsigned)c);
        if (rc != TA_OK) return rc;
    }
    return TA_OK;
}

/* After an interrupted head put: did it take effect?  Read until a read
 * is not itself interrupted (the store settles the put first). */
static int settle(ta_rt *rt, const ta_head *h, int *committed) {
    ta_head now;
    int rc;
    while ((rc = ta_head_read(rt, rt->me, &now)) == TA_RECOVER) {}
    if (rc != TA_OK) return rc;
    *committed = now.seq == h->seq;
    return TA_OK;
}

/* Commit h (res, counted, flags and counters set by the caller) with the
 * queue a then b.  *committed says whether it took effect; the return is
 * TA_RECOVER when a failure interrupted it (settled either way). */
int ta_commit(ta_rt *rt, ta_head *h, const ta_task *a, size_t na, const ta_task *b, size_t nb,
              int *committed) {
    int64_t t0 = kv_clock_ns();
    *committed = 0;
    h->seq = rt->head.seq + 1;
    h->owner = rt->me;
    h->nids = rt->nids;
    h->nqueue = rt->persist ? (uint32_t)(na + nb) : 0;
    h->qbuf = rt->persist ? 1 - rt->head.qbuf : rt->head.qbuf;
    int rc = rt->persist ? write_chunks(rt, h->qbuf, a, na, b, nb) : TA_OK;
    if (rc != TA_OK) return rc;  /* no head written: nothing took effect */
    ta_point(rt, TA_POINT_CHUNKS);
    size_t len = encode(h, rt->buf);
    rc = ta_kv_put(rt, rt->buf, len, TA_KEY_HEAD, rt->me);
    if (rc == TA_RECOVER) {
        int src = settle(rt, h, committed);
        if (src != TA_OK) return src;
    } else if (rc != TA_OK) {
        return rc;
    } else {
        *committed = 1;
    }
    if (*committed) {
        rt->head = *h;
        rt->last_commit = kv_clock_ns();
        rt->st.commits++;
        rt->st.commit_s += (double)(rt->last_commit - t0) * 1e-9;
        if (rt->counts) rt->counts->at_commit = rt->counts->executed;
    }
    return rc;
}

ta_head ta_head_now(const ta_rt *rt, int32_t flags) {
    ta_head h = rt->head;
    h.flags = flags;
    memcpy(h.res, rt->res, sizeof h.res);
    h.counted = rt->counted;
    return h;
}

/* Commit the rank's current state (periodic checkpoint, or becoming idle). */
int ta_commit_now(ta_rt *rt, int idle) {
    ta_head h = ta_head_now(rt, idle ? TA_IDLE : 0);
    int committed;
    int rc = ta_commit(rt, &h, rt->q.t, rt->q.n, NULL, 0, &committed);
    if (committed) rt->idle_committed = idle;
    return rc;
}
