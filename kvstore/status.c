/*
 * status.c -- status strings, variant and backend names, the clocks
 * (kvstore.h says which clock is for what).
 */
#include "kv_internal.h"

#include <stdio.h>
#include <time.h>

const char *kv_strerror(int status) {
    switch (status) {
    case KV_OK: return "success";
    case KV_WARN_DEGRADED: return "done, but fewer than the configured replicas hold the data (degraded)";
    case KV_ERR_ARG: return "invalid argument (NULL handle or buffer, or empty key)";
    case KV_ERR_NOT_FOUND: return "key not found";
    case KV_ERR_KEY_TOO_LONG: return "key longer than max_key";
    case KV_ERR_VALUE_TOO_LARGE: return "value larger than max_value";
    case KV_ERR_BUFFER_TOO_SMALL: return "buffer smaller than the stored value";
    case KV_ERR_FULL: return "table full: no free slot within max_probe of the key's home slot";
    case KV_ERR_NOMEM: return "out of memory";
    case KV_ERR_CONFIG: return "invalid configuration";
    case KV_ERR_TOO_FEW_RANKS: return "replication factor larger than the number of data ranks";
    case KV_ERR_MPI: return "MPI error (not a process failure)";
    case KV_ERR_INTERRUPTED: return "interrupted by a process failure; the store recovered: retry";
    case KV_ERR_BUSY: return "slot locked by a live writer for longer than lock_timeout_ms";
    case KV_ERR_CORRUPT: return "no intact copy could be read (or a checkpoint file failed its checks)";
    case KV_ERR_NOT_COUNTER: return "stored value is not an 8-byte counter";
    case KV_ERR_UNSUPPORTED: return "variant or feature not supported by this build";
    case KV_ERR_SPARE: return "this rank is an idle spare";
    case KV_ERR_CLOSED: return "the store was closed";
    case KV_ERR_IO: return "a checkpoint file could not be written or read";
    default: return "unknown status code";
    }
}

static const char *const variant_names[KV_VARIANT_COUNT_] = {
#define VARIANT_NAME_(id, name) [KV_VARIANT_##id] = name,
    KV_VARIANTS(VARIANT_NAME_)
#undef VARIANT_NAME_
};

const char *kv_variant_name(kv_variant v) {
    return (v >= 0 && v < KV_VARIANT_COUNT_) ? variant_names[v] : "unknown";
}

int kv_variant_from_name(const char *name) {
    for (int i = 0; name && i < KV_VARIANT_COUNT_; i++)
        if (strcmp(name, variant_names[i]) == 0) return i;
    return -1;
}

const char *kv_backend_name(kv_backend b) {
    return b == KV_BACKEND_ALLOCATE ? "allocate" : b == KV_BACKEND_CREATE ? "create" : "unknown";
}

int kv_backend_from_name(const char *name) {
    if (!name) return -1;
    if (strcmp(name, "allocate") == 0 || strcmp(name, "sm") == 0) return KV_BACKEND_ALLOCATE;
    if (strcmp(name, "create") == 0 || strcmp(name, "rdma") == 0) return KV_BACKEND_CREATE;
    return -1;
}

static int64_t ns_of(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t kv_clock_ns(void) { return ns_of(CLOCK_MONOTONIC); }

int64_t kv_wall_ns(void) { return ns_of(CLOCK_REALTIME); }

double kv_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
