/*
 * hash.c -- hashing and rendezvous placement.
 *
 * kvh_hash is a word-at-a-time 64-bit hash built on one 64x64->128-bit
 * multiply per 16 bytes (the folded-multiply idea of wyhash, written here
 * from scratch); a key's last partial word is read with at most two loads
 * inside the key's bytes instead of a copy of unknown length.  Placement
 * is rendezvous (highest-random-weight) hashing: a key's replicas are the
 * r members with the highest mix(key hash, member id), taken best first
 * but skipping a member whose node already holds a replica, so that the
 * copies sit on r distinct nodes whenever the members span that many (a
 * node loss is then a single failure for every pair); when they span
 * fewer, the best members not yet taken fill the set.  When a member
 * leaves, only the keys it held move (a member skipped for its node never
 * shaped anybody's set), and every process computes the same answer from
 * the same member list and node map.  Every operation hashes and places
 * its key, so the mix is inlined here (the library is built -fPIC, where a
 * call to an exported function is never inlined), and the two cases of a
 * small store -- one replica, or every member a replica -- and two replicas
 * (the best two kept in conditional moves, not a sorted insertion whose
 * branches on random scores mispredict) skip the general insertion; they
 * give the same set in the same order.
 */
#include "kv_internal.h"

#define K0 0x9E3779B97F4A7C15ull
#define K1 0xD6E8FEB86659FD93ull
#define K2 0xA0761D6478BD642Full
#define KVH_MAX_R 16  /* the most replicas config.c allows */

static inline uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t rd32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t mix(uint64_t a, uint64_t b) {
    __uint128_t m = (__uint128_t)(a ^ K0) * (b ^ K1);
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

uint64_t kvh_mix(uint64_t a, uint64_t b) { return mix(a, b); }

/* The n < 8 bytes at p as a little-endian word, zero above them. */
static inline uint64_t rd_short(const unsigned char *p, size_t n) {
    if (n >= 4)  /* two overlapping loads: bytes 0-3 and n-4..n-1 */
        return rd32(p) | (((uint64_t)rd32(p + n - 4) >> (8 * (8 - n))) << 32);
    if (n == 0) return 0;
    /* 1-3 bytes: the first, the middle and the last (some the same) */
    return (uint64_t)p[0] | ((uint64_t)p[n >> 1] << (8 * (n >> 1))) | ((uint64_t)p[n - 1] << (8 * (n - 1)));
}

uint64_t kvh_hash(const void *data, size_t len, uint64_t seed) {
    const unsigned char *p = data;
    uint64_t h = mix(seed ^ K2, (uint64_t)len);
    size_t n = len;
    while (n >= 16) {
        h = mix(rd64(p) ^ h, rd64(p + 8) ^ K2);
        p += 16;
        n -= 16;
    }
    uint64_t a, b = 0;
    if (n >= 8) {
        a = rd64(p);
        if (n > 8) b = rd64(p + n - 8) >> (8 * (16 - n));  /* bytes 8..n-1 */
    } else {
        a = rd_short(p, n);
    }
    h = mix(a ^ h, b ^ ((uint64_t)n << 56) ^ K2);
    return mix(h, K0 ^ (uint64_t)len);
}

static inline uint64_t score(uint64_t kh, int id) { return mix(kh, (uint64_t)id * K2 + 1); }

/* The plain rendezvous set: the r best scores, best first (n >= r). */
static inline __attribute__((always_inline)) void place_plain(uint64_t kh, const int *ids, int n, int r, int *out) {
    if (r == 1 || (r == 2 && n == 2)) {  /* the best one, then the other */
        uint64_t best = score(kh, ids[0]);
        int at = 0;
        for (int i = 1; i < n; i++) {
            uint64_t sc = score(kh, ids[i]);
            if (sc > best) { best = sc; at = i; }
        }
        out[0] = ids[at];
        if (r == 2) out[1] = ids[1 - at];
        return;
    }
    if (r == 2) {  /* the best two, kept without branches on the scores */
        uint64_t s0 = score(kh, ids[0]), s1 = score(kh, ids[1]);
        bool up = s1 > s0;
        uint64_t b1 = up ? s1 : s0, b2 = up ? s0 : s1;
        int i1 = up ? 1 : 0, i2 = up ? 0 : 1;
        for (int i = 2; i < n; i++) {
            uint64_t sc = score(kh, ids[i]);
            bool gt1 = sc > b1, gt2 = sc > b2;  /* a tie keeps the earlier member first */
            b2 = gt1 ? b1 : gt2 ? sc : b2;
            i2 = gt1 ? i1 : gt2 ? i : i2;
            b1 = gt1 ? sc : b1;
            i1 = gt1 ? i : i1;
        }
        out[0] = ids[i1];
        out[1] = ids[i2];
        return;
    }
    uint64_t best[KVH_MAX_R];
    int have = 0;
    for (int i = 0; i < n; i++) {
        uint64_t sc = score(kh, ids[i]);
        int j = have < r ? have++ : r;
        if (j == r && sc <= best[r - 1]) continue;
        if (j == r) j = r - 1;
        while (j > 0 && best[j - 1] < sc) {  /* insertion into descending list */
            best[j] = best[j - 1];
            out[j] = out[j - 1];
            j--;
        }
        best[j] = sc;
        out[j] = ids[i];
    }
}

/* Greedy by score: first over members of nodes not yet used, then (fewer
 * nodes than r) over the members not yet taken.  O(n r), n is small.
 * Without a node map (r beyond place_plain's bound): the plain set. */
static void place_by_node(uint64_t kh, const int *ids, int n, int r, const int *node_of_id, int *out) {
    uint64_t sc[n > 0 ? n : 1];
    bool taken[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        sc[i] = score(kh, ids[i]);
        taken[i] = false;
    }
    for (int k = 0; k < r; k++) {
        int pick = -1;
        for (int pass = 0; pass < 2 && pick < 0; pass++) {
            for (int i = 0; i < n; i++) {
                if (taken[i] || (pick >= 0 && sc[i] <= sc[pick])) continue;
                bool node_used = false;
                for (int j = 0; pass == 0 && node_of_id && j < k; j++)
                    node_used |= node_of_id[out[j]] == node_of_id[ids[i]];
                if (!node_used) pick = i;
            }
        }
        taken[pick] = true;
        out[k] = ids[pick];
    }
}

void kvh_place(uint64_t kh, const int *ids, int n, int r, const int *node_of_id, int *out) {
    if (node_of_id || r > KVH_MAX_R) place_by_node(kh, ids, n, r, node_of_id, out);
    else place_plain(kh, ids, n, r, out);
}

int kvh_replicas(const kv_store *s, uint64_t kh, int *out) {
    int r = s->cfg.replicas < s->size ? s->cfg.replicas : s->size;
    if (s->place_by_node || r > KVH_MAX_R) place_by_node(kh, s->live_ids, s->size, r, s->node_of_id, out);
    else place_plain(kh, s->live_ids, s->size, r, out);
    return r;
}
