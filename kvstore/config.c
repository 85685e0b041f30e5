/*
 * config.c -- configuration defaults, validation and setting by name.
 *
 * Tools read configurations from files and the environment as name=value
 * text; kv_config_set is the one place that parses such text, so every
 * tool gives the same message for the same mistake.  Limits are checked in
 * kv_config_check, which kv_open calls on every rank before anything is
 * allocated.
 */
#include "kv_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define KV_MAX_KEY_LIMIT 4096
#define KV_MAX_VALUE_LIMIT (1u << 20)

void kv_config_default(kv_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->replicas = 2;
    cfg->slots_per_rank = 65536;
    cfg->max_key = 64;
    cfg->max_value = 1024;
    cfg->backend = KV_BACKEND_ALLOCATE;
    cfg->variant = KV_VARIANT_RECREATE_COPY;
    cfg->spares = 0;
    cfg->poll_interval = 64;
    cfg->max_probe = 256;
    cfg->read_retries = 16;
    cfg->lock_timeout_ms = 1000.0;
}

int kv_config_check(const kv_config *c, char *msg, size_t len) {
#define BAD(...) do { kvu_fail(msg, len, __VA_ARGS__); return KV_ERR_CONFIG; } while (0)
    if (!c) BAD("configuration is NULL");
    if (c->replicas < 1 || c->replicas > 16) BAD("replicas must be 1..16, not %d", c->replicas);
    if (c->slots_per_rank < 1 || c->slots_per_rank > (1u << 31))
        BAD("slots_per_rank must be 1..2^31, not %zu", c->slots_per_rank);
    if (c->max_key < 1 || c->max_key > KV_MAX_KEY_LIMIT)
        BAD("max_key must be 1..%d bytes, not %zu", KV_MAX_KEY_LIMIT, c->max_key);
    if (c->max_value > KV_MAX_VALUE_LIMIT)
        BAD("max_value must be 0..%u bytes, not %zu", KV_MAX_VALUE_LIMIT, c->max_value);
    if (c->backend != KV_BACKEND_ALLOCATE && c->backend != KV_BACKEND_CREATE)
        BAD("backend must be allocate or create");
    if (c->variant < 0 || c->variant >= KV_VARIANT_COUNT_) BAD("unknown variant %d", (int)c->variant);
    if (c->variant == KV_VARIANT_NONE && c->replicas != 1)
        BAD("variant none runs without replicas: replicas must be 1, not %d", c->replicas);
    if (c->variant == KV_VARIANT_CHECKPOINT && c->replicas != 1)
        BAD("variant checkpoint-restart keeps no replicas: replicas must be 1, not %d", c->replicas);
    if (c->variant == KV_VARIANT_CHECKPOINT && !c->checkpoint_dir[0])
        BAD("variant checkpoint-restart needs checkpoint_dir (where the checkpoints go)");
    if (!memchr(c->checkpoint_dir, 0, sizeof c->checkpoint_dir))
        BAD("checkpoint_dir is not terminated");
    if (c->spares < 0) BAD("spares must be >= 0, not %d", c->spares);
    if (c->spares > 0 && c->variant != KV_VARIANT_SPARE)
        BAD("spares=%d needs variant spare", c->spares);
    if (c->poll_interval < 1) BAD("poll_interval must be >= 1, not %d", c->poll_interval);
    if (c->max_probe < 1) BAD("max_probe must be >= 1, not %d", c->max_probe);
    if (c->read_retries < 0) BAD("read_retries must be >= 0, not %d", c->read_retries);
    if (!(c->lock_timeout_ms > 0) || c->lock_timeout_ms > 3600e3)
        BAD("lock_timeout_ms must be in (0, 3600000], not %g", c->lock_timeout_ms);
    size_t slot = kvs_slot_size(c->max_key, c->max_value);
    if (c->slots_per_rank > (size_t)INT64_MAX / 2 / slot)
        BAD("table of %zu slots of %zu bytes is too large", c->slots_per_rank, slot);
    return KV_OK;
#undef BAD
}

int kv_config_set(kv_config *c, const char *name, const char *value, char *msg, size_t len) {
    long long x;
    if (!c || !name || !value) { kvu_fail(msg, len, "missing name or value"); return KV_ERR_CONFIG; }
#define INTF(field, lo, hi)                                                             \
    if (strcmp(name, #field) == 0) {                                                    \
        if (kvu_parse_ll(value, lo, hi, true, &x)) {                                            \
            kvu_fail(msg, len, "%s: '%s' is not an integer in %lld..%lld", name, value, \
                       (long long)(lo), (long long)(hi));                               \
            return KV_ERR_CONFIG;                                                       \
        }                                                                               \
        c->field = x;                                                                   \
        return KV_OK;                                                                   \
    }
    INTF(replicas, 1, 16)
    INTF(slots_per_rank, 1, 1LL << 31)
    INTF(max_key, 1, KV_MAX_KEY_LIMIT)
    INTF(max_value, 0, KV_MAX_VALUE_LIMIT)
    INTF(spares, 0, 1 << 20)
    INTF(poll_interval, 1, 1 << 30)
    INTF(max_probe, 1, 1 << 30)
    INTF(read_retries, 0, 1 << 20)
#undef INTF
    if (strcmp(name, "lock_timeout_ms") == 0) {
        char *end;
        double d = strtod(value, &end);
        if (end == value || *end || !(d > 0)) {
            kvu_fail(msg, len, "lock_timeout_ms: '%s' is not a positive number", value);
            return KV_ERR_CONFIG;
        }
        c->lock_timeout_ms = d;
        return KV_OK;
    }
    if (strcmp(name, "checkpoint_dir") == 0) {
        if (strlen(value) >= sizeof c->checkpoint_dir) {
            kvu_fail(msg, len, "checkpoint_dir: longer than %zu characters",
                       sizeof c->checkpoint_dir - 1);
            return KV_ERR_CONFIG;
        }
        strcpy(c->checkpoint_dir, value);
        return KV_OK;
    }
    if (strcmp(name, "variant") == 0) {
        int v = kv_variant_from_name(value);
        if (v < 0) {
            kvu_fail(msg, len, "variant: unknown variant '%s' (known: none, recreate-copy, "
                       "recreate-inplace, recreate-free, spare, proposed, checkpoint-restart)", value);
            return KV_ERR_CONFIG;
        }
        c->variant = v;
        return KV_OK;
    }
    if (strcmp(name, "backend") == 0) {
        int b = kv_backend_from_name(value);
        if (b < 0) {
            kvu_fail(msg, len, "backend: unknown backend '%s' (known: allocate, create)", value);
            return KV_ERR_CONFIG;
        }
        c->backend = b;
        return KV_OK;
    }
    kvu_fail(msg, len, "unknown store setting '%s'", name);
    return KV_ERR_CONFIG;
}

int kv_config_from_env(kv_config *c, char *msg, size_t len) {
    static const char *const names[] = {
        "replicas", "slots_per_rank", "max_key", "max_value", "backend", "variant", "spares",
        "poll_interval", "max_probe", "read_retries", "lock_timeout_ms", "checkpoint_dir"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char env[64] = "KV_";
        for (size_t j = 0; names[i][j] && j < 56; j++)
            env[3 + j] = (char)toupper((unsigned char)names[i][j]);
        const char *v = getenv(env);
        if (!v) continue;
        char sub[200];
        int rc = kv_config_set(c, names[i], v, sub, sizeof sub);
        if (rc) {
            kvu_fail(msg, len, "%s: %s", env, sub);
            return rc;
        }
    }
    return KV_OK;
}
