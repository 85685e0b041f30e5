/*
 * rereplicate.c -- restoring r copies of every pair after a failure.
 *
 * Runs inside recovery, when no operation is in flight anywhere, so it
 * needs neither RMA nor slot locks: every survivor scans its own table once
 * and, for each pair whose old replica set lost a member (or whose home is
 * "affected" by an interrupted write), packs the pair for every other
 * member of its new replica set.  One MPI_Alltoallv moves all packs; each
 * member then inserts what it received into its own table with
 * put-if-newer semantics (a copy replaces only an older version of the
 * same key), so the newest copy wins wherever copies disagree and a rerun
 * after a restarted recovery changes nothing.  Cost: one pass over the
 * local table plus one exchange, instead of a locked RMA write per pair.
 * The three parts are timed apart (scan_us, exchange_us, insert_us of
 * kv_recovery_times; the exchange includes gathering the packs).
 */
#include "kv_internal.h"

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

/* Which members need this local pair; packs it for each of them. */
static int pack_pair(kv_store *s, kvr_ctx *c, const unsigned char *slot, kvr_buf *bufs) {
    enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    if (st != KVS_LIVE && st != KVS_DELETED) return KV_OK;
    const kvs_hdr *h = kvs_hdr_of(slot);
    if (h->version == 0) return KV_OK;  /* placeholder of a broken write */
    uint64_t kh = kvh_hash(kvs_key_of(slot), KVS_KLEN(h), 0);
    int r = s->cfg.replicas, oldset[16], newset[16];
    int nr_old = r < c->nold ? r : c->nold;
    kvh_place(kh, c->old_ids, c->nold, nr_old, c->old_node, oldset);
    int nr_new = kvh_replicas(s, kh, newset);
    /* The pair moves when a holder died (under variant spare its id lives
     * on, at a replacement with an empty table) or its replica set
     * changed (the node map moved it: a replacement on another node). */
    bool mine = false, changed = nr_new != nr_old;
    for (int i = 0; i < nr_old; i++) {
        mine |= oldset[i] == s->my_id;
        bool kept = false;
        for (int j = 0; j < nr_new; j++) kept |= newset[j] == oldset[i];
        changed |= !kept || c->failed[oldset[i]];
    }
    if (!mine || (!changed && !kvr_home_affected(c, (uint32_t)(kh % s->nslots)))) return KV_OK;
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
 * slots and the version-0 placeholders of torn slots are free here. */
void kvr_insert_local(kv_store *s, const kvr_rec *r, const unsigned char *key,
                      const unsigned char *val) {
    uint32_t klen = r->klen & ~KVS_TOMB;
    uint64_t kh = kvh_hash(key, klen, 0);
    uint32_t probes = kvs_probes(s);
    unsigned char *target = NULL;
    for (uint32_t p = 0; p < probes; p++) {
        unsigned char *slot = s->base + ((kh + p) % s->nslots) * s->slot_size;
        enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
        if ((st == KVS_LIVE || st == KVS_DELETED) && kvs_key_is(slot, key, klen)) {
            if (kvs_hdr_of(slot)->version >= r->version) return;  /* ours is as new */
            target = slot;
            break;
        }
        bool placeholder = st == KVS_DELETED && kvs_hdr_of(slot)->version == 0;
        if ((st == KVS_EMPTY || placeholder) && !target) target = slot;
        if (st == KVS_EMPTY) break;
    }
    if (!target) {
        s->st.restore_full++;  /* no room within max_probe: the copy is lost here */
        return;
    }
    uint64_t lock = kvs_hdr_of(target)->lock;
    kvs_encode(target, r->version, key, klen, val, r->vlen, (r->klen & KVS_TOMB) != 0, s->cfg.max_key);
    ((kvs_hdr *)(void *)target)->lock = lock;
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

long long kvr_insert_all(kv_store *s, const unsigned char *data, size_t len) {
    size_t off = 0;
    long long n = 0;
    while (off < len) {
        kvr_rec r;
        if (len - off < sizeof r) return -1;
        memcpy(&r, data + off, sizeof r);
        uint32_t klen = r.klen & ~KVS_TOMB;
        if (klen == 0 || klen > s->cfg.max_key || r.vlen > s->cfg.max_value ||
            ((r.klen & KVS_TOMB) && r.vlen) || kvr_rec_size(r.klen, r.vlen) > len - off)
            return -1;  /* malformed: the rest is not trusted */
        const unsigned char *key = data + off + sizeof r;
        kvr_insert_local(s, &r, key, key + klen);
        off += kvr_rec_size(r.klen, r.vlen);
        n++;
    }
    return n;
}

/* Exchange the packs (counts, then bytes) and insert what arrived. */
static int exchange(kv_store *s, kvr_ctx *c, kvr_buf *bufs) {
    int n = s->size, rc = KV_ERR_NOMEM;
    int64_t t0 = kv_clock_ns();
    int *sc = calloc((size_t)n, sizeof(int)), *rcn = calloc((size_t)n, sizeof(int));
    int *sd = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    unsigned char *sendb = NULL, *recvb = NULL;
    size_t stot = 0, rtot = 0;
    if (!sc || !rcn || !sd || !rd) goto out;
    for (int i = 0; i < n; i++) {
        if (bufs[i].len > (size_t)1 << 30) { rc = KV_ERR_NOMEM; goto out; }  /* int counts */
        sc[i] = (int)bufs[i].len;
        sd[i] = (int)stot;
        stot += bufs[i].len;
    }
    rc = kvw_status(s, MPI_Alltoall(sc, 1, MPI_INT, rcn, 1, MPI_INT, s->comm));
    if (rc) goto out;
    KVR_POINT("exchange");
    for (int i = 0; i < n; i++) {
        rd[i] = (int)rtot;
        rtot += (size_t)rcn[i];
    }
    rc = KV_ERR_NOMEM;
    sendb = malloc(stot + 1);
    recvb = malloc(rtot + 1);
    if (!sendb || !recvb || stot > INT32_MAX || rtot > INT32_MAX) goto out;
    for (int i = 0; i < n; i++)
        if (bufs[i].len) memcpy(sendb + sd[i], bufs[i].data, bufs[i].len);  /* data NULL when empty */
    rc = kvw_status(s, MPI_Alltoallv(sendb, sc, sd, MPI_BYTE, recvb, rcn, rd, MPI_BYTE, s->comm));
    int64_t t1 = kv_clock_ns();
    c->rt.exchange_us += (double)(t1 - t0) / 1e3;
    if (rc == KV_OK) KVR_POINT("insert");
    if (rc == KV_OK && kvr_insert_all(s, recvb, rtot) < 0) rc = KV_ERR_CORRUPT;
    c->rt.insert_us += (double)(kv_clock_ns() - t1) / 1e3;
out:
    free(sc); free(rcn); free(sd); free(rd); free(sendb); free(recvb);
    return rc;
}

int kvr_rereplicate(kv_store *s, kvr_ctx *c) {
    kvr_buf *bufs = calloc((size_t)s->size, sizeof *bufs);
    if (!bufs) return KV_ERR_NOMEM;
    int rc = KV_OK;
    KVR_POINT("rereplicate");
    int64_t t0 = kv_clock_ns();
    for (size_t i = 0; i < s->nslots && rc == KV_OK; i++) {
        const unsigned char *slot = s->base + i * s->slot_size;
        if (kvs_hdr_of(slot)->version == 0 && kvs_hdr_of(slot)->klen == 0) continue;  /* empty */
        rc = pack_pair(s, c, slot, bufs);
    }
    c->rt.scan_us += (double)(kv_clock_ns() - t0) / 1e3;
    if (rc == KV_OK) rc = exchange(s, c, bufs);
    for (int i = 0; i < s->size; i++) free(bufs[i].data);
    free(bufs);
    return rc;
}
