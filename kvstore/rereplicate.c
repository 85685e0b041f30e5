/*
 * rereplicate.c -- restoring r copies of every pair after a failure.
 *
 * Runs inside recovery, when no operation is in flight anywhere, so it
 * needs neither RMA nor slot locks.  Every survivor first settles the
 * journals of interrupted writes, then scans its own table once: the
 * pass clears each slot lock it meets (the slot's home becomes
 * "affected", recover.c) and packs each pair whose old replica set lost a
 * member for every other member of its new replica set.  The members
 * then share their affected homes, and each packs the pairs at those
 * homes that the scan did not (a probe window per home, a handful of
 * slots).  The packs go point to point; each member inserts what it
 * receives into its own table with put-if-newer semantics (a copy
 * replaces only an older version of the same key), so the newest copy
 * wins wherever copies disagree and a rerun after a restarted recovery
 * changes nothing.  Cost: one pass over the local table plus one
 * exchange, instead of a locked RMA write per pair.  The three parts are
 * timed apart (scan_us, exchange_us, insert_us of kv_recovery_times; the
 * scan includes the journals, the exchange the affected homes, whose
 * sharing waits for the slowest scan, and the counts).
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <stdlib.h>

typedef struct kvr_buf {
    unsigned char *data;
    size_t len, cap;
} kvr_buf;

size_t kvr_rec_size(uint32_t klen, uint32_t vlen) {
    return (sizeof(kvr_rec) + (klen & ~KVS_TOMB) + vlen + 7) & ~(size_t)7;
}

static int buf_add(kvr_buf *b, const kvs_hdr *h, const unsigned char *key, const unsigned char *val) {
    size_t need = kvr_rec_size(h->klen, h->vlen);
    if (b->len + need > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->len + need) cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d) return KV_ERR_NOMEM;
        b->data = d;
        b->cap = cap;
    }
    kvr_rec r = {h->version, h->klen, h->vlen};
    unsigned char *p = b->data + b->len;
    memcpy(p, &r, sizeof r);
    memcpy(p + sizeof r, key, KVS_KLEN(h));
    memcpy(p + sizeof r + KVS_KLEN(h), val, h->vlen);
    b->len += need;
    return KV_OK;
}

/* Did the members only lose some of their number?  The survivors are
 * the old members in the same order, on the same nodes, with as many
 * copies per pair: then a replica set none of whose holders failed is
 * the new set too (placement is greedy by score, and removing members it
 * did not pick changes none of its picks), and the scan need not place a
 * pair a second time to know it stays. */
static bool only_removed(const kv_store *s, const kvr_ctx *c) {
    int r = s->cfg.replicas;
    if ((r < c->nold ? r : c->nold) != (r < s->size ? r : s->size)) return false;
    int j = 0;
    for (int i = 0; i < s->size; i++) {
        int id = s->live_ids[i];
        while (j < c->nold && c->old_ids[j] != id) j++;
        if (j == c->nold || s->node_of_id[id] != c->old_node[id]) return false;
    }
    return true;
}

enum pass { SCAN, AFFECTED };

/* Which members need this local pair; packs it for each of them.  In the
 * SCAN, the pairs whose holders changed; at an AFFECTED home (`home`,
 * unused in the scan), the pairs of that home the scan left, so that no
 * pair is packed twice.  The check word, the dearest part, is verified
 * only for the pairs that are packed: the decision needs the key alone,
 * whose length is checked first, and a torn slot that seems to move is
 * caught before it is packed. */
static int pack_pair(kv_store *s, kvr_ctx *c, enum pass pass, bool removed_only,
                     const unsigned char *slot, uint64_t home, kvr_buf *bufs) {
    const kvs_hdr *h = kvs_hdr_of(slot);
    /* version 0: empty, or the placeholder of a broken write */
    if (h->version == 0 || !kvs_lengths_ok(h->klen, h->vlen, s->cfg.max_key, s->cfg.max_value))
        return KV_OK;
    uint64_t kh = kvh_hash(kvs_key_of(slot), KVS_KLEN(h), 0);
    if (pass == AFFECTED && kh % s->nslots != home) return KV_OK;
    int r = s->cfg.replicas, oldset[16], newset[16];
    int nr_old = r < c->nold ? r : c->nold;
    kvh_place(kh, c->old_ids, c->nold, nr_old, c->old_by_node ? c->old_node : NULL, oldset);
    /* The pair moves when a holder died (under variant spare its id lives
     * on, at a replacement with an empty table) or its replica set
     * changed (the node map moved it: a replacement on another node). */
    bool mine = false, changed = false;
    for (int i = 0; i < nr_old; i++) {
        mine |= oldset[i] == s->my_id;
        changed |= c->failed[oldset[i]];
    }
    if (!mine) return KV_OK;
    if (pass == SCAN && !changed && removed_only) return KV_OK;
    int nr_new = kvh_replicas(s, kh, newset);
    changed |= nr_new != nr_old;
    for (int i = 0; i < nr_old; i++) {
        bool kept = false;
        for (int j = 0; j < nr_new; j++) kept |= newset[j] == oldset[i];
        changed |= !kept;
    }
    if (changed != (pass == SCAN)) return KV_OK;
    enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    if (st != KVS_LIVE && st != KVS_DELETED) return KV_OK;
    for (int i = 0; i < nr_new; i++) {
        if (newset[i] == s->my_id) continue;
        int rc = buf_add(&bufs[s->rank_of_id[newset[i]]], h, kvs_key_of(slot),
                         kvs_val_of(slot, s->cfg.max_key));
        if (rc) return rc;
        s->st.pairs_restored++;
        c->rt.pairs_restored++;
    }
    return KV_OK;
}

/* Put-if-newer of one received pair into the local table.  Deletions are
 * versioned like writes: a tombstone is stored even where the key is
 * absent, so a live copy of an older version that arrives after it (the
 * order of the exchange is arbitrary) cannot bring the key back.  For the
 * same reason a received pair never takes the slot of another key's
 * tombstone, whose own older copies may still be on their way; only empty
 * slots and the version-0 placeholders of torn slots are free here.  A
 * probed slot's check word is verified only when its key is this one or
 * its version is 0 (a placeholder, or torn): a slot holding another key,
 * torn or not, is passed over either way. */
static void insert_at(kv_store *s, const kvr_rec *r, const unsigned char *key,
                      const unsigned char *val, uint64_t kh) {
    uint32_t klen = r->klen & ~KVS_TOMB;
    uint32_t probes = kvs_probes(s);
    unsigned char *target = NULL;
    for (uint32_t p = 0; p < probes; p++) {
        unsigned char *slot = s->base + ((kh + p) % s->nslots) * s->slot_size;
        const kvs_hdr *h = kvs_hdr_of(slot);
        if (h->version == 0 && h->klen == 0 && h->vlen == 0 && h->check == 0) {  /* empty */
            if (!target) target = slot;
            break;
        }
        if (h->version != 0 && !kvs_key_is(slot, key, klen)) continue;
        enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
        if ((st == KVS_LIVE || st == KVS_DELETED) && kvs_key_is(slot, key, klen)) {
            if (h->version >= r->version) return;  /* ours is as new */
            target = slot;
            break;
        }
        if (st == KVS_DELETED && h->version == 0 && !target) target = slot;  /* placeholder */
    }
    if (!target) {
        s->st.restore_full++;  /* no room within max_probe: the copy is lost here */
        return;
    }
    uint64_t lock = kvs_hdr_of(target)->lock;
    kvs_encode(target, r->version, key, klen, val, r->vlen, (r->klen & KVS_TOMB) != 0, s->cfg.max_key);
    ((kvs_hdr *)(void *)target)->lock = lock;
}

void kvr_insert_local(kv_store *s, const kvr_rec *r, const unsigned char *key,
                      const unsigned char *val) {
    insert_at(s, r, key, val, kvh_hash(key, r->klen & ~KVS_TOMB, 0));
}

bool kvr_apply_image(kv_store *s, const unsigned char *img, uint64_t *home) {
    enum kvs_state st = kvs_decode(img, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    const kvs_hdr *h = kvs_hdr_of(img);
    if ((st != KVS_LIVE && st != KVS_DELETED) || h->version == 0) return false;
    kvr_rec r = {h->version, h->klen, h->vlen};
    *home = kvh_hash(kvs_key_of(img), KVS_KLEN(h), 0) % s->nslots;
    kvr_insert_local(s, &r, kvs_key_of(img), kvs_val_of(img, s->cfg.max_key));
    return true;
}

/* The records arrive in no useful order, so each insert's home slot is a
 * cache (and TLB) miss in a table of hundreds of megabytes.  The stream is
 * walked twice, KVR_AHEAD records apart: the leading walk checks a record,
 * hashes its key and prefetches its home; the trailing one inserts the
 * record the leading walk reached KVR_AHEAD records before, its home by
 * then on its way to the cache. */
enum { KVR_AHEAD = 16 };

/* The record at data + off, checked against the limits and the bytes
 * left; false when malformed. */
static bool rec_at(const kv_store *s, const unsigned char *data, size_t len, size_t off, kvr_rec *r) {
    if (len - off < sizeof *r) return false;
    memcpy(r, data + off, sizeof *r);
    return kvs_lengths_ok(r->klen, r->vlen, s->cfg.max_key, s->cfg.max_value) &&
           kvr_rec_size(r->klen, r->vlen) <= len - off;
}

long long kvr_insert_all(kv_store *s, const unsigned char *data, size_t len) {
    struct { size_t off; uint64_t kh; } ring[KVR_AHEAD];
    size_t lead = 0;
    long long n = 0, led = 0;
    bool bad = false;  /* the leading walk met a malformed record: the rest is not trusted */
    for (;;) {
        if (led - n < KVR_AHEAD && lead < len && !bad) {  /* the leading walk: one record further */
            kvr_rec r;
            if (!rec_at(s, data, len, lead, &r)) {
                bad = true;
                continue;
            }
            uint64_t kh = kvh_hash(data + lead + sizeof r, r.klen & ~KVS_TOMB, 0);
            __builtin_prefetch(s->base + (kh % s->nslots) * s->slot_size, 1);
            ring[led % KVR_AHEAD].off = lead;
            ring[led % KVR_AHEAD].kh = kh;
            led++;
            lead += kvr_rec_size(r.klen, r.vlen);
            continue;
        }
        if (n == led) return bad ? -1 : n;  /* the records before a malformed one are in */
        size_t off = ring[n % KVR_AHEAD].off;
        kvr_rec r;
        memcpy(&r, data + off, sizeof r);
        const unsigned char *key = data + off + sizeof r;
        insert_at(s, &r, key, key + (r.klen & ~KVS_TOMB), ring[n % KVR_AHEAD].kh);
        n++;
    }
}

/* Exchange the packs and insert what arrived.  The counts go by one
 * MPI_Alltoall (which also waits for the slowest scan); the packs then go
 * point to point, each straight from its buffer (no copy into one send
 * buffer), and each arrival is inserted while the others are still on
 * their way.  On an error every request left is ended by revoking the
 * communicator before its buffer is freed (after a revoke every pending
 * operation on it completes). */
enum { KVR_TAG = 7 };  /* the store's only point-to-point traffic on its member comm */

static int exchange(kv_store *s, kvr_ctx *c, kvr_buf *bufs) {
    int n = s->size, me = s->rank, rc = KV_ERR_NOMEM, nreq = 0;
    int64_t t0 = kv_clock_ns();
    int *sc = calloc((size_t)n, sizeof(int)), *rcn = calloc((size_t)n, sizeof(int));
    int *from = calloc((size_t)n, sizeof(int));
    MPI_Request *req = malloc((size_t)(2 * n + 1) * sizeof *req);
    unsigned char **recvb = calloc((size_t)n, sizeof *recvb);
    double insert_us = 0;
    if (!sc || !rcn || !from || !req || !recvb) goto out;
    for (int i = 0; i < n; i++) {
        if (bufs[i].len > INT32_MAX) goto out;  /* int counts */
        sc[i] = (int)bufs[i].len;
    }
    rc = kvw_status(s, MPI_Alltoall(sc, 1, MPI_INT, rcn, 1, MPI_INT, s->comm));
    if (rc) goto out;
    KVR_POINT("exchange");
    rc = KV_ERR_NOMEM;
    int nrecv = 0;
    for (int i = 0; i < n; i++) {
        if (i == me || !rcn[i]) continue;
        if (!(recvb[i] = malloc((size_t)rcn[i]))) goto out;
        from[nrecv++] = i;
    }
    rc = KV_OK;
    for (int k = 0; k < nrecv && rc == KV_OK; k++, nreq++)
        rc = kvw_status(s, MPI_Irecv(recvb[from[k]], rcn[from[k]], MPI_BYTE, from[k], KVR_TAG,
                                     s->comm, &req[nreq]));
    for (int i = 0; i < n && rc == KV_OK; i++) {
        if (i == me || !sc[i]) continue;
        rc = kvw_status(s, MPI_Isend(bufs[i].data, sc[i], MPI_BYTE, i, KVR_TAG, s->comm, &req[nreq]));
        if (rc == KV_OK) nreq++;
    }
    if (rc == KV_OK) KVR_POINT("insert");
    for (int left = nrecv; rc == KV_OK && left > 0; left--) {  /* the receives are req[0..nrecv) */
        int k;
        rc = kvw_status(s, MPI_Waitany(nrecv, req, &k, MPI_STATUS_IGNORE));
        if (rc) break;
        int64_t w1 = kv_clock_ns();
        if (kvr_insert_all(s, recvb[from[k]], (size_t)rcn[from[k]]) < 0) rc = KV_ERR_CORRUPT;
        insert_us += (double)(kv_clock_ns() - w1) / 1e3;
    }
    if (rc == KV_OK) rc = kvw_status(s, MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
out:
    if (rc && nreq) {  /* end what is still pending before its buffer goes */
        MPIX_Comm_revoke(s->comm);
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    }
    /* The exchange's time is all but the inserts; both are maxima later. */
    c->rt.insert_us += insert_us;
    c->rt.exchange_us += (double)(kv_clock_ns() - t0) / 1e3 - insert_us;
    for (int i = 0; recvb && i < n; i++) free(recvb[i]);
    free(sc); free(rcn); free(from); free(req); free(recvb);
    return rc;
}

/* The pairs at the affected homes that the scan left: each home's probe
 * window, the pairs whose key has that home. */
static int pack_affected(kv_store *s, kvr_ctx *c, kvr_buf *bufs) {
    for (int k = 0; k < c->nhomes; k++) {
        for (uint32_t p = 0; p < kvs_probes(s); p++) {
            const unsigned char *slot = s->base + ((c->homes[k] + p) % s->nslots) * s->slot_size;
            int rc = pack_pair(s, c, AFFECTED, false, slot, c->homes[k], bufs);
            if (rc) return rc;
        }
    }
    return KV_OK;
}

int kvr_rereplicate(kv_store *s, kvr_ctx *c) {
    kvr_buf *bufs = calloc((size_t)s->size, sizeof *bufs);
    if (!bufs) return KV_ERR_NOMEM;
    int rc = KV_OK;
    KVR_POINT("rereplicate");
    int64_t t0 = kv_clock_ns();
    kvr_settle_journals(s, c->failed);
    bool removed_only = only_removed(s, c);
    for (size_t i = 0; i < s->nslots && rc == KV_OK; i++) {
        unsigned char *slot = s->base + i * s->slot_size;
        if (kvs_hdr_of(slot)->lock) kvr_break_lock(s, i, c->failed);  /* a call per locked slot only */
        rc = pack_pair(s, c, SCAN, removed_only, slot, 0, bufs);
    }
    int64_t t1 = kv_clock_ns();
    c->rt.scan_us += (double)(t1 - t0) / 1e3;
    if (rc == KV_OK) rc = kvr_share_affected(s, c);
    if (rc == KV_OK) rc = pack_affected(s, c, bufs);
    c->rt.exchange_us += (double)(kv_clock_ns() - t1) / 1e3;
    if (rc == KV_OK) rc = exchange(s, c, bufs);
    for (int i = 0; i < s->size; i++) free(bufs[i].data);
    free(bufs);
    return rc;
}
