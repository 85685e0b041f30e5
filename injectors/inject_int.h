/*
 * inject_int.h -- internals shared by the injector's .c files (not installed).
 *
 * The draws of schedule.c on kv_util.h's generator (xoshiro256** seeded
 * through splitmix64, our own so that a seed gives the same stream on every
 * machine and libc); kv_util.h also has the error-message helper every
 * parser and checker uses (kvu_fail).
 */
#ifndef KV_INJECT_INT_H
#define KV_INJECT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "inject.h"
#include "kv_util.h"

typedef kvu_rng kvi_rng;
double kvi__rng_open01(kvi_rng *r);              /* uniform in (0, 1) */
uint64_t kvi__rng_below(kvi_rng *r, uint64_t n); /* uniform in [0, n), n > 0 */

/* True when s is a usable host name: 1..63 chars of [A-Za-z0-9._-]. */
int kvi__valid_host(const char *s);

#endif
