/*
 * ops.c -- put, get, delete and fetch-and-add over passive-target RMA.
 *
 * All traffic runs inside the one MPI_Win_lock_all epoch opened by
 * kv_open; completion is MPI_Win_flush.  A key's slot at a replica is found
 * by linear probing from its home index (hash mod slots), at most
 * max_probe slots.  Readers take no lock: they fetch a slot image and trust
 * it only if its checksum verifies (a torn copy is re-read a bounded number
 * of times, then the next replica is tried) and no writer holds it (see
 * kvo_lookup: that makes reads linearizable).  Writers lock, probe, write,
 * unlock; see the slot-lock protocol comment above kvo_lock().  Every wait
 * polls the watchdog, so a failure turns into KV_ERR_INTERRUPTED after
 * recovery instead of a hang, and no RMA call is issued once a failure is
 * known.
 */
#include "kv_internal.h"

#include <sched.h>
#include <stdlib.h>

#define KVO_MAX_R 16
/* The result words of struct kv_store: a lease read, a lock's and a lock
 * break's compare-and-swap, then one per lock released at once. */
enum { KVO_W_LEASE, KVO_W_LOCK, KVO_W_BREAK, KVO_W_UNLOCK, KVO_WORDS = KVO_W_UNLOCK + 2 * KVO_MAX_R };
#define KVO_SPIN_HOLDING 64   /* CAS attempts while holding other locks */

typedef struct kvo_key {
    const void *key;
    uint32_t klen;
    uint64_t kh;
    uint32_t home;
    int nrep;
    int ids[KVO_MAX_R];   /* replica member ids, ascending by current rank */
} kvo_key;

static int by_rank_cmp_ctx(const kv_store *s, int a, int b) {
    return s->target_of_id[a] - s->target_of_id[b];
}

/* Insertion sort of ids by window rank: the global lock order. */
static void sort_by_rank(const kv_store *s, int *ids, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && by_rank_cmp_ctx(s, ids[j - 1], ids[j]) > 0; j--) {
            int t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
}

static int kvo_prepare(kv_store *s, const void *key, size_t klen, kvo_key *k) {
    if (!s || !key || klen == 0) return KV_ERR_ARG;
    if (s->spare) return KV_ERR_SPARE;
    if (klen > s->cfg.max_key) return KV_ERR_KEY_TOO_LONG;
    k->key = key;
    k->klen = (uint32_t)klen;
    k->kh = kvh_hash(key, klen, 0);
    /* hash mod slots; a mask when slots is a power of two (the default),
     * the same value without a 64-bit division */
    k->home = (uint32_t)((s->nslots & (s->nslots - 1)) == 0 ? k->kh & (s->nslots - 1) : k->kh % s->nslots);
    k->nrep = kvh_replicas(s, k->kh, k->ids);
    sort_by_rank(s, k->ids, k->nrep);
    return KV_OK;
}

/* An RMA error: note a failure if it is one, report what to do. */
static int kvo_mpi_fail(kv_store *s, int rc) {
    int st = kvw_status(s, rc);
    if (st == KV_ERR_MPI && s->trace) {
        char msg[MPI_MAX_ERROR_STRING];
        int n = 0, cls = 0;
        MPI_Error_string(rc, msg, &n);
        MPI_Error_class(rc, &cls);
        KVR_TRACE(s, "RMA error %d class %d: %s", rc, cls, msg);
    }
    return st;
}

static inline MPI_Aint slot_disp(const kv_store *s, uint32_t idx) {
    return (MPI_Aint)idx * (MPI_Aint)s->slot_size;
}

/* The slot after idx in a probe sequence (idx < nslots; no division). */
static inline uint32_t next_slot(const kv_store *s, uint32_t idx) {
    return idx + 1 < s->nslots ? idx + 1 : 0;
}

int kvo_renew_results(kv_store *s) {
    unsigned char *buf = malloc(s->slot_size), *buf2 = calloc(1, s->slot_size);
    uint64_t *words = calloc(KVO_WORDS, sizeof *words);
    if (!buf || !buf2 || !words) {
        free(buf);
        free(buf2);
        free(words);
        return KV_ERR_NOMEM;
    }
    /* the old ones stay allocated: a late result may still land there */
    s->buf = buf;
    s->buf2 = buf2;
    s->words = words;
    return KV_OK;
}

/* Fetch `bytes` of slot idx at rank into buf; flush. */
static int kvo_read(kv_store *s, int rank, uint32_t idx, size_t bytes, unsigned char *buf) {
    if (s->failure_pending) return KV_ERR_INTERRUPTED;
    int rc = MPI_Get(buf, (int)bytes, MPI_BYTE, rank, slot_disp(s, idx), (int)bytes, MPI_BYTE, s->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(rank, s->win);
    if (rc != MPI_SUCCESS) return kvo_mpi_fail(s, rc);
    s->st.bytes_got += (long long)bytes;
    return KV_OK;
}

/* Read slot idx and classify it; a short read is completed with the rest. */
static int kvo_read_slot(kv_store *s, int rank, uint32_t idx, unsigned char *buf,
                         enum kvs_state *st) {
    int rc = kvo_read(s, rank, idx, s->read_size, buf);
    if (rc) return rc;
    *st = kvs_decode(buf, s->read_size, s->cfg.max_key, s->cfg.max_value);
    if (*st == KVS_SHORT) {
        rc = kvo_read(s, rank, idx, s->slot_size, buf);
        if (rc) return rc;
        *st = kvs_decode(buf, s->slot_size, s->cfg.max_key, s->cfg.max_value);
        if (*st == KVS_SHORT) *st = KVS_TORN;
    }
    return KV_OK;
}

/* Enter recovery for a pending failure and report the interruption. */
static int kvo_interrupted(kv_store *s) {
    int rc = kvr_recover(s);
    return (rc == KV_OK || rc == KV_WARN_DEGRADED) ? KV_ERR_INTERRUPTED : rc;
}

static int kvo_status(kv_store *s, int rc) {
    if (rc == KV_ERR_INTERRUPTED || s->failure_pending) return kvo_interrupted(s);
    if (rc == KV_OK && s->size < s->cfg.replicas) return KV_WARN_DEGRADED;
    return rc;
}

/* ------------------------------------------------------------------ get -- */

/* May the slot image in buf, of key k's probe window, be taken as it is?
 * A reader must not see a write half done across replicas: one reader
 * taking the new value from the first replica written and a later one the
 * old value from the second would not be linearizable.  A writer locks
 * the key's slots at every replica before it writes any and releases them
 * only when every copy is complete, so a reader trusts an image only when
 * it is unlocked -- or when it is another key's live pair, which no write
 * of k can overwrite (writers take only empty slots and tombstones). */
static bool kvo_settled(const kvo_key *k, const unsigned char *buf, enum kvs_state st) {
    if (st == KVS_TORN) return false;
    if (kvs_hdr_of(buf)->lock == 0) return true;
    return st == KVS_LIVE && !kvs_key_is(buf, k->key, k->klen);
}

/* A turn of a wait past its first few spins (a holder on another core
 * releases within them): test the watchdog, since the holder may be dead,
 * and let a preempted holder run (oversubscribed nodes).  True when a
 * failure is pending.  The first spins test nothing: a test drives the
 * whole progress engine, which on an oversubscribed node yields the core
 * by itself (detect.c), and a failure is noticed a few spins later. */
static bool kvo_back_off(kv_store *s) {
    if (kvw_test(s)) return true;
    sched_yield();
    return false;
}

/* A slot lock whose owner is no longer a member, found after the
 * recovery that removed it: an operation of the dead carried out late.
 * Over TCP a target applies an RMA operation (the lock's
 * compare-and-swap, or a write's image, which carries its lock word)
 * when it next drives progress, which can be after its recovery broke
 * every lock in its table; nobody will release such a lock (a node loss
 * across hosts left one, and the next writer of that key waited on it
 * for ever).  Break it with a compare-and-swap, so that a new holder is
 * never touched.  True when broken. */
static int kvo_cas(kv_store *s, int rank, uint32_t idx, uint64_t cmp, uint64_t set, uint64_t *got);
static bool kvo_break_dead(kv_store *s, int rank, uint32_t idx, uint64_t word) {
    int64_t owner = KVS_LOCK_OWNER(word);
    if (owner < 0 || owner >= s->nids || s->rank_of_id[owner] >= 0) return false;
    uint64_t *was = &s->words[KVO_W_BREAK];
    if (kvo_cas(s, rank, idx, word, 0, was) != KV_OK || *was != word) return false;
    s->st.locks_broken++;
    return true;
}

/* Look key up at one replica.  KV_OK with the slot image in s->buf, or
 * KV_ERR_NOT_FOUND, KV_ERR_CORRUPT (only torn copies), KV_ERR_BUSY (a
 * writer held the key's slot past lock_timeout_ms), KV_ERR_INTERRUPTED. */
static int kvo_lookup(kv_store *s, const kvo_key *k, int rank) {
    unsigned char *buf = s->buf;
    uint32_t probes = kvs_probes(s);
    for (uint32_t p = 0, idx = k->home; p < probes; p++, idx = next_slot(s, idx)) {
        enum kvs_state st;
        int64_t until = 0;
        uint64_t holder = 0;
        for (int tries = 0, waits = 0;;) {
            int rc = kvo_read_slot(s, rank, idx, buf, &st);
            if (rc) return rc;
            if (kvo_settled(k, buf, st)) break;
            if (st == KVS_TORN) {  /* a writer is in the middle of this slot */
                s->st.read_retries++;
                if (++tries > s->cfg.read_retries) return KV_ERR_CORRUPT;
            } else {  /* locked: wait for the writer, bounded (see kvo_lock) */
                s->st.lock_waits++;
                uint64_t word = kvs_hdr_of(buf)->lock;
                if (kvo_break_dead(s, rank, idx, word)) continue;
                if (waits++ == 0 || word != holder) {
                    holder = word;
                    until = kv_clock_ns() + (int64_t)s->cfg.lock_timeout_ms * 1000000;
                } else if ((waits & 63) == 0 && kv_clock_ns() > until) {
                    return KV_ERR_BUSY;
                }
            }
            if (tries + waits > 2 && kvo_back_off(s)) return KV_ERR_INTERRUPTED;
        }
        if (st == KVS_EMPTY) return KV_ERR_NOT_FOUND;
        if (kvs_key_is(buf, k->key, k->klen))
            return st == KVS_LIVE ? KV_OK : KV_ERR_NOT_FOUND;
    }
    return KV_ERR_NOT_FOUND;
}

/* An answer from this rank's own node alone, past its lease: read the
 * lock word of the key's home slot at a replica on another node first
 * (fence.c).  Only an evicted rank's read can fail it; with no replica on
 * another node there is nothing to fence. */
static int kvo_renew_lease(kv_store *s, const kvo_key *k, int64_t t0) {
    int id = kvf_off_node(s, k->ids, k->nrep);
    if (id < 0) return KV_OK;
    int rc = kvo_read(s, s->target_of_id[id], k->home, 8, (unsigned char *)&s->words[KVO_W_LEASE]);
    if (rc) return rc;
    s->st.lease_reads++;
    kvf_renew(s, t0);
    return KV_OK;
}

int kv_get(kv_store *s, const void *key, size_t klen, void *out, size_t buflen, size_t *vlen) {
    kvo_key k;
    int rc = kvo_prepare(s, key, klen, &k);
    if (rc) return rc;
    if (!out && buflen) return KV_ERR_ARG;
    if (kvw_maybe(s)) return kvo_interrupted(s);
    s->st.gets++;
    /* While copies are still being restored (online), the old holders. */
    if (s->bg) k.nrep = kvr_background_readable(s, k.kh, k.ids, k.nrep);
    /* Prefer a local copy, then replicas in placement order.  An answer
     * that no other node took part in needs the fence's lease (fence.c). */
    int order[KVO_MAX_R], n = 0;
    for (int i = 0; i < k.nrep; i++)
        if (k.ids[i] == s->my_id) order[n++] = k.ids[i];
    for (int i = 0; i < k.nrep; i++)
        if (k.ids[i] != s->my_id) order[n++] = k.ids[i];
    /* A miss is confirmed at every replica: a copy that re-replication
     * could not place (stats.restore_full) is then still found, and every
     * reader gives the same answer.  A torn copy falls back to the next. */
    rc = KV_ERR_NOT_FOUND;
    bool missed = false, elsewhere = false;
    int64_t t0 = kvf_start(s);
    for (int i = 0; i < n; i++) {
        int r = kvo_lookup(s, &k, s->target_of_id[order[i]]);
        bool answered = r == KV_OK || r == KV_ERR_NOT_FOUND || r == KV_ERR_CORRUPT || r == KV_ERR_BUSY;
        if (answered && s->node_of_id[order[i]] != s->my_node) elsewhere = true;
        if (r == KV_ERR_NOT_FOUND) { missed = true; rc = r; continue; }
        if (r != KV_ERR_CORRUPT) { rc = r; break; }
        s->st.replica_fallbacks++;
        if (!missed) rc = r;
    }
    if (elsewhere) kvf_renew(s, t0);
    else if ((rc == KV_OK || rc == KV_ERR_NOT_FOUND) && !kvf_leased(s, t0)) {
        int r = kvo_renew_lease(s, &k, t0);
        if (r) return kvo_status(s, r);
    }
    if (rc == KV_OK) {
        const kvs_hdr *h = kvs_hdr_of(s->buf);
        if (vlen) *vlen = h->vlen;
        if (h->vlen > buflen) return KV_ERR_BUFFER_TOO_SMALL;
        memcpy(out, kvs_val_of(s->buf, s->cfg.max_key), h->vlen);
    } else if (rc == KV_ERR_NOT_FOUND) {
        s->st.get_misses++;
    }
    return kvo_status(s, rc);
}

/* --------------------------------------------------------------- writes --
 * Slot-lock protocol (the lock word, first 8 bytes of every slot):
 *   free (0) --CAS by writer w--> held (w+1)     acquire
 *   held (w+1) --CAS w+1 -> 0 by w--> free       release, after the data is
 *                                                flushed to the target
 *   held (w+1) --recovery, w failed--> free      lock break (recover.c)
 * A writer first locks the key's home slot at every replica (all writers of
 * one key serialise there), then, if the key lives or will live in another
 * slot j of the probe window, locks j too (writers of other keys whose
 * probe windows overlap serialise there).  Locks are taken in ascending
 * (rank, probe order); a writer that finds a lock taken while it holds
 * others spins briefly, then releases everything and starts again, so no
 * cycle of waiters can form.  Writers never wait longer than
 * lock_timeout_ms for a live holder (KV_ERR_BUSY).
 */
typedef struct kvo_rep {
    int rank;
    uint32_t target;        /* slot written */
    bool found;             /* key present (live or deleted) in target */
    bool live;
    uint64_t version;       /* of the key at this replica, 0 if absent */
    int64_t counter;        /* value, for fetch-add */
    uint32_t vlen;
    int nlocks;
    uint32_t locks[2];
} kvo_rep;

typedef enum { KVO_PUT, KVO_DELETE, KVO_ADD, KVO_COPY } kvo_kind;

typedef struct kvo_write {
    kvo_kind kind;
    const void *val;
    uint32_t vlen;
    int64_t delta;
    int64_t old;            /* KVO_ADD: result */
} kvo_write;

/* The lock word of slot idx at rank, when the tables are mapped here. */
static inline uint64_t *kvo_shm_word(kv_store *s, int rank, uint32_t idx) {
    return (uint64_t *)(void *)(s->shm[rank] + slot_disp(s, idx));
}

/* One CAS on the lock word of slot idx; *got is the previous value.
 * On shared-memory windows of the workaround variants the CAS is the
 * processor's, on the mapped table, and not MPI_Compare_and_swap: stock
 * osc/sm guards every atomic to a target with a spin lock of its own in
 * shared memory, and a rank killed while holding that lock leaves every
 * later atomic to the target spinning inside Open MPI, where no watchdog
 * is ever tested (seen in about 2% of runs killed at random instants).
 * The lock words are only ever changed this way while s->shm is set. */
static int kvo_cas(kv_store *s, int rank, uint32_t idx, uint64_t cmp, uint64_t set, uint64_t *got) {
    if (s->failure_pending) return KV_ERR_INTERRUPTED;
    if (s->shm) {
        __atomic_compare_exchange_n(kvo_shm_word(s, rank, idx), &cmp, set, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        *got = cmp;
        return KV_OK;
    }
    int rc = MPI_Compare_and_swap(&set, &cmp, got, MPI_UINT64_T, rank, slot_disp(s, idx), s->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(rank, s->win);
    return rc == MPI_SUCCESS ? KV_OK : kvo_mpi_fail(s, rc);
}

/* Release every lock in reps.  Once a failure is pending nothing more is
 * issued: recovery clears every slot lock anyway (no operation is in
 * flight while it runs), and no RMA may reach a rank that may be dead.
 * Over RMA the release is a compare-and-swap of this write's lock word
 * for 0, not an MPI_REPLACE accumulate: osc/rdma does a compare-and-swap
 * as one atomic of its BTL, where a replace without a result is not one
 * of the BTL's atomics and took two round trips to a target (with the
 * target computing between MPI calls, two of its intervals; measured with
 * bench_progress's write across hosts). */
static void kvo_unlock_all(kv_store *s, kvo_rep *reps, int n) {
    const uint64_t zero = 0;
    uint64_t *was = &s->words[KVO_W_UNLOCK];  /* one result each: none is read */
    int nwas = 0;
    for (int i = 0; i < n; i++) {
        for (int l = 0; l < reps[i].nlocks && !s->failure_pending; l++) {
            if (s->shm) {  /* the data was flushed before: release orders it */
                __atomic_store_n(kvo_shm_word(s, reps[i].rank, reps[i].locks[l]), 0, __ATOMIC_RELEASE);
                continue;
            }
            MPI_Compare_and_swap(&zero, &s->lock_word, &was[nwas++], MPI_UINT64_T, reps[i].rank,
                                 slot_disp(s, reps[i].locks[l]), s->win);
        }
        reps[i].nlocks = 0;
    }
    if (nwas) {
        int rc = MPI_Win_flush_all(s->win);
        if (rc != MPI_SUCCESS) kvo_mpi_fail(s, rc);
    }
}

/* Acquire the lock of slot idx at rep; bounded.  KV_OK, KV_ERR_BUSY,
 * KV_ERR_INTERRUPTED, or 1 = "give way": release everything and restart.
 * The bound is lock_timeout_ms for one holder: the clock starts again
 * whenever the lock word changes (another writer, or the same writer's
 * next write), because then nobody is stuck.  A bound on the whole wait
 * instead failed healthy writes of a hot key: across hosts the writers
 * near the key's first replica take its lock far more often than those
 * whose compare-and-swap travels further, and with 6 ranks on 3 hosts a
 * far writer waited past 1 s while the lock changed hands every 10-30 ms
 * (docs/cluster.md). */
static int kvo_lock(kv_store *s, kvo_rep *rep, uint32_t idx, bool holding) {
    const uint64_t me = s->lock_word;
    uint64_t holder = 0;
    int64_t until = 0;
    for (int spin = 0;; spin++) {
        uint64_t *gotp = &s->words[KVO_W_LOCK];
        int rc = kvo_cas(s, rep->rank, idx, 0, me, gotp);
        uint64_t got = *gotp;
        if (rc) return rc;
        if (got == 0) {
            rep->locks[rep->nlocks++] = idx;
            return KV_OK;
        }
        s->st.lock_waits++;
        if (kvo_break_dead(s, rep->rank, idx, got)) continue;
        if (spin > 4 && kvo_back_off(s)) return KV_ERR_INTERRUPTED;
        if (holding && spin >= KVO_SPIN_HOLDING) return 1;
        if (spin == 0 || got != holder) {
            holder = got;
            until = kv_clock_ns() + (int64_t)s->cfg.lock_timeout_ms * 1000000;
        } else if ((spin & 63) == 63 && kv_clock_ns() > until) {
            return KV_ERR_BUSY;
        }
    }
}

/* Probe rep's table for key k: sets target/found/version.  KV_ERR_FULL
 * when neither the key nor a free slot is within reach. */
static int kvo_probe(kv_store *s, const kvo_key *k, kvo_rep *rep, int *first_free) {
    uint32_t probes = kvs_probes(s);
    *first_free = -1;
    for (uint32_t p = 0, idx = k->home; p < probes; p++, idx = next_slot(s, idx)) {
        enum kvs_state st;
        int rc = kvo_read_slot(s, rep->rank, idx, s->buf2, &st);
        if (rc) return rc;
        bool mine = (st == KVS_LIVE || st == KVS_DELETED) && kvs_key_is(s->buf2, k->key, k->klen);
        if (mine) {
            const kvs_hdr *h = kvs_hdr_of(s->buf2);
            rep->target = idx;
            rep->found = true;
            rep->live = st == KVS_LIVE;
            rep->version = h->version;
            rep->vlen = h->vlen;
            rep->counter = 0;
            if (rep->live && h->vlen == 8)
                memcpy(&rep->counter, kvs_val_of(s->buf2, s->cfg.max_key), 8);
            return KV_OK;
        }
        if (st == KVS_EMPTY || st == KVS_DELETED) {
            if (*first_free < 0) *first_free = (int)idx;
            if (st == KVS_EMPTY) break;  /* end of the probe chain */
        }
        /* live or torn slot of another key: keep probing */
    }
    if (*first_free < 0) return KV_ERR_FULL;
    rep->target = (uint32_t)*first_free;
    rep->found = false;
    rep->live = false;
    rep->version = 0;
    return KV_OK;
}

/* Is slot idx at rep still free for us (empty or another key's tombstone)? */
static int kvo_still_free(kv_store *s, const kvo_key *k, kvo_rep *rep, bool *ok) {
    enum kvs_state st;
    int rc = kvo_read_slot(s, rep->rank, rep->target, s->buf2, &st);
    if (rc) return rc;
    *ok = st == KVS_EMPTY || (st == KVS_DELETED && !kvs_key_is(s->buf2, k->key, k->klen));
    return KV_OK;
}

/* Phase 1 at one replica: lock home, probe, lock the target slot. */
static int kvo_claim(kv_store *s, const kvo_key *k, kvo_rep *rep, bool holding) {
    int rc = kvo_lock(s, rep, k->home, holding);
    if (rc) return rc;
    int first_free;
    rc = kvo_probe(s, k, rep, &first_free);
    if (rc || rep->target == k->home) return rc;
    rc = kvo_lock(s, rep, rep->target, true);
    if (rc) return rc;
    if (!rep->found) {
        bool ok;
        rc = kvo_still_free(s, k, rep, &ok);
        if (rc == KV_OK && !ok) rc = 1;  /* taken meanwhile: start again */
    }
    return rc;
}

/* Phase 2: decide the new image; returns KV_OK or an error that leaves
 * every replica unchanged. */
static int kvo_decide(kv_store *s, const kvo_key *k, kvo_rep *reps, int n, kvo_write *w,
                      uint64_t *version, bool *tomb, const void **val, uint32_t *vlen) {
    uint64_t vmax = 0;
    int src = -1;
    for (int i = 0; i < n; i++) {
        if (reps[i].version > vmax) { vmax = reps[i].version; src = i; }
    }
    *tomb = false;
    *val = w->val;
    *vlen = w->vlen;
    *version = vmax + 1;
    switch (w->kind) {
    case KVO_PUT: break;
    case KVO_DELETE:
        if (src < 0 || !reps[src].live) return KV_ERR_NOT_FOUND;
        *tomb = true;
        *vlen = 0;
        break;
    case KVO_ADD:
        w->old = 0;
        if (src >= 0 && reps[src].live) {
            if (reps[src].vlen != 8) return KV_ERR_NOT_COUNTER;
            w->old = reps[src].counter;
        }
        w->delta = (int64_t)((uint64_t)w->old + (uint64_t)w->delta);
        *val = &w->delta;
        *vlen = 8;
        break;
    case KVO_COPY: break;  /* kvo_copy decides */
    }
    (void)k;
    return KV_OK;
}

/* Write the image to every replica that needs it, one target at a time so
 * that a writer killed mid-way leaves at most one torn copy.  At each
 * target the complete image goes first to this writer's journal slot
 * (after the table), then into the key's slot: a slot overwritten in place
 * and torn by the writer's death is repaired from the journal in recovery,
 * so even a writer that holds another replica itself cannot take the old
 * and the new value down with it. */
static int kvo_store(kv_store *s, kvo_rep *reps, int n, const unsigned char *img, size_t len) {
    for (int i = 0; i < n; i++) {
        if (s->failure_pending) return KV_ERR_INTERRUPTED;
        uint32_t journal = (uint32_t)(s->nslots + (size_t)s->my_id);
        int rc = MPI_SUCCESS;
        if (reps[i].rank != s->target_self) {  /* a local copy dies with its writer: no journal */
            /* With the write's lock word, which marks it as in progress
             * for as long as the key's home slot holds that word. */
            rc = MPI_Put(img, (int)len, MPI_BYTE, reps[i].rank, slot_disp(s, journal), (int)len,
                         MPI_BYTE, s->win);
            if (rc == MPI_SUCCESS) rc = MPI_Win_flush(reps[i].rank, s->win);
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Put(img + 8, (int)(len - 8), MPI_BYTE, reps[i].rank,
                         slot_disp(s, reps[i].target) + 8, (int)(len - 8), MPI_BYTE, s->win);
        if (rc == MPI_SUCCESS) rc = MPI_Win_flush(reps[i].rank, s->win);
        if (rc != MPI_SUCCESS) return kvo_mpi_fail(s, rc);
        s->st.bytes_put += (long long)len;
    }
    return KV_OK;
}

/* Phase 2 and 3 of a copy (kvo_push): the local image, under this
 * write's locks, to every other replica whose version is older. */
static int kvo_copy(kv_store *s, kvo_rep *reps, int n) {
    kvo_rep *me = NULL, need[KVO_MAX_R];
    for (int i = 0; i < n; i++)
        if (reps[i].rank == s->target_self) me = &reps[i];
    if (!me || !me->found) return KV_ERR_NOT_FOUND;  /* gone: deleted, its slot taken */
    const unsigned char *src = s->base + slot_disp(s, me->target);
    enum kvs_state st = kvs_decode(src, s->slot_size, s->cfg.max_key, s->cfg.max_value);
    if (st != KVS_LIVE && st != KVS_DELETED) return KV_ERR_CORRUPT;
    size_t len = KVS_HDR_SIZE + s->cfg.max_key + kvs_hdr_of(src)->vlen;
    unsigned char *img = s->buf2;
    memcpy(img, src, len);
    ((kvs_hdr *)(void *)img)->lock = s->lock_word;  /* for the journal only */
    int m = 0;
    for (int i = 0; i < n; i++)
        if (&reps[i] != me && reps[i].version < kvs_hdr_of(img)->version) need[m++] = reps[i];
    int rc = kvo_store(s, need, m, img, len);
    if (rc == KV_OK) s->st.pairs_restored += m;
    return rc;
}

static int kvo_write_key(kv_store *s, const kvo_key *k, const int *ids, int n, kvo_write *w) {
    kvo_rep reps[KVO_MAX_R];
    s->lock_word = KVS_LOCK_WORD(++s->write_seq, s->my_id);
    int64_t deadline = 0;
    int rc;
    for (int attempt = 0;; attempt++) {
        memset(reps, 0, sizeof reps[0] * (size_t)n);
        rc = KV_OK;
        for (int i = 0; i < n && rc == KV_OK; i++) {
            reps[i].rank = s->target_of_id[ids[i]];
            rc = kvo_claim(s, k, &reps[i], i > 0);
            if (rc) kvo_unlock_all(s, reps, i + 1);
        }
        if (rc != 1) break;
        /* Giving way again and again is bounded as a whole, from the first
         * time (the clock is read only then: most writes never give way). */
        int64_t now = kv_clock_ns();
        if (attempt == 0) deadline = now + (int64_t)s->cfg.lock_timeout_ms * 1000000;
        else if (now > deadline) { rc = KV_ERR_BUSY; break; }
    }
    if (rc) {
        if (rc == KV_ERR_INTERRUPTED) kvr_note_affected(s, k->home);
        return rc;
    }
    uint64_t version = 0;
    bool tomb = false;
    const void *val = NULL;
    uint32_t vlen = 0;
    if (w->kind == KVO_COPY) rc = kvo_copy(s, reps, n);
    else rc = kvo_decide(s, k, reps, n, w, &version, &tomb, &val, &vlen);
    if (rc == KV_OK && w->kind != KVO_COPY) {
        unsigned char *img = s->buf2;
        kvs_encode(img, version, k->key, k->klen, val, vlen, tomb, s->cfg.max_key);
        ((kvs_hdr *)(void *)img)->lock = s->lock_word;  /* for the journal only */
        rc = kvo_store(s, reps, n, img, KVS_HDR_SIZE + s->cfg.max_key + vlen);
    }
    if (rc == KV_ERR_INTERRUPTED) kvr_note_affected(s, k->home);
    kvo_unlock_all(s, reps, n);
    return rc;
}

static int kvo_write_op(kv_store *s, const void *key, size_t klen, kvo_write *w) {
    kvo_key k;
    int rc = kvo_prepare(s, key, klen, &k);
    if (rc) return rc;
    if (kvw_maybe(s)) return kvo_interrupted(s);
    int64_t t0 = kvf_start(s);
    rc = kvo_write_key(s, &k, k.ids, k.nrep, w);
    if (rc == KV_OK && kvf_needed(s) && kvf_off_node(s, k.ids, k.nrep) >= 0) kvf_renew(s, t0);
    return kvo_status(s, rc);
}

int kv_put(kv_store *s, const void *key, size_t klen, const void *val, size_t vlen) {
    if (s && vlen > s->cfg.max_value) return KV_ERR_VALUE_TOO_LARGE;
    if (!val && vlen) return KV_ERR_ARG;
    kvo_write w = {.kind = KVO_PUT, .val = val, .vlen = (uint32_t)vlen};
    if (s) s->st.puts++;
    return kvo_write_op(s, key, klen, &w);
}

int kv_delete(kv_store *s, const void *key, size_t klen) {
    kvo_write w = {.kind = KVO_DELETE};
    if (s) s->st.deletes++;
    return kvo_write_op(s, key, klen, &w);
}

int kv_fetch_add(kv_store *s, const void *key, size_t klen, int64_t delta, int64_t *old) {
    if (s && s->cfg.max_value < 8) return KV_ERR_VALUE_TOO_LARGE;
    kvo_write w = {.kind = KVO_ADD, .delta = delta};
    if (s) s->st.fetch_adds++;
    int rc = kvo_write_op(s, key, klen, &w);
    if ((rc == KV_OK || rc == KV_WARN_DEGRADED) && old) *old = w.old;
    return rc;
}

static int push_key(kv_store *s, const void *key, size_t klen, const int *to, int nto) {
    kvo_key k;
    int rc = kvo_prepare(s, key, klen, &k);
    if (rc) return rc;
    if (nto + 1 > KVO_MAX_R) return KV_ERR_ARG;
    int ids[KVO_MAX_R];
    ids[0] = s->my_id;
    memcpy(ids + 1, to, (size_t)nto * sizeof(int));
    sort_by_rank(s, ids, nto + 1);
    kvo_write w = {.kind = KVO_COPY};
    return kvo_write_key(s, &k, ids, nto + 1, &w);
}

int kvo_push(kv_store *s, const void *key, size_t klen, const int *to, int nto, long long *restored) {
    long long before = s->st.pairs_restored;
    int rc = push_key(s, key, klen, to, nto);
    *restored += s->st.pairs_restored - before;
    if (rc == KV_ERR_FULL) s->st.restore_full++;
    return rc == KV_ERR_FULL || rc == KV_ERR_NOT_FOUND || rc == KV_ERR_CORRUPT ? KV_OK : rc;
}
