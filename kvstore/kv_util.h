/*
 * kv_util.h -- small helpers the library, the injector and the driver all
 * use, defined once here (header-only; not installed, not part of the API).
 *
 *  - kvu_fail: a message into a caller's buffer, returning -1, the error
 *    convention of every parser in the project;
 *  - kvu_parse_ll, kvu_parse_double: a whole string as one number, or -1;
 *  - kvu_rng: xoshiro256** (Blackman and Vigna) seeded through splitmix64,
 *    the generator behind workloads and failure schedules; each user
 *    derives its own uniform and bounded draws from kvu_rng_next.
 */
#ifndef KV_UTIL_H
#define KV_UTIL_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Write the message to err (errlen bytes; either may be 0) and return -1. */
__attribute__((format(printf, 3, 4), unused))
static int kvu_fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* s as one decimal integer in [lo, hi]: 0, or -1 for anything else.  With
 * sizes, a suffix k, M or G multiplies by 1024, 1024^2, 1024^3 (a product
 * that overflows is out of range) and blanks may follow. */
static inline int kvu_parse_ll(const char *s, long long lo, long long hi, bool sizes, long long *out) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s) return -1;
    long long mult = !sizes ? 1 : *end == 'k' || *end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024
                              : *end == 'G' ? 1024LL * 1024 * 1024 : 1;
    if (mult > 1) {
        if (x > LLONG_MAX / mult || x < LLONG_MIN / mult) return -1;
        x *= mult;
        end++;
    }
    while (sizes && isspace((unsigned char)*end)) end++;
    if (*end || x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

/* s as one finite number: 0, or -1. */
static inline int kvu_parse_double(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* splitmix64 step (Steele, Lea, Flood): state advance and output mix. */
static inline uint64_t kvu_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct kvu_rng { uint64_t s[4]; } kvu_rng;

static inline void kvu_rng_seed(kvu_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = kvu_splitmix64(&seed);
}

static inline uint64_t kvu_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256**: the next 64 random bits. */
static inline uint64_t kvu_rng_next(kvu_rng *r) {
    uint64_t *s = r->s, out = kvu_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = kvu_rotl(s[3], 45);
    return out;
}

#endif
