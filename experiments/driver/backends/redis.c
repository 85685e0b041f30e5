/*
 * redis.c -- the driver's Redis backend (issue #9): the store's
 * workload against Redis, so the two can be compared in one harness.
 *
 * Same workload generator, keys, values, verification and result files as
 * the store path (run.c, output.c with kv = NULL); only the
 * operations go to Redis through redis_client.c, one connection per rank.
 * r = 2 is modelled as a primary and one replica with WAIT 1 after every
 * write (redis.wait_replicas), the closest Redis has to the store's
 * synchronous second copy.  The load is pipelined (64 SETs, one WAIT):
 * it is not measured, and one WAIT acknowledges every earlier write of the
 * connection.  No store is opened: ranks gather over MPI_COMM_WORLD.
 *
 * Failover.  The injector kills the primary (kv_inject, by pid): when the
 * run phase starts rank 0 publishes the Redis servers as a pid table in
 * DIR/pids (rank.0 the replica, rank.1 the primary, pids from INFO), so
 * kv_inject's clock starts with the workload and not with the load.
 * Clients retry through the failover (redis_client.h).  Afterwards
 * (redis_check.c) rank 0 re-reads every key against all ranks'
 * write logs for acknowledged writes lost, and the time from the kill to
 * each rank's first acknowledged write is taken from the kill log.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis.h"

#define LOAD_BATCH 64        /* SETs per pipelined load call */

/* ---- settings --------------------------------------------------------- */

void drv_redis_default(drv_redis *r) {
    memset(r, 0, sizeof *r);
    strcpy(r->host, "127.0.0.1");
    r->port = 6379;
    strcpy(r->master_name, "kvstore");
    r->wait_replicas = 1;
    r->wait_timeout_ms = 1000;
    r->retry_s = 30;
    r->check_lost = 1;
}

static int get_long(const char *name, const char *v, long lo, long hi, long *out, char *err, size_t len) {
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) {
        snprintf(err, len, "%s: '%s' is not a whole number in %ld..%ld", name, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
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

int drv_redis_set(drv_redis *r, const char *name, const char *v, char *err, size_t len) {
    const struct { const char *name; int *dst; long lo, hi; } ints[] = {
        {"port", &r->port, 1, 65535}, {"wait_replicas", &r->wait_replicas, 0, 64},
        {"wait_timeout_ms", &r->wait_timeout_ms, 1, 600000}, {"check_lost", &r->check_lost, 0, 1}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        long x;
        if (strcmp(name, ints[i].name)) continue;
        if (get_long(name, v, ints[i].lo, ints[i].hi, &x, err, len)) return -1;
        *ints[i].dst = (int)x;
        return 0;
    }
    if (!strcmp(name, "host")) return get_name(name, v, r->host, sizeof r->host, err, len);
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

int drv_redis_check(const drv_settings *s, int nranks, char *err, size_t len) {
    char sub[400];
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

void drv_redis_meta(FILE *f, const drv_settings *s) {
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

static int r_load(rrun *x, int rank, int size) {
    const wl_params *w = &x->s->work;
    int b = drr_batch_of(x, LOAD_BATCH);
    static char keys[LOAD_BATCH][WL_KEY_MAX + 1];
    const char *kp[LOAD_BATCH];
    const unsigned char *vp[LOAD_BATCH];
    size_t kl[LOAD_BATCH], vl[LOAD_BATCH];
    unsigned char *vals = malloc(x->cap * (size_t)b);
    if (!vals) { snprintf(x->cl.err, sizeof x->cl.err, "out of memory"); return -1; }
    double t0 = kv_wtime();
    int rc = 0;
    for (uint64_t r = wl_load_begin(w, rank, size), end = wl_load_end(w, rank, size); r < end && rc >= 0;) {
        int n = 0;
        for (; r < end && n < b; r++, n++) {
            kp[n] = keys[n];
            kl[n] = wl_key(w, r, keys[n], sizeof keys[n]);
            vl[n] = wl_load_value_len(w, r);
            vp[n] = vals + x->cap * (size_t)n;
            wl_make_value(x->g, r, 0, vals + x->cap * (size_t)n, vl[n]);
        }
        rc = rcl_set(&x->cl, n, kp, kl, vp, vl);
        if (rc > 0) x->m->retried_ops++;
    }
    x->m->load_s = kv_wtime() - t0;
    free(vals);
    return rc < 0 ? -1 : 0;
}

static int r_read(rrun *x, uint64_t rec, const char *key, size_t klen) {
    long got;
    unsigned char *b = x->val;
    int rc = rcl_get(&x->cl, 1, &key, &klen, &b, x->cap, &got);
    if (rc < 0) return -1;
    x->m->retried_ops += rc;
    if (got < 0) x->m->not_found++;
    else if (x->s->verify && wl_check_value(x->g, rec, x->val, (size_t)got < x->cap ? (size_t)got : x->cap,
                                            NULL) == 0)
        x->m->verify_errors++;
    return 0;
}

static int r_write(rrun *x, const wl_op *op) {
    const char *k = op->key;
    const unsigned char *v = x->val;
    wl_make_value(x->g, op->record, op->seq + 1, x->val, op->value_len);
    double t0 = kv_wtime();
    int rc = rcl_set(&x->cl, 1, &k, &op->key_len, &v, &op->value_len);
    double t1 = kv_wtime();
    log_add(x, op->record, op->seq + 1, t0, rc < 0 ? INFINITY : t1);
    if (rc < 0) return -1;
    x->m->retried_ops += rc;
    if (x->cl.first_error > 0 && !x->first_write) x->first_write = t1;
    return 0;
}

/* As run.c's do_op: a scan is one GET per record, like the store's. */
static int r_op(rrun *x, const wl_op *op) {
    char key[WL_KEY_MAX + 1];
    int rc = 0;
    switch (op->kind) {
    case WL_READ: return r_read(x, op->record, op->key, op->key_len);
    case WL_SCAN:
        for (uint32_t i = 0; i < op->scan_len && rc == 0; i++)
            rc = r_read(x, op->record + i, key, wl_key(&x->s->work, op->record + i, key, sizeof key));
        return rc;
    case WL_RMW:
        if (r_read(x, op->record, op->key, op->key_len)) return -1;
        __attribute__((fallthrough));
    default: return r_write(x, op);
    }
}

static void sleep_until(double t) {
    double d = t - kv_wtime();
    if (d > 0) nanosleep(&(struct timespec){(time_t)d, (long)((d - (time_t)d) * 1e9)}, NULL);
}

static void r_run(rrun *x, int rank) {
    drv_rank *m = x->m;
    const drv_settings *s = x->s;
    for (int k = 0; k < WL_NKINDS; k++)
        for (int p = 0; p < DRV_NPHASES; p++) hist_init(&m->lat[k][p]);
    double next_progress = rank == 0 && s->progress ? m->run_start + 1.0 : 1e300;
    wl_op op;
    while (!x->gave_up && wl_next(x->g, &op)) {
        double start = kv_wtime();
        if (s->work.duration_s > 0 && start - m->run_start >= s->work.duration_s) break;
        if (op.intended_s >= 0) {  /* open loop: latency from the intended start */
            sleep_until(m->run_start + op.intended_s);
            start = m->run_start + op.intended_s;
        }
        int rc = r_op(x, &op);
        double end = kv_wtime();
        m->ops++;
        m->failed_ops += rc < 0;
        hist_record(&m->lat[op.kind][x->cl.first_error > 0 ? DRV_AFTER : DRV_BEFORE],
                    (uint64_t)((end - start) * 1e9));
        drv_add_bin(m, end - m->run_start, op.kind, rc < 0, s->bin_s);
        if (rc < 0) {  /* no primary for retry_s: every further call would wait as long */
            x->gave_up = 1;
            fprintf(stderr, "kv_driver: rank %d: %s; this rank stops its run\n", rank, x->cl.err);
        }
        if (end >= next_progress) {
            next_progress = end + 1.0;
            fprintf(stderr, "[run %s] %6.1f s  %lld ops on rank 0  reconnects %lld\n", s->run_id,
                    end - m->run_start, m->ops, x->cl.reconnects);
        }
    }
    m->run_s = kv_wtime() - m->run_start;
}

/* ---- pid table for kv_inject ------------------------------------------ */

static int write_pid(const char *dir, int idx, int pid) {
    char host[KVI_HOST_MAX], path[1200], tmp[1200];
    if (kvi_hostname(host, sizeof host) || drv_mkdirs(dir)) return -1;
    snprintf(path, sizeof path, "%s/rank.%d", dir, idx);
    snprintf(tmp, sizeof tmp, "%s/.rank.%d.tmp", dir, idx);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    int ok = fprintf(f, "%d %d %s\n", idx, pid, host) > 0;
    ok = !fclose(f) && ok;
    return ok && !rename(tmp, path) ? 0 : -1;
}

/* rank.0 the replica, rank.1 the primary: only for servers on this host. */
static void publish_pids(rrun *x) {
    const char *h = x->s->redis.host;
    if (strncmp(h, "127.", 4) && strcmp(h, "localhost") && strcmp(h, "::1")) return;
    char dir[1100];
    int primary, replica;
    snprintf(dir, sizeof dir, "%s/pids", x->s->out);
    if (rcl_pids(&x->cl, &primary, &replica) || (replica && write_pid(dir, 0, replica)) ||
        write_pid(dir, 1, primary))
        fprintf(stderr, "kv_driver: no pid table of the Redis servers in %s (%s)\n", dir, x->cl.err);
}

static void rcl_config_of(const drv_redis *r, rcl_config *c) {
    memset(c, 0, sizeof *c);
    snprintf(c->host, sizeof c->host, "%s", r->host);
    c->port = r->port;
    c->nsentinels = parse_ports(r->sentinel_ports, c->sentinel_ports, RCL_MAX_SENTINELS);
    if (c->nsentinels < 0) c->nsentinels = 0;
    snprintf(c->master_name, sizeof c->master_name, "%s", r->master_name);
    c->wait_replicas = r->wait_replicas;
    c->wait_timeout_ms = r->wait_timeout_ms;
    c->retry_s = r->retry_s;
}

static void verdict(int bad, const char *why) {
    FILE *f = getenv("KVRUN_DONE") ? fopen(getenv("KVRUN_DONE"), "w") : NULL;
    if (f) {
        fprintf(f, bad ? "FAIL %s\n" : "PASS kv_driver redis\n", why);
        fclose(f);
    }
}

int drv_redis_main(drv_settings *s, drv_rank *m, double t_begin) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    s->store.replicas = 1 + s->redis.wait_replicas;  /* meta.json's "replicas": copies of a write */
    static rrun x;
    x.s = s;
    x.m = m;
    rcl_config cfg;
    rcl_config_of(&s->redis, &cfg);
    int bad = rcl_open(&x.cl, &cfg) != 0;
    x.g = wl_gen_new(&s->work, rank, size);
    x.cap = (size_t)s->work.value_max + 1;
    x.val = malloc(x.cap);
    if (!bad && (!x.g || !x.val)) bad = snprintf(x.cl.err, sizeof x.cl.err, "out of memory") > 0;
    int who = bad ? rank : size, first_bad;
    MPI_Allreduce(&who, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first_bad < size) {  /* one message, from the lowest rank that failed */
        if (rank == first_bad) fprintf(stderr, "kv_driver: rank %d: %s\n", rank, x.cl.err);
        rcl_close(&x.cl);
        wl_gen_free(x.g);
        free(x.val);
        return 2;
    }
    drv_papi_init(m);
    drv_papi_phase(m, m->papi_load, 1);
    if (r_load(&x, rank, size)) {
        fprintf(stderr, "kv_driver: rank %d: load failed: %s\n", rank, x.cl.err);
        x.gave_up = 1;
    }
    drv_papi_phase(m, m->papi_load, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    m->run_start = kv_wtime();
    MPI_Bcast(&m->run_start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) publish_pids(&x);
    drv_papi_phase(m, m->papi_run, 1);
    if (!x.gave_up) r_run(&x, rank);
    drv_papi_phase(m, m->papi_run, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    int verify_bad = drv_write_results(NULL, s, m, size, t_begin, kv_wtime());
    drr_judged j = {0, 0, 0};
    if (s->redis.check_lost) j = drr_check_lost(&x, rank, size);
    drr_report(&x, rank, size, &j);
    int gave_up;
    MPI_Reduce(&x.gave_up, &gave_up, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char why[160];
        snprintf(why, sizeof why, "%s%s%s", verify_bad ? "verify errors " : "",
                 j.lost ? "acknowledged writes lost or not checked " : "", gave_up ? "Redis unreachable" : "");
        verdict(verify_bad || j.lost || gave_up, why);
    }
    rcl_close(&x.cl);
    wl_gen_free(x.g);
    free(x.val);
    free(x.log);
    return 0;
}
