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
#include <stddef.h>
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
    cfg->poll_us = 1000;
    cfg->max_probe = 256;
    cfg->read_retries = 16;
    cfg->lock_timeout_ms = 1000.0;
    cfg->failure_wait_ms = 30000.0;
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
    if (c->poll_us < 0 || c->poll_us > 10000000) BAD("poll_us must be 0..10000000, not %d", c->poll_us);
    if (c->max_probe < 1) BAD("max_probe must be >= 1, not %d", c->max_probe);
    if (c->read_retries < 0) BAD("read_retries must be >= 0, not %d", c->read_retries);
    if (!(c->lock_timeout_ms > 0) || c->lock_timeout_ms > 3600e3)
        BAD("lock_timeout_ms must be in (0, 3600000], not %g", c->lock_timeout_ms);
    if (!(c->failure_wait_ms >= 0) || c->failure_wait_ms > 3600e3)
        BAD("failure_wait_ms must be in [0, 3600000], not %g", c->failure_wait_ms);
    size_t slot = kvs_slot_size(c->max_key, c->max_value);
    if (c->slots_per_rank > (size_t)INT64_MAX / 2 / slot)
        BAD("table of %zu slots of %zu bytes is too large", c->slots_per_rank, slot);
    return KV_OK;
#undef BAD
}

/* Every field of kv_config once, in the struct's order: its name (the
 * field's), how its text is read, and for numbers the range (for text, the
 * buffer's size).  kv_config_set, kv_config_get, kv_config_name and
 * kv_config_from_env all work from this table. */
enum field_kind { F_INT, F_SIZE, F_DOUBLE, F_TEXT, F_BACKEND, F_VARIANT };
#define FIELD(name, kind, lo, hi) {#name, kind, offsetof(kv_config, name), lo, hi}
static const struct field {
    const char *name;
    enum field_kind kind;
    size_t off;
    long long lo, hi;
} fields[] = {
    FIELD(replicas, F_INT, 1, 16),
    FIELD(slots_per_rank, F_SIZE, 1, 1LL << 31),
    FIELD(max_key, F_SIZE, 1, KV_MAX_KEY_LIMIT),
    FIELD(max_value, F_SIZE, 0, KV_MAX_VALUE_LIMIT),
    FIELD(backend, F_BACKEND, 0, 0),
    FIELD(variant, F_VARIANT, 0, 0),
    FIELD(spares, F_INT, 0, 1 << 20),
    FIELD(poll_interval, F_INT, 1, 1 << 30),
    FIELD(poll_us, F_INT, 0, 10000000),
    FIELD(max_probe, F_INT, 1, 1 << 30),
    FIELD(read_retries, F_INT, 0, 1 << 20),
    FIELD(lock_timeout_ms, F_DOUBLE, 0, 0),
    FIELD(failure_wait_ms, F_DOUBLE, 0, 0),
    FIELD(checkpoint_dir, F_TEXT, 0, sizeof ((kv_config *)0)->checkpoint_dir),
};
#undef FIELD
enum { NFIELDS = sizeof fields / sizeof fields[0] };

static const struct field *field_named(const char *name) {
    for (int i = 0; i < NFIELDS; i++)
        if (strcmp(name, fields[i].name) == 0) return &fields[i];
    return NULL;
}

const char *kv_config_name(int i) { return i >= 0 && i < NFIELDS ? fields[i].name : NULL; }

/* "none, recreate-copy, ...": every variant's name, for messages. */
static const char *variant_names(void) {
    static char all[256];
    for (int v = 0; !all[0] && v < KV_VARIANT_COUNT_; v++)
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", v ? ", " : "", kv_variant_name(v));
    return all;
}

/* Read value into field f of c: 0, or -1 with the message. */
static int set_field(kv_config *c, const struct field *f, const char *value, char *msg, size_t len) {
    void *dst = (char *)c + f->off;
    long long x;
    double d;
    int v;
    switch (f->kind) {
    case F_INT:
    case F_SIZE:
        if (kvu_parse_ll(value, f->lo, f->hi, true, &x))
            return kvu_fail(msg, len, "%s: '%s' is not an integer in %lld..%lld", f->name, value, f->lo, f->hi);
        if (f->kind == F_INT) *(int *)dst = (int)x;
        else *(size_t *)dst = (size_t)x;
        return 0;
    case F_DOUBLE:
        if (kvu_parse_double(value, &d) || !(d > 0))
            return kvu_fail(msg, len, "%s: '%s' is not a positive number", f->name, value);
        *(double *)dst = d;
        return 0;
    case F_TEXT:
        if (strlen(value) >= (size_t)f->hi)
            return kvu_fail(msg, len, "%s: longer than %lld characters", f->name, f->hi - 1);
        strcpy(dst, value);
        return 0;
    case F_BACKEND:
        if ((v = kv_backend_from_name(value)) < 0)
            return kvu_fail(msg, len, "backend: unknown backend '%s' (known: %s, %s)", value,
                            kv_backend_name(KV_BACKEND_ALLOCATE), kv_backend_name(KV_BACKEND_CREATE));
        c->backend = v;
        return 0;
    case F_VARIANT:
        if ((v = kv_variant_from_name(value)) < 0)
            return kvu_fail(msg, len, "variant: unknown variant '%s' (known: %s)", value, variant_names());
        c->variant = v;
        return 0;
    }
    return -1;
}

int kv_config_set(kv_config *c, const char *name, const char *value, char *msg, size_t len) {
    const struct field *f = c && name && value ? field_named(name) : NULL;
    if (!c || !name || !value) kvu_fail(msg, len, "missing name or value");
    else if (!f) kvu_fail(msg, len, "unknown store setting '%s'", name);
    return f && set_field(c, f, value, msg, len) == 0 ? KV_OK : KV_ERR_CONFIG;
}

int kv_config_get(const kv_config *c, const char *name, char *buf, size_t len) {
    const struct field *f = c && name && buf ? field_named(name) : NULL;
    if (!f) return KV_ERR_CONFIG;
    const void *src = (const char *)c + f->off;
    switch (f->kind) {
    case F_INT: snprintf(buf, len, "%d", *(const int *)src); break;
    case F_SIZE: snprintf(buf, len, "%zu", *(const size_t *)src); break;
    case F_DOUBLE: snprintf(buf, len, "%g", *(const double *)src); break;
    case F_TEXT: snprintf(buf, len, "%s", (const char *)src); break;
    case F_BACKEND: snprintf(buf, len, "%s", kv_backend_name(c->backend)); break;
    case F_VARIANT: snprintf(buf, len, "%s", kv_variant_name(c->variant)); break;
    }
    return KV_OK;
}

int kv_config_from_env(kv_config *c, char *msg, size_t len) {
    for (int i = 0; i < NFIELDS; i++) {
        char env[64] = "KV_";
        for (size_t j = 0; fields[i].name[j] && j < 56; j++)
            env[3 + j] = (char)toupper((unsigned char)fields[i].name[j]);
        const char *v = getenv(env);
        if (!v) continue;
        char sub[200];
        int rc = kv_config_set(c, fields[i].name, v, sub, sizeof sub);
        if (rc) {
            kvu_fail(msg, len, "%s: %s", env, sub);
            return rc;
        }
    }
    return KV_OK;
}
