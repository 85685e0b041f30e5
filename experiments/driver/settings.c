/*
 * settings.c -- the driver's settings from a config file and argv.
 *
 * Every setting has a dotted name: workload.NAME (workload.h's
 * wl_params_set names), driver.NAME (below) and BACKEND.NAME for each
 * backend of the table below (store.NAME: kvstore's kv_config_set names;
 * redis.NAME: backends/redis.c).  A config file (format in cfgfile.h and
 * docs/formats.md: `[store]` sections and `name = value` lines) is read
 * first, then name=value arguments override it in order.  Every unknown or malformed entry is an error that names the
 * file and line, or the argument.
 */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cfgfile.h"

/* "  store.NAME     replicas, ..." from kvstore's list of settings. */
static void usage_store(FILE *f) {
    int col = fprintf(f, "  store.NAME    ");
    for (int i = 0; kv_config_name(i); i++) {
        const char *n = kv_config_name(i);
        if (col + (int)strlen(n) + 2 > 78) col = fprintf(f, "\n                ");
        col += fprintf(f, " %s%s", n, kv_config_name(i + 1) ? "," : "");
    }
    fputs(" (see kvstore/kvstore.h)\n", f);
}

void drv_usage(FILE *f) {
    fputs("usage: kv_driver [--config FILE] [SECTION.NAME=VALUE ...]\n", f);
    usage_store(f);
    fputs("  workload.NAME  workload (a..f), records, operations, duration_s, read,\n"
          "                 update, insert, scan, rmw, distribution, key_bytes,\n"
          "                 value_bytes, scan_length, target_rate_per_s, seed\n"
          "                 (see experiments/driver/workload.h)\n", f);
    ta_usage(f);
    fputs(
          "  driver.NAME    out (run directory), campaign, run_id, bin_s (timeline bin,\n"
          "                 0.1), verify (0/1), progress (0/1), failures (injector spec,\n"
          "                 see injectors/README.md; quote it in files)\n"
          "                 backend (store | redis: the same workload against Redis),\n"
          "                 checkpoint_s (interval, store.variant=checkpoint-restart),\n"
          "                 restore (0/1: reload the latest checkpoint, no load phase)\n"
          "  redis.NAME     with driver.backend=redis: host (/path: a Unix socket), port, sentinel_port (P[,P..]),\n"
          "                 master_name, wait_replicas (WAIT after writes, 1), wait_timeout_ms,\n"
          "                 retry_s, check_lost (0/1) (see experiments/driver/backends/redis.c)\n"
          "Config files and result files: docs/formats.md.\n", f);
}

/* Every backend, once: driver.backend=NAME and the section NAME. */
static const drv_backend *const backends[] = {&drv_store_backend, &drv_redis_backend};
enum { NBACKENDS = sizeof backends / sizeof backends[0] };

const drv_backend *drv_backend_named(const char *name) {
    for (int i = 0; i < NBACKENDS; i++)
        if (!strcmp(name, backends[i]->name)) return backends[i];
    return NULL;
}

const char *drv_backend_names(void) {
    static char names[128];
    if (!names[0])
        for (int i = 0; i < NBACKENDS; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? " or " : "",
                     backends[i]->name);
    return names;
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
    if (!strcmp(name, "backend")) {
        const drv_backend *b = drv_backend_named(v);
        if (!b) {
            snprintf(err, len, "backend: '%s' is not %s", v, drv_backend_names());
            return -1;
        }
        s->backend = b;
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
    char sec[32] = "";
    size_t n = dot ? (size_t)(dot - name) : 0;
    if (!dot) {
        snprintf(err, len, "'%s' has no section: workload.NAME, driver.NAME or BACKEND.NAME (%s)", name,
                 drv_backend_names());
        return -1;
    }
    if (n < sizeof sec) memcpy(sec, name, n);  /* a longer one is no section's name */
    if (!strcmp(sec, "workload")) {
        int t = ta_params_set(&s->task, dot + 1, value, err, len);  /* a task run's setting? */
        if (t <= 0) return t;
        if (!strcmp(dot + 1, "workload")) return wl_preset(&s->work, value, err, len);
        return wl_params_set(&s->work, dot + 1, value, err, len);
    }
    if (!strcmp(sec, "driver")) return set_driver(s, dot + 1, value, err, len);
    const drv_backend *b = drv_backend_named(sec);
    if (b) return b->set(s, dot + 1, value, err, len);
    snprintf(err, len, "unknown section in '%s': not workload, driver or a backend (%s)", name,
             drv_backend_names());
    return -1;
}

static int file_entry(void *ctx, const char *name, const char *value, int line, char *err,
                      size_t len) {
    (void)line;  /* cfgfile adds FILE:LINE to the message */
    return drv_set(ctx, name, value, err, len);
}

int drv_parse(int argc, char **argv, drv_settings *s, char *err, size_t len) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < NBACKENDS; i++) backends[i]->defaults(s);
    s->backend = &drv_store_backend;
    wl_params_default(&s->work);
    ta_params_default(&s->task);
    s->bin_s = 0.1;
    s->verify = 1;
    s->progress = 1;
    strcpy(s->campaign, "adhoc");
    strcpy(s->run_id, "run");
    strcpy(s->out, "results/adhoc/run");
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
    return s->backend->check(s, nranks, err, len);
}
