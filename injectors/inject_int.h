/*
 * inject_int.h -- internals shared by the injector's .c files (not installed).
 *
 * The error-message helper every parser and checker uses, and the seeded
 * PRNG of schedule.c (xoshiro256** seeded through splitmix64, written here
 * so that a seed gives the same stream on every machine and libc).
 */
#ifndef KV_INJECT_INT_H
#define KV_INJECT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "inject.h"

/* Write a printf-style message to err (if any) and return -1. */
int kvi__fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* xoshiro256** state. */
typedef struct kvi_rng {
    uint64_t s[4];
} kvi_rng;

void kvi__rng_seed(kvi_rng *r, uint64_t seed);
uint64_t kvi__rng_next(kvi_rng *r);
double kvi__rng_open01(kvi_rng *r);              /* uniform in (0, 1) */
uint64_t kvi__rng_below(kvi_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */

/* True when s is a usable host name: 1..63 chars of [A-Za-z0-9._-]. */
int kvi__valid_host(const char *s);

#endif
