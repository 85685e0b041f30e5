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
 * slots).  The packs go point to point in chunks of bounded size while
 * the scan still runs (stream.c), and each member inserts what it
 * receives into its own table with put-if-newer semantics (a copy
 * replaces only an older version of the same key), so the newest copy
 * wins wherever copies disagree and a rerun after a restarted recovery
 * changes nothing.  Cost: one pass over the local table plus one
 * exchange, instead of a locked RMA write per pair.  The three parts are
 * timed apart (scan_us, exchange_us, insert_us of kv_recovery_times):
 * the scan with the journals, less the exchange and the inserts that ran
 * inside it; the exchange, with the waits for room and for arrivals (the
 * last arrivals wait for the slowest scan) and the sharing of the
 * affected homes; the inserts.
 */
#include "kv_internal.h"

#include <mpi-ext.h>
#include <stdlib.h>

size_t kvr_rec_size(uint32_t klen, uint32_t vlen) {
    return (sizeof(kvr_rec) + (klen & ~KVS_TOMB) + vlen + 7) & ~(size_t)7;
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

/* SCAN: the pairs whose holders changed; AFFECTED: the pairs of an
 * affected home that the scan left. */
enum pass { SCAN, AFFECTED };

/* Pack a local pair for every member of newset[0..n) but this one. */
static int send_pair(kv_store *s, kvr_ctx *c, const unsigned char *slot, const int *newset, int n,
                     kvr_stream *st) {
    enum kvs_state state = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    if (state != KVS_LIVE && state != KVS_DELETED) return KV_OK;
    for (int i = 0; i < n; i++) {
        if (newset[i] == s->my_id) continue;
        int rc = kvr_stream_add(st, s->rank_of_id[newset[i]], kvs_hdr_of(slot), kvs_key_of(slot),
                                kvs_val_of(slot, s->cfg.max_key));
        if (rc) return rc;
        s->st.pairs_restored++;
        c->rt.pairs_restored++;
    }
    return KV_OK;
}

/* Which members need this local pair; packs it for each of them.  In the
 * SCAN, the pairs whose holders changed; at an AFFECTED home (`home`,
 * unused in the scan), the pairs of that home the scan left, so that no
 * pair is packed twice.  The check word, the dearest part, is verified
 * only for the pairs that are packed: the decision needs the key alone,
 * whose length is checked first, and a torn slot that seems to move is
 * caught before it is packed. */
static int pack_pair(kv_store *s, kvr_ctx *c, enum pass pass, bool removed_only,
                     const unsigned char *slot, uint64_t home, kvr_stream *st) {
    const kvs_hdr *h = kvs_hdr_of(slot);
    /* version 0: empty, or the placeholder of a broken write */
    if (h->version == 0 || !kvs_lengths_ok(h->klen, h->vlen, s->cfg.max_key, s->cfg.max_value))
        return KV_OK;
    uint64_t kh = kvh_hash(kvs_key_of(slot), KVS_KLEN(h), 0);
    if (pass != SCAN && kh % s->nslots != home) return KV_OK;
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
    return send_pair(s, c, slot, newset, nr_new, st);
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

/* The pairs at the affected homes that the scan left: each home's probe
 * window, the pairs whose key has that home. */
static int pack_affected(kv_store *s, kvr_ctx *c, enum pass pass, kvr_stream *st) {
    for (int k = 0; k < c->nhomes; k++) {
        for (uint32_t p = 0; p < kvs_probes(s); p++) {
            const unsigned char *slot = s->base + ((c->homes[k] + p) % s->nslots) * s->slot_size;
            int rc = pack_pair(s, c, pass, false, slot, c->homes[k], st);
            if (rc) return rc;
        }
    }
    return KV_OK;
}

/* The tags of the two streams: the store's only point-to-point traffic
 * on its members' communicator. */
enum { KVR_TAG_SCAN = 7, KVR_TAG_AFFECTED = 8 };
/* Slots scanned between two looks at the arrivals.  A look is an
 * MPI_Testany, which polls the TCP sockets: on the 2-core test machine
 * looking every 128 slots instead of every 1024 made the 4 x 1M recovery
 * about 100 ms longer, some 10 us a look.  Every 8192 slots is about 180
 * looks in a 1.5-million-slot scan of 40-60 ms, often enough to keep the
 * chunks moving: in alternating runs against 1024, re-replication's
 * median was 146 ms against 157 at 4 ranks (8 runs each) and 230-239 ms
 * against 387-433 at 8 (2 each). */
enum { KVR_POLL_SLOTS = 8192 };

int kvr_rereplicate(kv_store *s, kvr_ctx *c) {
    KVR_POINT("rereplicate");
    int64_t t0 = kv_clock_ns();
    double aside = c->rt.exchange_us + c->rt.insert_us;  /* what the scan's time leaves out */
    kvr_settle_journals(s, c->failed);
    bool removed_only = only_removed(s, c);
    kvr_stream *st;
    int rc = kvr_stream_open(s, c, KVR_TAG_SCAN, true, &st);
    for (size_t i = 0; i < s->nslots && rc == KV_OK; i++) {
        unsigned char *slot = s->base + i * s->slot_size;
        if (kvs_hdr_of(slot)->lock) kvr_break_lock(s, i, c->failed);  /* a call per locked slot only */
        rc = pack_pair(s, c, SCAN, removed_only, slot, 0, st);
        if (rc == KV_OK && i % KVR_POLL_SLOTS == 0) rc = kvr_stream_poll(st);
    }
    c->rt.scan_us += (double)(kv_clock_ns() - t0) / 1e3 - (c->rt.exchange_us + c->rt.insert_us - aside);
    if (rc == KV_OK) rc = kvr_stream_finish(st);
    kvr_stream_close(st);
    int64_t t1 = kv_clock_ns();
    if (rc == KV_OK) rc = kvr_share_affected(s, c);
    c->rt.exchange_us += (double)(kv_clock_ns() - t1) / 1e3;
    if (rc != KV_OK || c->nhomes == 0) return rc;  /* every member knows the same homes */
    rc = kvr_stream_open(s, c, KVR_TAG_AFFECTED, false, &st);
    if (rc == KV_OK) rc = pack_affected(s, c, AFFECTED, st);
    if (rc == KV_OK) rc = kvr_stream_finish(st);
    kvr_stream_close(st);
    return rc;
}

/* Variant online's settling of the affected homes: every pair there
 * that this member holds goes to the other members of its replica set by
 * RMA, with the slot locks of a write and put-if-newer (kvo_push), as its
 * background copies do.  A handful of pairs, where a stream costs a
 * message from every member to every other and the waits for them; the
 * attempt's closing agreement tells every member that all pushes are
 * complete.  A lock that stays taken (another member's push of the same
 * key) is waited for again, at most KVR_PUSH_TRIES times. */
enum { KVR_PUSH_TRIES = 8 };
static int push_affected(kv_store *s, kvr_ctx *c) {
    for (int k = 0; k < c->nhomes; k++) {
        for (uint32_t p = 0; p < kvs_probes(s); p++) {
            const unsigned char *slot = s->base + ((c->homes[k] + p) % s->nslots) * s->slot_size;
            const kvs_hdr *h = kvs_hdr_of(slot);
            if (h->version == 0 || !kvs_lengths_ok(h->klen, h->vlen, s->cfg.max_key, s->cfg.max_value))
                continue;
            enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
            uint32_t klen = KVS_KLEN(h);
            uint64_t kh = kvh_hash(kvs_key_of(slot), klen, 0);
            if ((st != KVS_LIVE && st != KVS_DELETED) || kh % s->nslots != c->homes[k]) continue;
            unsigned char key[s->cfg.max_key > 0 ? s->cfg.max_key : 1];
            memcpy(key, kvs_key_of(slot), klen);  /* the slot may change under the push */
            int set[16], to[16], nto = 0, n = kvh_replicas(s, kh, set);
            for (int i = 0; i < n; i++)
                if (set[i] != s->my_id) to[nto++] = set[i];
            int rc = KV_ERR_BUSY;
            for (int tries = 0; rc == KV_ERR_BUSY && tries < KVR_PUSH_TRIES; tries++)
                rc = nto ? kvo_push(s, key, klen, to, nto, &c->rt.pairs_restored) : KV_OK;
            if (rc != KV_OK) return rc;
        }
    }
    return KV_OK;
}

int kvr_reconcile(kv_store *s, kvr_ctx *c) {
    KVR_POINT("rereplicate");
    int64_t t1 = kv_clock_ns();
    KVR_POINT("exchange");  /* this recovery's only exchange may be this one */
    int rc = kvr_share_affected(s, c);
    KVR_TRACE(s, "affected shared: %d homes", c->nhomes);
    if (rc == KV_OK) rc = push_affected(s, c);
    c->rt.exchange_us += (double)(kv_clock_ns() - t1) / 1e3;
    return rc;
}
