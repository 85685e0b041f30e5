/*
 * settings.c -- the driver's settings from a config file and argv.
 *
 * Every setting has a dotted name: store.NAME (kvstore's kv_config_set
 * names), workload.NAME (workload.h's wl_params_set names) and driver.NAME
 * (below).  A config file (format in cfgfile.h: `[store]` sections and
 * `name = value` lines) is read first, then name=value arguments override
 * it in order.  Every unknown or malformed entry is an error that names the
 * file and line, or the argument.
 */
#include <stdlib.h>
#include <string.h>

#include "cfgfile.h"
#include "driver.h"

void drv_usage(FILE *f) {
    fputs("usage: kv_driver [--config FILE] [SECTION.NAME=VALUE ...]\n"
          "  store.NAME     replicas, slots_per_rank, max_key, max_value, backend,\n"
          "                 variant, spares, poll_interval, max_probe, read_retries,\n"
          "                 lock_timeout_ms (see kvstore/kvstore.h)\n"
          "  workload.NAME  workload (a..f), records, operations, duration_s, read,\n"
          "                 update, insert, scan, rmw, distribution, key_bytes,\n"
          "                 value_bytes, scan_length, target_rate_per_s, seed\n"
          "                 (see experiments/driver/workload.h)\n"
          "  driver.NAME    out (run directory), campaign, run_id, bin_s (timeline bin,\n"
          "                 0.1), verify (0/1), progress (0/1), failures (injector spec,\n"
          "                 see injectors/README.md; quote it in files)\n"
          "                 backend (store | redis: the same workload against Redis),\n"
          "                 checkpoint_s (interval, store.variant=checkpoint-restart),\n"
          "                 restore (0/1: reload the latest checkpoint, no load phase)\n"
          "  redis.NAME     with driver.backend=redis: host, port, sentinel_port (P[,P..]),\n"
          "                 master_name, wait_replicas (WAIT after writes, 1), wait_timeout_ms,\n"
          "                 retry_s, check_lost (0/1) (see experiments/driver/backends/redis.c)\n"
          "Config files: experiments/driver/cfgfile.h.  Results: experiments/RESULTS.md.\n", f);
}

static int set_str(char *dst, size_t n, const char *v, const char *name, char *err, size_t len) {
    if (strlen(v) >= n) {
        snprintf(err, len, "%s: value longer than %zu characters", name, n - 1);
        return -1;
    }
    strcpy(dst, v);
    return 0;
}

static int set_driver(drv_settings *s, const char *name, const char *v, char *err, size_t len) {
    char *end;
    if (!strcmp(name, "out")) return set_str(s->out, sizeof s->out, v, name, err, len);
    if (!strcmp(name, "campaign")) return set_str(s->campaign, sizeof s->campaign, v, name, err, len);
    if (!strcmp(name, "run_id")) return set_str(s->run_id, sizeof s->run_id, v, name, err, len);
    if (!strcmp(name, "failures")) return set_str(s->failures, sizeof s->failures, v, name, err, len);
    if (!strcmp(name, "backend")) {  /* issue #9 */
        if (strcmp(v, "store") && strcmp(v, "redis")) {
            snprintf(err, len, "backend: '%s' is not store or redis", v);
            return -1;
        }
        s->redis.on = !strcmp(v, "redis");
        return 0;
    }
    if (!strcmp(name, "bin_s")) {
        s->bin_s = strtod(v, &end);
        if (end == v || *end || !(s->bin_s >= 0.001 && s->bin_s <= 60)) {
            snprintf(err, len, "bin_s: '%s' is not a number of seconds in [0.001, 60]", v);
            return -1;
        }
        return 0;
    }
    if (!strcmp(name, "checkpoint_s")) {
        char *end;
        s->checkpoint_s = strtod(v, &end);
        if (end == v || *end || !(s->checkpoint_s >= 0 && s->checkpoint_s <= 86400)) {
            snprintf(err, len, "checkpoint_s: '%s' is not a number of seconds in [0, 86400]", v);
            return -1;
        }
        return 0;
    }
    int *flag = !strcmp(name, "verify") ? &s->verify : !strcmp(name, "progress") ? &s->progress
              : !strcmp(name, "restore") ? &s->restore : NULL;
    if (flag) {
        if (strcmp(v, "0") && strcmp(v, "1")) {
            snprintf(err, len, "%s: '%s' is not 0 or 1", name, v);
            return -1;
        }
        *flag = v[0] == '1';
        return 0;
    }
    snprintf(err, len, "unknown driver setting '%s'", name);
    return -1;
}

/* One dotted setting; err gets a message without location. */
static int drv_set(drv_settings *s, const char *name, const char *value, char *err, size_t len) {
    const char *dot = strchr(name, '.');
    if (!dot) {
        snprintf(err, len, "'%s' has no section (store., workload., driver. or redis.)", name);
        return -1;
    }
    size_t sec = (size_t)(dot - name);
    if (sec == 5 && !strncmp(name, "store", 5))
        return kv_config_set(&s->store, dot + 1, value, err, len) == KV_OK ? 0 : -1;
    if (sec == 8 && !strncmp(name, "workload", 8)) {
        if (!strcmp(dot + 1, "workload")) return wl_preset(&s->work, value, err, len);
        return wl_params_set(&s->work, dot + 1, value, err, len);
    }
    if (sec == 6 && !strncmp(name, "driver", 6)) return set_driver(s, dot + 1, value, err, len);
    if (sec == 5 && !strncmp(name, "redis", 5)) return drv_redis_set(&s->redis, dot + 1, value, err, len);
    snprintf(err, len, "unknown section in '%s' (store, workload, driver or redis)", name);
    return -1;
}

static int file_entry(void *ctx, const char *name, const char *value, int line, char *err,
                      size_t len) {
    (void)line;  /* cfgfile adds FILE:LINE to the message */
    return drv_set(ctx, name, value, err, len);
}

int drv_parse(int argc, char **argv, drv_settings *s, char *err, size_t len) {
    memset(s, 0, sizeof *s);
    kv_config_default(&s->store);
    wl_params_default(&s->work);
    s->bin_s = 0.1;
    s->verify = 1;
    s->progress = 1;
    strcpy(s->campaign, "adhoc");
    strcpy(s->run_id, "run");
    strcpy(s->out, "results/adhoc/run");
    drv_redis_default(&s->redis);
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof s->cmdline; i++)
        used += (size_t)snprintf(s->cmdline + used, sizeof s->cmdline - used, "%s%s", i ? " " : "",
                                 argv[i]);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--config")) {
            if (i + 1 >= argc) { snprintf(err, len, "--config needs a file name"); return -1; }
            if (cf_parse_file(argv[++i], file_entry, s, err, len)) return -1;
            continue;
        }
        const char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i]) {
            snprintf(err, len, "argument '%s' is not NAME=VALUE or --config FILE", argv[i]);
            return -1;
        }
        char name[128], sub[400];
        size_t n = (size_t)(eq - argv[i]);
        if (n >= sizeof name) { snprintf(err, len, "argument name too long: %.40s...", argv[i]); return -1; }
        memcpy(name, argv[i], n);
        name[n] = 0;
        if (drv_set(s, name, eq + 1, sub, sizeof sub)) {
            snprintf(err, len, "argument '%s': %s", argv[i], sub);
            return -1;
        }
    }
    return 0;
}

int drv_check(const drv_settings *s, int nranks, char *err, size_t len) {
    if (s->redis.on) return drv_redis_check(s, nranks, err, len);  /* issue #9 */
    char sub[400];
    if (kv_config_check(&s->store, sub, sizeof sub)) { snprintf(err, len, "store: %s", sub); return -1; }
    if (wl_params_check(&s->work, sub, sizeof sub) || wl_params_check_ranks(&s->work, nranks, sub, sizeof sub)) {
        snprintf(err, len, "workload: %s", sub);
        return -1;
    }
    int members = nranks - s->store.spares;
    if (s->store.replicas > members) {
        snprintf(err, len, "store.replicas=%d but only %d ranks hold data", s->store.replicas, members);
        return -1;
    }
    if ((size_t)s->work.key_bytes > s->store.max_key) {
        snprintf(err, len, "workload.key_bytes=%d exceeds store.max_key=%zu", s->work.key_bytes,
                 s->store.max_key);
        return -1;
    }
    if ((size_t)s->work.value_max > s->store.max_value) {
        snprintf(err, len, "workload values up to %lld bytes exceed store.max_value=%zu",
                 (long long)s->work.value_max, s->store.max_value);
        return -1;
    }
    double copies = (double)s->work.records * (1.0 + s->work.proportion[WL_INSERT]) * s->store.replicas;
    if (copies > 0.9 * (double)s->store.slots_per_rank * members) {
        snprintf(err, len, "%.0f copies (records x replicas, with inserts) would fill %d ranks x %zu "
                 "slots beyond 90%%: raise store.slots_per_rank", copies, members, s->store.slots_per_rank);
        return -1;
    }
    if ((s->checkpoint_s > 0 || s->restore) && s->store.variant != KV_VARIANT_CHECKPOINT) {
        snprintf(err, len, "driver.checkpoint_s and driver.restore need store.variant=checkpoint-restart");
        return -1;
    }
    if (s->checkpoint_s > 0 && s->work.duration_s <= 0) {
        snprintf(err, len, "driver.checkpoint_s needs workload.duration_s (checkpoints are timed)");
        return -1;
    }
    if (s->work.operations == 0 && s->work.duration_s <= 0) {
        snprintf(err, len, "workload needs operations or duration_s");
        return -1;
    }
    if (s->failures[0]) {
        kvi_spec spec;
        if (kvi_spec_parse(s->failures, &spec, sub, sizeof sub)) {
            snprintf(err, len, "driver.failures: %s", sub);
            return -1;
        }
        if (s->store.variant == KV_VARIANT_NONE) {
            snprintf(err, len, "variant none has no recovery: it cannot run with driver.failures");
            return -1;
        }
    }
    return 0;
}
