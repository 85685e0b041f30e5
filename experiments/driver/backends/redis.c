/*
 * redis.c -- the driver's Redis backend: the store's workload against
 * Redis, so the two can be compared in one harness.
 *
 * Same workload generator, keys, values, verification, run loop (run.c)
 * and result files (output.c) as the store backend; only the operations
 * go to Redis through redis_client.c, one connection per rank.  r = 2 is
 * modelled as a primary and one replica with WAIT 1 after every write
 * (redis.wait_replicas), the closest Redis has to the store's synchronous
 * second copy.  The load is pipelined (64 SETs, one WAIT): it is not
 * measured, and one WAIT acknowledges every earlier write of the
 * connection.  No store is opened: ranks gather over MPI_COMM_WORLD.
 *
 * Failover.  The injector kills the primary (kv_inject, by pid): when the
 * run phase starts rank 0 publishes the Redis servers as a pid table in
 * DIR/pids (rank.0 the replica, rank.1 the primary, pids from INFO), so
 * kv_inject's clock starts with the workload and not with the load.
 * Clients retry through the failover (redis_client.h); a rank whose call
 * found no primary for retry_s stops its run.  Afterwards (redis_check.c)
 * rank 0 re-reads every key against all ranks' write logs for
 * acknowledged writes lost, and the time from the kill to each rank's
 * first acknowledged write is taken from the kill log.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "kv_features.h"
#include "kv_util.h"
#include "redis.h"

#define LOAD_BATCH 64        /* SETs per pipelined load call */

/* ---- settings --------------------------------------------------------- */

static void redis_defaults(drv_settings *s) {
    drv_redis *r = &s->redis;
    memset(r, 0, sizeof *r);
    strcpy(r->host, "127.0.0.1");
    r->port = 6379;
    strcpy(r->master_name, "kvstore");
    r->wait_replicas = 1;
    r->wait_timeout_ms = 1000;
    r->retry_s = 30;
    r->check_lost = 1;
}

/* Names go into JSON and command lines unquoted: a safe alphabet only. */
static int get_name(const char *name, const char *v, char *dst, size_t n, char *err, size_t len) {
    if (!*v || strlen(v) >= n || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789.-_:") != strlen(v)) {
        snprintf(err, len, "%s: '%s' is not a name of 1..%zu letters, digits, '.', '-', '_', ':'", name,
                 v, n - 1);
        return -1;
    }
    strcpy(dst, v);
    return 0;
}

/* host: a name as get_name takes, or "/path" of a Unix socket (at most
 * 107 bytes: sockaddr_un's sun_path, no spaces). */
static int get_host(const char *name, const char *v, char *dst, size_t n, char *err, size_t len) {
    if (v[0] != '/') return get_name(name, v, dst, n, err, len);
    if (strlen(v) > 107 || strlen(v) >= n || strpbrk(v, " \t\n")) {
        snprintf(err, len, "%s: '%s' is not a Unix socket path of at most 107 bytes without spaces", name, v);
        return -1;
    }
    strcpy(dst, v);
    return 0;
}

/* "P[,P...]" into ports; returns the count or -1. */
static int parse_ports(const char *v, int *ports, int max) {
    int n = 0;
    for (const char *p = v; *p;) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < 1 || x > 65535 || n == max || (*end && *end != ',')) return -1;
        ports[n++] = (int)x;
        p = *end ? end + 1 : end;
    }
    return n;
}

static int redis_set(drv_settings *s, const char *name, const char *v, char *err, size_t len) {
    drv_redis *r = &s->redis;
    const struct { const char *name; int *dst; long lo, hi; } ints[] = {
        {"port", &r->port, 1, 65535}, {"wait_replicas", &r->wait_replicas, 0, 64},
        {"wait_timeout_ms", &r->wait_timeout_ms, 1, 600000}, {"check_lost", &r->check_lost, 0, 1}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        long long x;
        if (strcmp(name, ints[i].name)) continue;
        if (kvu_parse_ll(v, ints[i].lo, ints[i].hi, false, &x))
            return kvu_fail(err, len, "%s: '%s' is not a whole number in %ld..%ld", name, v, ints[i].lo,
                            ints[i].hi);
        *ints[i].dst = (int)x;
        return 0;
    }
    if (!strcmp(name, "host")) return get_host(name, v, r->host, sizeof r->host, err, len);
    if (!strcmp(name, "master_name")) return get_name(name, v, r->master_name, sizeof r->master_name, err, len);
    if (!strcmp(name, "sentinel_port")) {
        int ports[RCL_MAX_SENTINELS];
        if (strlen(v) >= sizeof r->sentinel_ports || (*v && parse_ports(v, ports, RCL_MAX_SENTINELS) < 1)) {
            snprintf(err, len, "sentinel_port: '%s' is not up to %d ports P[,P...] in 1..65535", v,
                     RCL_MAX_SENTINELS);
            return -1;
        }
        strcpy(r->sentinel_ports, v);
        return 0;
    }
    if (!strcmp(name, "retry_s")) {
        char *end;
        double t = strtod(v, &end);
        if (end == v || *end || !(t > 0 && t <= 3600)) {
            snprintf(err, len, "retry_s: '%s' is not a number of seconds in (0, 3600]", v);
            return -1;
        }
        r->retry_s = t;
        return 0;
    }
    snprintf(err, len, "unknown redis setting '%s'", name);
    return -1;
}

static int redis_check(const drv_settings *s, int nranks, char *err, size_t len) {
    char sub[400];
    if (!KV_HAVE_HIREDIS) {
        snprintf(err, len, "driver.backend=redis: this kv_driver was built without hiredis "
                           "(install its development files, e.g. libhiredis-dev, and run make again)");
        return -1;
    }
    if (wl_params_check_ranks(&s->work, nranks, sub, sizeof sub)) {
        snprintf(err, len, "workload: %s", sub);
        return -1;
    }
    if (s->work.operations == 0 && s->work.duration_s <= 0) {
        snprintf(err, len, "workload needs operations or duration_s");
        return -1;
    }
    if (s->work.value_max > (1 << 29)) {
        snprintf(err, len, "workload values up to %lld bytes exceed Redis's 512 MB strings",
                 (long long)s->work.value_max);
        return -1;
    }
    if (s->failures[0]) {
        snprintf(err, len, "driver.failures kills the store's ranks; with driver.backend=redis kill the "
                 "Redis primary with kv_inject (see experiments/bench/bench_redis.sh)");
        return -1;
    }
    return 0;
}

static void redis_meta(FILE *f, const drv_settings *s) {
    const drv_redis *r = &s->redis;
    fprintf(f, "  \"redis\": {\"host\": \"%s\", \"port\": %d, \"sentinel_ports\": \"%s\", "
               "\"master_name\": \"%s\", \"wait_replicas\": %d, \"wait_timeout_ms\": %d, "
               "\"retry_s\": %g, \"check_lost\": %d},\n",
            r->host, r->port, r->sentinel_ports, r->master_name, r->wait_replicas, r->wait_timeout_ms,
            r->retry_s, r->check_lost);
}


/* ---- one rank's run --------------------------------------------------- */

static void log_add(rrun *x, uint64_t rec, uint64_t ver, double issue, double ack) {
    if (x->nlog == x->caplog) {
        drr_log_compact(x->log, &x->nlog);
        if (x->nlog >= x->caplog / 2) {  /* also the first time (caplog 0) */
            size_t n = x->caplog ? 2 * x->caplog : 4096;
            wrec *e = realloc(x->log, n * sizeof *e);
            if (!e) { fprintf(stderr, "kv_driver: out of memory for the write log\n"); exit(1); }
            x->log = e;
            x->caplog = n;
        }
    }
    x->log[x->nlog++] = (wrec){rec, ver, issue, ack};
}

static rcl_config rcl_config_of(const drv_redis *r) {
    rcl_config c;
    memset(&c, 0, sizeof c);
    snprintf(c.host, sizeof c.host, "%s", r->host);
    c.port = r->port;
    c.nsentinels = parse_ports(r->sentinel_ports, c.sentinel_ports, RCL_MAX_SENTINELS);
    if (c.nsentinels < 0) c.nsentinels = 0;
    snprintf(c.master_name, sizeof c.master_name, "%s", r->master_name);
    c.wait_replicas = r->wait_replicas;
    c.wait_timeout_ms = r->wait_timeout_ms;
    c.retry_s = r->retry_s;
    return c;
}

static int redis_open(drv_ctx *x) {
    static rrun rr;
    x->priv = &rr;
    x->members = x->size;
    x->variant = x->window = "redis";
    x->s->store.replicas = 1 + x->s->redis.wait_replicas;  /* meta.json's "replicas": copies of a write */
    rr.s = x->s;
    rr.m = x->m;
    rr.cap = (size_t)x->s->work.value_max + 1;
    rcl_config cfg = rcl_config_of(&x->s->redis);
    int who = rcl_open(&rr.cl, &cfg) ? x->rank : x->size, first_bad;
    MPI_Allreduce(&who, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad == x->size) return DRV_RUN;
    if (x->rank == first_bad) fprintf(stderr, "kv_driver: rank %d: %s\n", x->rank, rr.cl.err);
    rcl_close(&rr.cl);
    return -1;  /* one message, from the lowest rank that failed */
}

static int redis_load(drv_ctx *x) {
    rrun *rr = x->priv;
    const wl_params *w = &x->s->work;
    rr->g = x->g;
    int b = drr_batch_of(rr, LOAD_BATCH);
    static char keys[LOAD_BATCH][WL_KEY_MAX + 1];
    const char *kp[LOAD_BATCH];
    const unsigned char *vp[LOAD_BATCH];
    size_t kl[LOAD_BATCH], vl[LOAD_BATCH];
    unsigned char *vals = malloc(rr->cap * (size_t)b);
    int rc = 0;
    if (!vals) snprintf(rr->cl.err, sizeof rr->cl.err, "out of memory");
    if (!vals) rc = -1;
    int64_t t0 = kv_clock_ns();
    for (uint64_t r = wl_load_begin(w, x->rank, x->size), end = wl_load_end(w, x->rank, x->size);
         r < end && rc >= 0;) {
        int n = 0;
        for (; r < end && n < b; r++, n++) {
            kp[n] = keys[n];
            kl[n] = wl_key(w, r, keys[n], sizeof keys[n]);
            vl[n] = wl_load_value_len(w, r);
            vp[n] = vals + rr->cap * (size_t)n;
            wl_make_value(x->g, r, 0, vals + rr->cap * (size_t)n, vl[n]);
        }
        rc = rcl_set(&rr->cl, n, kp, kl, vp, vl);
        if (rc > 0) x->m->retried_ops++;
    }
    x->m->load_s = (double)(kv_clock_ns() - t0) * 1e-9;
    free(vals);
    if (rc >= 0) return 0;
    snprintf(x->err, sizeof x->err, "%s", rr->cl.err);
    x->stop = 1;  /* no run without the records */
    return -1;
}

static void redis_barrier(drv_ctx *x) {
    (void)x;
    MPI_Barrier(MPI_COMM_WORLD);
}

/* An operation that found no primary for retry_s: every further call would
 * wait as long, so this rank stops its run. */
static int give_up(drv_ctx *x) {
    rrun *rr = x->priv;
    x->stop = 1;
    fprintf(stderr, "kv_driver: rank %d: %s; this rank stops its run\n", x->rank, rr->cl.err);
    return DRV_FAILED;
}

static int redis_get(drv_ctx *x, uint64_t rec, const char *key, size_t klen, unsigned char *buf,
                     size_t cap, size_t *got) {
    rrun *rr = x->priv;
    long n;
    (void)rec;
    int rc = rcl_get(&rr->cl, 1, &key, &klen, &buf, cap, &n);
    if (rc < 0) return give_up(x);
    x->m->retried_ops += rc;
    if (n < 0) return DRV_MISSING;
    *got = (size_t)n;
    return DRV_FOUND;
}

static int redis_put(drv_ctx *x, uint64_t rec, uint64_t ver, const char *key, size_t klen,
                     const unsigned char *val, size_t vlen) {
    rrun *rr = x->priv;
    /* Timestamps that other ranks' writes are ordered against (redis_check.c),
     * and the failover's end: wall clock, whose 0.24-us double step is far
     * below a Redis round trip and the client's 5-ms retry pause. */
    double t0 = kv_wtime();
    int rc = rcl_set(&rr->cl, 1, &key, &klen, &val, &vlen);
    double t1 = kv_wtime();
    log_add(rr, rec, ver, t0, rc < 0 ? INFINITY : t1);
    if (rc < 0) return give_up(x);
    x->m->retried_ops += rc;
    if (rr->cl.first_error > 0 && !rr->first_write) rr->first_write = t1;
    return 0;
}

/* rank.0 the replica, rank.1 the primary: only for servers on this host
 * (a loopback address or a Unix socket). */
static void publish_pids(rrun *x) {
    const char *h = x->s->redis.host;
    if (strncmp(h, "127.", 4) && strcmp(h, "localhost") && strcmp(h, "::1") && h[0] != '/') return;
    char dir[1100];
    int primary, replica;
    snprintf(dir, sizeof dir, "%s/pids", x->s->out);
    if (rcl_pids(&x->cl, &primary, &replica) || (replica && kvi_publish_pid_of(dir, 0, replica)) ||
        kvi_publish_pid_of(dir, 1, primary))
        fprintf(stderr, "kv_driver: no pid table of the Redis servers in %s (%s)\n", dir, x->cl.err);
}

static void redis_begin(drv_ctx *x) {
    if (x->rank == 0) publish_pids(x->priv);
}

static int redis_after_failure(const drv_ctx *x) {
    const rrun *rr = x->priv;
    return rr->cl.first_error > 0;
}

static void redis_note(const drv_ctx *x, char *buf, size_t len) {
    const rrun *rr = x->priv;
    snprintf(buf, len, "reconnects %lld", rr->cl.reconnects);
}

static int redis_close(drv_ctx *x, int bad) {
    rrun *rr = x->priv;
    drr_judged j = {0, 0, 0};
    if (x->s->redis.check_lost) j = drr_check_lost(rr, x->rank, x->size);
    drr_report(rr, x->rank, x->size, &j);
    int gave_up;
    MPI_Reduce(&x->stop, &gave_up, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (x->rank == 0) {
        char why[160];
        snprintf(why, sizeof why, "%s%s%s", bad ? "verify errors " : "",
                 j.lost ? "acknowledged writes lost or not checked " : "", gave_up ? "Redis unreachable" : "");
        drv_verdict(bad || j.lost || gave_up, "kv_driver redis", why);
    }
    rcl_close(&rr->cl);
    free(rr->log);
    return 0;
}

const drv_backend drv_redis_backend = {
    .name = "redis", .defaults = redis_defaults, .set = redis_set, .check = redis_check,
    .meta = redis_meta, .open = redis_open, .load = redis_load, .barrier = redis_barrier,
    .begin = redis_begin, .get = redis_get, .put = redis_put, .after_failure = redis_after_failure,
    .note = redis_note, .close = redis_close,
};
