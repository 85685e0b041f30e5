/*
 * audit.c -- do the replicas agree?  (kv_audit)
 *
 * Every member scans its own table once and, for each pair it holds under
 * the current placement, sends a digest -- key hash, version, live or
 * deleted, checksum -- to every replica of that pair, itself included.
 * One MPI_Alltoallv moves the digests.  Each member then sorts what it
 * received by key hash and judges the pairs whose first replica it is (so
 * each pair is judged once): if any replica holds the pair live, all
 * replicas must report the same live version and checksum.  A tombstone
 * and an absent copy agree (both say deleted).  The counts are summed.
 *
 * The audit ends with an agreement on whether every member got through:
 * a failure during its last collective can let it complete at some
 * members and not at others (a member that died after sending to some of
 * them), and those that had it then went on to kv_close's barrier while
 * the one that had not recovered and ran the audit again: the survivors
 * waited for ever in different collectives (1 of 201 soak runs of
 * online, two ranks killed as the run closed).  Agreed, all return
 * KV_ERR_INTERRUPTED together, or all succeed and meet the failure later.
 */
#include "kv_internal.h"

#include <stdlib.h>

typedef struct kva_digest {
    uint64_t kh, version, check;
    uint64_t live;   /* 1 live, 0 tombstone */
} kva_digest;

static int digest_cmp(const void *a, const void *b) {
    const kva_digest *x = a, *y = b;
    return (x->kh > y->kh) - (x->kh < y->kh);
}

/* Digests of the local pairs, grouped by destination rank. */
static int collect(kv_store *s, kva_digest **out, int *counts) {
    int nrep = s->cfg.replicas < s->size ? s->cfg.replicas : s->size, ids[16];
    size_t n = 0, cap = 1024;
    kva_digest *d = malloc(cap * sizeof *d);
    int *dest = malloc(cap * sizeof *dest);
    if (!d || !dest) { free(d); free(dest); return KV_ERR_NOMEM; }
    for (size_t i = 0; i < s->nslots; i++) {
        const unsigned char *slot = s->base + i * s->slot_size;
        enum kvs_state st = kvs_decode(slot, s->slot_size, s->cfg.max_key, s->cfg.max_value);
        const kvs_hdr *h = kvs_hdr_of(slot);
        if ((st != KVS_LIVE && st != KVS_DELETED) || h->version == 0) continue;
        uint64_t kh = kvh_hash(kvs_key_of(slot), KVS_KLEN(h), 0);
        kvh_replicas(s, kh, ids);
        bool mine = false;
        for (int r = 0; r < nrep; r++) mine |= ids[r] == s->my_id;
        if (!mine) continue;  /* a stray copy outside the placement: not read by anyone */
        for (int r = 0; r < nrep; r++) {
            if (n == cap) {
                cap *= 2;
                kva_digest *nd = realloc(d, cap * sizeof *d);
                int *ndest = nd ? realloc(dest, cap * sizeof *dest) : NULL;
                if (nd) d = nd;
                if (ndest) dest = ndest;
                if (!nd || !ndest) { free(d); free(dest); return KV_ERR_NOMEM; }
            }
            d[n] = (kva_digest){kh, h->version, h->check, st == KVS_LIVE};
            dest[n++] = s->rank_of_id[ids[r]];
        }
    }
    /* Stable grouping by destination (counting sort). */
    kva_digest *g = malloc((n ? n : 1) * sizeof *g);
    int *at = calloc((size_t)s->size + 1, sizeof(int));
    if (!g || !at) { free(d); free(dest); free(g); free(at); return KV_ERR_NOMEM; }
    for (size_t i = 0; i < n; i++) counts[dest[i]]++;
    for (int r = 0; r < s->size; r++) at[r + 1] = at[r] + counts[r];
    for (size_t i = 0; i < n; i++) g[at[dest[i]]++] = d[i];
    free(d); free(dest); free(at);
    *out = g;
    return KV_OK;
}

/* Pairs judged here that differ among the digests in rx[0..n), sorted. */
static long long judge(kv_store *s, const kva_digest *rx, size_t n) {
    int nrep = s->cfg.replicas < s->size ? s->cfg.replicas : s->size, ids[16];
    long long bad = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i, live = 0;
        bool same = true;
        const kva_digest *first_live = NULL;
        for (; j < n && rx[j].kh == rx[i].kh; j++) {
            if (!rx[j].live) continue;
            live++;
            if (!first_live) first_live = &rx[j];
            else same &= rx[j].version == first_live->version && rx[j].check == first_live->check;
        }
        kvh_replicas(s, rx[i].kh, ids);
        if (ids[0] == s->my_id && live > 0 && (live != (size_t)nrep || !same)) bad++;
        i = j;
    }
    return bad;
}

int kv_audit(kv_store *s, long long *divergent) {
    if (!s || !divergent) return KV_ERR_ARG;
    if (s->spare) return KV_ERR_SPARE;
    *divergent = 0;
    if (s->bg) {  /* variant online: every copy made first */
        int rc = kvr_background_finish(s);
        if (rc != KV_OK && rc != KV_WARN_DEGRADED) return rc;
    }
    int n = s->size, *sc = calloc((size_t)n, sizeof(int)), *rcn = calloc((size_t)n, sizeof(int));
    int *sd = calloc((size_t)n, sizeof(int)), *rd = calloc((size_t)n, sizeof(int));
    kva_digest *tx = NULL, *rx = NULL;
    long long bad = 0, total = 0;
    int rc = (sc && rcn && sd && rd) ? collect(s, &tx, sc) : KV_ERR_NOMEM;
    if (rc == KV_OK) rc = kvw_status(s, MPI_Alltoall(sc, 1, MPI_INT, rcn, 1, MPI_INT, s->comm));
    size_t rtot = 0;
    if (rc == KV_OK) {
        for (int r = 0, at = 0; r < n; r++) {
            sd[r] = at * (int)sizeof *tx;
            at += sc[r];
            sc[r] *= (int)sizeof *tx;
            rd[r] = (int)(rtot * sizeof *rx);
            rtot += (size_t)rcn[r];
            rcn[r] *= (int)sizeof *rx;
        }
        rx = malloc((rtot ? rtot : 1) * sizeof *rx);
        if (!rx) rc = KV_ERR_NOMEM;
    }
    if (rc == KV_OK)
        rc = kvw_status(s, MPI_Alltoallv(tx, sc, sd, MPI_BYTE, rx, rcn, rd, MPI_BYTE, s->comm));
    if (rc == KV_OK) {
        qsort(rx, rtot, sizeof *rx, digest_cmp);
        bad = judge(s, rx, rtot);
        rc = kvw_status(s, MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, s->comm));
    }
    free(sc); free(rcn); free(sd); free(rd); free(tx); free(rx);
    if (s->vt->detects && (rc == KV_OK || rc == KV_ERR_INTERRUPTED)) rc = kvr_members_agree(s, rc);
    if (rc == KV_ERR_INTERRUPTED) {
        int r = kvr_recover(s);
        return (r == KV_OK || r == KV_WARN_DEGRADED) ? KV_ERR_INTERRUPTED : r;
    }
    if (rc == KV_OK) *divergent = total;
    return rc;
}
