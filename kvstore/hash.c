/*
 * hash.c -- hashing and rendezvous placement.
 *
 * kvh_hash is a word-at-a-time 64-bit hash built on one 64x64->128-bit
 * multiply per 16 bytes (the folded-multiply idea of wyhash, written here
 * from scratch): fast enough to checksum every slot on the read path.
 * Placement is rendezvous (highest-random-weight) hashing: a key's replicas
 * are the r members with the highest mix(key hash, member id).  When a
 * member leaves, only the keys it held move, each to one new member, and
 * every process computes the same answer from the same member list.
 */
#include "kv_internal.h"

#define K0 0x9E3779B97F4A7C15ull
#define K1 0xD6E8FEB86659FD93ull
#define K2 0xA0761D6478BD642Full

static inline uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint64_t kvh_mix(uint64_t a, uint64_t b) {
    __uint128_t m = (__uint128_t)(a ^ K0) * (b ^ K1);
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

uint64_t kvh_hash(const void *data, size_t len, uint64_t seed) {
    const unsigned char *p = data;
    uint64_t h = kvh_mix(seed ^ K2, (uint64_t)len);
    size_t n = len;
    while (n >= 16) {
        h = kvh_mix(rd64(p) ^ h, rd64(p + 8) ^ K2);
        p += 16;
        n -= 16;
    }
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        a = rd64(p);
        memcpy(&b, p + 8, n - 8);
    } else {
        memcpy(&a, p, n);
    }
    h = kvh_mix(a ^ h, b ^ ((uint64_t)n << 56) ^ K2);
    return kvh_mix(h, K0 ^ (uint64_t)len);
}

void kvh_place(uint64_t kh, const int *ids, int n, int r, int *out) {
    uint64_t best[r > 0 ? r : 1];
    int have = 0;
    for (int i = 0; i < n; i++) {
        uint64_t sc = kvh_mix(kh, (uint64_t)ids[i] * K2 + 1);
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
